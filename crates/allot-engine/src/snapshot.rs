//! The engine as a snapshot of the state keeps it (its serde form): all of
//! it (the configuration it runs on, its jobs, usage, reservations, timers
//! and caches) but a pass's working memory, which [`Engine::restored`]
//! makes anew. A restart that takes up a snapshot and then the log after
//! it has the engine a replay of the whole log would have had.

use crate::engine::Engine;
use crate::groups::Scratch;

impl Engine {
    /// An engine as deserialized from a snapshot, made ready to run.
    pub fn restored(mut self) -> Engine {
        self.scratch = Scratch::new(self.fairshare.policies.len());
        self
    }
}

/// A map whose keys are not strings nor numbers (a tuple, an `Option`),
/// written as a list of pairs: JSON's object keys are strings.
pub(crate) mod pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(crate) fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    pub(crate) fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}
