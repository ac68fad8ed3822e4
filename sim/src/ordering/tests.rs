use super::*;
use crate::trace::AccessKind;

const KA: u64 = 0x1000;
const BUF: u64 = 0x10_000;
const OUT: u64 = 0x20_000;
const RMW: u32 = 0x380;
const WRITE_BACK: u32 = 1 << 15;

fn trace(accesses: &[(AccessKind, u64, u64)]) -> AccessTrace {
    let mut t = AccessTrace::default();
    for &(k, a, l) in accesses {
        t.record(k, a, l);
    }
    t
}

fn producer(i: u64) -> AccessTrace {
    trace(&[
        (AccessKind::ScalarRead, KA + 64 * i, 16),
        (AccessKind::Write, BUF, 256),
    ])
}

fn consumer(i: u64) -> AccessTrace {
    trace(&[
        (AccessKind::ScalarRead, KA + 64 * i, 16),
        (AccessKind::VectorRead, BUF, 256),
        (AccessKind::VectorRead, OUT, 256),
        (AccessKind::Write, OUT, 256),
    ])
}

fn feed(m: &mut OrderingModel, i: usize, kernel: &str, t: &AccessTrace) {
    m.dispatch(DispatchRef {
        pm4_packet: 10 * i,
        dispatch: i,
        kernel,
        trace: t,
    });
}

fn at() -> IbLocation {
    IbLocation {
        queue: 2,
        aql_packet: 7,
    }
}

fn rules(v: &[Violation]) -> Vec<Rule> {
    v.iter().map(|v| v.rule).collect()
}

#[test]
fn healthy_producer_consumer_passes() {
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 1, "consume", &consumer(1));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    assert_eq!(m.finish(), vec![]);
}

#[test]
fn missing_boundary_is_a_race_naming_both_dispatches() {
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    feed(&mut m, 1, "consume", &consumer(1));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    let v = m.finish();
    assert_eq!(rules(&v), vec![Rule::Race]);
    assert_eq!((v[0].queue, v[0].aql_packet, v[0].pm4_packet), (2, 7, 10));
    assert_eq!(
        (v[0].dispatch, v[0].kernel.as_str(), v[0].address),
        (1, "consume", BUF)
    );
    let text = v[0].to_string();
    assert!(text.contains("dispatch 0 (produce)"), "{text}");
    assert!(
        text.starts_with("race at 0x10000: queue 2, AQL packet 7"),
        "{text}"
    );
}

#[test]
fn wait_without_invalidation_is_a_stale_read() {
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.wait();
    feed(&mut m, 1, "consume", &consumer(1));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    let v = m.finish();
    assert_eq!(rules(&v), vec![Rule::StaleRead]);
    assert!(v[0].detail.contains("GLV_INV"), "{}", v[0]);
    assert!(v[0].detail.contains("dispatch 0 (produce)"), "{}", v[0]);
    // The vmem-only boundary (0x300) is enough for a vector reader...
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(0x300));
    feed(&mut m, 1, "consume", &consumer(1));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    assert_eq!(m.finish(), vec![]);
    // ...but not for a scalar read of what was written.
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(0x300));
    let scalar = trace(&[(AccessKind::ScalarRead, BUF, 8)]);
    feed(&mut m, 1, "reader", &scalar);
    let v = m.finish();
    assert_eq!(rules(&v), vec![Rule::StaleRead, Rule::UnreleasedResult]);
    assert!(v[0].detail.contains("GLK_INV"), "{}", v[0]);
}

#[test]
fn missing_prologue_and_epilogue_are_reported() {
    let mut m = OrderingModel::new(at());
    feed(&mut m, 0, "produce", &producer(0));
    m.wait();
    let v = m.finish();
    assert_eq!(
        rules(&v),
        vec![Rule::HostWriteNotAcquired, Rule::UnreleasedResult]
    );
    assert_eq!(v[0].address, KA);
    assert!(v[0].detail.contains("GLK_INV"), "{}", v[0]);
    assert_eq!(v[1].address, BUF);
    assert!(v[1].detail.contains("epilogue"), "{}", v[1]);
}

#[test]
fn release_mem_with_write_back_releases_unwaited_writes() {
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.release(CacheOps {
        gl2_wb: true,
        ..CacheOps::default()
    });
    assert_eq!(m.finish(), vec![]);
    // A write-back acquire without a wait does not cover a running dispatch.
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    assert_eq!(rules(&m.finish()), vec![Rule::UnreleasedResult]);
}

#[test]
fn unordered_atomics_on_one_counter_are_not_a_race() {
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    let t = trace(&[
        (AccessKind::ScalarRead, KA, 8),
        (AccessKind::Atomic, BUF, 4),
    ]);
    for i in 0..4 {
        feed(&mut m, i, "counter", &t);
    }
    m.wait();
    // An atomic after a plain wait needs no invalidation either.
    feed(&mut m, 4, "counter", &t);
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    assert_eq!(m.finish(), vec![]);
    // But a plain read racing an atomic is.
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "counter", &t);
    let read = trace(&[(AccessKind::VectorRead, BUF, 4)]);
    feed(&mut m, 1, "reader", &read);
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    let v = m.finish();
    assert_eq!(rules(&v), vec![Rule::Race]);
    assert!(v[0].detail.contains("atomically"), "{}", v[0]);
}

#[test]
fn unreleased_writes_carry_to_the_packet_the_host_observes() {
    let mut m = OrderingModel::new(at());
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    feed(&mut m, 0, "produce", &producer(0));
    m.wait();
    let end = m.finish_parts(false);
    assert_eq!(end.violations, vec![]);
    assert_eq!(end.unreleased.iter().next(), Some((BUF, BUF + 256)));
    // The next packet releases it: clean.
    let mut m = OrderingModel::new(at());
    m.carry_in(&end.unreleased);
    m.acquire(CacheOps::from_acquire_gcr(RMW));
    m.wait();
    m.acquire(CacheOps::from_acquire_gcr(WRITE_BACK));
    assert_eq!(m.finish(), vec![]);
    // Or it does not, and the host is told: reported.
    let mut m = OrderingModel::new(at());
    m.carry_in(&end.unreleased);
    let v = m.finish();
    assert_eq!(rules(&v), vec![Rule::UnreleasedResult]);
    assert_eq!((v[0].address, v[0].kernel.as_str()), (BUF, "(no dispatch)"));
}
