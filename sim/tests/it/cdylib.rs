//! The shared-library form (`examples/hsa_runtime64.rs`) loaded with
//! libloading by relaunch-device's runtime, exactly as a real
//! `libhsa-runtime64.so` would be: agents, executable, one replay.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use relaunch_device::codeobj::CodeObject;
use relaunch_device::hsa::{AllocFlags, Runtime};
use relaunch_device::Family;
use relaunch_encoders::{EncodeOptions, KernelCode};
use relaunch_hsa_sys::LoadedHsa;
use relaunch_testsupport::fixture;
use relaunch_testsupport::rig::{counter_ib, PlacedIb};
use relaunch_testsupport::simkit::linear;

/// `target/<profile>/examples/libhsa_runtime64.so`, built by `cargo test`.
fn library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples/libhsa_runtime64.so");
    path.exists().then_some(path)
}

#[test]
fn dlopened_simulated_runtime_replays_an_ib() {
    let Some(path) = library() else {
        relaunch_testsupport::missing(
            "libhsa_runtime64.so",
            "`cargo test` builds it; else cargo build -p relaunch-sim --example hsa_runtime64",
        );
        return;
    };
    let loaded = LoadedHsa::load(Some(&path)).unwrap();
    // The marker export: its agents are simulated boards for the deny list.
    assert!(loaded.simulated);
    let rt = Runtime::open(Arc::new(loaded)).unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    assert_eq!(gpu.name, "gfx1201");
    let bytes = fixture("gfx1201", "counter");
    let exe = rt.load_executable(&gpu, &bytes).unwrap();
    let sym = exe.kernel("counter").unwrap();
    let info = CodeObject::parse(&bytes)
        .unwrap()
        .kernel("counter")
        .unwrap()
        .clone();

    let pool = rt.kernarg_pool().unwrap();
    let mut counter = rt.allocate(&pool, 4, AllocFlags::default()).unwrap();
    counter.write(0, &[0; 4]).unwrap();
    counter.allow_access(&[&gpu]).unwrap();
    // The descriptor from the metadata: the library's memory is its own.
    let code = KernelCode {
        symbol: "counter",
        family: Family::Gfx12,
        descriptor: info.descriptor,
        kd_address: sym.kernel_object,
        unread: Default::default(),
    };
    let ib = counter_ib(
        &code,
        &linear(32, 32),
        counter.addr(),
        8,
        EncodeOptions::default(),
    )
    .unwrap();
    let ib = PlacedIb::place(&rt, ib).unwrap();
    ib.allow_access(&[&gpu]).unwrap();

    let mut queue = rt.create_queue(&gpu, 64).unwrap();
    let done = rt.create_signal(1).unwrap();
    queue.submit(&ib.packet(done.handle()).unwrap()).unwrap();
    queue.wait(&done, 1, Duration::from_secs(10)).unwrap();
    let mut value = [0u8; 4];
    counter.read(0, &mut value).unwrap();
    assert_eq!(u32::from_le_bytes(value), 8 * 32);
}

/// ROCr cannot be unloaded and loaded again in one process: the library is
/// loaded once (`load_shared`, what `Runtime::open_system` uses) and kept.
/// Opening and dropping the last GPU 100 times, then once more, loads it
/// exactly once; each open is its own hsa_init/hsa_shut_down pair.
#[test]
fn the_runtime_library_is_loaded_once_across_100_opens() {
    let Some(path) = library() else {
        println!("note: libhsa_runtime64.so not built; run `cargo build -p relaunch-sim --example hsa_runtime64`");
        return;
    };
    for _ in 0..100 {
        let rt = Runtime::open_system(Some(&path)).unwrap();
        assert_eq!(rt.gpus().count(), 1);
        drop(rt);
    }
    let rt = Runtime::open_system(Some(&path)).unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    assert!(rt.create_queue(&gpu, 64).is_ok());
    let loads = LoadedHsa::shared_loads();
    println!("library loads after 101 opens: {loads}");
    assert_eq!(loads, 1);
}
