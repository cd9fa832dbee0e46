//! allot's configuration: LSF's own files (`lsb.params`, `lsb.queues`,
//! `lsb.users`, `lsb.hosts`, `lsf.cluster.<name>`) and `allot.toml`, read
//! with every problem located at file:line:column.

pub mod cluster;
pub mod diag;
pub mod lsf;
pub mod model;

pub use diag::{Diagnostic, Diagnostics, Location, Severity};
pub mod load;
pub mod plan;
pub mod policy;
pub mod settings;
pub mod validate;

pub use load::load_dir;
pub use model::Config;
pub use policy::{Policy, PolicyKind};
pub mod acct_time;
pub mod array;
pub mod assoc_usage;
pub mod bsub;
pub mod default_tree;
pub mod defaults;
pub mod deps;
pub mod detected;
pub mod engine;
pub mod env_option;
pub mod getopt;
pub mod lsf_commands;
pub mod nesting;
pub mod resize;
pub mod resreq;
pub mod sacctmgr;
pub mod submission;
pub mod usage;
