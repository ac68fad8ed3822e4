//! #15.3 and #15.5: every public Rust way to open a device applies the deny
//! list, and a `sim:` entry still names the simulated board when the
//! simulator is loaded as the system HSA library (`RELAUNCH_HSA_LIB`).
//!
//! One test function changes the environment (the manifest is found
//! through it); the other only reads the sources.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use relaunch::GfxTarget;
use relaunch::{Gpu, Result};
use relaunch_device::hsa::Runtime;
use relaunch_device::identity::HostContext;

/// The openers this test tries; `public_openers_are_all_tried` keeps the
/// list complete.
const TRIED: &[&str] = &["open", "open_default", "open_index", "open_on", "open_sim"];

fn expect_denied(what: &str, opened: Result<Gpu>) {
    match opened {
        Err(e) => assert!(
            e.message().contains("is denied") && e.message().contains("sim:gfx1100"),
            "{what}: refused for another reason: {e}"
        ),
        Ok(gpu) => panic!("{what}: opened denied device {}", gpu.describe()),
    }
}

#[test]
fn every_opener_refuses_a_denied_device() {
    let scratch = std::env::temp_dir().join(format!("relaunch-deny-open-{}", std::process::id()));
    let config = scratch.join("config/relaunch");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("devices.toml"),
        "[host.denytest]\ndeny = [\"sim:gfx1100 # resets take the host down\"]\n",
    )
    .unwrap();
    std::env::set_var("XDG_CONFIG_HOME", scratch.join("config"));
    std::env::set_var("RELAUNCH_HOST", "denytest");
    std::env::remove_var("RELAUNCH_DEVICE");
    std::env::remove_var("RELAUNCH_HSA_LIB");

    let gfx1100 = GfxTarget::parse("gfx1100").unwrap();
    assert!(Gpu::open("sim:gfx1201").is_ok(), "an allowed board opens");
    expect_denied("Gpu::open(sim:gfx1100)", Gpu::open("sim:gfx1100"));
    expect_denied("Gpu::open_sim(gfx1100)", Gpu::open_sim(&gfx1100));
    std::env::set_var("RELAUNCH_DEVICE", "sim:gfx1100");
    expect_denied("Gpu::open_default (RELAUNCH_DEVICE)", Gpu::open_default());
    std::env::remove_var("RELAUNCH_DEVICE");

    // The in-process simulator as an explicit runtime: its agents are
    // simulated boards, however they are selected.
    relaunch_sim::hsa::add_gpu(relaunch_sim::SimConfig::new("gfx1100")).unwrap();
    let runtime = Runtime::open(Arc::new(relaunch_sim::hsa::loaded())).unwrap();
    let ctx = HostContext::from_env().unwrap();
    for selector in ["sim:gfx1100", "name:gfx1100"] {
        expect_denied(
            &format!("Gpu::open_on({selector})"),
            Gpu::open_on(runtime.clone(), &ctx, selector),
        );
    }

    // The simulator as the system HSA library: simulated boards appear as
    // runtime agents, the first gfx1100 at 1100:e0:00.0.
    let files =
        relaunch_testsupport::cargo_build(&["-p", "relaunch-sim", "--example", "hsa_runtime64"]);
    let library = relaunch_testsupport::artifact(&files, "libhsa_runtime64.so");
    std::env::set_var("RELAUNCH_HSA_LIB", &library);
    std::env::set_var("RELAUNCH_SIM_TARGETS", "gfx1100");
    for selector in ["index:0", "name:gfx1100", "bdf:1100:e0:00.0"] {
        expect_denied(
            &format!("Gpu::open({selector}) via {library:?}"),
            Gpu::open(selector),
        );
    }
    expect_denied("Gpu::open_index(0) via the library", Gpu::open_index(0));
    expect_denied("Gpu::open_default via the library", Gpu::open_default());
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Every `pub fn open*` of `Gpu` is one `every_opener_refuses_a_denied_device`
/// tries: a new opener must be added there.
#[test]
fn public_openers_are_all_tried() {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/gpu.rs");
    let text = std::fs::read_to_string(&source).unwrap();
    let found: BTreeSet<&str> = text
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("pub fn "))
        .filter_map(|rest| rest.split('(').next())
        .filter(|name| name.starts_with("open"))
        .collect();
    let tried: BTreeSet<&str> = TRIED.iter().copied().collect();
    assert_eq!(found, tried, "public openers in {source:?} vs those tried");
}
