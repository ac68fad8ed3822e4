//! The device crate's integration tests, one binary for all that can share
//! a process. Binaries of their own: tests with a counting global
//! allocator (`bundle_kpack`, `codeobj_bounds`, `fuzz_codeobj`: other tests'
//! allocations would count), tests that set environment variables
//! (`hsa_env_override`, `hsa_runtime_layer`), the scripted HSA table's users
//! (`hsa_device_lost`, `hsa_runtime_layer`) and the real ROCm runtime
//! loaded into the process (`hsa_real_runtime`).

mod identity_support;

mod bundle_files;
mod bundle_tree;
mod certify;
mod certify_budget;
mod certify_inputs;
mod certify_read_only;
mod codeobj_errors;
mod codeobj_fixtures;
mod codeobj_notes;
mod codeobj_readelf;
mod codeobj_rebuild;
mod fuzz_manifest;
mod identity_deny_bypass;
mod identity_deny_property;
mod identity_manifest;
mod identity_reference;
mod identity_resolve;
mod identity_selector;
mod identity_sources;
mod identity_sysfs;
