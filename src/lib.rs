//! relaunch: record a fixed sequence of AMD GPU kernel dispatches once,
//! encode it as retained PM4 indirect buffers, and replay it with one AQL
//! packet per hardware queue.
//!
//! This facade re-exports the pieces; each lives in its own crate:
//! [`device`] (code objects, targets, the HSA seam), [`encoders`] (PM4),
//! [`lanes`] (the graph). The `relaunch` binary is the CLI.

pub use relaunch_device as device;
pub use relaunch_encoders as encoders;
pub use relaunch_lanes as lanes;
