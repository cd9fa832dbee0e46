//! Running jobs on one host, for allotd on its own host and for the agent
//! (`allot-agent`) on every compute host of a cluster: the supervisors
//! that hold each job, the owners' accounts, measures; and the agents'
//! protocol ([`wire`]), mutual TLS ([`tls`]) and certificates
//! ([`keygen`]).
//!
//! Without the `runtime` feature only what the commands need is built
//! (`allot keygen`, the protocol's types): no async runtime, no TLS stack.

pub mod answers;
pub mod caps;
pub mod keygen;
pub mod testhost;
pub mod wire;

#[cfg(feature = "runtime")]
pub mod accounts;
#[cfg(feature = "runtime")]
pub mod agent;
#[cfg(feature = "runtime")]
pub mod commands;
#[cfg(feature = "runtime")]
pub mod host;
#[cfg(feature = "runtime")]
pub mod measure;
#[cfg(feature = "runtime")]
pub mod peek;
#[cfg(feature = "runtime")]
pub mod simulate;
#[cfg(feature = "runtime")]
pub mod spool;
#[cfg(feature = "runtime")]
pub mod supervisors;
#[cfg(feature = "runtime")]
pub mod tasks;
#[cfg(feature = "runtime")]
pub mod terminal;
#[cfg(feature = "runtime")]
pub mod tls;
