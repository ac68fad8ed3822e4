//! The runtime layer (`relaunch_device::hsa`) driven through the scripted
//! table in `scripted/mod.rs`: what each wrapper asks of the table and
//! what it makes of the answers.

#[path = "scripted/mod.rs"]
mod scripted;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use relaunch_device::hsa::*;
use relaunch_hsa_sys as sys;
use scripted::{open, setup, with};

#[test]
fn agents_are_listed_with_identity_and_limits() {
    let _serial = setup(false);
    let rt = open().unwrap();
    assert_eq!(rt.origin(), "scripted test table");
    assert_eq!(rt.build_version(), Some("6.4.43482-scripted"));
    assert_eq!(rt.agents().len(), 2);
    let gpu = rt.gpus().next().unwrap();
    assert_eq!(gpu.kind, DeviceKind::Gpu);
    assert_eq!(gpu.name, "gfx1201");
    assert_eq!(gpu.vendor, "AMD");
    assert_eq!(gpu.product_name.as_deref(), Some("Radeon Test 9070"));
    assert_eq!(gpu.uuid, None, "GPU-XX means no UUID");
    assert_eq!(
        gpu.bdf,
        Some(Bdf {
            domain: 1,
            bus: 3,
            device: 1,
            function: 0
        })
    );
    assert_eq!(gpu.bdf.unwrap().to_string(), "0001:03:01.0");
    assert_eq!(
        (gpu.domain, gpu.compute_units, gpu.node),
        (Some(1), Some(64), Some(1))
    );
    let limits = gpu.limits.unwrap();
    assert_eq!(limits.workgroup_max_dim, [1024, 1024, 1024]);
    assert_eq!(limits.grid_max_dim, [u32::MAX, 65535, 65535]);
    assert_eq!((limits.queue_min_size, limits.queue_max_size), (4, 131072));
    assert_eq!(limits.wavefront_size, 32);
    let cpu = rt.cpu().unwrap();
    assert_eq!((cpu.kind, cpu.name.as_str()), (DeviceKind::Cpu, "fake-cpu"));
    assert_eq!(
        (cpu.limits, cpu.bdf, cpu.product_name.as_deref()),
        (None, None, None)
    );
    assert_eq!(cpu.uuid.as_deref(), Some("CPU-XX"));
    let clone = rt.clone();
    drop(rt);
    assert_eq!(with(|s| s.shutdowns), 0, "a clone keeps the runtime open");
    drop(clone);
    scripted::assert_all_released();
}

#[test]
fn a_table_without_gpu_agents_is_no_gpu_and_shuts_down() {
    let _serial = setup(true);
    let err = open().unwrap_err();
    assert_eq!(
        err.to_string(),
        "no ROCm GPU agent: scripted test table lists no agent of type GPU (agents: fake-cpu (Cpu)); \
         check that the GPU is supported by this ROCm and visible (HSA_VISIBLE_DEVICES, permissions on /dev/kfd)"
    );
    scripted::assert_all_released();
}

#[test]
fn uuid_and_bdf_decoding() {
    assert_eq!(parse_uuid("GPU-XX"), None);
    assert_eq!(parse_uuid(""), None);
    assert_eq!(
        parse_uuid("GPU-1a2b3c4d5e6f7788").as_deref(),
        Some("GPU-1a2b3c4d5e6f7788")
    );
    assert_eq!(
        Bdf::from_location_id(0, 0xC3_0A).unwrap(),
        Bdf {
            domain: 0,
            bus: 0xC3,
            device: 1,
            function: 2
        }
    );
}

