//! The benchmark shapes' bytes: unchanged against digests captured from the
//! encoder before the per-kernel templates (golden), and, decoded back,
//! each dispatch sees what the full-state encoding of the same stream gives
//! it (dispatch by dispatch).

#[path = "../../encoders/tests/common/digest.rs"]
mod digest;

use digest::digest_ib;
use relaunch_bench::shapes::{
    counter_like, Step, Workload, COUNTER_LAUNCH, FAMILY, KERNARG_BASE, MAX_KERNARG,
};
use relaunch_encoders::decode::Decoder;
use relaunch_encoders::{
    BoundaryKind, DmaOp, EncodeOptions, EncodedIb, IbBuilder, KernelCode, Packet,
};
use sha2::{Digest, Sha256};

/// Every shape the benchmarks time or count.
fn shapes() -> Vec<Workload> {
    vec![
        Workload::serial(),
        Workload::serial_same(),
        Workload::independent(),
        Workload::alternating(),
        Workload::serial_full_state(),
        Workload::cycle12().expect("the decode step lowers"),
    ]
}

/// The IB's digest (`encoders/tests/common/digest.rs`).
fn digest(ib: &EncodedIb) -> String {
    let mut h = Sha256::new();
    digest_ib(&mut h, ib, 0);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// (shape, dispatches, small segments): one-dispatch IBs, short ones, a
/// period that does not divide the count, long chains and segment cuts.
fn cases() -> Vec<(Workload, u64, bool)> {
    let mut out = Vec::new();
    for shape in shapes() {
        for n in [1, 2, 3, 25, 1_000] {
            out.push((shape.clone(), n, false));
        }
        out.push((shape.clone(), 301, true));
    }
    out.push((Workload::serial(), 60_000, false));
    out.push((Workload::alternating(), 50_000, false));
    out.push((Workload::cycle12().unwrap(), 50_000, false));
    out
}

/// Streams the benchmarks do not time, for the run's period learning: a
/// cycle of 20 kernels (longer than a run's period, so runs end and start
/// again), and one whose period holds a kernel twice in a row with and
/// without a boundary (a repeat inside a cycle).
fn learning_cases() -> Vec<(Workload, u64, bool)> {
    const NAMES: [&str; 20] = [
        "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13",
        "k14", "k15", "k16", "k17", "k18", "k19",
    ];
    let kernels: Vec<KernelCode<'static>> = NAMES
        .iter()
        .enumerate()
        .map(|(i, &symbol)| KernelCode {
            symbol,
            family: FAMILY,
            descriptor: counter_like(0x60AF_0000 | i as u32, -0x40),
            kd_address: 0x7F00_0001_0040 + 0x1000 * i as u64,
            unread: Default::default(),
        })
        .collect();
    let step = |kernel: usize, boundary: Option<BoundaryKind>, kernarg_len: usize| Step {
        kernel,
        launch: COUNTER_LAUNCH,
        kernarg: [kernel as u8; MAX_KERNARG],
        kernarg_len,
        align: 8,
        boundary,
    };
    let rmw = Some(BoundaryKind::Rmw);
    let cycle20 = Workload {
        name: "cycle20",
        options: EncodeOptions::default(),
        kernels: kernels.clone(),
        steps: (0..20).map(|k| step(k, rmw, 8 + 8 * (k % 3))).collect(),
        fresh: true,
    };
    let repeat_inside = Workload {
        name: "repeat_inside",
        options: EncodeOptions::default(),
        kernels,
        steps: vec![
            step(0, rmw, 8),
            step(0, None, 8),
            step(1, Some(BoundaryKind::Wait), 24),
            step(0, rmw, 8),
            step(2, None, 16),
        ],
        fresh: true,
    };
    let mut out = Vec::new();
    for shape in [cycle20, repeat_inside] {
        for n in [1, 7, 41, 1_000] {
            out.push((shape.clone(), n, false));
        }
        out.push((shape, 997, true));
    }
    out
}

/// The shape's options, with 256-dword segments if `small` and full state
/// if `full` (or the shape's).
fn options(shape: &Workload, small: bool, full: bool) -> EncodeOptions {
    EncodeOptions {
        full_state: shape.options.full_state || full,
        max_segment_dwords: if small {
            256
        } else {
            shape.options.max_segment_dwords
        },
        ..shape.options
    }
}

fn encode(shape: &Workload, n: u64, small: bool, full: bool) -> EncodedIb {
    shape
        .builder(options(shape, small, full), n)
        .and_then(|b| b.finish(KERNARG_BASE))
        .unwrap_or_else(|e| panic!("{} x{n}: {e}", shape.name))
}

/// Digests of `cases()` in order, captured from the encoder as it was
/// before the per-kernel templates (commit 4d34f41).
#[rustfmt::skip]
const GOLDEN: &[&str] = &[
    "781449b67aff3a3722e0ef88ad2283bd303fde888d7ee685ff3eef1dcee091fe", // serial x1
    "f709d1808d5e46294466ab1623ff8db2ecb357f93e60bd6d0df532084f2dd7e9", // serial x2
    "660fbe5282d60f66ed041a681939f0840a16956c89546817db2d1a8591c2222e", // serial x3
    "7ead5bdc66bfa71494107ca22164930b7ab90ff1c03c11376bc68bab18412841", // serial x25
    "373a4262e075fc4c1b68d392c3d35fdd401c78baefca02a1cc4af5e02adfa4ab", // serial x1000
    "196ef7d480f9af026c575e680854768c9bf1ec2899f930f3a2d8022e8db4b470", // serial x301 small
    "68c9a3258e17fdf85b0e5bc618bceabe98cc4d1f7e059ee81a98a2abef0f0115", // serial_same x1
    "f16a359b88ddce129f8b1577d2470129e511eeb6e238dfe22907d6a23a174850", // serial_same x2
    "defebee3a665999db7c53bceaf690825dd13daf414e692e28639c4ff1524ab51", // serial_same x3
    "f614f48819391b4e396f459d8f48a5274b05b756425304521ae32726ab9bae83", // serial_same x25
    "2f92f3518f88b62e3e9728125a62450ea5a9110f1ccc71b26137237d75df0237", // serial_same x1000
    "8eb52a4985f263df67734a140f4ad3ef67c85f85d69e89e888db07cfb8060c23", // serial_same x301 small
    "781449b67aff3a3722e0ef88ad2283bd303fde888d7ee685ff3eef1dcee091fe", // independent x1
    "d507d2ed778843b7e300440f173b4c16401e8e3d38688c83f7c7160baf6d6008", // independent x2
    "ab60f1a5960355c17603a3a4525c3ef44977fadf4460657f0db3163e89fd1e93", // independent x3
    "963a8e0b70e6b160b53f7d8978f5480698fabb53e83e409d2073d23905ee4323", // independent x25
    "b1f9287e972e7444b5283ffb3e1614c57f6059b6688a9bbb2f7e212d3884db08", // independent x1000
    "44138e19ed714455e69aa4e26157abdb155ac030f1a2a6e2bcdb41d9e6d6d5f3", // independent x301 small
    "781449b67aff3a3722e0ef88ad2283bd303fde888d7ee685ff3eef1dcee091fe", // alternating x1
    "d8532c3c46a72512463d08b9d5dfbee60daca492a5746dd43f01602c32631036", // alternating x2
    "22e05b84259a215d43c31d72a89fabbad84b3afa998232e27493d907b81da87c", // alternating x3
    "1be1946bf180648d8ab0ddb915bf380198a3e47bc18bd7cdac47aa1b56524379", // alternating x25
    "bc4fd4afe8486f59f68a51a33e95673cbfc8f6df49e15b8b29cce5414095e78e", // alternating x1000
    "ff3a60d68dec2f47101c658c95cd9bd7002180a2dbe160e98970cb045f40de92", // alternating x301 small
    "781449b67aff3a3722e0ef88ad2283bd303fde888d7ee685ff3eef1dcee091fe", // serial_full_state x1
    "d282df5d63c06ad9cb03bbb7219b84d70be4c556e7039a398739a515deed29d2", // serial_full_state x2
    "1a5544977cab6ad81a33a05f26bec4ae793a3c6bdd67c4318241954077b42ce4", // serial_full_state x3
    "832b73380b5b595bd30cb4879f3b61664df365facca8ed735b6509bc5b46371f", // serial_full_state x25
    "77fff5738afec0cc1736891411aeaf291e687d0062736fbedbb6f0af4bd9c845", // serial_full_state x1000
    "5f830b185328ed7cd4f5b6b892bda0e8b3c3dea28f14608730bf63c691d77ea5", // serial_full_state x301 small
    "1274ee6a6454dc5085c90c755032d5bef6ced5ef534117e23221f2d8e9f22710", // cycle12 x1
    "2da785d010c29ea73f10df2f3c2514cb5b60cf62b12a592f8dbc9455afc9a943", // cycle12 x2
    "7b51ef93a1a10cff3f3be5cba16d3d6e7fd03144c7c128d9959b8094fe1e4771", // cycle12 x3
    "52dc52ad8ab101258dc4d325395ebd555121caf5f0f92497eee562b7283521fe", // cycle12 x25
    "42af60882e76188db47ba6ff0410c5dfcbf4acf6841abd1013f072c3239ba74a", // cycle12 x1000
    "55e5d4d0b1c73314f29f0cbd6baf4b30f9810c8072754317780879828cf2777f", // cycle12 x301 small
    "a7b0cf7ba07b5185b86e54e0c1900ffdfb49126b5aea3d0353ec89b8a1c2595b", // serial x60000
    "28ed461da57bd5d659de6ce5cdf85a11e2a8261cfe46236875c5e6400629e8bb", // alternating x50000
    "80437f186d132086e500eff435f148f066c3b1f7b9e0ddd340d2817a31773b04", // cycle12 x50000
];

#[test]
fn shapes_encode_to_the_golden_bytes() {
    let got: Vec<String> = cases()
        .iter()
        .map(|(s, n, small)| digest(&encode(s, *n, *small, false)))
        .collect();
    if std::env::var_os("RELAUNCH_PRINT_DIGESTS").is_some() {
        for ((s, n, small), d) in cases().iter().zip(&got) {
            println!(
                "    \"{d}\", // {} x{n}{}",
                s.name,
                if *small { " small" } else { "" }
            );
        }
    }
    assert_eq!(got.len(), GOLDEN.len(), "one digest per case");
    for (((s, n, small), d), want) in cases().iter().zip(&got).zip(GOLDEN) {
        assert_eq!(d, want, "{} x{n} small={small}", s.name);
    }
}

/// Recording into a finished IB's buffers (`IbBuilder::recycle`, as the
/// encoding benchmark does) writes the same bytes: each case recycles the
/// previous case's IB, of another shape and length.
#[test]
fn recycled_storage_encodes_the_golden_bytes() {
    let mut spare = None;
    for ((s, n, small), want) in cases().iter().zip(GOLDEN) {
        let ib = s
            .builder_in(options(s, *small, false), *n, spare.take())
            .and_then(|b| b.finish(KERNARG_BASE))
            .unwrap_or_else(|e| panic!("{} x{n}: {e}", s.name));
        assert_eq!(&digest(&ib), want, "{} x{n} small={small}", s.name);
        spare = Some(ib.into_storage());
    }
}

/// What one dispatch saw: the packets other than SET_SH_REG since the
/// previous dispatch (boundaries; a segment's prologue left out), its
/// workgroup counts and initiator, and the SH registers (`None`: not
/// written in its segment).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    packets: Vec<String>,
    groups: [u32; 3],
    initiator: u32,
    regs: Vec<Option<u32>>,
    /// Registers written since the previous dispatch.
    written: Vec<bool>,
}

