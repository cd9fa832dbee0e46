//! The simulator: workloads replayed through the engine on a simulated
//! clock.

pub mod testing;
