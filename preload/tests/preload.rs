//! End to end on the simulated device: a plain HIP program (`app/`) linked
//! against a fake "real HIP" (`fakehip/`, over the simulator's HSA cdylib),
//! run with and without `LD_PRELOAD=librelaunch_hipgraph.so`. With the
//! interposer, the supported graph replays through relaunch (kernel effects
//! visible, the fake's launch count unchanged) and the `extra`-form graph
//! falls through (count + 1); without it, every launch reaches the fake.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{build_c, built, counter_co, run, run_with, Built};

/// Runs the graph app (with the interposer preloaded when `preload`).
fn run_app(b: &Built, preload: bool) -> Vec<String> {
    run(b, &b.app, &[&counter_co()], preload)
}

#[test]
fn preloaded_app_replays_supported_graphs_and_falls_through_otherwise() {
    let Some(b) = built() else { return };
    let lines = run_app(b, true);
    // Chain one: 4 nodes x 8 work-items; chain two: 3 x 8; three launches,
    // all replayed by relaunch (the fake counted none).
    assert_eq!(lines[0], "replay a=96 b=72 launches=0", "{lines:?}");
    // The patch moved chain one's first node to counter c.
    assert_eq!(lines[1], "patched a=120 b=96 c=8 launches=0", "{lines:?}");
    // The `extra` form replayed (8 work-items); the node whose buffer is
    // shorter than the kernel's arguments fell through: the fake launched
    // it (and, being a fake, did not run it).
    assert_eq!(lines[2], "extra d=8 launches=1", "{lines:?}");
    // Instantiated with flags: 2 nodes x 8 work-items, two replays.
    assert_eq!(lines[3], "flags e=32 launches=1", "{lines:?}");
    // A node added behind the interposer's back: the counts differ at
    // instantiate, so the graph falls through.
    assert_eq!(lines[4], "hidden f=0 launches=2", "{lines:?}");
    // A patch changing the geometry (node 0 to 4 groups of 4): the exec is
    // built again and replays with it (c += 16, a += 3 x 8).
    assert_eq!(lines[5], "regeometry a=144 c=24 launches=2", "{lines:?}");
    // hipModuleLoad (a path) and hipModuleLoadDataEx: 2 nodes x 8, replayed.
    assert_eq!(lines[6], "loaders g=16 launches=2", "{lines:?}");
    // A node re-pointed to y before instantiate: followed (y=8, x=0; a
    // stale shadow would have counted into x). Disabling the node made
    // that exec fall through, and an attribute made its graph fall
    // through: two launches reached the fake.
    assert_eq!(lines[7], "changed x=0 y=8 launches=4", "{lines:?}");
    // Replayed once; after hipModuleGetGlobal the module's exec fell
    // through (relaunch's copy would not see the variable).
    assert_eq!(lines[8], "global w=8 launches=5", "{lines:?}");
    assert_eq!(lines[9], "done");
}

#[test]
fn app_without_preload_runs_on_the_fake_alone() {
    let Some(b) = built() else { return };
    let lines = run_app(b, false);
    assert_eq!(
        lines,
        [
            "replay a=0 b=0 launches=3",
            "patched a=0 b=0 c=0 launches=4",
            "extra d=0 launches=6",
            "flags e=0 launches=8",
            "hidden f=0 launches=9",
            "regeometry a=0 c=0 launches=10",
            "loaders g=0 launches=11",
            "changed x=0 y=0 launches=14",
            "global w=0 launches=16",
            "done"
        ],
    );
}

