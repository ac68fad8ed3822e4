//! relaunch-sim: the simulated RDNA device (see README.md).
