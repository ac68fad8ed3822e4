//! The simulated HSA table driven by relaunch-device's own HSA runtime (the
//! code that runs on hardware): agents, pools, allow-access, executables,
//! queues, signals, the vendor PM4-IB packet, queue errors and leaks.
//! The HSA system is process-wide state: tests here take `SERIAL`.

use std::time::Duration;

use relaunch_device::hsa::{AqlPacket, HsaError};
use relaunch_encoders::EncodeOptions;
use relaunch_hsa_sys as sys;
use relaunch_sim::hsa;
use relaunch_sim::FaultPlan;
use relaunch_testsupport::fixture;
use relaunch_testsupport::rig::{HsaRig, PlacedIb, RigError};

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn relaunch_runtime_replays_a_retained_ib_on_the_simulated_table() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Another test may have created the default gfx1201 agent: the rig
    // picks the agent by name.
    let rig = HsaRig::counter("gfx1100").unwrap();
    let (rt, gpu) = (&rig.rt, &rig.gpu);
    assert_eq!((rig.sym.kernarg_size, rig.sym.kernarg_alignment), (8, 8));
    let err = rt
        .load_executable(gpu, &fixture("gfx1201", "counter"))
        .unwrap_err();
    assert!(err.to_string().contains("gfx1201"), "{err}");

    // Counter in device memory; kernargs and the IB in the kernarg pool.
    let counter = rig.device_memory(4).unwrap();
    let ib = rig.counter_ib(counter.addr(), 256).unwrap();
    let ib = PlacedIb::place(rt, ib).unwrap();
    let mut queue = rt.create_queue(gpu, 64).unwrap();
    let done = rt.create_signal(0).unwrap();
    let packet = ib.packet(done.handle()).unwrap();
    let replay = |queue: &mut relaunch_device::hsa::AqlQueue| -> Result<i64, HsaError> {
        done.store_relaxed(1);
        queue.submit(&packet)?;
        queue.wait(&done, 1, Duration::from_secs(10))
    };

    // (Host memory the GPU was not given access to is a VM fault, which
    // loses the GPU: `a_vm_fault_loses_the_gpu_through_the_system_event_path`.)
    ib.allow_access(&[gpu]).unwrap();
    replay(&mut queue).unwrap();
    assert_eq!(hsa::memory().read_u32(counter.addr()).unwrap(), 256);
    replay(&mut queue).unwrap();
    assert_eq!(hsa::memory().read_u32(counter.addr()).unwrap(), 512);
    assert_eq!(rig.device.take_violations().0, vec![]);

    // A queue-level error reaches the runtime through the error callback;
    // a new queue goes on.
    let (_, write) = queue.indices();
    let sim_queue = hsa::queue_by_id(queue.id()).unwrap();
    sim_queue.inject(FaultPlan {
        error_at: Some(write),
        ..FaultPlan::default()
    });
    let err = replay(&mut queue).unwrap_err();
    assert!(matches!(err, HsaError::QueueFault { .. }), "{err}");
    drop(queue);
    let mut queue = rt.create_queue(gpu, 64).unwrap();
    replay(&mut queue).unwrap();
    assert_eq!(hsa::memory().read_u32(counter.addr()).unwrap(), 768);

    // Everything freed: the shared memory holds nothing.
    drop((queue, done, ib, counter));
    drop(rig);
    assert_eq!(
        hsa::memory().stats().live_allocations,
        0,
        "{:?}",
        hsa::memory()
    );
    assert_eq!(hsa::signals().live(), 0);
}

