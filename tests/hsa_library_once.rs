//! #14 check 4 at the facade: opening and dropping the last `Gpu` 100 times
//! in one process, then opening again, works, and the HSA library (the
//! simulator's cdylib named by `RELAUNCH_HSA_LIB`, standing in for ROCr) is
//! loaded exactly once and never unloaded: ROCr does not support being
//! unloaded and loaded again in one process. Its own binary: it sets
//! `RELAUNCH_HSA_LIB` for the whole process and counts process-wide loads.

use relaunch::{Geometry, Gpu};
use relaunch_hsa_sys::LoadedHsa;

/// Lines of /proc/self/maps naming `library` (it is mapped while loaded).
fn mapped(library: &std::path::Path) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let name = library.to_str().unwrap();
    maps.lines().filter(|l| l.ends_with(name)).count()
}

#[test]
fn the_last_gpu_opened_and_dropped_100_times_keeps_one_library_load() {
    let files =
        relaunch_testsupport::cargo_build(&["-p", "relaunch-sim", "--example", "hsa_runtime64"]);
    let library = relaunch_testsupport::artifact(&files, "libhsa_runtime64.so");
    let library = library.canonicalize().unwrap();
    std::env::set_var("RELAUNCH_HSA_LIB", &library);
    std::env::set_var("RELAUNCH_SIM_TARGETS", "gfx1201");
    std::env::remove_var("RELAUNCH_DEVICE");
    assert_eq!(LoadedHsa::shared_loads(), 0, "nothing loaded yet");
    assert_eq!(mapped(&library), 0, "not mapped before the first open");

    for round in 0..100 {
        let gpu = Gpu::open("index:0").unwrap_or_else(|e| panic!("open {round}: {e}"));
        assert!(gpu.is_simulated(), "{}", gpu.describe());
        assert_eq!(gpu.target().to_string(), "gfx1201");
        drop(gpu); // the last GPU: the runtime is shut down
        assert!(mapped(&library) > 0, "unloaded after round {round}");
    }

    // Opening again works, and a replay runs on it.
    let gpu = Gpu::open("index:0").unwrap();
    let module = gpu
        .load_module(&relaunch_testsupport::fixture("gfx1201", "counter"))
        .unwrap();
    let counter = gpu.alloc(4, true).unwrap();
    let one = Geometry {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_group_bytes: 0,
    };
    let kernarg = module
        .pack_kernargs("counter", &counter.address().to_le_bytes(), &one)
        .unwrap();
    let mut b = gpu.builder();
    for _ in 0..3 {
        b.dispatch(&module, "counter", [1, 1, 1], [1, 1, 1], 0, &kernarg)
            .unwrap();
    }
    let ib = gpu.finalize(b).unwrap();
    ib.replay().unwrap();
    ib.replay().unwrap();
    assert_eq!(counter.read_u32(0).unwrap(), 6);

    let loads = LoadedHsa::shared_loads();
    println!("HSA library loads after 101 opens of the last GPU: {loads}");
    assert_eq!(loads, 1, "the library is loaded once per process");
}
