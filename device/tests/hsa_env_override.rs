//! `RELAUNCH_HSA_LIB` pointing nowhere: the error names the path and the
//! variable. Alone in its own test binary because it sets the environment.

use relaunch_device::hsa::Runtime;

#[test]
fn relaunch_hsa_lib_pointing_nowhere_names_the_path() {
    std::env::set_var("RELAUNCH_HSA_LIB", "/nonexistent");
    let start = std::time::Instant::now();
    let err = Runtime::open_system(None).unwrap_err();
    std::env::remove_var("RELAUNCH_HSA_LIB");
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "no ROCm GPU agent: cannot open HSA runtime library /nonexistent (from RELAUNCH_HSA_LIB): "
        ),
        "{msg}"
    );
    assert!(
        msg.ends_with("point RELAUNCH_HSA_LIB at libhsa-runtime64.so.1 or unset it"),
        "{msg}"
    );
}
