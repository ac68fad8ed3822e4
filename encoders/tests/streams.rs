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

mod common;
#[path = "common/digest.rs"]
mod digest;

use common::*;
use digest::digest_ib;
use relaunch_device::codeobj::descriptor::{properties as p, rsrc2};
use relaunch_device::codeobj::KernelDescriptor;
use relaunch_device::Family;
use relaunch_encoders::decode::Decoder;
use relaunch_encoders::stream_order::DONE_DWORDS;
use relaunch_encoders::Packet;
use relaunch_encoders::{
    BoundaryKind, EncodeOptions, EncodedIb, IbBuilder, KernelCode, Launch, StreamWords,
};
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
        Some(words) => IbBuilder::new_stream_ordered(family, opts, words).expect("valid words"),
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
                    done: 0x7F30_0000_0040,
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

/// Digests of `cases(Set::Base)`, captured from the encoder before the
/// per-kernel templates (commit 4d34f41); gfx10/gfx11 recaptured when RSRC2
/// gained TRAP_PRESENT (#14: replayed kernels get the trap handler as under
/// AQL), the only byte change since (gfx12, which has no such bit, is
/// unchanged).
#[rustfmt::skip]
const GOLDEN: &[&str] = &[
    "e4bdc2532a95181a2d513ff4",
    "578c5b8b5a4398837a8f4580",
    "0a2db827017cb98cc68bde99",
    "021e3ceb8cec2b4f7ad13196",
    "0b0a4835d98486bf927c4bd2",
    "7feeed09eb8c7e3eaee6b463",
    "93003d1722413bb09d51396b",
    "0af728832884f6bb3481a6d1",
    "aa777b2b20ae541b4c39471a",
    "3b8743abb17b71b4d4c0cbef",
    "801cf10e6e82e0d49fc83c7b",
    "b3301b24ebcb6d0cc9dcea0a",
    "b58cc8497f1faa0c07f31136",
    "c86e0a01e57f137e1a3879a0",
    "ced5b967f10ef941700ccfaf",
    "121decc4ab272d2593097ab9",
    "7502f2c7d0c472118e80bd96",
    "0aeaba1d20aa420df0657fb4",
    "eeeac4c943476a1d6ec118b3",
    "8ee8319090e39f5d1adcf5e7",
    "de48589374ef342e42ebc60a",
    "967fddccdf493e57cb5ec15a",
    "1016db9bebe75d928bd53197",
    "d4ffd71b96c2882e049a2196",
    "6f652715d55b42afb06ea533",
    "fa2f13bfc31647a2e5c64542",
    "5a5c670028da2892105d5f1b",
    "29c5176b82a0fa22c2676a1e",
    "58adf6ecb52151547b29a454",
    "f9adc0c4bf9b731e1d994ca2",
    "e82e8f13121ec7949655e8e7",
    "9c72c021eb009743de48627e",
    "6bf98f55fc856a322eca77f1",
    "5d3437f399379813b8cfce2b",
    "fa0c6990093ea26951593512",
    "1636514621cbd00eafb8f674",
    "7d90fc533d3299bc3ddc7027",
    "a0434bcec2fdd76774e53835",
    "72f78c10e676a7329d8e88c7",
    "f5e5649a9c57d538baaf21d4",
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

/// Digests of `cases(Set::Extended)`, captured from main's encoder (the
/// general path only, before the per-kernel templates) at commit 369d83e.
#[rustfmt::skip]
const GOLDEN_EXTENDED: &[&str] = &[
    "47399d8fca543b98072353c3",
    "8b4e747756a12c3bae8fb534",
    "35b9d73fa116ce5d86eeec7d",
    "10bee8bd6bf70b189ab0b273",
    "617a11cb437d5ff956147ccc",
    "a22214c5fb39af81565917eb",
    "d2ea0ddab52d721359a095ab",
    "a0ea23685fa4e819a3162197",
    "36bb39c958b88de51c5a189f",
    "cb7a5fe2f477812bd2178ce1",
    "7229d8fac0817ae4c131ad92",
    "981ad74b751b4906859e78f2",
    "baa63d2dd1dda26311526a5a",
    "8c148045ba137e80808dc3cc",
    "bb87d9365a8b7fd58ab0c875",
    "c5a8c1aad58d7f0a1359a5d0",
    "f7bb2435d56c61dd1100ebd4",
    "4722edab6533689c21799bfe",
    "8c8c7a7ae636042e00a3200e",
    "81c7f03400e4ae7364b2d769",
    "20e95e22266d883b10c2444a",
    "fb2954cab1dee1562d958861",
    "24f52613ffc6a8523756dcf3",
    "e7c22ab5813fffc1db694604",
    "34556a6fe4f66d80507c5060",
    "c3d928853dee8e2b0f57cff0",
    "75c8d7f00a47607377b3c671",
    "b46334a326450cbc4ccab0d4",
    "2967ef8edd15ab9ef63fdfd0",
    "586684b66a2ff1099f02805f",
    "4476aadf0efc63d9a3775dbe",
    "7120ceea5ba6749d023c314a",
    "cc53f181308028f7b6cc66a0",
    "3306396af6284eb4dcc73f38",
    "b58a2d9e344a2bb9071e5b5f",
    "b6f8cb1c4c1c596b5799d1b9",
    "e17ab8ce9a200e17f2c699b4",
    "894a03dc128d704838296336",
    "b7f6f4cbcba75e07dc77ce91",
    "6af08273df2517f00dc57b69",
    "26a5882182b5f7f16330656f",
    "f9451ed11c444f2c2f1610d3",
    "655c8885989b1d6f656e416f",
    "10a868ecd42485f498c2e5d3",
    "2ae79ce203233af39da9d604",
    "65cc076dfe4d1e39da063dbf",
    "3d17653f4adc457bd3a69460",
    "7cb31b5b065548e95d95ff0a",
    "8e75139fdf0c0830e464a659",
    "5829c8f5b556b90c8ef0705b",
    "9bffae0a37b5303f23cac067",
    "c770e5c2d20cbf6b84289058",
    "70a82fd303c86f72880a24b9",
    "fdf412ef675afaef016f5be2",
    "c8275c1d2993553a7f7144ad",
    "f1e5f9835f5eaa3099718f64",
    "60b3d1ac5fdb5c27e4845ec7",
    "87c18c39c1ba2080fba2b7a4",
    "3f6b0fb77d2a18423411b37a",
    "f0e20773dc42b470436ae6ee",
    "afdad4045225ee0eadd541a1",
    "9f8366a524dd83e304b77180",
    "2d0af7a340cf87ed7b9c1fe7",
    "6c89f0dc2d57c6c8ab93d2e2",
    "e3d23a1243a2305b2a082776",
    "ed01f1e37876326b48c8130c",
    "daa60ec975724f4b8163a9a0",
    "cb2a2d10806f94ff210ab54c",
    "eb6a636536b6b5574a6bf2f6",
    "bd99d13b8d1c5333d3633347",
    "04d54d1df7672c5a8300d5cd",
    "f76b2ca17e0f36f54a858164",
    "d55d20beb12f291ccdb0994f",
    "8eec8582fbea7fa76178dd66",
    "c146e1e1d450e3d2e6062c30",
    "04f856d17ba5855d55abe245",
    "3f54bbce36f32d00836ee3a8",
    "2c85f82d43e70b9e6e7e1291",
    "b282f2a4c5e37081afe65024",
    "680ad485c2711078b4e618e2",
    "7000c14357ec3dd4fbf89503",
    "85c5a5792eac287bb631e68b",
    "8fc5f12a4f39f712fc7672f0",
    "6a613db76d271de09ab5dd59",
    "f26bcdcc80e7b7df85ae22cd",
    "d28bd517d80a4eab9fc4cef5",
    "f2035385b000136030d96e34",
    "31332630b2af4a04ceee6a17",
    "f30f5b7800839149189e397d",
    "12376569b12cbd8147208722",
    "eae4ec95566023b100673c4a",
    "d36b8ed044e7a9580793b443",
    "859fa4debbba747dad997263",
    "cc14d823947670f5cd284fa9",
    "b75b130d68ffbcc0f303356c",
    "b54c9eb6b98a4672ff92609e",
    "344060f14d0caf09b05b5e08",
    "33efa05b1e8a1e147309ea07",
    "93d80c1384b00cc1967dedc2",
    "f08ac11354c20b086f7ebaf3",
    "d9172565738395743dfb408e",
    "6b869bbe91317bf499f5d56a",
    "ce666751014065dda7e48be8",
    "4885eda5868c601dff8501e3",
    "3ce804ac9eebeda26aa54a61",
    "635e8731b20826cf48999e2d",
    "7c7bf1f2dc6222fc470709a7",
    "a548c3974dd3484cf1ab74d4",
    "7fd03ce1bdf79e12ef87fa49",
    "1925eab614be657cc2e99958",
    "5916c67edeb0f285094ae9c4",
    "d963c5382bdb7467ef168733",
    "5818ff8163927b12c54cef23",
    "91f6023c4d875afaba4fad37",
    "fdda1f479deb0c878c7e8c6e",
    "99fdc69139b155a8e5edb91b",
    "56bde3278dc5054e19eab102",
    "4d6e90783a35470fd015c7ad",
    "ab3b627cef5c972274af57c4",
    "c7e2dc9f16d90b72eb013b85",
];

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
