//! The jobs the engine holds, by id. Ids are given in order from 1, so the
//! table is a deque indexed by `id - base`: O(1) lookups, iteration in id
//! order, and the front is dropped as the oldest jobs finish. (The replay
//! keeps its own account of each job in one too.) Each job is boxed, so an
//! id the table does not hold costs a pointer: the elements of a large
//! job array not made yet ([`crate::arrays`]) leave a long run of them.

use std::collections::VecDeque;

use crate::engine::JobId;

/// What is kept of each job, by its id.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct JobTable<T> {
    base: u64,
    slots: VecDeque<Option<Box<T>>>,
    len: usize,
}

impl<T> Default for JobTable<T> {
    fn default() -> Self {
        JobTable { base: 0, slots: VecDeque::new(), len: 0 }
    }
}

/// Equal when they hold the same jobs with the same values, however each
/// came to hold them.
impl<T: PartialEq> PartialEq for JobTable<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T> JobTable<T> {
    pub fn new(first: u64) -> Self {
        JobTable { base: first, slots: VecDeque::new(), len: 0 }
    }

    fn index(&self, id: JobId) -> Option<usize> {
        id.0.checked_sub(self.base).map(|i| i as usize).filter(|&i| i < self.slots.len())
    }

    pub fn get(&self, id: &JobId) -> Option<&T> {
        self.index(*id).and_then(|i| self.slots[i].as_deref())
    }

    pub fn get_mut(&mut self, id: &JobId) -> Option<&mut T> {
        self.index(*id).and_then(|i| self.slots[i].as_deref_mut())
    }

    /// Adds a job. Ids come in order but for a requeued finished job,
    /// which goes back to its old place; an id already present is replaced.
    pub fn insert(&mut self, id: JobId, job: T) {
        if self.slots.is_empty() {
            self.base = id.0;
        }
        while id.0 < self.base {
            self.slots.push_front(None);
            self.base -= 1;
        }
        while self.base + (self.slots.len() as u64) <= id.0 {
            self.slots.push_back(None);
        }
        let slot = &mut self.slots[(id.0 - self.base) as usize];
        if slot.is_none() {
            self.len += 1;
        }
        *slot = Some(Box::new(job));
    }

    pub fn remove(&mut self, id: &JobId) -> Option<T> {
        let i = self.index(*id)?;
        let job = self.slots[i].take()?;
        self.len -= 1;
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        Some(*job)
    }

    /// Jobs in id order.
    pub fn iter(&self) -> impl Iterator<Item = (JobId, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, j)| j.as_deref().map(|j| (JobId(self.base + i as u64), j)))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_find_their_values_in_order_whatever_came_and_went() {
        let mut t = JobTable::new(1);
        for id in [3, 4, 6] {
            t.insert(JobId(id), id * 10);
        }
        // An older id goes before the rest; the front goes as it empties.
        t.insert(JobId(2), 20);
        assert_eq!(t.iter().collect::<Vec<_>>(), [(JobId(2), &20), (JobId(3), &30), (JobId(4), &40), (JobId(6), &60)]);
        assert_eq!((t.get(&JobId(5)), t.get(&JobId(7)), t.get(&JobId(1))), (None, None, None));
        assert_eq!(t.remove(&JobId(2)), Some(20));
        assert_eq!(t.remove(&JobId(2)), None);
        *t.get_mut(&JobId(4)).expect("held") += 1;
        assert_eq!((t.len(), t.get(&JobId(4))), (3, Some(&41)));
        // Equal to a table holding the same, built otherwise; not to one
        // holding another value or another id.
        let mut same = JobTable::new(1);
        for (id, v) in [(6, 60), (3, 30), (4, 41)] {
            same.insert(JobId(id), v);
        }
        assert_eq!(t, same);
        same.insert(JobId(6), 61);
        assert_ne!(t, same);
        same.insert(JobId(6), 60);
        same.insert(JobId(7), 70);
        assert_ne!(t, same);
    }
}
