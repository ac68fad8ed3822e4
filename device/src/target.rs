//! GPU targets and families: the facts crate's ([`relaunch_facts::target`],
//! [`relaunch_facts::rows`]), re-exported where device users found them.

pub use relaunch_facts::target::*;
pub use relaunch_facts::{Family, TargetFacts};