#[test]
fn the_interposer_exports_exactly_the_hip_functions_it_handles_and_its_inspection_api() {
    let Some(b) = built() else { return };
    if !relaunch_testsupport::require_tool("nm", "install binutils") {
        return;
    }
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&b.interposer)
        .output()
        .expect("run nm");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "__hipRegisterFatBinary",
            "__hipRegisterFunction",
            "__hipRegisterManagedVar",
            "__hipRegisterSurface",
            "__hipRegisterTexture",
            "__hipRegisterVar",
            "__hipUnregisterFatBinary",
            "hipFree",
            "hipFreeAsync",
            "hipGraphAddChildGraphNode",
            "hipGraphAddDependencies",
            "hipGraphAddEmptyNode",
            "hipGraphAddEventRecordNode",
            "hipGraphAddEventWaitNode",
            "hipGraphAddHostNode",
            "hipGraphAddKernelNode",
            "hipGraphAddMemcpyNode",
            "hipGraphAddMemcpyNode1D",
            "hipGraphAddMemsetNode",
            "hipGraphCreate",
            "hipGraphDestroy",
            "hipGraphEventRecordNodeSetEvent",
            "hipGraphEventWaitNodeSetEvent",
            "hipGraphExecDestroy",
            "hipGraphExecEventRecordNodeSetEvent",
            "hipGraphExecEventWaitNodeSetEvent",
            "hipGraphExecKernelNodeSetParams",
            "hipGraphExecMemcpyNodeSetParams",
            "hipGraphExecMemcpyNodeSetParams1D",
            "hipGraphExecMemsetNodeSetParams",
            "hipGraphExecNodeSetParams",
            "hipGraphExecUpdate",
            "hipGraphInstantiate",
            "hipGraphInstantiateWithFlags",
            "hipGraphKernelNodeSetAttribute",
            "hipGraphKernelNodeSetParams",
            "hipGraphLaunch",
            "hipGraphMemcpyNodeSetParams",
            "hipGraphMemcpyNodeSetParams1D",
            "hipGraphMemsetNodeSetParams",
            "hipGraphNodeSetEnabled",
            "hipGraphNodeSetParams",
            "hipHostFree",
            "hipHostMalloc",
            "hipHostRegister",
            "hipHostUnregister",
            "hipLaunchKernel",
            "hipMalloc",
            "hipMallocAsync",
            "hipMallocManaged",
            "hipMemcpy2DAsync",
            "hipMemcpyAsync",
            "hipMemset2DAsync",
            "hipMemsetAsync",
            "hipMemsetD16Async",
            "hipMemsetD32Async",
            "hipMemsetD8Async",
            "hipModuleGetFunction",
            "hipModuleGetGlobal",
            "hipModuleLaunchKernel",
            "hipModuleLoad",
            "hipModuleLoadData",
            "hipModuleLoadDataEx",
            "hipModuleUnload",
            "hipStreamBeginCapture",
            "hipStreamBeginCaptureToGraph",
            "hipStreamEndCapture",
            "hipStreamIsCapturing",
            // The inspection API (include/relaunch_hipgraph.h).
            "rl_hipgraph_api_version",
            "rl_hipgraph_counters",
            "rl_hipgraph_exec_info",
            "rl_hipgraph_execs",
            "rl_hipgraph_set_replay",
        ]
    );
}

// ---- Stream capture (helper "capture") ----

/// The stream-capture app (`app/capture_counter.c`), built once next to
/// the fake HIP of `built()`.
fn capture_app(b: &Built) -> &'static Path {
    static APP: OnceLock<PathBuf> = OnceLock::new();
    APP.get_or_init(|| {
        build_c(
            &b.dir,
            "capture_counter",
            "app/capture_counter.c",
            &[],
            true,
        )
    })
}

/// Runs the capture app like `run_app` runs the graph app.
fn run_capture_app(b: &Built, preload: bool) -> Vec<String> {
    run(b, capture_app(b), &[&counter_co()], preload)
}

