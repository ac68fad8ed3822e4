//! Byte identity over varied dispatch streams: fixed pseudo-random streams
//! (every family, kernels with and without the private segment buffer,
//! padding or a kernarg pointer, kernel switches, repeats, cycles, refused
//! dispatches, boundaries, every option and small segments) encode to the
//! digests captured from the encoder before its per-kernel templates, and
//! each dispatch of each stream, decoded back, sees what the full-state
//! encoding of the same stream gives it. The extended streams add what the
//! templates must get right: long chains of one dispatch, a kernel passed
//! under another string, a kernel that reads its dispatch packet, and
//! stream-ordered IBs.

use crate::common;
#[path = "../common/digest.rs"]
mod digest;
mod golden;

use common::*;
use digest::digest_ib;
use golden::{GOLDEN, GOLDEN_EXTENDED};
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::decode::Decoder;
use relaunch_encoders::stream_order::DONE_DWORDS;
use relaunch_encoders::Packet;
use relaunch_encoders::{
    BoundaryKind, EncodeOptions, EncodedIb, IbBuilder, KernelCode, Launch, StreamWords,
};
use relaunch_facts::descriptor::{properties as p, rsrc2};
use sha2::{Digest, Sha256};

/// xorshift64*: the same streams on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Which set of streams: the one main's digests were first captured for,
/// or the extended one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Set {
    Base,
    Extended,
}

fn kernels(family: Family, set: Set) -> Vec<(&'static str, KernelDescriptor, u64)> {
    let a = counter_kd(true);
    let mut b = counter_kd(false);
    b.compute_pgm_rsrc1 = 0x1234;
    b.group_segment_fixed_size = 700;
    b.compute_pgm_rsrc3 = 3;
    let c = match family {
        Family::Gfx10 => psb_kd(),
        Family::Gfx11 => padded_kd(),
        Family::Gfx12 => {
            let mut c = counter_kd(true);
            c.compute_pgm_rsrc1 = 0x60AF_0041;
            c
        }
    };
    let none = KernelDescriptor {
        kernel_code_properties: p::WAVEFRONT_SIZE32,
        compute_pgm_rsrc2: 0x80,
        kernarg_size: 0,
        ..counter_kd(true)
    };
    let mut wide = counter_kd(true);
    wide.kernarg_size = 24;
    let mut rsrc2_users = counter_kd(true);
    rsrc2_users.compute_pgm_rsrc2 = 0x80 | (2 << rsrc2::USER_SGPR_SHIFT) | 0x100;
    let mut packet = counter_kd(true);
    packet.kernel_code_properties |= p::DISPATCH_PTR;
    packet.compute_pgm_rsrc2 = 0x80 | (4 << rsrc2::USER_SGPR_SHIFT);
    let mut out = vec![
        ("a", a, 0x7F00_0000_1040),
        ("b", b, 0x7F00_0010_0040),
        ("c", c, 0x1_0000_0040),
        ("none", none, 0x7F00_0020_0040),
        ("wide", wide, 0x7F00_0030_0040),
        // The same code as "a" under another name: a kernel of its own.
        ("a_alias", a, 0x7F00_0000_1040),
        ("a2", rsrc2_users, 0x7F00_0040_0040),
    ];
    if set == Set::Extended {
        // Reads its dispatch packet (one synthesized per dispatch).
        out.push(("packet", packet, 0x7F00_0050_0040));
        // "a" again, passed as another string (see `encode`).
        out.push(("a", a, 0x7F00_0000_1040));
    }
    out
}

const LAUNCHES: [Launch; 4] = [
    Launch {
        grid: [64, 1, 1],
        block: [64, 1, 1],
        dynamic_group_bytes: 0,
    },
    Launch {
        grid: [256, 4, 1],
        block: [32, 2, 1],
        dynamic_group_bytes: 0,
    },
    Launch {
        grid: [128, 1, 1],
        block: [64, 1, 1],
        dynamic_group_bytes: 2000,
    },
    Launch {
        grid: [64, 1, 1],
        block: [64, 1, 1],
        dynamic_group_bytes: 100,
    },
];

/// One call on the builder.
#[derive(Debug, Clone)]
enum Op {
    Boundary(BoundaryKind),
    Dispatch {
        kernel: usize,
        launch: Launch,
        kernarg: Vec<u8>,
        align: u32,
    },
}

