//! Helpers for tests that drive the engine from configuration text.

use allot_config::Diagnostics;
use allot_config::load::from_texts;
use allot_engine::Engine;

/// An engine from configuration files given as text; panics with the
/// diagnostics if the configuration has an error (tests only).
pub fn engine_from(files: &[(&str, &str)]) -> Engine {
    let texts: Vec<(String, String)> = files.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect();
    let mut diags = Diagnostics::default();
    let config = from_texts(&texts, &mut diags);
    assert!(!diags.has_errors(), "{diags}");
    Engine::new(config.engine_config())
}
