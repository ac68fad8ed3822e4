//! The instruction interpreter on the fixture kernels (tests/kernels/build)
//! of every RDNA target, in `both` mode: the twin and the interpreter run
//! from the same memory and every byte written must agree, then the
//! results are checked against the expected values too.

use relaunch_sim::isa::KernelMode;
use relaunch_sim::SimConfig;
use relaunch_testsupport::simkit::{linear, Rig};

const TARGETS: [&str; 4] = ["gfx1030", "gfx1100", "gfx1151", "gfx1201"];

fn rig(target: &str, object: &str, mode: KernelMode) -> Rig {
    let mut cfg = SimConfig::new(target);
    cfg.kernels = mode;
    // The twins to compare with (testsupport's; the simulator has none).
    relaunch_testsupport::twins::register_test_kernel_twins();
    Rig::with_config(cfg, object)
}

#[test]
fn counter_and_add_scalar_match_the_twins() {
    for t in TARGETS {
        for mode in [KernelMode::Both, KernelMode::Isa] {
            let r = rig(t, "counter", mode.clone());
            let c = r.alloc(4);
            let b = r.counter(c, 3, None, &linear(256, 64));
            r.run_clean(b);
            assert_eq!(r.dev.memory.read_u32(c).unwrap(), 3 * 256, "{t}");

            let r = rig(t, "add_scalar", mode.clone());
            let acc = r.alloc(4 * 128);
            for i in 0..128u64 {
                r.dev.memory.write_u32(acc + 4 * i, i as u32).unwrap();
            }
            let mut b = r.builder();
            let mut args = acc.to_le_bytes().to_vec();
            args.extend(7u32.to_le_bytes());
            r.dispatch(&mut b, "add_scalar", &linear(128, 32), &args);
            r.run_clean(b);
            for i in 0..128u64 {
                assert_eq!(
                    r.dev.memory.read_u32(acc + 4 * i).unwrap(),
                    i as u32 + 7,
                    "{t}"
                );
            }
        }
    }
}

#[test]
fn axpy_produce_consume_and_lds_reverse_match_the_twins() {
    for t in TARGETS {
        let r = rig(t, "axpy", KernelMode::Both);
        let (b, y) = r.axpy(16, 4);
        r.run_clean(b);
        let at = |i: u64| f32::from_bits(r.dev.memory.read_u32(y + 4 * i).unwrap());
        assert_eq!((at(0), at(17), at(63)), (1.0, 35.0, 127.0), "{t}");

        let r = rig(t, "produce_consume", KernelMode::Both);
        let (b, _buf, out) = r.producer_consumer(Some(relaunch_encoders::BoundaryKind::Rmw));
        r.run_clean(b);
        assert_eq!(r.dev.memory.read_u32(out + 4 * 10).unwrap(), 30, "{t}");

        let r = rig(t, "lds_reverse", KernelMode::Both);
        let (b, data) = r.lds_reverse();
        r.run_clean(b);
        assert_eq!(r.dev.memory.read_u32(data).unwrap(), 63, "{t}");
        assert_eq!(r.dev.memory.read_u32(data + 4 * 64).unwrap(), 127, "{t}");
    }
}

#[test]
fn code_object_v4_counter_and_add_scalar_match_the_twins() {
    // Built only for these targets (tests/kernels/README.md). add_scalar-v4
    // reads the dispatch packet the PM4 path synthesizes.
    for t in ["gfx1030", "gfx1100"] {
        let r = rig(t, "counter-v4", KernelMode::Both);
        let c = r.alloc(4);
        let b = r.counter(c, 2, None, &linear(128, 32));
        r.run_clean(b);
        assert_eq!(r.dev.memory.read_u32(c).unwrap(), 2 * 128, "{t}");

        let r = rig(t, "add_scalar-v4", KernelMode::Both);
        let acc = r.alloc(4 * 96);
        for i in 0..96u64 {
            r.dev.memory.write_u32(acc + 4 * i, 3 * i as u32).unwrap();
        }
        let mut b = r.builder();
        let mut args = acc.to_le_bytes().to_vec();
        args.extend(11u32.to_le_bytes());
        r.dispatch(&mut b, "add_scalar", &linear(96, 32), &args);
        r.run_clean(b);
        for i in 0..96u64 {
            let got = r.dev.memory.read_u32(acc + 4 * i).unwrap();
            assert_eq!(got, 3 * i as u32 + 11, "{t} item {i}");
        }
    }
}
