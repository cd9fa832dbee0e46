//! Time as the engine sees it: whole seconds on a clock the driver chooses
//! (the wall clock in the daemon, the trace's clock in the simulator).

use serde::{Deserialize, Serialize};

/// A point in time, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Time(pub u64);

impl Time {
    /// Seconds as a float, for the usage formulas.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64
    }
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}
