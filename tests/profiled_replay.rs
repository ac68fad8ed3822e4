//! Profiled replay on the simulated device (#16): the IB's own timestamps
//! give a span > 0 that grows with the dispatches, per-dispatch times are
//! ordered and inside it, multi-IBs report the makespan, and IBs not
//! finalized with profiling are refused without replaying.

use relaunch::{ErrorClass, Geometry, Gpu, Pm4Builder, Profiling, QueuePolicy};

use relaunch_testsupport::fixture;

const N: u32 = 64;

/// `count` dispatches adding 1 to every element of `acc`, each after a
/// read-after-write boundary.
fn adds(gpu: &Gpu, module: &relaunch::Module, acc: u64, count: usize) -> Pm4Builder {
    let geometry = Geometry {
        grid: [N, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let mut explicit = acc.to_le_bytes().to_vec();
    explicit.extend_from_slice(&1u32.to_le_bytes());
    let kernarg = module
        .pack_kernargs("add_scalar", &explicit, &geometry)
        .unwrap();
    let mut b = gpu.builder();
    for _ in 0..count {
        b.wait_rmw(None).unwrap();
        b.dispatch(module, "add_scalar", [N, 1, 1], [32, 1, 1], 0, &kernarg)
            .unwrap();
    }
    b
}

#[test]
fn the_span_is_positive_grows_with_dispatches_and_covers_each_dispatch() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "add_scalar")).unwrap();
    let acc = gpu.alloc(4 * N as usize, true).unwrap();
    let mut one = gpu
        .finalize_profiled(adds(&gpu, &module, acc.address(), 1), Profiling::Span)
        .unwrap();
    let mut many = gpu
        .finalize_profiled(
            adds(&gpu, &module, acc.address(), 32),
            Profiling::Dispatches,
        )
        .unwrap();
    assert_eq!(one.profiling(), Some(Profiling::Span));
    let t1 = one.replay_profiled().unwrap();
    let t32 = many.replay_profiled().unwrap();
    assert_eq!(acc.read_u32(0).unwrap(), 33, "the profiled IBs ran");
    assert!(t1.gpu_us > 0.0, "{t1:?}");
    assert!(t32.gpu_us > t1.gpu_us, "{} vs {}", t32.gpu_us, t1.gpu_us);
    assert_eq!(t1.lanes.len(), 1);
    assert!(t1.lanes[0].dispatches.is_empty());
    let times = many.dispatch_times().unwrap();
    assert_eq!(times, t32.lanes[0].dispatches);
    assert_eq!(times.len(), 32);
    let mut previous_end = 0.0;
    for (i, t) in times.iter().enumerate() {
        assert!(t.start_us >= previous_end, "dispatch {i}: {t:?}");
        assert!(t.end_us > t.start_us, "dispatch {i}: {t:?}");
        assert!(t.end_us <= t32.gpu_us, "dispatch {i}: {t:?}");
        previous_end = t.end_us;
    }
    // The simulator models 2 us per dispatch at least.
    assert!(t32.gpu_us >= 32.0 * 2.0, "{}", t32.gpu_us);
    // Span-only IBs have no per-dispatch times; a replay measures again.
    let err = one.dispatch_times().unwrap_err();
    assert!(err.message().contains("per-dispatch profiling"), "{err}");
    let again = many.replay_profiled().unwrap();
    assert_eq!(again.lanes[0].dispatches.len(), 32);
    assert_eq!(acc.read_u32(0).unwrap(), 65);
}

#[test]
fn unprofiled_ibs_are_refused_and_not_replayed() {
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let module = gpu.load_module(&fixture("gfx1100", "add_scalar")).unwrap();
    let acc = gpu.alloc(4 * N as usize, true).unwrap();
    let mut ib = gpu.finalize(adds(&gpu, &module, acc.address(), 2)).unwrap();
    let err = ib.replay_profiled().unwrap_err();
    assert_eq!(err.class(), ErrorClass::Replay);
    assert!(err.message().contains("finalize_profiled"), "{err}");
    assert_eq!(acc.read_u32(0).unwrap(), 0, "nothing was replayed");
    assert!(ib.dispatch_times().is_err());
    // A per-dispatch IB before its first profiled replay has no times.
    let profiled = gpu
        .finalize_profiled(adds(&gpu, &module, acc.address(), 2), Profiling::Dispatches)
        .unwrap();
    let err = profiled.dispatch_times().unwrap_err();
    assert!(err.message().contains("replay_profiled"), "{err}");
    // Profiling changes only what is added, not the work: a plain replay
    // of a profiled IB runs as usual.
    profiled.replay().unwrap();
    assert_eq!(acc.read_u32(0).unwrap(), 2);
}

#[test]
fn a_multi_ib_reports_the_makespan_over_its_lanes() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "add_scalar")).unwrap();
    let a = gpu.alloc(4 * N as usize, true).unwrap();
    let b = gpu.alloc(4 * N as usize, true).unwrap();
    let lanes = vec![
        adds(&gpu, &module, a.address(), 3),
        adds(&gpu, &module, b.address(), 6),
    ];
    let mut multi = gpu
        .finalize_multi_profiled(lanes, QueuePolicy::Auto, Profiling::Dispatches)
        .unwrap();
    let t = multi.replay_profiled().unwrap();
    assert_eq!((a.read_u32(0).unwrap(), b.read_u32(0).unwrap()), (3, 6));
    assert_eq!(t.lanes.len(), 2);
    let earliest = t.lanes.iter().map(|l| l.start_us).fold(f64::MAX, f64::min);
    let latest = t.lanes.iter().map(|l| l.end_us).fold(0.0, f64::max);
    assert_eq!(earliest, 0.0, "times are from the earliest lane start");
    assert_eq!(t.gpu_us, latest);
    for (lane, times) in t.lanes.iter().enumerate() {
        assert_eq!(times.dispatches.len(), [3, 6][lane]);
        for d in &times.dispatches {
            assert!(times.start_us <= d.start_us && d.end_us <= times.end_us);
        }
        assert_eq!(multi.dispatch_times(lane).unwrap(), times.dispatches);
    }
    assert!(
        t.gpu_us >= 6.0 * 2.0,
        "the longer lane's dispatches: {}",
        t.gpu_us
    );
    assert_eq!(
        multi.dispatch_times(2).unwrap_err().class(),
        ErrorClass::Handle
    );
    let mut plain = gpu
        .finalize_multi(vec![adds(&gpu, &module, a.address(), 1)], QueuePolicy::Auto)
        .unwrap();
    assert_eq!(
        plain.replay_profiled().unwrap_err().class(),
        ErrorClass::Replay
    );
}