#[test]
fn pools_allocations_and_access() {
    let _serial = setup(false);
    let rt = open().unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    let kernarg = rt.kernarg_pool().unwrap();
    assert_eq!(
        kernarg.handle.handle,
        scripted::KERNARG_POOL,
        "the KERNARG_INIT pool, not the first fine one"
    );
    assert!(kernarg.is_kernarg() && kernarg.host_accessible);
    assert_eq!(
        rt.host_fine_grained_pool().unwrap().handle.handle,
        scripted::FINE_POOL
    );
    let device = rt.device_pool(&gpu).unwrap();
    assert_eq!(device.handle.handle, scripted::DEVICE_POOL);
    assert!(device.is_coarse_grained() && !device.host_accessible);
    let err = rt.device_pool(rt.cpu().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "agent fake-cpu has no device-local (global, coarse-grained) memory pool; \
         the ROCm install or driver does not expose it"
    );

    let mut ib = rt
        .allocate(&kernarg, 256, AllocFlags { executable: true })
        .unwrap();
    let flags = with(|s| s.allocations[&(ib.addr() as usize)].1);
    assert_eq!(
        flags,
        sys::HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG | (scripted::KERNARG_POOL as u32) << 8
    );
    ib.allow_access(&[&gpu]).unwrap();
    assert_eq!(
        with(|s| s.allowed.clone()),
        vec![(vec![2], ib.addr() as usize)]
    );
    ib.write(252, &[1, 2, 3, 4]).unwrap();
    let mut out = [0u8; 4];
    ib.read(252, &mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4]);
    assert_eq!(
        ib.write(253, &[0; 4]).unwrap_err().to_string(),
        "access of 4 bytes at offset 253 is outside the 256-byte allocation"
    );
    // Device-local memory goes through the runtime's copy (hsa_memory_copy).
    let mut vram = rt.allocate(&device, 64, AllocFlags::default()).unwrap();
    vram.write(60, &[1, 2, 3]).unwrap();
    let mut back = [0u8; 3];
    vram.read(60, &mut back).unwrap();
    assert_eq!(back, [1, 2, 3]);
    assert!(matches!(
        vram.write(62, &[0; 4]),
        Err(HsaError::OutOfBounds { .. })
    ));
    assert!(
        vram.host_ptr(0, 4).is_err(),
        "no host pointer to device memory"
    );
    assert!(matches!(
        rt.allocate(&kernarg, 0, AllocFlags::default()),
        Err(HsaError::Invalid { .. })
    ));
    assert_eq!(with(|s| s.allocations.len()), 2);
    drop((ib, vram, gpu, rt));
    scripted::assert_all_released();
}

#[test]
fn kernarg_arena_hands_out_aligned_blocks_of_one_allocation() {
    let _serial = setup(false);
    let rt = open().unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    let mut arena = KernargArena::new(&rt, 1024, &[&gpu]).unwrap();
    assert_eq!(with(|s| s.allocations.len()), 1);
    assert_eq!(with(|s| s.allowed.len()), 1);
    let a = arena.alloc(8, 8).unwrap();
    let b = arena.alloc(24, 32).unwrap();
    assert_eq!((a.addr, a.offset), (arena.base_addr(), 0));
    assert_eq!((b.offset, b.addr % 32), (32, 0));
    arena.write(&b, 16, &0xDEAD_BEEF_u64.to_le_bytes()).unwrap();
    let mut out = [0u8; 8];
    arena.read(&b, 16, &mut out).unwrap();
    assert_eq!(u64::from_le_bytes(out), 0xDEAD_BEEF);
    assert!(arena.write(&a, 4, &[0; 8]).is_err());
    assert!(matches!(
        arena.alloc(1024, 16),
        Err(HsaError::ArenaFull { used: 56, .. })
    ));
    arena.reset();
    assert_eq!(arena.alloc(1024, 16).unwrap().offset, 0);
    assert_eq!(
        with(|s| s.allocations.len()),
        1,
        "blocks never allocate from the pool"
    );
    drop((arena, gpu, rt));
    scripted::assert_all_released();
}

fn ring_words(slot: u64) -> [u32; 16] {
    with(|s| {
        let q = s.queue();
        let mut words = [0u32; 16];
        for (i, w) in words.iter_mut().enumerate() {
            // SAFETY: the scripted ring is live while the queue exists.
            *w = unsafe {
                (q.ring as *const u32)
                    .add(slot as usize * 16 + i)
                    .read_volatile()
            };
        }
        words
    })
}

fn doorbell() -> i64 {
    with(|s| {
        // SAFETY: the queue struct is live while the queue exists.
        let bell = unsafe { (*s.queue().queue).doorbell_signal };
        s.signals[&bell.handle].load(Ordering::Acquire)
    })
}

