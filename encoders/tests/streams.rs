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
        // "a" again, passed as another string (see `encode`).
        ("a", a, 0x7F00_0000_1040),
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
        // Now and then a long chain of the same dispatch (runs, budgets
        // spent inside a segment), with a boundary before each or none.
        if rng.below(24) == 0 {
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

/// The IB (none when every dispatch was refused) and each refusal's text.
fn encode(family: Family, ops: &[Op], opts: EncodeOptions) -> (Option<EncodedIb>, Vec<String>) {
    let ks = kernels(family);
    // The last kernel's name is the same text as the first's at another
    // address: the same kernel, found by comparing the text.
    let alias = String::from(ks[ks.len() - 1].0);
    let codes: Vec<KernelCode<'_>> = ks
        .iter()
        .enumerate()
        .map(|(i, &(symbol, kd, addr))| {
            let symbol = if i == ks.len() - 1 { &alias } else { symbol };
            code(symbol, family, kd, addr)
        })
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
        for seed in 1..=8u64 {
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

const STREAM_OPS: usize = 600;

/// Digests of `cases()`, captured from the encoder as it was before the
/// per-kernel templates (commit 4d34f41).
#[rustfmt::skip]
const GOLDEN: &[&str] = &[
    "70aa98b386c4a81e78fd7423",
    "cf5e3772afaf6355858d1f54",
    "b008f3dd685db335b5b6c8fc",
    "fc82b19eea73c216e98f425a",
    "fb186f04bd8221152a3d53f9",
    "91f33feea7c7b157c0cc52f4",
    "ef0d10d09e9d68b985797c45",
    "4fb62b56579f112ef909b79a",
    "c06a01e3d197deb4df7e2fb4",
    "f2f63d8cafb429ef76dd9a7f",
    "ff4b396b5aba534bdcc98b98",
    "2e194a2f41ad7dcb1180eb0f",
    "21c55b3c9ca5681cfac883fa",
    "fceea76c88b325a1f0805eef",
    "0659b971c761b2a6bc87736e",
    "81b77b042327f23b6c77f085",
    "c1b03ac8be779e0d48769f78",
    "de52ee7eb575d7bacbbd20d5",
    "ee39353450874d1179828728",
    "330ab69b4c1f5c6d30a4dddc",
    "671ced462a86b0666e93d1fd",
    "309161e45385b1ce5d54885b",
    "0dedf1bdff02f4b9470972c7",
    "eae5e957467369fa5a94cfa1",
    "ba6faad46c714a1027cdcc23",
    "060c7ac7d56e11ef510bf066",
    "00243fefd6ae925629a07334",
    "a1af868608a54eba8da18ef2",
    "bf70ed86de506b31eebe4100",
    "639b9024233796e739eb3e4b",
    "162d0dabae7b85233c2b785e",
    "5a30312e6b09b85ef657f234",
    "72958f28e1f186eb883f4207",
    "5e7d2406e0b19b92f22f1677",
    "543e4837159b5e8e269da425",
    "22709733517a53d88e23859d",
    "3ff34a27606a2702ec059b97",
    "b4c4e9731e8840b8e8e54966",
    "09f16957fc56152af47ea9a7",
    "ec6f1e51e38a7fc793b0fc95",
    "24c97927cc10a9e911ad8d69",
    "c4976340d8fe66e57a689849",
    "51482d1e11c8911e7ab7780f",
    "abeeee780cb50e59588380d0",
    "5939227899ecabae2dd88e4a",
    "74e770d46a61df7cb71566c3",
    "89e8cd17aead76b4feaf0d73",
    "dcaacf2abbf3687fb00cb5f5",
    "bec6c7fba526f1702dd89fcd",
    "b62bc67e6192a3956b50e7da",
    "400f9e5852e5ffbf9f4026d9",
    "0685f9c40cc0ac1c00396708",
    "25bad46d1d3b02ec38d471c5",
    "d85a4ab5f619e73227a32030",
    "55d1afc4d6c0eec695a71893",
    "59a00e863bdc34d8f0a49f5e",
    "fe885a90b1bfb32c9ef4dbd9",
    "7481bc34a24b41de03e524be",
    "c3a52e7d372207586db83190",
    "34e09c3e6660c4eb85f49cde",
    "6bf042c961a345495ba7c5c2",
    "36f9a87dcd072010662737c3",
    "717dc10d68a7261096bb693a",
    "ccbe436157ff3c0ad075c9e9",
    "ab77ad3ec16cb9b7bfe379d5",
    "1a462cdf28e5ba3541e72d7b",
    "787de83337f346814f384f5a",
    "9cad18242e788c9ddbd29d77",
    "50b0f3a5d633ba16efbad9a6",
    "69ba03ea68a4d24e422b2b8e",
    "5df10645dafa161568e8f855",
    "b782f098482d0222fb8c4542",
    "69fac7db08f3d14c331cbd46",
    "3fb3a00072ef8099c96ffd85",
    "876e3d6fd02a1c2efad2e33c",
    "515f507243e017c4a416f31c",
    "bc675ff277774a8e6c4d4750",
    "23cc66e566d04d0df37d8063",
    "945bdc604f2c8b77f33f87cf",
    "505e37718c9b17b4e3bec87d",
    "713adecbb29135926cf6918e",
    "58c3872b836f5e5e0852da48",
    "a867aca04aecc91fca892df7",
    "653e7cda66da48fe89d7a438",
    "fd3a9d93a4473ea3a8c5bba5",
    "24ebfd8740c1f3c5121d9d34",
    "86d348578b5872cbd547e4d3",
    "b4f291d7d77eca7952e7c77c",
    "01d4c2e15c56540cd8c1b0c3",
    "dce9188e34164044f1257a1a",
    "26193512e1e3becc090a3349",
    "f8778ef09d3c451b418018de",
    "8eff5a182073c72b775d5ea4",
    "28969fd9aa2e5701e9cde694",
    "36f30014782b3d46b752da8d",
    "f8bcb9dfe6e851d0665257db",
    "147dad9759146b096758511f",
    "ee509c52875e7a3c466dfbd3",
    "c358b8d0d3fb20672c14678b",
    "044213131542cf714500bc27",
    "b4c411d6cea9c9b907b55768",
    "475835363c56f2caca06a7a2",
    "0eb3ed6b1b4c8c018bda7985",
    "0f98b685fb0c73c536b1fa8f",
    "db8b679371362b2a94886ccf",
    "bbf0d6080dcb0dc7ff87b15f",
    "79185ef2935ef6bce9aa809c",
    "64dcc709c12a1feecae4d1cc",
    "d9da14ab12e4b1ca3a72d4ed",
    "0a7e00849184ec8d8979e3fd",
    "87ed9074289bf187f97c906c",
    "77e53d2d8f7abf5bf96a108c",
    "4c2baf6b4045857e8c8c8b17",
    "ef825380ffbf66aa4e5b6728",
    "5a0c32781cb1bda9019340de",
    "b93ce025014b18308c28b4a1",
    "df129537f7277a1e8428131d",
    "3d15cef5dca16b94811401bc",
    "2eee183c353b371077d57d80",
    "8a771fe5b2cce9577d4849d1",
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
