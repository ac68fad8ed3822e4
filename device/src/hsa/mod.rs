//! The HSA runtime over the function table in `relaunch-hsa-sys`.
