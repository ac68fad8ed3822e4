//! On a runtime older than ROCm 6.3 (the simulator scripted to report one),
//! installing an IB is refused with the reason, the minimum and the
//! override; nothing is run from memory the runtime may not have mapped
//! executable, and the refusal is a device error (the runtime's limit, not
//! the program's). Its own binary: the scripted version is process-wide.

use relaunch::Gpu;

#[test]
fn an_ib_on_an_old_runtime_is_refused_naming_the_version_and_the_override() {
    std::env::set_var("RELAUNCH_SIM_BUILD_VERSION", "6.2.41133-old");
    std::env::remove_var(relaunch_device::hsa::NONEXEC_IB_ENV);
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu
        .load_module(&relaunch_testsupport::fixture("gfx1201", "counter"))
        .unwrap();
    let counter = gpu.alloc(4, true).unwrap();
    let one = relaunch::Geometry {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_group_bytes: 0,
    };
    let kernarg = module
        .pack_kernargs("counter", &counter.address().to_le_bytes(), &one)
        .unwrap();
    let mut b = gpu.builder();
    b.dispatch(&module, "counter", [1, 1, 1], [1, 1, 1], 0, &kernarg)
        .unwrap();
    let err = match gpu.finalize(b) {
        Ok(_) => panic!("an IB was installed on a runtime that cannot map it executable"),
        Err(e) => e,
    };
    // A limit of the installed runtime, not of the program: device class
    // (C: RL_ERR_DEVICE, Python: DeviceError, CLI exit 3).
    assert_eq!(err.class(), relaunch::ErrorClass::Device, "{err}");
    let err = err.to_string();
    assert!(err.contains("\"6.2.41133-old\""), "{err}");
    assert!(err.contains("ROCm 6.3 or later"), "{err}");
    assert!(err.contains("RELAUNCH_ALLOW_NONEXEC_IB=1"), "{err}");
    assert_eq!(counter.read_u32(0).unwrap(), 0);
}
