//! The whole identity path on the simulated device: simulated boards report
//! the identities of the four-GPU fixture host through HSA agent info, the
//! facade joins them with the fixture's sysfs and manifest, and every
//! selector form resolves (or is denied) exactly as on that host.
//!
//! One test function: the simulator's agents are process-wide.

use std::path::PathBuf;
use std::sync::Arc;

use relaunch::{ErrorClass, Gpu};
use relaunch_device::hsa::Runtime;
use relaunch_device::identity::{HostContext, ManifestSources, SysfsRoot};
use relaunch_sim::{SimConfig, SimPci};

fn board(target: &str, uuid: &str, bus: u8) -> SimConfig {
    SimConfig {
        uuid: Some(uuid.to_string()),
        pci: Some(SimPci {
            domain: 0,
            bus,
            device: 0,
            function: 0,
        }),
        ..SimConfig::new(target)
    }
}

#[test]
fn selectors_reach_simulated_boards_through_agent_info_and_sysfs() {
    // The order of the fixture's KFD nodes, as ROCr would enumerate them.
    for config in [
        board("gfx1100", "GPU-43390a851e296ee5", 0x66),
        board("gfx1151", "GPU-XX", 0xbf),
        board("gfx1010", "GPU-XX", 0x6e),
        board("gfx1030", "GPU-c7ff6b154d0128bc", 0x99),
    ] {
        relaunch_sim::hsa::add_gpu(config).unwrap();
    }
    let runtime = Runtime::open(Arc::new(relaunch_sim::hsa::loaded())).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let sources = ManifestSources {
        system: Some(root.join("manifests/devices.toml")),
        user: None,
        walk_from: None,
        ..Default::default()
    };
    let ctx = HostContext::load(SysfsRoot::new(root.join("sysfs/hipx")), &sources, "hipx").unwrap();
    let open = |selector: &str| Gpu::open_on(runtime.clone(), &ctx, selector);

    let gpu = open("uuid:GPU-43390a851e296ee5").unwrap();
    assert_eq!(
        gpu.describe(),
        "gfx1100 0000:66:00.0 [uuid:GPU-43390a851e296ee5] card0 kfd_node=1 simulated rocr#0(volatile)"
    );
    assert!(gpu.is_simulated());
    assert_eq!(open("slot:3").unwrap().target().processor(), "gfx1030");
    assert_eq!(open("@navi10").unwrap().target().processor(), "gfx1010");
    assert_eq!(open("bdf:6e:00.0").unwrap().target().processor(), "gfx1010");
    assert_eq!(
        open("name:gfx1030").unwrap().target().processor(),
        "gfx1030"
    );

    // The APU is denied in the manifest: no form reaches it.
    for selector in ["bdf:0000:bf:00.0", "bdf:bf:00.0", "name:gfx1151", "index:1"] {
        let err = open(selector).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Device, "{selector}");
        assert!(err.message().contains("Strix Halo"), "{selector}: {err}");
    }

    // The opened board really runs: the counter gate on the gfx1030 board.
    let gpu = open("slot:3").unwrap();
    let bytes = relaunch_testsupport::fixture("gfx1030", "counter");
    let module = gpu.load_module(&bytes).unwrap();
    let counter = gpu.alloc(4, true).unwrap();
    let mut b = gpu.builder();
    for _ in 0..8 {
        b.dispatch(
            &module,
            "counter",
            [1, 1, 1],
            [1, 1, 1],
            0,
            &counter.address().to_le_bytes(),
        )
        .unwrap();
        b.wait_rmw(None).unwrap();
    }
    gpu.finalize(b).unwrap().replay().unwrap();
    assert_eq!(counter.read_u32(0).unwrap(), 8);
}
