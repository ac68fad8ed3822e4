//! A GPU memory fault through a scripted table that behaves like ROCr
//! (`scripted/mod.rs`, its `processor`): the fault reaches only the
//! system event handlers (never a queue callback), and with no handler returning
//! success the fixture fails the test where ROCr would `abort()`. The
//! runtime layer registers its handler when it opens, so the process
//! lives; a wait in flight fails with `DeviceLost` naming the address
//! within 1 s, and every later submit on that GPU fails at once.
//! Its own test binary: the record of lost GPUs is process-wide.

#[path = "scripted/mod.rs"]
mod scripted;

use std::time::{Duration, Instant};

use relaunch_device::hsa::*;
use scripted::processor::fire_memory_fault;
use scripted::{open, setup, with, GPU};

const WILD: u64 = 0xdead_0000_1000;

#[test]
fn a_memory_fault_loses_the_gpu_and_nothing_hangs() {
    let _serial = setup(false);
    let rt = open().unwrap();
    assert_eq!(
        with(|s| s.event_handlers.len()),
        1,
        "one handler per process"
    );
    let gpu = rt.gpus().next().unwrap().clone();
    let mut queue = rt.create_queue(&gpu, 64).unwrap();
    let done = rt.create_signal(1).unwrap();
    let packet = AqlPacket::Pm4Ib(pm4_ib_packet(0x1234_5000, 64, done.handle()).unwrap());
    queue.submit(&packet).unwrap();
    assert!(rt.device_lost(&gpu).is_none());

    // A waiter is in flight when the fault arrives (nothing ever executes
    // in this table: without the fault record it would time out at 30 s).
    let queue = std::thread::scope(|scope| {
        let done = &done;
        let waiter = scope.spawn(move || {
            let err = queue.wait(done, 1, Duration::from_secs(30)).unwrap_err();
            (err, queue)
        });
        std::thread::sleep(Duration::from_millis(50));
        let fired = Instant::now();
        fire_memory_fault(GPU, WILD);
        let (err, queue) = waiter.join().unwrap();
        assert!(
            fired.elapsed() < Duration::from_secs(1),
            "{:?}",
            fired.elapsed()
        );
        assert_eq!(err.lost_address(), Some(WILD), "{err}");
        let text = err.to_string();
        assert!(text.contains("0xdead00001000"), "{text}");
        assert!(text.contains("page not present"), "{text}");
        queue
    });

    // The queue callback was never called (the scripted queue's status).
    let fault = rt.device_lost(&gpu).unwrap();
    assert_eq!((fault.address, fault.agent), (WILD, GPU.handle));
    // Later calls fail at once, on this queue and a new one.
    let mut queue = queue;
    let started = Instant::now();
    let err = queue.submit(&packet).unwrap_err();
    assert!(matches!(err, HsaError::DeviceLost { .. }), "{err}");
    assert!(rt.check_device(&gpu, "before a replay").is_err());
    assert!(started.elapsed() < Duration::from_secs(1));
    // Another fault on the same GPU keeps the first as the cause.
    fire_memory_fault(GPU, 0x1000);
    assert_eq!(rt.device_lost(&gpu).unwrap().address, WILD);
    drop((queue, done));
    drop(rt);
}
