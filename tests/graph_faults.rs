//! The same fault tests on both graph paths (issue 31's check "the
//! public-AQL path passes the same ... fault tests as the PM4 path"): a
//! wild address in one lane of a two-lane graph loses the GPU (the
//! `DeviceLost` class, with the faulting address) and every later launch
//! fails at once; a hung kernel meets the caller's wait timeout, naming
//! the lane, and the graph is released without waiting for it.
//!
//! Its own binary: a lost simulated GPU stays lost for the process, and
//! the hung kernel is a twin registered process-wide.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use relaunch::{Access, ErrorClass, Geometry, Gpu, Graph, GraphOptions, NodeSpec, Submission};
use relaunch::{LaneKind, Module};
use relaunch_testsupport::fixture;

const N: u32 = 64;
/// An address no allocation covers.
const WILD: u64 = 0x10;

fn geometry() -> Geometry {
    Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    }
}

/// Two independent nodes of `symbol` (two lanes) with explicit arguments
/// `a` and `b`.
fn two_lanes(
    module: &Module,
    symbol: &str,
    a: Vec<u8>,
    b: Vec<u8>,
    submission: Submission,
) -> relaunch::GraphExec {
    let mut graph = Graph::new(GraphOptions {
        lanes: 2,
        ..GraphOptions::default()
    });
    for (label, explicit) in [("a", a), ("b", b)] {
        let buf = graph.buffer(label, 4).unwrap();
        graph
            .kernel(NodeSpec {
                module,
                symbol,
                grid: [N, 1, 1],
                block: [32, 1, 1],
                dynamic_group_bytes: 0,
                kernarg: module
                    .pack_kernargs(symbol, &explicit, &geometry())
                    .unwrap(),
                accesses: vec![Access::write(buf, 0, 4)],
                deps: vec![],
            })
            .unwrap();
    }
    let exec = graph.instantiate_with(submission).unwrap();
    assert_eq!(exec.lane_count(), 2);
    let want = match submission {
        Submission::Aql => LaneKind::Aql,
        _ => LaneKind::Pm4,
    };
    assert!(exec.lane_submissions().iter().all(|l| l.kind == want));
    exec
}

#[test]
fn a_wild_address_in_one_lane_loses_the_gpu_on_both_paths() {
    // One simulated board per path: a lost board stays lost.
    for (target, submission) in [("gfx1100", Submission::Pm4), ("gfx1201", Submission::Aql)] {
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let module = gpu.load_module(&fixture(target, "counter")).unwrap();
        let good = gpu.alloc(4, true).unwrap();
        let (a, b) = (good.address().to_le_bytes(), WILD.to_le_bytes());
        let exec = two_lanes(&module, "counter", a.to_vec(), b.to_vec(), submission);
        let err = exec.launch(&gpu).unwrap_err();
        assert_eq!(err.class(), ErrorClass::DeviceLost, "{submission:?}: {err}");
        assert_eq!(err.lost_address(), Some(WILD), "{submission:?}: {err}");
        // Every later launch fails the same way, at once.
        let start = Instant::now();
        let again = exec.launch(&gpu).unwrap_err();
        assert_eq!(
            again.class(),
            ErrorClass::DeviceLost,
            "{submission:?}: {again}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}

static RELEASE: AtomicBool = AtomicBool::new(false);

#[test]
fn a_hung_kernel_meets_the_wait_timeout_on_both_paths() {
    // `add_scalar`'s twin never returns until released: a kernel that
    // loops forever (the other test runs `counter`'s machine code, so the
    // two can share a process).
    relaunch::twins::register_twin("add_scalar", |_wg| {
        let start = Instant::now();
        while !RELEASE.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(2));
        }
        Ok(())
    });
    for (target, submission) in [("gfx1030", Submission::Pm4), ("gfx1151", Submission::Aql)] {
        let gpu = Gpu::open(&format!("sim:{target}")).unwrap();
        let module = gpu.load_module(&fixture(target, "add_scalar")).unwrap();
        let acc = gpu.alloc(8 * N as usize, true).unwrap();
        let args = |at: u64| [at.to_le_bytes().as_slice(), &1u32.to_le_bytes()].concat();
        let (a, b) = (args(acc.address()), args(acc.address() + 4 * u64::from(N)));
        let exec = two_lanes(&module, "add_scalar", a, b, submission);
        let launch = exec.launch_async(&gpu).unwrap();
        let err = launch.wait(Duration::from_millis(300)).unwrap_err();
        assert_eq!(err.class(), ErrorClass::Replay, "{submission:?}: {err}");
        let text = err.to_string();
        assert!(text.contains("lane"), "{submission:?}: {text}");
        // Releasing the graph does not wait for the hung kernel.
        let start = Instant::now();
        drop(launch);
        drop(exec);
        drop(module);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
    RELEASE.store(true, Ordering::Release);
}
