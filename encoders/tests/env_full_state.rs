//! `RELAUNCH_PM4_FULL_STATE=1` forces full state, and so does the reference
//! system's `REDLINE_PM4_FULL_STATE=1` unless relaunch's variable is set
//! (its own test binary, so setting the variables cannot affect other
//! tests; one test function, so they do not race).

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

    let full = |relaunch: Option<&str>, reference: Option<&str>| {
        for (name, value) in [
            (FULL_STATE_ENV, relaunch),
            ("REDLINE_PM4_FULL_STATE", reference),
        ] {
            match value {
                Some(v) => std::env::set_var(name, v),
                None => std::env::remove_var(name),
            }
        }
        IbBuilder::new(Family::Gfx11, EncodeOptions::default())
            .options()
            .full_state
    };
    assert!(!full(None, None));
    assert!(full(None, Some("1")), "the reference name is honoured");
    assert!(!full(None, Some("0")));
    assert!(
        !full(Some("0"), Some("1")),
        "relaunch's name takes precedence"
    );
    assert!(full(Some("1"), Some("0")));
    full(None, None);
}