fn replay(ib: &EncodedIb) -> Vec<Seen> {
    let mut out = Vec::new();
    // A transfer's packets may end a segment: they come before the next
    // dispatch, in whichever segment it is.
    let mut packets = Vec::new();
    for seg in &ib.segments {
        let mut regs = vec![None; 0x50];
        let mut written = vec![false; 0x50];
        for item in Decoder::new(&seg.dwords, ib.family) {
            let (at, packet) = item.expect("encoder output decodes strictly");
            match packet {
                Packet::SetShReg { offset, values } => {
                    for (i, v) in values.iter().enumerate() {
                        regs[(offset - 0x200) as usize + i] = Some(*v);
                        written[(offset - 0x200) as usize + i] = true;
                    }
                }
                Packet::DispatchDirect { groups, initiator } => out.push(Seen {
                    packets: std::mem::take(&mut packets),
                    groups,
                    initiator,
                    regs: regs.clone(),
                    written: std::mem::replace(&mut written, vec![false; 0x50]),
                }),
                _ if at == 0 => {}
                other => packets.push(format!("{other:?}")),
            }
        }
    }
    out
}

#[test]
fn shapes_decode_to_what_full_state_programs() {
    for (shape, n, small) in cases().into_iter().chain(learning_cases()) {
        let ib = encode(&shape, n, small, false);
        let full = encode(&shape, n, small, true);
        let what = format!("{} x{n} small={small}", shape.name);
        assert_eq!(ib.sites.len(), n as usize, "{what}");
        programs_what_full_state_does(&what, &ib, &full);
    }
}