#[test]
fn submit_publishes_the_packet_and_rings_the_doorbell_with_its_id() {
    let _serial = setup(false);
    let rt = open().unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    assert!(rt
        .create_queue(&gpu, 6)
        .unwrap_err()
        .to_string()
        .contains("powers of two from 4 to 131072"));
    assert!(rt.create_queue(rt.cpu().unwrap(), 4).is_err());
    let mut queue = rt.create_queue(&gpu, 4).unwrap();
    assert_eq!((queue.id(), queue.size()), (42, 4));
    let done = rt.create_signal(1).unwrap();
    let packet = AqlPacket::Pm4Ib(pm4_ib_packet(0x1234_5000, 64, done.handle()).unwrap());
    for expected_id in 0..4u64 {
        assert_eq!(queue.submit(&packet).unwrap(), expected_id);
        assert_eq!(ring_words(expected_id), packet.words());
        assert_eq!(doorbell(), expected_id as i64);
    }
    assert_eq!(queue.indices(), (0, 4));
    let err = queue.submit(&packet).unwrap_err();
    assert_eq!(
        err.to_string(),
        "queue 42 is full (4 of 4 packets in flight); wait for completions before submitting more"
    );
    // The "packet processor" consumes one packet: the ring wraps to slot 0.
    with(|s| s.queue().read.store(1, Ordering::Release));
    let barrier = AqlPacket::BarrierAnd(sys::BarrierAndPacket {
        header: sys::packet_header(sys::HSA_PACKET_TYPE_BARRIER_AND, true, 2, 2),
        completion_signal: done.handle(),
        ..Default::default()
    });
    assert_eq!(queue.submit(&barrier).unwrap(), 4);
    assert_eq!(ring_words(0), barrier.words());
    assert_eq!(doorbell(), 4);
    drop((queue, done, gpu, rt));
    scripted::assert_all_released();
}

#[test]
fn waits_complete_time_out_with_an_explanation_or_report_queue_errors() {
    let _serial = setup(false);
    let rt = open().unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    let mut queue = rt.create_queue(&gpu, 4).unwrap();
    let done = rt.create_signal(1).unwrap();
    let packet = AqlPacket::Pm4Ib(pm4_ib_packet(0x1000, 8, done.handle()).unwrap());
    queue.submit(&packet).unwrap();

    let start = Instant::now();
    let err = queue.wait(&done, 1, Duration::from_millis(30)).unwrap_err();
    assert!(
        start.elapsed() >= Duration::from_millis(30) && start.elapsed() < Duration::from_secs(2)
    );
    let msg = err.to_string();
    let expected_tail = format!(
        "waiting for completion signal {:#x} on queue 42 to drop below 1: value seen 1, queue read index 0, write index 1",
        done.handle().handle
    );
    assert!(
        msg.starts_with("timed out after ") && msg.ends_with(&expected_tail),
        "{msg}"
    );

    let sig = scripted::signal(done.handle());
    let completer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        sig.store(0, Ordering::Release);
    });
    assert_eq!(queue.wait(&done, 1, Duration::from_secs(5)).unwrap(), 0);
    completer.join().unwrap();

    done.silent_store_relaxed(1);
    assert_eq!(done.load(), 1);
    assert!(done
        .wait_below(1, Duration::from_millis(5), "the test signal")
        .is_err());

    // The runtime reports a VM fault through the queue callback.
    let (callback, data, raw) = with(|s| {
        let q = s.queue();
        (q.callback, q.data, q.queue)
    });
    // SAFETY: the callback and its data are the live queue's.
    unsafe {
        callback(
            sys::HSA_STATUS_ERROR_MEMORY_FAULT,
            raw,
            data as *mut std::ffi::c_void,
        )
    };
    let err = queue.wait(&done, 1, Duration::from_secs(5)).unwrap_err();
    assert!(
        matches!(
            err,
            HsaError::QueueFault {
                queue_id: 42,
                status: 43,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with(
        "queue 42 reported HSA_STATUS_ERROR_MEMORY_FAULT: page fault. (status 0x2b) while waiting for completion signal"
    ));
    assert!(err
        .to_string()
        .ends_with("the queue is unusable: drop it and create a new one"));
    assert!(matches!(
        queue.submit(&packet),
        Err(HsaError::QueueFault { .. })
    ));
    drop((queue, done, gpu, rt));
    scripted::assert_all_released();
}

#[test]
fn executables_load_freeze_and_find_kernels_by_descriptor_symbol() {
    let _serial = setup(false);
    let rt = open().unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    let err = rt.load_executable(&gpu, b"not an elf").unwrap_err();
    assert_eq!(
        err.to_string(),
        "hsa_executable_load_agent_code_object failed with HSA_STATUS_ERROR_INVALID_CODE_OBJECT: \
         bad code object. (status 0x1010)"
    );
    assert!(
        with(|s| s.readers.is_empty() && s.executables.is_empty()),
        "cleaned up after failure"
    );
    assert!(matches!(
        rt.load_executable(&gpu, b""),
        Err(HsaError::Invalid { .. })
    ));

    let exe = rt.load_executable(&gpu, b"\x7fELF fake").unwrap();
    assert!(with(|s| s.executables.values().all(|frozen| *frozen)));
    for name in ["counter", "counter.kd"] {
        let k = exe.kernel(name).unwrap();
        assert_eq!(k.name, "counter.kd");
        assert_eq!(k.kernel_object, scripted::KERNEL_OBJECT);
        assert_eq!((k.kernarg_size, k.kernarg_alignment), (8, 8));
    }
    let err = exe.kernel("missing").unwrap_err().to_string();
    assert!(
        err.starts_with("hsa_executable_get_symbol_by_name failed with "),
        "{err}"
    );
    assert!(err.contains("(looking up missing.kd)"), "{err}");
    assert!(exe.kernel("bad\0name").is_err());
    drop((exe, gpu, rt));
    scripted::assert_all_released();
}

#[test]
fn a_wedged_hsa_init_is_abandoned_and_a_late_success_balanced() {
    let _serial = setup(false);
    with(|s| s.init_delay = Some(Duration::from_millis(300)));
    let table = std::sync::Arc::new(sys::LoadedHsa::from_table(scripted::table(), "slow table"));
    let start = Instant::now();
    let err = Runtime::open_with_init_timeout(table, Duration::from_millis(50)).unwrap_err();
    assert!(
        start.elapsed() < Duration::from_millis(250),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        err.to_string(),
        "no ROCm GPU agent: hsa_init from slow table did not return within 50 ms; \
         the GPU driver may be wedged (check dmesg for amdgpu errors)"
    );
    // The helper thread finishes later and shuts the runtime down again.
    let deadline = Instant::now() + Duration::from_secs(5);
    while with(|s| s.shutdowns) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(with(|s| (s.inits, s.shutdowns)), (1, 1));
}

#[test]
fn runtime_objects_can_move_to_a_queue_actor_thread() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Runtime>();
    send_sync::<Signal>();
    send_sync::<Allocation>();
    send_sync::<Executable>();
    send_sync::<KernargArena>();
    send::<AqlQueue>();
    assert_eq!(INIT_TIMEOUT, Duration::from_secs(20));
}