#[test]
fn preloaded_app_replays_captured_graphs_and_falls_through_otherwise() {
    let Some(b) = built() else { return };
    let lines = run_capture_app(b, true);
    assert_eq!(
        lines,
        [
            // 5 captured launches x 8 work-items, three replays; the real
            // (fake) graph holds the same chain, so the count check passed.
            "capture a=120 launches=0 direct=0 nodes=5 edges=4 status=1,0",
            // Outside a capture: forwarded (the fake counts, never runs).
            "direct b=0 direct=1",
            // An `extra`-form launch is captured like a kernelParams one.
            "extra c=8 d=8 launches=0 nodes=2 edges=1",
            // A launch on a stream joined through events: the capture was
            // marked unsupported and its graph fell through.
            "joined e=0 f=0 launches=1 nodes=3 edges=3",
            // That mark did not outlive its capture.
            "again g=16 launches=1 direct=1",
            // hipGraphExecUpdate from a re-capture counting into h: patched
            // in place (g untouched, h += 16); the update to three launches
            // was refused by the real HIP (910, topology changed), so the
            // exec still replays the two-launch graph (h += 16).
            "update g=16 h=32 launches=1 refused=910,2",
            // A captured node changed through a handle from hipGraphGetNodes:
            // the graph fell through instead of replaying into k.
            "recaptured k=0 m=0 launches=2 nodes=2",
            // A replayable exec launched inside a capture became part of it
            // (no synchronize of the capturing stream, which would have
            // invalidated the capture); the graph then fell through.
            "nested n=0 launches=3 nodes=3 edges=2",
            // Captured into an existing graph: not followed, fell through.
            "tograph q=0 launches=4 nodes=2 same=1",
            "done",
        ],
    );
}

#[test]
fn capture_app_without_preload_runs_on_the_fake_alone() {
    let Some(b) = built() else { return };
    let lines = run_capture_app(b, false);
    assert_eq!(
        lines,
        [
            "capture a=0 launches=3 direct=0 nodes=5 edges=4 status=1,0",
            "direct b=0 direct=1",
            "extra c=0 d=0 launches=4 nodes=2 edges=1",
            "joined e=0 f=0 launches=5 nodes=3 edges=3",
            "again g=0 launches=6 direct=1",
            "update g=0 h=0 launches=8 refused=910,2",
            "recaptured k=0 m=0 launches=9 nodes=2",
            "nested n=0 launches=10 nodes=3 edges=2",
            "tograph q=0 launches=11 nodes=2 same=1",
            "done",
        ],
    );
}

// ---- static registration (fat binaries) ----

/// The static-registration app: `app/static_counter.c` with an offload
/// bundle (gfx1100 and gfx1201 entries of `counter.co`, plus the empty host
/// entry hipcc adds) embedded at build time.
fn static_app() -> Option<&'static PathBuf> {
    static APP: OnceLock<Option<PathBuf>> = OnceLock::new();
    APP.get_or_init(|| {
        let b = built()?;
        let bundle = b.dir.join("counter.hipfb");
        let bundler = "clang-offload-bundler-19";
        let out = Command::new(bundler)
            .args([
                "-type=o",
                "-bundle-align=4096",
                "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx1100,\
                 hipv4-amdgcn-amd-amdhsa--gfx1201",
                "-input=/dev/null",
            ])
            .arg(format!(
                "-input={}",
                relaunch_testsupport::fixture_path("gfx1100", "counter").display()
            ))
            .arg(format!(
                "-input={}",
                relaunch_testsupport::fixture_path("gfx1201", "counter").display()
            ))
            .arg(format!("-output={}", bundle.display()))
            .output()
            .unwrap_or_else(|e| {
                panic!("running {bundler}: {e} (install Debian's clang-tools-19; .ci/run does)")
            });
        assert!(
            out.status.success(),
            "{bundler} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let define = format!("-DBUNDLE_PATH=\"{}\"", bundle.display());
        let app = build_c(
            &b.dir,
            "static_counter",
            "app/static_counter.c",
            &[define],
            true,
        );
        Some(app)
    })
    .as_ref()
}

fn run_static_app(preload: bool) -> Option<Vec<String>> {
    let b = built()?;
    Some(run(b, static_app()?, &[], preload))
}

#[test]
fn preloaded_static_registration_replays_host_stub_nodes() {
    let Some(lines) = run_static_app(true) else {
        return;
    };
    assert_eq!(
        lines,
        [
            // 4 nodes x 8 work-items x 3 launches, from the gfx1201 entry of
            // the bundle (the gfx1100 one comes first and would be refused
            // by the device); the fake saw the 5 registrations (two fat binaries, a
            // kernel each, a variable), no launch.
            "static a=96 launches=0 registrations=5",
            // A stub nobody registered: unsupported, the real launch ran.
            "unregistered b=0 launches=1",
            // The fat binary registering a device variable: not replayed.
            "variable v=0 launches=2",
            // The bundle through hipModuleLoadData: 2 nodes x 8, replayed.
            "module c=16 launches=2",
            // hipLaunchKernel of the stub captured (4 nodes) and replayed
            // twice: 4 x 8 x 2; no graph launch and no direct launch reached
            // the fake.
            "captured d=64 launches=2 direct=0",
            "done registrations=7",
        ]
    );
}

