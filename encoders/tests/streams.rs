//! Byte identity over varied dispatch streams: fixed pseudo-random streams
//! (every family, kernels with and without the private segment buffer,
//! padding or a kernarg pointer, kernel switches, repeats, cycles, refused
//! dispatches, boundaries, every option and small segments) encode to the
//! digests captured from the encoder before its per-kernel templates, and
//! each dispatch of each stream, decoded back, sees what the full-state
//! encoding of the same stream gives it.

mod common;

use common::*;
use relaunch_device::codeobj::descriptor::{properties as p, rsrc2};
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::decode::Decoder;
use relaunch_encoders::Packet;
use relaunch_encoders::{BoundaryKind, EncodeOptions, EncodedIb, IbBuilder, KernelCode, Launch};
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

fn kernels(family: Family) -> Vec<(&'static str, KernelDescriptor, u64)> {
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
    vec![
        ("a", a, 0x7F00_0000_1040),
        ("b", b, 0x7F00_0010_0040),
        ("c", c, 0x1_0000_0040),
        ("none", none, 0x7F00_0020_0040),
        ("wide", wide, 0x7F00_0030_0040),
        // The same code as "a" under another name: a kernel of its own.
        ("a_alias", a, 0x7F00_0000_1040),
        ("a2", rsrc2_users, 0x7F00_0040_0040),
    ]
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
fn stream(family: Family, seed: u64, len: usize) -> Vec<Op> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let ks = kernels(family);
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
    }
    out
}

