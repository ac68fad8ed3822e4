//! The real ROCm runtime on a machine without a GPU (this one, CI): opening
//! it must fail fast with a clear "no ROCm GPU agent" error, never hang.

use std::path::Path;
use std::time::{Duration, Instant};

use relaunch_device::hsa::{HsaError, Runtime};

const DEBIAN_RUNTIME: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

#[test]
fn debian_runtime_without_a_gpu_fails_fast_with_the_reason() {
    if !Path::new(DEBIAN_RUNTIME).exists() {
        relaunch_testsupport::missing(DEBIAN_RUNTIME, "CI installs libhsa-runtime64-1");
        return;
    }
    if Path::new("/dev/kfd").exists() {
        println!("note: skipped: /dev/kfd exists, this machine may have a real GPU");
        return;
    }
    let start = Instant::now();
    let err = Runtime::open_system(Some(Path::new(DEBIAN_RUNTIME))).unwrap_err();
    let elapsed = start.elapsed();
    println!("note: opened in {elapsed:?}: {err}");
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let msg = err.to_string();
    assert!(matches!(err, HsaError::NoGpu { .. }), "{err:?}");
    assert!(msg.starts_with("no ROCm GPU agent: "), "{msg}");
    // Either hsa_init fails (this Debian runtime: out of resources without
    // /dev/kfd) or it succeeds and lists no GPU; both name the cause.
    assert!(
        msg.contains(
            "hsa_init from /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1 failed with HSA_STATUS_"
        ) || msg.contains("lists no agent of type GPU"),
        "{msg}"
    );
    if msg.contains("hsa_init") {
        assert!(msg.contains("/dev/kfd does not exist"), "{msg}");
    }
    // A second attempt behaves the same (no state left behind).
    let again = Runtime::open_system(Some(Path::new(DEBIAN_RUNTIME))).unwrap_err();
    assert_eq!(again.to_string(), msg);
}

#[test]
fn a_library_without_hsa_symbols_is_named() {
    let err = Runtime::open_system(Some(Path::new("libc.so.6"))).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("no ROCm GPU agent: missing symbol hsa_init in libc.so.6: "),
        "{msg}"
    );
}
