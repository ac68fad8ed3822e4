//! `RELAUNCH_PM4_FULL_STATE=1` forces full state (its own test binary, so
//! setting the variable cannot affect other tests).

mod common;

use common::*;
use relaunch_device::Family;
use relaunch_encoders::{EncodeOptions, IbBuilder, Launch, FULL_STATE_ENV};

#[test]
fn env_forces_full_state() {
    std::env::set_var(FULL_STATE_ENV, "1");
    let b = IbBuilder::new(Family::Gfx11, EncodeOptions::default());
    assert!(b.options().full_state);
    let k = code("k", Family::Gfx11, counter_kd(true), 0x1040);
    let mut b = b;
    let l = Launch {
        grid: [32, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    b.dispatch(&k, &l, &[0; 8], 8).unwrap();
    let first = b.dwords();
    b.dispatch(&k, &l, &[0; 8], 8).unwrap();
    assert_eq!(b.dwords() - first, 28);
    std::env::remove_var(FULL_STATE_ENV);
}