/// A VM fault goes to the system event path, never the queue callback: the
/// GPU is lost (every queue stops, a new queue does not help), the error
/// names the address. Its own board, so no other test shares the lost GPU.
#[test]
fn a_vm_fault_loses_the_gpu_through_the_system_event_path() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut cfg = relaunch_sim::SimConfig::new("gfx1100");
    cfg.uuid = Some("GPU-00fa0175e0e0e0e0".into());
    cfg.pci = Some(relaunch_sim::SimPci {
        domain: 0,
        bus: 0xf8,
        device: 0,
        function: 0,
    });
    let rig = HsaRig::open_board(cfg, "counter", "counter").unwrap();
    let (rt, gpu) = (&rig.rt, &rig.gpu);
    let counter = rig.device_memory(4).unwrap();
    let ib = PlacedIb::place(rt, rig.counter_ib(counter.addr(), 4).unwrap()).unwrap();
    let mut queue = rt.create_queue(gpu, 64).unwrap();
    let other = rt.create_queue(gpu, 64).unwrap();
    let done = rt.create_signal(1).unwrap();
    // The IB's host memory was never made accessible to the GPU.
    queue.submit(&ib.packet(done.handle()).unwrap()).unwrap();
    let err = queue.wait(&done, 1, Duration::from_secs(10)).unwrap_err();
    let HsaError::DeviceLost { address, .. } = &err else {
        panic!("expected DeviceLost, got {err}");
    };
    assert_eq!(*address, ib.single().unwrap().0, "{err}");
    assert!(rig.device.is_lost());
    // The queue callback never saw it: the queue's own status is clean.
    let sim_queue = hsa::queue_by_id(queue.id()).unwrap();
    assert_eq!(
        sim_queue.errors()[0].kind,
        relaunch_sim::QueueErrorKind::VmFault
    );
    assert!(rt.device_lost(gpu).is_some());
    // Every queue of the GPU is lost, new ones too.
    assert!(matches!(
        other.check_error("after"),
        Err(HsaError::DeviceLost { .. })
    ));
    let mut fresh = rt.create_queue(gpu, 64).unwrap();
    let err = fresh
        .submit(&ib.packet(done.handle()).unwrap())
        .unwrap_err();
    assert!(matches!(err, HsaError::DeviceLost { .. }), "{err}");
    drop((queue, other, fresh, done, ib, counter));
}

#[test]
fn the_rig_names_what_it_cannot_do() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let err = relaunch_testsupport::rig::fixture("gfx1201", "no_such_kernel").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("gfx1201/no_such_kernel.co"), "{text}");
    assert!(text.contains("build.sh"), "{text}");
    let err = HsaRig::counter("gfx942").err().expect("gfx942 is not RDNA");
    assert!(matches!(err, RigError::Sim { .. }), "{err}");
    assert!(err.to_string().contains("sim:gfx942"), "{err}");
    let err = HsaRig::open("gfx1100", "counter", "missing")
        .err()
        .expect("counter.co has no kernel `missing`");
    assert!(err.to_string().contains("missing"), "{err}");

    // A segmented IB has no single packet; each segment is placed.
    let rig = HsaRig::counter("gfx1100").unwrap();
    let opts = EncodeOptions {
        max_segment_dwords: 256,
        ..EncodeOptions::default()
    };
    let b = rig.counter_ib_with(0x1000, 40, opts).unwrap();
    let ib = rig.place(b).unwrap();
    let n = ib.segments.len();
    assert!(n > 1, "40 dispatches in 256-dword segments");
    match ib.packet(Default::default()) {
        Err(RigError::Segments(k)) => assert_eq!(k, n),
        other => panic!("expected RigError::Segments, got {other:?}"),
    }
    assert!(ib.segments.iter().all(|s| s.dwords > 0 && s.dwords <= 256));
}

