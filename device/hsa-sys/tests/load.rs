//! Loading the function table: a real runtime, a missing file, and a library
//! that is not an HSA runtime.

use std::path::Path;

use relaunch_hsa_sys::{HsaApi, LoadError, LoadedHsa, HSA_STATUS_ERROR_OUT_OF_RESOURCES};

const DEBIAN_RUNTIME: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

#[test]
fn nonexistent_path_is_an_open_error_naming_the_path() {
    let err = LoadedHsa::load(Some(Path::new("/nonexistent/libhsa.so"))).unwrap_err();
    assert!(
        matches!(
            err,
            LoadError::Open {
                from_env: false,
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.starts_with("cannot open HSA runtime library /nonexistent/libhsa.so: "),
        "{msg}"
    );
}

#[test]
fn libc_lacks_hsa_init() {
    let err = HsaApi::load(Some(Path::new("libc.so.6"))).unwrap_err();
    match &err {
        LoadError::MissingSymbol {
            symbol, library, ..
        } => {
            assert_eq!(*symbol, "hsa_init");
            assert_eq!(library, "libc.so.6");
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
    assert!(err
        .to_string()
        .starts_with("missing symbol hsa_init in libc.so.6: "));
}

#[test]
fn debian_runtime_resolves_every_symbol_and_describes_statuses() {
    if !Path::new(DEBIAN_RUNTIME).exists() {
        relaunch_testsupport::missing(DEBIAN_RUNTIME, "install libhsa-runtime64-1");
        return;
    }
    let loaded = LoadedHsa::load(Some(Path::new(DEBIAN_RUNTIME))).unwrap();
    assert_eq!(loaded.origin, DEBIAN_RUNTIME);
    assert!(HsaApi::SYMBOLS.contains(&"hsa_amd_memory_pool_allocate"));
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: hsa_status_string may be called before hsa_init; `text` is a
    // valid out-pointer and the library stays loaded while we read it.
    let status =
        unsafe { (loaded.api.status_string)(HSA_STATUS_ERROR_OUT_OF_RESOURCES, &mut text) };
    assert_eq!(status, 0);
    assert!(!text.is_null());
    // SAFETY: the runtime returned a static NUL-terminated string.
    let text = unsafe { std::ffi::CStr::from_ptr(text) }.to_string_lossy();
    assert!(
        text.starts_with("HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        "{text}"
    );
}

#[test]
fn status_names_cover_core_and_amd_values() {
    use relaunch_hsa_sys::status_name;
    assert_eq!(
        status_name(0x1008),
        Some("HSA_STATUS_ERROR_OUT_OF_RESOURCES")
    );
    assert_eq!(status_name(43), Some("HSA_STATUS_ERROR_MEMORY_FAULT"));
    assert_eq!(status_name(0xdead), None);
}
