//! The CP's count of the fewest invalidations an IB's data needed
//! (`ordering::floor`) beside the IB's own: the floor follows what the
//! dispatches read and wrote, not the boundary the IB chose, and never
//! exceeds what a clean IB did.

use relaunch_encoders::BoundaryKind;
use relaunch_sim::ordering::FloorCounts;
use relaunch_testsupport::simkit::Rig;

fn kinds(k: u64, v: u64, gl1: u64) -> FloorCounts {
    FloorCounts {
        k_invalidate: k,
        l0_invalidate: v,
        gl1_invalidate: gl1,
    }
}

#[test]
fn a_vector_consumer_needs_no_k_cache_invalidate_after_the_prologue() {
    // produce(buf) then consume(out, buf), reading buf by vector loads.
    // Needed: K$ once (the kernargs the host wrote), V$ once (before
    // consume: buf written, out host-written), GL1 twice (the kernargs,
    // then buf).
    for (boundary, ib) in [
        (BoundaryKind::Rmw, kinds(2, 2, 2)),
        (BoundaryKind::RmwVmem, kinds(1, 2, 2)),
    ] {
        let rig = Rig::new("gfx1030", "produce_consume", 5);
        let (b, _, _) = rig.producer_consumer(Some(boundary));
        let placed = rig.place(b);
        rig.lane()
            .replay(&placed)
            .unwrap_or_else(|e| panic!("{boundary}: {e}"));
        let n = rig.dev.cp_counts();
        assert_eq!(n.ib, ib, "{boundary}");
        assert_eq!(n.ib_floor, kinds(1, 1, 2), "{boundary}");
    }
}