#[test]
fn two_producers_share_one_queue_and_keep_it_alive() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rig = HsaRig::counter("gfx1100").unwrap();
    let rt = &rig.rt;
    let mut first = rt.create_queue(&rig.gpu, 64).unwrap();
    let mut second = first.producer();
    assert_eq!(second.id(), first.id());
    let done = rt.create_signal(0).unwrap();
    let barrier = AqlPacket::BarrierAnd(sys::BarrierAndPacket {
        header: sys::packet_header(
            sys::HSA_PACKET_TYPE_BARRIER_AND,
            true,
            sys::HSA_FENCE_SCOPE_SYSTEM,
            sys::HSA_FENCE_SCOPE_SYSTEM,
        ),
        completion_signal: done.handle(),
        ..Default::default()
    });
    let run = |queue: &mut relaunch_device::hsa::AqlQueue| -> u64 {
        done.store_relaxed(1);
        let id = queue.submit(&barrier).unwrap();
        queue.wait(&done, 1, Duration::from_secs(10)).unwrap();
        id
    };
    // Alternating, three times round the 64-packet ring: each producer
    // takes the slot after the other's, never one still in use.
    let mut ids = Vec::new();
    for i in 0..200 {
        ids.push(run(if i % 2 == 0 { &mut first } else { &mut second }));
    }
    assert_eq!(ids, (0..200).collect::<Vec<u64>>());
    assert_eq!(first.indices(), (200, 200));

    // The queue lives while any producer does.
    let id = first.id();
    drop(first);
    assert!(hsa::queue_by_id(id).is_some());
    assert_eq!(run(&mut second), 200);
    drop(second);
    assert!(hsa::queue_by_id(id).is_none());
}

extern "C" fn noop_agent(_agent: sys::Agent, _data: *mut std::ffi::c_void) -> sys::Status {
    sys::HSA_STATUS_SUCCESS
}

