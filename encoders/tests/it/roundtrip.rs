//! Property: whatever the encoder emits decodes strictly, and each dispatch
//! sees exactly the state it asked for.

use crate::common;

use common::*;
use proptest::prelude::*;
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::{BoundaryKind, EncodeOptions, IbBuilder, Launch};

#[derive(Debug, Clone, Copy)]
enum Op {
    Dispatch {
        kernel: usize,
        groups: [u32; 3],
        block: [u32; 3],
        dynamic: u32,
        arg: u8,
    },
    Boundary(u8),
    /// The previous dispatch again with new kernarg bytes (the fast path).
    Repeat(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..3, [1u32..5, 1u32..4, 1u32..3], [1u32..9, 1u32..5, 1u32..3], 0u32..3000, any::<u8>())
            .prop_map(|(kernel, groups, block, dynamic, arg)| Op::Dispatch { kernel, groups, block, dynamic, arg }),
        1 => (0u8..3).prop_map(Op::Boundary),
        2 => any::<u8>().prop_map(Op::Repeat),
    ]
}

fn kernels(family: Family) -> Vec<(KernelDescriptor, u64)> {
    let a = counter_kd(true);
    let mut b = counter_kd(false);
    b.compute_pgm_rsrc1 = 0x1234;
    b.group_segment_fixed_size = 700;
    b.compute_pgm_rsrc3 = 3;
    let c = match family {
        Family::Gfx10 => psb_kd(),
        Family::Gfx11 => padded_kd(),
        Family::Gfx12 => counter_kd(true),
    };
    vec![
        (a, 0x7F00_0000_1040),
        (b, 0x7F00_0010_0040),
        (c, 0x1_0000_0040),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn encoder_output_round_trips(
        ops in proptest::collection::vec(op(), 1..60),
        fam in 0usize..3,
        full in any::<bool>(),
        immutable in any::<bool>(),
        small in any::<bool>(),
    ) {
        let family = [Family::Gfx10, Family::Gfx11, Family::Gfx12][fam];
        let ks = kernels(family);
        let names = ["a", "b", "c"];
        let opts = EncodeOptions {
            full_state: full,
            kernargs_immutable: immutable,
            max_segment_dwords: if small { 256 } else { u32::MAX },
            ..EncodeOptions::default()
        };
        let mut b = IbBuilder::new(family, opts);
        let mut want = Vec::new();
        for op in &ops {
            let op = match (*op, want.last()) {
                (Op::Repeat(arg), Some(&(kernel, groups, block, dynamic, _))) => {
                    Op::Dispatch { kernel, groups, block, dynamic, arg }
                }
                (Op::Repeat(_), None) => continue,
                (op, _) => op,
            };
            match op {
                Op::Repeat(_) => unreachable!("replaced above"),
                Op::Boundary(k) => b.boundary([BoundaryKind::Wait, BoundaryKind::RmwVmem, BoundaryKind::Rmw][k as usize]),
                Op::Dispatch { kernel, groups, block, dynamic, arg } => {
                    let (kd, addr) = ks[kernel];
                    let code = code(names[kernel], family, kd, addr);
                    let grid = [groups[0] * block[0], groups[1] * block[1], groups[2] * block[2]];
                    let launch = Launch { grid, block, dynamic_group_bytes: dynamic };
                    b.dispatch(&code, &launch, &[arg; 8], 8).unwrap();
                    want.push((kernel, groups, block, dynamic, arg));
                    prop_assert_eq!(b.dispatch_count(), want.len());
                }
            }
        }
        if want.is_empty() {
            return Ok(());
        }
        let base = 0x7F20_0000_0000u64;
        let recorded = b.dwords();
        let ib = b.finish(base).unwrap();
        // What `dwords()` promised, plus the epilogue.
        prop_assert_eq!(ib.total_dwords(), recorded + 10);
        for (i, site) in ib.sites.iter().enumerate() {
            let d = &ib.segments[site.segment as usize].dwords;
            prop_assert_eq!(d[site.dispatch_dword as usize], 0xC003_1502, "site {}", i);
            let seg = &ib.segments[site.segment as usize];
            prop_assert!((seg.first_dispatch..seg.first_dispatch + seg.dispatch_count).contains(&(i as u32)));
        }
        let seen = replay(&ib);
        prop_assert_eq!(seen.len(), want.len());
        for (i, (s, (kernel, groups, block, dynamic, arg))) in seen.iter().zip(&want).enumerate() {
            let (kd, addr) = ks[*kernel];
            let entry = kd.code_entry(addr);
            prop_assert_eq!(s.groups, *groups);
            prop_assert_eq!(s.initiator & 0x8000 != 0, kd.wave32());
            prop_assert_eq!([s.reg(0x207), s.reg(0x208), s.reg(0x209)], *block);
            prop_assert_eq!(s.reg(0x20C), (entry >> 8) as u32);
            prop_assert_eq!(s.reg(0x20D), (entry >> 40) as u32);
            prop_assert_eq!(s.reg(0x212), kd.compute_pgm_rsrc1);
            let lds = (kd.group_segment_fixed_size + dynamic).div_ceil(512);
            let trap = relaunch_facts::regs::rsrc2_trap_bits(family, true);
            prop_assert_eq!(s.reg(0x213), kd.compute_pgm_rsrc2 | lds << 15 | trap);
            prop_assert_eq!(s.reg(0x228), kd.compute_pgm_rsrc3);
            let psb = if kd.wants_private_segment_buffer() { 4 } else { 0 };
            for u in 0..psb {
                prop_assert_eq!(s.reg(0x240 + u), 0);
            }
            let ka = base + ib.sites[i].kernarg_offset as u64;
            prop_assert_eq!(s.reg(0x240 + psb), ka as u32);
            prop_assert_eq!(s.reg(0x241 + psb), (ka >> 32) as u32);
            for u in psb + 2..kd.user_sgpr_count() {
                prop_assert_eq!(s.reg(0x240 + u), 0, "padding USER_DATA_{}", u);
            }
            prop_assert_eq!(&ib.kernarg_image[ib.kernarg_range(i as u32).unwrap()], &[*arg; 8]);
            prop_assert_eq!(ib.symbol(i as u32), Some(names[*kernel]));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// The decoder never panics on arbitrary words, with type-3 headers made
    /// likely so packet bodies get exercised.
    #[test]
    fn decoder_survives_garbage(
        words in proptest::collection::vec(
            prop_oneof![
                any::<u32>(),
                (0u32..0x40, any::<u8>()).prop_map(|(count, opcode)| 0xC000_0000 | count << 16 | (opcode as u32) << 8),
                (0x76u32..0x77, 0u32..4).prop_map(|(op, count)| 0xC000_0002 | count << 16 | op << 8),
                (0x1F0u32..0x260).prop_map(|o| o),
            ],
            0..64,
        ),
        fam in 0usize..3,
    ) {
        let family = [Family::Gfx10, Family::Gfx11, Family::Gfx12][fam];
        let strict = relaunch_encoders::decode(&words, family);
        let lenient = relaunch_encoders::decode::decode_lenient(&words, family);
        let text = relaunch_encoders::decode::dump_lenient(&words, family);
        if strict.is_ok() {
            prop_assert!(!text.contains("!!"), "{}", text);
            prop_assert_eq!(strict.unwrap().len(), lenient.len());
        }
    }
}