#[test]
fn static_registration_without_preload_runs_on_the_fake_alone() {
    let Some(lines) = run_static_app(false) else {
        return;
    };
    assert_eq!(
        lines,
        [
            "static a=0 launches=3 registrations=5",
            "unregistered b=0 launches=4",
            "variable v=0 launches=5",
            "module c=0 launches=6",
            "captured d=0 launches=8 direct=0",
            "done registrations=7",
        ]
    );
}

// ---- HIP outside the global scope ----

/// The graph app built as a library and loaded by `app/local_loader.c`
/// with `dlopen(RTLD_LOCAL)`: HIP is then loaded only as that library's
/// dependency, which `dlsym(RTLD_NEXT)` does not see; the interposer finds
/// the loaded `libamdhip64` by soname instead. Same output as the app
/// linked normally.
#[test]
fn hip_loaded_behind_rtld_local_is_still_found() {
    let Some(b) = built() else { return };
    let lib_flags = ["-shared", "-fPIC", "-Dmain=app_main"].map(String::from);
    let lib = build_c(
        &b.dir,
        "libgraph_counter_app.so",
        "app/graph_counter.c",
        &lib_flags,
        true,
    );
    let loader = build_c(&b.dir, "local_loader", "app/local_loader.c", &[], false);
    let local = run(b, &loader, &[&lib, &counter_co()], true);
    assert_eq!(local, run_app(b, true));
    assert_eq!(local[0], "replay a=96 b=72 launches=0", "{local:?}");
}

// ---- diagnostics ----

/// `RELAUNCH_LOG=info` makes the interposer say what falls through and
/// why (the hardware-validation guide relies on it); unset, it is silent.
#[test]
fn relaunch_log_reports_fall_throughs_on_stderr() {
    let Some(b) = built() else { return };
    let log_info = [("RELAUNCH_LOG", Some("info"))];
    let (lines, log) = run_with(b, &b.app, &[&counter_co()], true, &log_info);
    assert_eq!(lines, run_app(b, true));
    assert!(
        log.contains("`extra` argument buffer holds 4 bytes"),
        "{log}"
    );
    assert!(log.contains("falls through"), "{log}");
    let (_, quiet) = run_with(b, &b.app, &[&counter_co()], true, &[]);
    assert_eq!(quiet, "");
}

// ---- which GPU ----

/// Without `RELAUNCH_DEVICE` the interposer replays on the GPU at the PCI
/// address HIP reports for its current device (the fake reports the
/// simulated gfx1201's, 1201:e0:00.0); a `RELAUNCH_DEVICE` naming another
/// GPU than HIP's is refused, and every graph falls through.
#[test]
fn graphs_replay_on_hips_current_gpu_and_never_on_another() {
    let Some(b) = built() else { return };
    let by_hip = [("RELAUNCH_DEVICE", None)];
    let (lines, _) = run_with(b, &b.app, &[&counter_co()], true, &by_hip);
    assert_eq!(lines, run_app(b, true));
    let elsewhere = [
        ("FAKEHIP_PCI_BUS_ID", Some("1201:e1:00.0")),
        ("RELAUNCH_LOG", Some("error")),
    ];
    let (lines, log) = run_with(b, &b.app, &[&counter_co()], true, &elsewhere);
    assert_eq!(lines, run_app(b, false));
    assert!(
        log.contains("RELAUNCH_DEVICE=name:gfx1201 is the GPU at 1201:e0:00.0, but the application's current HIP device is at 1201:e1:00.0"),
        "{log}"
    );
}

// ---- compressed offload bundles ----