/// Decoded back, `ib` programs each dispatch as `full` (the same stream in
/// full state) does, with the same kernarg blocks.
fn programs_what_full_state_does(what: &str, ib: &EncodedIb, full: &EncodedIb) {
    assert_eq!(ib.family, FAMILY);
    assert_eq!(ib.kernarg_image, full.kernarg_image, "{what}");
    let (seen, want) = (replay(ib), replay(full));
    assert_eq!(seen.len(), want.len(), "{what}");
    for (i, (s, w)) in seen.iter().zip(&want).enumerate() {
        assert_eq!(s.packets, w.packets, "{what}: boundary before dispatch {i}");
        assert_eq!(s.groups, w.groups, "{what}: dispatch {i}");
        assert_eq!(s.initiator, w.initiator, "{what}: dispatch {i}");
        // Full state writes every register a dispatch uses before it.
        for r in (0..0x50).filter(|&r| w.written[r]) {
            assert_eq!(
                s.regs[r],
                w.regs[r],
                "{what}: dispatch {i} register {:#x}",
                0x200 + r
            );
        }
    }
    let key = |ib: &EncodedIb| -> Vec<_> {
        ib.sites
            .iter()
            .map(|s| (s.kernarg_offset, s.kernarg_len, s.kernel))
            .collect()
    };
    assert_eq!(key(ib), key(full), "{what}: sites");
}

