//! The kernel descriptor layout is a fact ([`relaunch_facts::descriptor`]);
//! re-exported here beside the reader that decodes it from code objects.

pub use relaunch_facts::descriptor::*;