/// A compressed bundle (`CCOB`) made by `clang-offload-bundler-19
/// --compress` (zstd, version 2 as clang 19 writes it), with the empty host
/// entry hipcc adds and the gfx1100 and gfx1201 entries of `counter.co`:
/// the graph app loads it instead of the plain code object and replays
/// exactly as with the plain one.
#[test]
fn a_compressed_bundle_replays_like_the_plain_code_object() {
    let Some(b) = built() else { return };
    let bundle = b.dir.join("counter-compressed.hipfb");
    let bundler = "clang-offload-bundler-19";
    let out = Command::new(bundler)
        .args([
            "--type=o",
            "--compress",
            "--targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx1100,\
             hipv4-amdgcn-amd-amdhsa--gfx1201",
            "--input=/dev/null",
        ])
        .arg(format!(
            "--input={}",
            relaunch_testsupport::fixture_path("gfx1100", "counter").display()
        ))
        .arg(format!("--input={}", counter_co().display()))
        .arg(format!("--output={}", bundle.display()))
        .output()
        .unwrap_or_else(|e| {
            panic!("running {bundler}: {e} (install Debian's clang-tools-19; .ci/run does)")
        });
    assert!(
        out.status.success(),
        "{bundler} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&bundle).unwrap();
    assert_eq!(&bytes[..4], b"CCOB", "the bundler did not compress");
    let log = [("RELAUNCH_LOG", Some("info"))];
    let (lines, stderr) = run_with(b, &b.app, &[&bundle], true, &log);
    assert_eq!(lines, run_app(b, true), "{stderr}");
    assert_eq!(lines[0], "replay a=96 b=72 launches=0", "{lines:?}");
    assert!(!stderr.contains("compressed"), "{stderr}");
}

// ---- stream-ordered launches ----

/// `app/stream_order.c` against the fake HIP's stream threads: replayed
/// launches return without waiting and are ordered with the stream's
/// other work both ways (see the app for each line).
#[test]
fn replayed_launches_are_stream_ordered_without_waiting() {
    let Some(b) = built() else { return };
    let app = build_c(&b.dir, "stream_order", "app/stream_order.c", &[], true);
    let lines = run(b, &app, &[&counter_co()], true);
    assert_eq!(
        lines,
        [
            // Held: returned with gate = seq, wait, passed = seq queued.
            "returned pending=3 before=0 after=32 launches=0",
            "interleaved right=100 of 100 a=3232",
            "event a=3264 device a=3296",
            // The patch (node 0 to b) landed after the held launch (32
            // more in a) and before the next (24 in a, 8 in b).
            "patched b_while=0 a=3352 b=8 launches=0",
            "updated result=0 pending=3 a_while=3352 b_while=8 a=3376 b=48 launches=0",
        ]
    );
}

// ---- other node kinds ----

/// `app/node_kinds.c`: empty nodes become dependencies and child graphs
/// are flattened (those graphs replay); a host node makes its graph fall
/// through, saying why.
#[test]
fn empty_nodes_order_child_graphs_flatten_and_host_nodes_fall_through() {
    let Some(b) = built() else { return };
    let app = build_c(&b.dir, "node_kinds", "app/node_kinds.c", &[], true);
    let log = [("RELAUNCH_LOG", Some("info"))];
    let (lines, stderr) = run_with(b, &app, &[&counter_co()], true, &log);
    assert_eq!(
        lines,
        [
            "empty a=96 launches=0",
            "host b=0 launches=1",
            // 4 counter nodes (2 in the child) x 8 x 2 launches, replayed.
            "child c=64 launches=1",
            // A child's event record/wait pair: 2 nodes x 8 x 2, replayed.
            "events d=32 launches=1",
        ],
        "{stderr}"
    );
    assert!(stderr.contains("a host node"), "{stderr}");
    let (lines, _) = run_with(b, &app, &[&counter_co()], false, &[]);
    assert_eq!(
        lines,
        [
            "empty a=0 launches=3",
            "host b=0 launches=4",
            "child c=0 launches=6",
            "events d=0 launches=8",
        ]
    );
}
