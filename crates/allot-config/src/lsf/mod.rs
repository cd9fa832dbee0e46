//! LSF's configuration files.

pub mod applications;
pub mod cluster;
pub mod hosts;
pub mod params;
pub mod queues;
pub mod read;
pub mod resources;
pub mod shared;
pub mod shares;
pub mod text;
pub mod users;
pub mod values;