/// What may end a locked run's glide (`IbBuilder::glide`) between its
/// dispatches: a refused dispatch, a transfer, the same kernel passed by
/// value under another symbol string, a boundary of another kind. After
/// each the stream goes on as before; the IB programs what full state
/// does (the state the glide did not keep rebuilt where it ended).
#[test]
fn interrupted_glides_decode_to_what_full_state_programs() {
    let fill = DmaOp::Fill {
        dst: 0x7F20_0000_0000,
        pattern: 7,
        bytes: 64,
    };
    for shape in [
        Workload::serial(),
        Workload::alternating(),
        Workload::cycle12().expect("the decode step lowers"),
    ] {
        for small in [false, true] {
            for interruption in 0..4 {
                let record = |full: bool| {
                    let mut b = IbBuilder::new(FAMILY, options(&shape, small, full));
                    let s = shape.steps[0];
                    let k = &shape.kernels[s.kernel];
                    for _ in 0..3 {
                        shape.record(&mut b, 53).expect("records");
                        match interruption {
                            0 => {
                                let id = b.intern(k, &s.launch, s.kernarg_len, s.align).unwrap();
                                assert!(b.dispatch_template(id, &[0; 3]).is_err());
                            }
                            1 => {
                                b.transfer(&[fill]).expect("a fill records");
                            }
                            2 => {
                                let symbol: &'static str = String::from(k.symbol).leak();
                                let renamed = KernelCode { symbol, ..*k };
                                let kernarg = [9u8; MAX_KERNARG];
                                b.dispatch(&renamed, &s.launch, &kernarg[..s.kernarg_len], s.align)
                                    .expect("records");
                            }
                            _ => b.boundary(BoundaryKind::Wait),
                        }
                    }
                    b.finish(KERNARG_BASE).expect("finishes")
                };
                let what = format!("{} small={small} interruption {interruption}", shape.name);
                programs_what_full_state_does(&what, &record(false), &record(true));
            }
        }
    }
}

/// Passing each dispatch by value (`IbBuilder::dispatch`) encodes what
/// dispatching interned templates (`Workload::record`) does, byte for byte.
#[test]
fn by_value_dispatches_encode_what_interned_ones_do() {
    for (shape, n, small) in cases().into_iter().chain(learning_cases()) {
        let mut b = IbBuilder::new(FAMILY, options(&shape, small, false));
        b.reserve(n as usize);
        shape.record_by_value(&mut b, n).expect("records");
        let by_value = b.finish(KERNARG_BASE).expect("finishes");
        let interned = encode(&shape, n, small, false);
        let what = format!("{} x{n} small={small}", shape.name);
        assert_eq!(digest(&by_value), digest(&interned), "{what}");
        assert_eq!(by_value.sites, interned.sites, "{what}");
    }
}