/// With the ring in device memory (ROCr's `HSA_ALLOCATE_QUEUE_DEV_MEM=1`)
/// the header store must follow a store fence; relaunch always fences (it
/// costs nothing measurable), and the packet lands the same.
#[test]
fn a_device_memory_ring_publishes_behind_a_store_fence() {
    let _serial = setup(false);
    std::env::set_var("HSA_ALLOCATE_QUEUE_DEV_MEM", "1");
    let rt = open().unwrap();
    let gpu = rt.gpus().next().unwrap().clone();
    let mut queue = rt.create_queue(&gpu, 4).unwrap();
    std::env::remove_var("HSA_ALLOCATE_QUEUE_DEV_MEM");
    let done = rt.create_signal(1).unwrap();
    let packet = AqlPacket::Pm4Ib(pm4_ib_packet(0x1234_5000, 64, done.handle()).unwrap());
    assert_eq!(queue.submit(&packet).unwrap(), 0);
    assert_eq!(ring_words(0), packet.words());
    assert_eq!(queue.producer().submit(&packet).unwrap(), 1);
    assert_eq!(ring_words(1), packet.words());
}

/// A runtime that predates the executable pool flag refuses it with
/// INVALID_ARGUMENT (ROCr 5.2.3 refuses every flag); its thunk maps every
/// allocation executable, so IBs go to an ordinary allocation: the flag is
/// tried once, then never again for that runtime.
#[test]
fn a_runtime_that_refuses_the_exec_flag_gets_plain_allocations_for_ibs() {
    let _serial = setup(false);
    with(|s| s.refuse_pool_flags = true);
    let rt = open().unwrap();
    let kernarg = rt.kernarg_pool().unwrap();
    let ib = rt
        .allocate(&kernarg, 256, AllocFlags { executable: true })
        .unwrap();
    let plain = sys::HSA_AMD_MEMORY_POOL_STANDARD_FLAG | (scripted::KERNARG_POOL as u32) << 8;
    assert_eq!(with(|s| s.allocations[&(ib.addr() as usize)].1), plain);
    // The refusal is remembered: the next IB goes straight to plain memory
    // (the scripted table would refuse the flag again, so success says so).
    let ib2 = rt
        .allocate(&kernarg, 256, AllocFlags { executable: true })
        .unwrap();
    assert_eq!(with(|s| s.allocations[&(ib2.addr() as usize)].1), plain);
    assert_eq!(
        with(|s| s.allocations.len()),
        2,
        "nothing else was allocated"
    );
}
