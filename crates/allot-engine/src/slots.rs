//! Free job slots over an ordered set of hosts: each host's count, their
//! total, and a two-level bit map of the hosts with a free slot, so that
//! a change is O(1), "the total free" is O(1) and "the next host, in host
//! order, with a free slot" looks at a few words (one summary bit per 64
//! hosts, one summary word per 4,096).

/// Free slots of the hosts of one host set, in host order.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SlotIndex {
    free: Vec<u32>,
    total: u64,
    /// Bit `i % 64` of word `i / 64`: host `i` has a free slot.
    hosts: Vec<u64>,
    /// Bit `w % 64` of word `w / 64`: word `w` of `hosts` is not zero.
    words: Vec<u64>,
}

impl SlotIndex {
    pub fn new(free: &[u32]) -> Self {
        let n = free.len();
        let mut idx = SlotIndex {
            free: vec![0; n],
            total: 0,
            hosts: vec![0; n.div_ceil(64)],
            words: vec![0; n.div_ceil(64).div_ceil(64)],
        };
        for (i, &f) in free.iter().enumerate() {
            idx.set(i, f);
        }
        idx
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    pub fn get(&self, pos: usize) -> u32 {
        self.free[pos]
    }

    pub fn set(&mut self, pos: usize, free: u32) {
        let old = std::mem::replace(&mut self.free[pos], free);
        self.total = self.total - u64::from(old) + u64::from(free);
        if (old > 0) == (free > 0) {
            return;
        }
        let (w, bit) = (pos / 64, 1u64 << (pos % 64));
        let was = self.hosts[w];
        self.hosts[w] = if free > 0 { was | bit } else { was & !bit };
        if (was == 0) != (self.hosts[w] == 0) {
            self.words[w / 64] ^= 1u64 << (w % 64);
        }
    }

    /// The first position at or after `from` with a free slot.
    pub fn next_free(&self, from: usize) -> Option<usize> {
        if from >= self.free.len() {
            return None;
        }
        let w = from / 64;
        let here = self.hosts[w] & (u64::MAX << (from % 64));
        if here != 0 {
            return Some(w * 64 + here.trailing_zeros() as usize);
        }
        // The next word with a free host, through the summary.
        let next = w + 1;
        let mut s = next / 64;
        let mut bits = self.words.get(s)? & u64::MAX.checked_shl((next % 64) as u32).unwrap_or(0);
        loop {
            if bits != 0 {
                let word = s * 64 + bits.trailing_zeros() as usize;
                return Some(word * 64 + self.hosts[word].trailing_zeros() as usize);
            }
            s += 1;
            bits = *self.words.get(s)?;
        }
    }
}

/// A set of host indexes as bits: insertion, removal and emptiness in
/// constant time, iteration in host order.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct HostBits {
    words: Vec<u64>,
    len: usize,
}

impl HostBits {
    #[inline]
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

    #[inline]
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

        /// Over sets wider than a summary word (4,096 hosts), after
        /// changes, as a scan of the counts finds.
        #[test]
        fn next_free_after_changes_matches_a_scan(
            n in 1usize..9000,
            dense in any::<bool>(),
            changes in prop::collection::vec((0usize..9000, 0u32..3), 0..60),
            from in prop::collection::vec(0usize..9100, 1..20),
        ) {
            let mut free = vec![u32::from(dense); n];
            let mut idx = SlotIndex::new(&free);
            for (pos, f) in changes {
                let pos = pos % n;
                free[pos] = f;
                idx.set(pos, f);
            }
            prop_assert_eq!(idx.total(), free.iter().map(|&f| u64::from(f)).sum::<u64>());
            for from in from {
                let scan = (from..n).find(|&i| free[i] > 0);
                prop_assert_eq!(idx.next_free(from), scan, "from {}", from);
            }
        }
    }
}
