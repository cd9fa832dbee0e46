//! Helpers for tests that drive the engine from configuration text.

use allot_config::Diagnostics;
use allot_config::load::from_texts;
use allot_engine::{Decision, Engine, EngineConfig};

/// The engine's configuration from configuration files given as text;
/// panics with the diagnostics if the configuration has an error (tests
/// only).
pub fn engine_config_from(files: &[(&str, &str)]) -> EngineConfig {
    let texts: Vec<(String, String)> = files.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    let mut diags = Diagnostics::default();
    let config = from_texts(&texts, &mut diags);
    assert!(!diags.has_errors(), "{diags}");
    config.engine_config()
}

/// An engine from configuration files given as text (tests only).
pub fn engine_from(files: &[(&str, &str)]) -> Engine {
    Engine::new(engine_config_from(files))
}

/// The ids of the jobs a pass started, in the order it started them.
pub fn started(decisions: &[Decision]) -> Vec<u64> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.0),
            Decision::Kill { .. } | Decision::Suspend { .. } | Decision::Resume { .. } | Decision::Grow { .. } => None,
        })
        .collect()
}
