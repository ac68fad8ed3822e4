//! The simulated device executing IBs: raw input dwords, and a healthy
//! counter IB with input-chosen dwords overwritten. Property: an error or
//! a result, never a panic or a hang (grids are capped small).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use relaunch_encoders::BoundaryKind;
use relaunch_sim::ordering::IbLocation;
use relaunch_sim::pm4::execute_ib;
use relaunch_sim::trace::RangeSet;
use relaunch_sim::SimConfig;
use relaunch_testsupport::simkit::{linear, Rig};

const TARGETS: [&str; 3] = ["gfx1030", "gfx1100", "gfx1201"];

/// One rig per target for the whole run, with a healthy counter IB.
fn rig(i: usize) -> &'static (Rig, Vec<u32>) {
    static RIGS: [OnceLock<(Rig, Vec<u32>)>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    RIGS[i].get_or_init(|| {
        let mut cfg = SimConfig::new(TARGETS[i]);
        cfg.max_workgroups_per_dispatch = 64;
        let rig = Rig::with_config(cfg, "counter");
        let counter = rig.alloc(4);
        let words = rig.dwords(rig.counter(counter, 3, Some(BoundaryKind::Rmw), &linear(1, 1)));
        (rig, words)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (rig, healthy) = rig(usize::from(pick % 3));
    let input: Vec<u32> = rest
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let words = if pick & 0x80 == 0 {
        input
    } else {
        // Pairs (index, value): overwrite dwords of the healthy IB.
        let mut words = healthy.clone();
        for pair in input.chunks_exact(2) {
            let at = pair[0] as usize % words.len();
            words[at] = pair[1];
        }
        words
    };
    let at = IbLocation {
        queue: 0,
        aql_packet: 0,
    };
    let _ = execute_ib(&rig.dev, at, &words, &RangeSet::new(), true);
});
