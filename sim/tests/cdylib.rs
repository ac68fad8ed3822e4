//! The shared-library form (`examples/hsa_runtime64.rs`) loaded with
//! libloading by relaunch-device's runtime, exactly as a real
//! `libhsa-runtime64.so` would be: agents, executable, one replay.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use relaunch_device::codeobj::CodeObject;
use relaunch_device::hsa::{pm4_ib_packet, AllocFlags, AqlPacket, Runtime};
use relaunch_device::Family;
use relaunch_encoders::{BoundaryKind, EncodeOptions, IbBuilder, KernelCode, Launch};
use relaunch_hsa_sys::LoadedHsa;
use relaunch_sim::testkit::fixture;

/// `target/<profile>/examples/libhsa_runtime64.so`, built by `cargo test`.
fn library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples/libhsa_runtime64.so");
    path.exists().then_some(path)
}

#[test]
fn dlopened_simulated_runtime_replays_an_ib() {
    let Some(path) = library() else {
        println!("note: libhsa_runtime64.so not built; run `cargo build -p relaunch-sim --example hsa_runtime64`");
        return;
    };
    let loaded = LoadedHsa::load(Some(&path)).unwrap();
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
    let code = KernelCode {
        symbol: "counter",
        family: Family::Gfx12,
        descriptor: info.descriptor,
        kd_address: sym.kernel_object,
    };
    let mut b = IbBuilder::new(Family::Gfx12, EncodeOptions::default());
    let launch = Launch {
        grid: [32, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    for _ in 0..8 {
        b.dispatch(&code, &launch, &counter.addr().to_le_bytes(), 8)
            .unwrap();
        b.boundary(BoundaryKind::Rmw);
    }
    let mut kernargs = rt
        .allocate(
            &pool,
            b.kernarg_layout().bytes as usize,
            AllocFlags::default(),
        )
        .unwrap();
    let ib = b.finish(kernargs.addr()).unwrap();
    kernargs.write(0, &ib.kernarg_image).unwrap();
    kernargs.allow_access(&[&gpu]).unwrap();
    let dwords = &ib.segments[0].dwords;
    let bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
    let mut ib_mem = rt
        .allocate(&pool, bytes.len(), AllocFlags { executable: true })
        .unwrap();
    ib_mem.write(0, &bytes).unwrap();
    ib_mem.allow_access(&[&gpu]).unwrap();

    let mut queue = rt.create_queue(&gpu, 64).unwrap();
    let done = rt.create_signal(1).unwrap();
    let packet = pm4_ib_packet(ib_mem.addr(), dwords.len() as u32, done.handle()).unwrap();
    queue.submit(&AqlPacket::Pm4Ib(packet)).unwrap();
    queue.wait(&done, 1, Duration::from_secs(10)).unwrap();
    let mut value = [0u8; 4];
    counter.read(0, &mut value).unwrap();
    assert_eq!(u32::from_le_bytes(value), 8 * 32);
}
