//! The simulator: workloads replayed through the engine on a simulated
//! clock.

mod actions;
pub mod history;
pub mod input;
pub mod jsonl;
pub mod machine;
pub mod plot;
pub mod record;
pub mod replay;
pub mod report;
pub mod sim;
pub mod swf;
pub mod testing;
pub mod whatif;
pub mod workload;