/// The C string `hsa_status_string` gives for `status`.
fn status_text(api: &sys::HsaApi, status: sys::Status) -> String {
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: valid out-pointer; the result is a static NUL-terminated string.
    unsafe {
        assert_eq!((api.status_string)(status, &mut p), sys::HSA_STATUS_SUCCESS);
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

#[test]
fn stale_and_foreign_handles_are_refused_with_messages() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let api = hsa::api();
    // SAFETY (every table call below): arguments are either valid or the
    // deliberately stale/foreign handles under test; out-pointers are locals.
    unsafe {
        // Every test pairs init with shut_down, so nothing is initialized here.
        let st = (api.iterate_agents)(noop_agent, std::ptr::null_mut());
        assert_eq!(st, sys::HSA_STATUS_ERROR_NOT_INITIALIZED);
        assert!(hsa::last_error().contains("hsa_init"));
        assert_eq!((api.init)(), sys::HSA_STATUS_SUCCESS);

        let st = (api.signal_destroy)(sys::Signal { handle: 0xDEAD });
        assert_eq!(st, sys::HSA_STATUS_ERROR_INVALID_SIGNAL);
        let text = status_text(&api, st);
        assert!(
            text.starts_with("HSA_STATUS_ERROR_INVALID_SIGNAL: "),
            "{text}"
        );
        assert!(text.contains("not live"), "{text}");

        let bogus = 0x1234usize as *mut sys::Queue;
        assert_eq!(
            (api.queue_destroy)(bogus),
            sys::HSA_STATUS_ERROR_INVALID_QUEUE
        );
        assert_eq!((api.queue_load_read_index_scacquire)(bogus), 0);
        assert!(hsa::last_error().contains("not a live simulated queue"));

        let st = (api.amd_memory_pool_free)(0x4000usize as *mut std::ffi::c_void);
        assert_eq!(st, sys::HSA_STATUS_ERROR_INVALID_ARGUMENT);
        assert!(
            hsa::last_error().contains("not the base address"),
            "{}",
            hsa::last_error()
        );

        let mut name = [0u8; 64];
        let st = (api.agent_get_info)(
            sys::Agent { handle: 0x999 },
            sys::HSA_AGENT_INFO_NAME,
            name.as_mut_ptr().cast(),
        );
        assert_eq!(st, sys::HSA_STATUS_ERROR_INVALID_AGENT);

        let mut ptr = std::ptr::null_mut();
        let st = (api.amd_memory_pool_allocate)(sys::MemoryPool { handle: 0x1000 }, 0, 0, &mut ptr);
        assert_eq!(st, sys::HSA_STATUS_ERROR_INVALID_ARGUMENT);
        let st = (api.amd_memory_pool_allocate)(sys::MemoryPool { handle: 0x77 }, 64, 0, &mut ptr);
        assert_eq!(st, sys::HSA_STATUS_ERROR_INVALID_MEMORY_POOL);

        let mut exe = sys::Executable::default();
        assert_eq!(
            (api.executable_create_alt)(0, 0, std::ptr::null(), &mut exe),
            sys::HSA_STATUS_SUCCESS
        );
        let mut sym = sys::ExecutableSymbol::default();
        let st = (api.executable_get_symbol_by_name)(
            exe,
            c"missing.kd".as_ptr(),
            std::ptr::null(),
            &mut sym,
        );
        assert_eq!(st, sys::HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
        assert!(hsa::last_error().contains("missing.kd"));
        assert_eq!((api.executable_destroy)(exe), sys::HSA_STATUS_SUCCESS);
        assert_eq!(
            (api.executable_destroy)(exe),
            sys::HSA_STATUS_ERROR_INVALID_EXECUTABLE
        );

        let mut s = sys::Signal::default();
        assert_eq!(
            (api.signal_create)(3, 0, std::ptr::null(), &mut s),
            sys::HSA_STATUS_SUCCESS
        );
        let seen = (api.signal_wait_scacquire)(s, sys::HSA_SIGNAL_CONDITION_EQ, 0, 1_000_000, 0);
        assert_eq!(seen, 3, "a 1 ms wait times out with the value seen");
        assert_eq!((api.signal_destroy)(s), sys::HSA_STATUS_SUCCESS);
        assert_eq!((api.shut_down)(), sys::HSA_STATUS_SUCCESS);
    }
}

/// Two simulated GPUs whose queues fail before either error is read: each
/// queue's error names its own failure (its queue and packet), not the
/// process's last one, because the description is taken in the queue's
/// error callback on the reporting thread.
#[test]
fn two_gpus_failing_at_once_each_report_their_own_queue_error() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rigs = [
        HsaRig::counter("gfx1100").unwrap(),
        HsaRig::counter("gfx1201").unwrap(),
    ];
    let mut lanes = Vec::new();
    for (index, rig) in rigs.iter().enumerate() {
        let counter = rig.device_memory(4).unwrap();
        let ib = PlacedIb::place(&rig.rt, rig.counter_ib(counter.addr(), 4).unwrap()).unwrap();
        ib.allow_access(&[&rig.gpu]).unwrap();
        let mut queue = rig.rt.create_queue(&rig.gpu, 64).unwrap();
        let done = rig.rt.create_signal(1).unwrap();
        let packet = ib.packet(done.handle()).unwrap();
        // The second GPU fails at its second packet, so the two messages
        // differ even if both queues have the same id on their boards.
        for _ in 0..index {
            done.store_relaxed(1);
            queue.submit(&packet).unwrap();
            queue.wait(&done, 1, Duration::from_secs(10)).unwrap();
        }
        let (_, write) = queue.indices();
        let sim_queue = hsa::queue_by_id(queue.id()).unwrap();
        sim_queue.inject(FaultPlan {
            error_at: Some(write),
            ..FaultPlan::default()
        });
        lanes.push((counter, ib, queue, done, packet, sim_queue, write));
    }
    for (_, _, queue, done, packet, ..) in &mut lanes {
        done.store_relaxed(1);
        queue.submit(packet).unwrap();
    }
    let start = std::time::Instant::now();
    while lanes.iter().any(|l| !l.5.is_dead()) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "queues did not fail: dead {:?}, indices {:?}",
            lanes.iter().map(|l| l.5.is_dead()).collect::<Vec<_>>(),
            lanes.iter().map(|l| l.2.indices()).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    for (_, _, queue, _, _, sim_queue, write) in &lanes {
        let err = queue.check_error("after both failed").unwrap_err();
        let text = err.to_string();
        let own = format!(
            "queue {}, AQL packet {write}: injected queue error",
            sim_queue.id
        );
        assert!(text.contains(&own), "{text} should name {own:?}");
    }
}