/// A stream of `len` ops: dispatches mostly repeat the previous one or
/// return to one of the last few (as a decode step cycles its kernels);
/// some are refused (short kernarg, bad alignment, zero grid).
fn stream(family: Family, set: Set, seed: u64, len: usize) -> Vec<Op> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let ks = kernels(family, set);
    let mut recent: Vec<(usize, Launch, usize, u32)> = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0u64;
    for _ in 0..len {
        if rng.below(16) < 4 {
            let kind = [BoundaryKind::Wait, BoundaryKind::RmwVmem, BoundaryKind::Rmw]
                [rng.below(3) as usize];
            out.push(Op::Boundary(kind));
            continue;
        }
        let pick = rng.below(10);
        let (kernel, mut launch, klen, align) = if pick < 4 && !recent.is_empty() {
            recent[recent.len() - 1]
        } else if pick < 7 && !recent.is_empty() {
            recent[rng.below(recent.len() as u64) as usize]
        } else {
            let kernel = rng.below(ks.len() as u64) as usize;
            let need = ks[kernel].1.kernarg_size as usize;
            let klen = if need == 0 {
                0
            } else {
                [need, need, need + 8, 40][rng.below(4) as usize]
            };
            let align = [8, 8, 16, 64][rng.below(4) as usize];
            let launch = LAUNCHES[rng.below(LAUNCHES.len() as u64) as usize];
            (kernel, launch, klen, align)
        };
        recent.push((kernel, launch, klen, align));
        if recent.len() > 6 {
            recent.remove(0);
        }
        let mut kernarg: Vec<u8> = if rng.below(3) == 0 {
            vec![0x5A; klen]
        } else {
            counter += 1;
            (0..klen)
                .map(|i| (counter >> (8 * (i % 8))) as u8)
                .collect()
        };
        let mut align = align;
        match rng.below(40) {
            0 if !kernarg.is_empty() => {
                kernarg.pop();
            }
            1 => align = 3,
            2 => launch.grid[0] = 0,
            3 if kernarg.is_empty() => kernarg.push(1),
            _ => {}
        }
        out.push(Op::Dispatch {
            kernel,
            launch,
            kernarg,
            align,
        });
        // Now and then a long chain of the same dispatch (runs, budgets
        // spent inside a segment), with a boundary before each or none.
        if set == Set::Extended && rng.below(24) == 0 {
            let boundary =
                [None, Some(BoundaryKind::Rmw), Some(BoundaryKind::Wait)][rng.below(3) as usize];
            for _ in 0..20 + rng.below(60) {
                if let Some(kind) = boundary {
                    out.push(Op::Boundary(kind));
                }
                let mut kernarg: Vec<u8> = vec![0x5A; klen];
                if rng.below(2) == 0 {
                    counter += 1;
                    kernarg = (0..klen)
                        .map(|i| (counter >> (8 * (i % 8))) as u8)
                        .collect();
                }
                out.push(Op::Dispatch {
                    kernel,
                    launch,
                    kernarg,
                    align,
                });
            }
        }
    }
    out
}

/// One stream to encode.
#[derive(Debug, Clone, Copy)]
struct Case {
    family: Family,
    set: Set,
    seed: u64,
    opts: EncodeOptions,
    /// Stream-ordered through these words (extended set only).
    order: Option<StreamWords>,
}

/// The IB (none when every dispatch was refused) and each refusal's text.
fn encode(case: &Case, ops: &[Op], opts: EncodeOptions) -> (Option<EncodedIb>, Vec<String>) {
    let family = case.family;
    let ks = kernels(family, case.set);
    // In the extended set the last kernel's name is the same text as the
    // first's at another address: the same kernel, found by comparing it.
    let alias = String::from(ks[ks.len() - 1].0);
    let codes: Vec<KernelCode<'_>> = ks
        .iter()
        .enumerate()
        .map(|(i, &(symbol, kd, addr))| {
            let aliased = case.set == Set::Extended && i == ks.len() - 1;
            code(if aliased { &alias } else { symbol }, family, kd, addr)
        })
        .collect();
    let mut b = match case.order {
        Some(words) => {
            // A target of the family (the streams stay far inside every
            // target's limits, so which one does not change a byte).
            let target = relaunch_facts::TargetFacts::all()
                .iter()
                .find(|t| t.family == family)
                .expect("every family has a target");
            IbBuilder::new_stream_ordered(target, opts, words).expect("valid words")
        }
        None => IbBuilder::new(family, opts),
    };
    let mut refusals = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Boundary(kind) => b.boundary(*kind),
            Op::Dispatch {
                kernel,
                launch,
                kernarg,
                align,
            } => {
                let before = b.dispatch_count();
                match b.dispatch(&codes[*kernel], launch, kernarg, *align) {
                    Ok(id) => assert_eq!(id as usize, before, "op {i}"),
                    Err(e) => {
                        assert_eq!(b.dispatch_count(), before, "op {i}: refusal recorded");
                        refusals.push(format!("op {i}: {e}"));
                    }
                }
            }
        }
    }
    (b.finish(0x7F20_0000_0000).ok(), refusals)
}

