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
        self.host_names = crate::engine::host_names(&self.hosts);
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

#[cfg(test)]
mod tests {
    use crate::model::{EngineConfig, HostSpec};
    use crate::{Engine, HostIdx};

    /// Hosts are found by name in a new engine and in one taken up from a
    /// snapshot (whose index of names is not saved but made again).
    #[test]
    fn hosts_are_found_by_name_after_a_snapshot() {
        let hosts = vec![HostSpec::new("b", 1, 1), HostSpec::new("a", 1, 1), HostSpec::new("b", 2, 2)];
        let e = Engine::new(EngineConfig::one_queue(hosts, false));
        let found = |e: &Engine| ["a", "b", "c"].map(|h| e.host_index(h));
        assert_eq!(found(&e), [Some(HostIdx(1)), Some(HostIdx(0)), None], "the first host of a name");
        let json = serde_json::to_string(&e).expect("serializes");
        let back = serde_json::from_str::<Engine>(&json).expect("deserializes");
        assert_eq!(found(&back), [None; 3], "not saved");
        assert_eq!(found(&back.restored()), found(&e));
    }
}
