//! Per-architecture kernel bundles: the `.kpack` archive reader (both
//! compression schemes) and the JSON bundle manifest. Property: any input
//! is a value or an error, never a panic or an allocation beyond the
//! reader's documented ceilings.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relaunch_device::bundle::{read_kpack, Manifest};

fuzz_target!(|data: &[u8]| {
    let _ = read_kpack(data);
    let _ = Manifest::parse(data);
});