/// The IB's digest (`common/digest.rs`) after the refusals, shortened.
fn digest(case: &Case, ib: &Option<EncodedIb>, refusals: &[String]) -> String {
    let mut h = Sha256::new();
    for r in refusals {
        h.update(r.as_bytes());
    }
    if let Some(ib) = ib {
        let after = if case.order.is_some() { DONE_DWORDS } else { 0 };
        digest_ib(&mut h, ib, after);
    }
    h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every option set a stream is encoded with.
fn option_sets() -> Vec<EncodeOptions> {
    [
        (false, false, false),
        (false, true, false),
        (true, false, false),
        (false, false, true),
        (false, true, true),
    ]
    .map(|(full, immutable, small)| EncodeOptions {
        full_state: full,
        kernargs_immutable: immutable,
        max_segment_dwords: if small { 256 } else { u32::MAX },
        ..EncodeOptions::default()
    })
    .to_vec()
}

/// Every stream of `set`, in its digests' order.
fn cases(set: Set) -> Vec<Case> {
    let seeds = match set {
        Set::Base => 1..=4u64,
        Set::Extended => 1..=8u64,
    };
    let mut out = Vec::new();
    for family in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
        for seed in seeds.clone() {
            for opts in option_sets() {
                let order = (set == Set::Extended && seed % 2 == 1).then_some(StreamWords {
                    gate: 0x7F30_0000_0000,
                });
                out.push(Case {
                    family,
                    set,
                    seed,
                    opts,
                    order,
                });
            }
        }
    }
    out
}

/// Ops per stream of `set`.
fn stream_ops(set: Set) -> usize {
    match set {
        Set::Base => 400,
        Set::Extended => 600,
    }
}

fn check_golden(set: Set, golden: &[&str]) {
    let cases = cases(set);
    let got: Vec<String> = cases
        .iter()
        .map(|case| {
            let ops = stream(case.family, set, case.seed, stream_ops(set));
            let (ib, refusals) = encode(case, &ops, case.opts);
            digest(case, &ib, &refusals)
        })
        .collect();
    if std::env::var_os("RELAUNCH_PRINT_DIGESTS").is_some() {
        println!("{set:?}");
        for d in &got {
            println!("    \"{d}\",");
        }
    }
    assert_eq!(got.len(), golden.len(), "one digest per case");
    for (i, (d, want)) in got.iter().zip(golden).enumerate() {
        assert_eq!(d, want, "case {i}: {:?}", cases[i]);
    }
}

#[test]
fn streams_encode_to_the_golden_bytes() {
    check_golden(Set::Base, GOLDEN);
}

#[test]
fn extended_streams_encode_to_the_golden_bytes() {
    check_golden(Set::Extended, GOLDEN_EXTENDED);
}

/// Per dispatch: the packets other than SET_SH_REG since the previous one
/// (a segment's prologue left out), DISPATCH_DIRECT, the SH registers, and
/// which registers were written since the previous dispatch.
type Step = (Vec<String>, [u32; 3], u32, Vec<Option<u32>>, Vec<bool>);

fn steps(ib: &EncodedIb) -> Vec<Step> {
    let mut out = Vec::new();
    for seg in &ib.segments {
        let mut regs = vec![None; 0x50];
        let mut written = vec![false; 0x50];
        let mut packets = Vec::new();
        for item in Decoder::new(&seg.dwords, ib.family) {
            let (at, packet) = item.expect("encoder output decodes strictly");
            match packet {
                Packet::SetShReg { offset, values } => {
                    for (i, v) in values.iter().enumerate() {
                        regs[(offset - 0x200) as usize + i] = Some(*v);
                        written[(offset - 0x200) as usize + i] = true;
                    }
                }
                Packet::DispatchDirect { groups, initiator } => out.push((
                    std::mem::take(&mut packets),
                    groups,
                    initiator,
                    regs.clone(),
                    std::mem::replace(&mut written, vec![false; 0x50]),
                )),
                _ if at == 0 => {}
                other => packets.push(format!("{other:?}")),
            }
        }
    }
    out
}

