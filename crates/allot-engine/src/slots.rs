//! Free job slots over an ordered set of hosts, kept in a segment tree of
//! sums so that "the total free" is O(1) and "the next host, in host order,
//! with a free slot" is O(log n).

/// Free slots of the hosts of one host set, in host order.
#[derive(Clone, Debug)]
pub struct SlotIndex {
    size: usize,
    /// Leaves at `size..size + n`; node `i` holds the sum of `2i` and `2i+1`.
    sums: Vec<u64>,
}

impl SlotIndex {
    pub fn new(free: &[u32]) -> Self {
        let size = free.len().next_power_of_two().max(1);
        let mut sums = vec![0u64; 2 * size];
        for (i, &f) in free.iter().enumerate() {
            sums[size + i] = u64::from(f);
        }
        for i in (1..size).rev() {
            sums[i] = sums[2 * i] + sums[2 * i + 1];
        }
        SlotIndex { size, sums }
    }

    pub fn total(&self) -> u64 {
        self.sums[1]
    }

    pub fn get(&self, pos: usize) -> u32 {
        self.sums[self.size + pos] as u32
    }

    pub fn set(&mut self, pos: usize, free: u32) {
        let mut i = self.size + pos;
        self.sums[i] = u64::from(free);
        while i > 1 {
            i /= 2;
            self.sums[i] = self.sums[2 * i] + self.sums[2 * i + 1];
        }
    }

    /// Sets many positions at once, `items` in ascending position: each
    /// sum above them is computed once, not once per position below it.
    pub fn set_many(&mut self, items: impl IntoIterator<Item = (usize, u32)>) {
        let mut level: smallvec::SmallVec<[usize; 64]> = smallvec::SmallVec::new();
        for (pos, free) in items {
            self.sums[self.size + pos] = u64::from(free);
            let parent = (self.size + pos) / 2;
            if level.last() != Some(&parent) {
                level.push(parent);
            }
        }
        while let Some(&first) = level.first() {
            if first == 0 {
                break;
            }
            for &i in &level {
                self.sums[i] = self.sums[2 * i] + self.sums[2 * i + 1];
            }
            if first == 1 {
                break;
            }
            let mut up = 0;
            for k in 0..level.len() {
                let p = level[k] / 2;
                if up == 0 || level[up - 1] != p {
                    level[up] = p;
                    up += 1;
                }
            }
            level.truncate(up);
        }
    }

    /// The first position at or after `from` with a free slot.
    pub fn next_free(&self, from: usize) -> Option<usize> {
        if from >= self.size {
            return None;
        }
        // Walk up from the leaf until a right sibling subtree has free
        // slots, then down to its leftmost free leaf.
        let mut i = self.size + from;
        if self.sums[i] > 0 {
            return Some(from);
        }
        loop {
            if i == 1 {
                return None;
            }
            if i % 2 == 0 && self.sums[i + 1] > 0 {
                i += 1;
                break;
            }
            i /= 2;
        }
        while i < self.size {
            i = if self.sums[2 * i] > 0 { 2 * i } else { 2 * i + 1 };
        }
        Some(i - self.size)
    }
}

/// A set of host indexes as bits: insertion, removal and emptiness in
/// constant time, iteration in host order.
#[derive(Clone, Debug, Default)]
pub(crate) struct HostBits {
    words: Vec<u64>,
    len: usize,
}

impl HostBits {
    pub(crate) fn insert(&mut self, h: u32) {
        let (w, bit) = (h as usize / 64, 1u64 << (h % 64));
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        if self.words[w] & bit == 0 {
            self.words[w] |= bit;
            self.len += 1;
        }
    }

    pub(crate) fn remove(&mut self, h: u32) {
        if let Some(word) = self.words.get_mut(h as usize / 64) {
            let bit = 1u64 << (h % 64);
            if *word & bit != 0 {
                *word &= !bit;
                self.len -= 1;
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().filter(|(_, w)| **w != 0).flat_map(|(i, &w)| {
            let mut rest = w;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros();
                    rest &= rest - 1;
                    (i * 64) as u32 + b
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any sequence of insertions and removals leaves what a BTreeSet
        /// would hold, in the same order.
        #[test]
        fn host_bits_hold_what_a_set_would(ops in prop::collection::vec((any::<bool>(), 0u32..300), 0..200)) {
            let (mut bits, mut set) = (HostBits::default(), std::collections::BTreeSet::new());
            for (add, h) in ops {
                if add {
                    bits.insert(h);
                    set.insert(h);
                } else {
                    bits.remove(h);
                    set.remove(&h);
                }
                prop_assert_eq!(bits.is_empty(), set.is_empty());
            }
            prop_assert_eq!(bits.iter().collect::<Vec<_>>(), set.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn set_many_is_set_one_by_one() {
        let mut one = SlotIndex::new(&[1, 2, 3, 4, 5, 6, 7]);
        let mut many = one.clone();
        let items = [(0, 0), (2, 9), (3, 1), (6, 0)];
        for &(p, f) in &items {
            one.set(p, f);
        }
        many.set_many(items);
        assert_eq!(one.sums, many.sums);
        assert_eq!(many.total(), 2 + 9 + 1 + 5 + 6);
    }

    #[test]
    fn next_free_walks_in_host_order() {
        let mut idx = SlotIndex::new(&[0, 3, 0, 0, 2]);
        assert_eq!(idx.total(), 5);
        assert_eq!(idx.next_free(0), Some(1));
        assert_eq!(idx.next_free(2), Some(4));
        idx.set(4, 0);
        assert_eq!(idx.next_free(2), None);
        assert_eq!(idx.total(), 3);
    }

    proptest! {
        #[test]
        fn next_free_matches_a_scan(free in prop::collection::vec(0u32..3, 1..40), from in 0usize..45) {
            let idx = SlotIndex::new(&free);
            let scan = (from..free.len()).find(|&i| free[i] > 0);
            prop_assert_eq!(idx.next_free(from), scan);
            prop_assert_eq!(idx.total(), free.iter().map(|&f| u64::from(f)).sum::<u64>());
        }
    }
}