/// The IB (none when every dispatch was refused) and each refusal's text.
fn encode(family: Family, ops: &[Op], opts: EncodeOptions) -> (Option<EncodedIb>, Vec<String>) {
    let ks = kernels(family);
    let codes: Vec<KernelCode<'_>> = ks
        .iter()
        .map(|&(symbol, kd, addr)| code(symbol, family, kd, addr))
        .collect();
    let mut b = IbBuilder::new(family, opts);
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

/// Everything `finish` returns but the epilogue's words (their cache
/// control may change on its own), and the refusals.
fn digest(ib: &Option<EncodedIb>, refusals: &[String]) -> String {
    let mut h = Sha256::new();
    for r in refusals {
        h.update(r.as_bytes());
    }
    if let Some(ib) = ib {
        let last = ib.segments.len() - 1;
        for (i, seg) in ib.segments.iter().enumerate() {
            let end = seg.dwords.len() - if i == last { 10 } else { 0 };
            h.update(seg.first_dispatch.to_le_bytes());
            h.update(seg.dispatch_count.to_le_bytes());
            h.update((end as u64).to_le_bytes());
            for d in &seg.dwords[..end] {
                h.update(d.to_le_bytes());
            }
        }
        for s in &ib.sites {
            for v in [
                s.segment,
                s.dispatch_dword,
                s.kernarg_offset,
                s.kernarg_len,
                s.kernel,
            ] {
                h.update(v.to_le_bytes());
            }
        }
        for k in &ib.kernels {
            h.update(k.symbol.as_bytes());
            h.update(k.kd_address.to_le_bytes());
        }
        h.update(&ib.kernarg_image);
        h.update([ib.kernargs_shared as u8]);
    }
    h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// (family, seed, options) of every stream, in `GOLDEN` order.
fn cases() -> Vec<(Family, u64, EncodeOptions)> {
    let mut out = Vec::new();
    for family in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
        for seed in 1..=4u64 {
            for (full, immutable, small) in [
                (false, false, false),
                (false, true, false),
                (true, false, false),
                (false, false, true),
                (false, true, true),
            ] {
                out.push((
                    family,
                    seed,
                    EncodeOptions {
                        full_state: full,
                        kernargs_immutable: immutable,
                        max_segment_dwords: if small { 256 } else { u32::MAX },
                    },
                ));
            }
        }
    }
    out
}

const STREAM_OPS: usize = 400;

/// Digests of `cases()`, captured from the encoder as it was before the
/// per-kernel templates (commit 4d34f41).
#[rustfmt::skip]
const GOLDEN: &[&str] = &[
    "da4d0485c8111e99d275f567",
    "4737787096afb3d1da36b4be",
    "3786a2d3e8fb6f5e7b337fbc",
    "c6480713024758436e3f5e8a",
    "da5f32e46d265219c13f4967",
    "fee9497a93d7c5be56c96a9b",
    "ecba556ec36ee09f9ec19e46",
    "0c7ac8554f34904719fa7e99",
    "14fc9677e72cae0ddfba4b03",
    "3cef9f18b24b3270aaa405d7",
    "db357d5e8a1b5d3f539e88cb",
    "92dc954ef8840455fe79fcec",
    "b55c616f4a4c0e17d1e935bb",
    "e43b0b1e7406bd0e2fff60a0",
    "78074f153152379db6cb3ef5",
    "d34d9d16bf081a64d333b129",
    "0f73129c178fc92613aafdd0",
    "49c586087e4313c55e596c99",
    "26f239ed69472ee12632c5b1",
    "40b7472692912af3e0a01907",
    "0923648093f8d9f60d226c63",
    "787e99b096e67ee631bd4888",
    "2a5a28123c6236a88ab76ae8",
    "dd44746380a6b2196c8a7250",
    "94dcb34513394bf894c6ea3e",
    "8441a08039c11de879505c47",
    "e76aad9739ed06d35f233e2b",
    "4e6c6c456362674a8c81d6be",
    "d445a29b044828960a5cc4a9",
    "adbdd3fe6371a57ae439047d",
    "3b4f54ac0f680d128c88b921",
    "6611baaed85b0c106b249b4b",
    "066ab4fc500e62e12a3e8ff7",
    "7f1b91c004238fb7cd1f23ff",
    "67e9a22dd043135af10efa2c",
    "394a789c6494e6e8d710a938",
    "7b2c81c35b8ad2c7a9fd4939",
    "ab07d77ec584f9f96e0e53af",
    "11c6857ecbb2941ccadc992d",
    "f522ea50e05f25b3719259f5",
    "db4a76b7ae1bad970a931237",
    "77b5737b3f1e899941be8837",
    "6722d229459fce8d5aaad240",
    "8f9b1cc0360d136d818ee372",
    "1769ac0d97adc119ef0745d2",
    "b487e017adaedb9811d81544",
    "a5be50e9f14eb9a27de2f7ee",
    "510a4e127d5d2f5da613d2c9",
    "1eb5d98398f5c2cb49f30288",
    "a84d1d00fde411a3cb824689",
    "654005e0e668db23e42e41d1",
    "d34c3e9705dbc7cb273f8a67",
    "582f7cc6b9fdf6e3fd02266e",
    "e81498d18ccf202bd088977d",
    "dd933e3f81424d64cba0c389",
    "e6c317bcb48fb209e3b9fbca",
    "6c3b8e004dc61b674fc54ac4",
    "8e52f50ad30db5446d53aed9",
    "db73640098600d771700c456",
    "84b976e8d59c6765a3055d0c",
];

#[test]
fn streams_encode_to_the_golden_bytes() {
    let got: Vec<String> = cases()
        .iter()
        .map(|&(family, seed, opts)| {
            let (ib, refusals) = encode(family, &stream(family, seed, STREAM_OPS), opts);
            digest(&ib, &refusals)
        })
        .collect();
    if std::env::var_os("RELAUNCH_PRINT_DIGESTS").is_some() {
        for d in &got {
            println!("    \"{d}\",");
        }
    }
    assert_eq!(got.len(), GOLDEN.len(), "one digest per case");
    for (i, (d, want)) in got.iter().zip(GOLDEN).enumerate() {
        assert_eq!(d, want, "case {i}: {:?}", cases()[i]);
    }
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
    for (family, seed, opts) in cases() {
        if opts.full_state {
            continue;
        }
        let ops = stream(family, seed, STREAM_OPS);
        let (ib, refusals) = encode(family, &ops, opts);
        let full_opts = EncodeOptions {
            full_state: true,
            ..opts
        };
        let (full, full_refusals) = encode(family, &ops, full_opts);
        let what = format!("{family} seed {seed} {opts:?}");
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