#[test]
fn streams_decode_to_what_full_state_programs() {
    for case in cases(Set::Base).into_iter().chain(cases(Set::Extended)) {
        let (family, seed, opts) = (case.family, case.seed, case.opts);
        if opts.full_state {
            continue;
        }
        let ops = stream(family, case.set, seed, stream_ops(case.set));
        let (ib, refusals) = encode(&case, &ops, opts);
        let full_opts = EncodeOptions {
            full_state: true,
            ..opts
        };
        let (full, full_refusals) = encode(&case, &ops, full_opts);
        let what = format!("{case:?}");
        assert_eq!(refusals, full_refusals, "{what}");
        let (Some(ib), Some(full)) = (ib, full) else {
            panic!("{what}: no dispatch recorded");
        };
        assert_eq!(ib.kernarg_image, full.kernarg_image, "{what}");
        assert_eq!(ib.kernels, full.kernels, "{what}");
        let (seen, want) = (steps(&ib), steps(&full));
        assert_eq!(seen.len(), want.len(), "{what}");
        assert_eq!(seen.len(), ib.sites.len(), "{what}");
        for (i, (s, w)) in seen.iter().zip(&want).enumerate() {
            assert_eq!(s.0, w.0, "{what}: boundary before dispatch {i}");
            assert_eq!((s.1, s.2), (w.1, w.2), "{what}: dispatch {i}");
            for r in (0..0x50).filter(|&r| w.4[r]) {
                assert_eq!(s.3[r], w.3[r], "{what}: dispatch {i} reg {:#x}", 0x200 + r);
            }
            let (a, b) = (ib.sites[i], full.sites[i]);
            assert_eq!(
                (a.kernarg_offset, a.kernarg_len, a.kernel),
                (b.kernarg_offset, b.kernarg_len, b.kernel),
                "{what}: site {i}"
            );
        }
    }
}

/// A transfer node between two chains of the same dispatch (each kept as an
/// open run): the chain before it is written first, ids stay in order, and
/// what the dispatches after it program matches full state.
#[test]
fn a_transfer_ends_the_open_run() {
    use relaunch_encoders::dma::DmaOp;
    let launch = LAUNCHES[0];
    let record = |full_state: bool| {
        let opts = EncodeOptions {
            full_state,
            ..EncodeOptions::default()
        };
        let mut b = IbBuilder::new(Family::Gfx12, opts);
        let kd = counter_kd(true);
        let a = code("a", Family::Gfx12, kd, 0x7F00_0000_1040);
        let mut ids = Vec::new();
        for i in 0..12u64 {
            if i == 6 {
                let fill = DmaOp::Fill {
                    dst: 0x1000_0000,
                    pattern: 7,
                    bytes: 64,
                };
                ids.push(b.transfer(&[fill]).unwrap());
            }
            b.boundary(BoundaryKind::Rmw);
            ids.push(b.dispatch(&a, &launch, &i.to_le_bytes(), 8).unwrap());
        }
        assert_eq!(ids, (0..13).collect::<Vec<u32>>());
        b.finish(0x7F20_0000_0000).unwrap()
    };
    let (ib, full) = (record(false), record(true));
    let order = |ib: &EncodedIb| -> Vec<&'static str> {
        ib.segments
            .iter()
            .flat_map(|s| Decoder::new(&s.dwords, ib.family))
            .map(|p| p.expect("decodes").1)
            .filter_map(|p| match p {
                Packet::DispatchDirect { .. } => Some("dispatch"),
                Packet::DmaData { .. } => Some("dma"),
                _ => None,
            })
            .collect()
    };
    let want: Vec<&str> = (0..13)
        .map(|i| if i == 6 { "dma" } else { "dispatch" })
        .collect();
    assert_eq!(order(&ib), want);
    assert_eq!(ib.kernarg_image, full.kernarg_image);
    let (seen, full_steps) = (steps(&ib), steps(&full));
    assert_eq!(seen.len(), 12);
    for (i, (s, w)) in seen.iter().zip(&full_steps).enumerate() {
        for r in (0..0x50).filter(|&r| w.4[r]) {
            assert_eq!(s.3[r], w.3[r], "dispatch {i} reg {:#x}", 0x200 + r);
        }
    }
    for (a, b) in ib.sites.iter().zip(&full.sites) {
        assert_eq!(
            (a.kernarg_offset, a.kernarg_len, a.kernel),
            (b.kernarg_offset, b.kernarg_len, b.kernel)
        );
    }
}
