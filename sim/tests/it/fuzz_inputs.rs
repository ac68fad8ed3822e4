//! Garbage never panics the simulator: random and mutated PM4 streams and
//! AQL slots are refused with errors (bounded case counts, a few seconds).

use proptest::prelude::*;
use relaunch_encoders::BoundaryKind;
use relaunch_sim::aql;
use relaunch_sim::ordering::IbLocation;
use relaunch_sim::pm4::execute_ib;
use relaunch_sim::trace::RangeSet;
use relaunch_sim::SimConfig;
use relaunch_testsupport::simkit::{linear, Rig};

/// A device that refuses big grids, so mutated dims stay cheap.
fn rig(target: &str) -> Rig {
    let mut cfg = SimConfig::new(target);
    cfg.max_workgroups_per_dispatch = 64;
    Rig::with_config(cfg, "counter")
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_aql_slots_never_panic(bytes in proptest::collection::vec(any::<u8>(), 64)) {
        let mut slot = [0u8; 64];
        slot.copy_from_slice(&bytes);
        let _ = aql::parse(&slot);
    }

    #[test]
    fn random_dwords_never_panic(words in proptest::collection::vec(any::<u32>(), 0..64)) {
        let rig = rig("gfx1100");
        let at = IbLocation { queue: 0, aql_packet: 0 };
        let _ = execute_ib(&rig.dev, at, &words, &RangeSet::new(), true);
    }

    #[test]
    fn mutated_healthy_ibs_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u32>()), 1..4)) {
        let rig = rig("gfx1201");
        let c = rig.alloc(4);
        let mut words = rig.dwords(rig.counter(c, 3, Some(BoundaryKind::Rmw), &linear(1, 1)));
        for (i, x) in flips {
            let at = i.index(words.len());
            words[at] ^= x;
        }
        let at = IbLocation { queue: 0, aql_packet: 0 };
        let _ = execute_ib(&rig.dev, at, &words, &RangeSet::new(), true);
    }
}
