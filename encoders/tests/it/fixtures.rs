//! The committed test kernels (`tests/kernels/build/<target>/*.co`) through
//! the encoder: every kernel the verdict accepts encodes on its own family
//! and decodes back with the user SGPRs RSRC2 declares, including the
//! gfx1100 padding clang adds (LLVM's 16-initialised-SGPR workaround).

use crate::common;

use std::path::PathBuf;

use common::replay;
use relaunch_device::codeobj::{CodeObject, KernelInfo};
use relaunch_device::Family;
use relaunch_encoders::dispatch_packet::DispatchPacketImage;
use relaunch_encoders::verdict::{descriptor_refusals, Pm4Verdict};
use relaunch_encoders::{
    BoundaryKind, EncodeError, EncodeOptions, IbBuilder, KernelCode, Launch, ScratchPlan,
};
use relaunch_facts::scratch::srd_for_wave;
use relaunch_facts::sgprs::user_sgpr_padding;
use relaunch_facts::Limits;

const TARGETS: [&str; 5] = ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];
/// Where the code object is pretended to be loaded (256-byte aligned).
const LOAD_BASE: u64 = 0x7F00_0000_0000;
const KERNARG_BASE: u64 = 0x7F10_0000_1000;

fn objects(target: &str) -> Vec<(String, CodeObject)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/build")
        .join(target);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "co"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let object =
                CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.display().to_string(), object)
        })
        .collect()
}

fn code(k: &KernelInfo) -> KernelCode<'_> {
    KernelCode {
        symbol: &k.name,
        family: k.target.family().unwrap(),
        descriptor: k.descriptor,
        kd_address: LOAD_BASE + k.kd_vaddr,
        unread: Default::default(),
    }
}

/// Where the scratch backing of IBs with scratch kernels is said to be.
const SCRATCH_BASE: u64 = 0x7F00_0010_0000;

const LAUNCH: Launch = Launch {
    grid: [128, 1, 1],
    block: [64, 1, 1],
    dynamic_group_bytes: 256,
};

#[test]
fn gfx1100_counter_gets_its_padding_zeros() {
    let objs = objects("gfx1100");
    let (_, object) = objs
        .iter()
        .find(|(p, _)| p.ends_with("/counter.co"))
        .expect("gfx1100 counter.co");
    let k = object.kernel("counter").expect("counter kernel");
    let kd = k.descriptor;
    assert_eq!(kd.user_sgpr_count(), 15, "clang-19 pads counter to 15");
    assert_eq!(user_sgpr_padding(&kd), 13);
    assert!(k.pm4_verdict().accepted(), "{}", k.pm4_verdict());

    let code = code(k);
    let mut b = IbBuilder::new(code.family, EncodeOptions::default());
    let launch = Launch {
        dynamic_group_bytes: 0,
        ..LAUNCH
    };
    for i in 0..3u64 {
        b.boundary(BoundaryKind::Rmw);
        b.dispatch(&code, &launch, &i.to_le_bytes(), k.kernarg_align)
            .unwrap();
    }
    let ib = b.finish(KERNARG_BASE).unwrap();
    let seen = replay(&ib);
    assert_eq!(seen.len(), 3);
    for (i, s) in seen.iter().enumerate() {
        let ka = KERNARG_BASE + ib.sites[i].kernarg_offset as u64;
        let mut want = vec![ka as u32, (ka >> 32) as u32];
        want.extend([0; 13]);
        let user: Vec<u32> = (0x240..0x24F).map(|o| s.reg(o)).collect();
        assert_eq!(user, want, "dispatch {i}: USER_DATA_0..14");
        assert_eq!(
            s.reg(0x213),
            kd.compute_pgm_rsrc2 | relaunch_facts::regs::rsrc2_trap_bits(Family::Gfx11, true),
            "RSRC2 as the descriptor's, with TRAP_PRESENT as the CP sets it"
        );
        assert_eq!(
            s.regs[0x4F], None,
            "USER_DATA_15 is not part of the kernel's SGPRs"
        );
    }
    // The zeros are written once; later dispatches rewrite only the low
    // pointer dword.
    let zero_runs = ib.segments[0]
        .dwords
        .windows(2)
        .filter(|w| w[0] == 0xC00F_7602 && w[1] == 0x240)
        .count();
    assert_eq!(zero_runs, 1, "one 15-register USER_DATA write");
    // Prologue 8, state 19, USER_DATA 2 + 15, DISPATCH_DIRECT 5; then 18 per
    // dispatch (RMW 10, low pointer dword 3, DISPATCH_DIRECT 5); epilogue 10.
    assert_eq!(ib.total_dwords(), 49 + 2 * 18 + 10);
}

#[test]
fn every_accepted_fixture_kernel_encodes_on_its_family() {
    let (mut encoded, mut refused) = (Vec::new(), Vec::new());
    let mut dispatch_packets = 0;
    for target in TARGETS {
        for (path, object) in objects(target) {
            for k in object.kernels() {
                let code = code(k);
                if !k.pm4_verdict().accepted() {
                    // Descriptor-level refusals (scratch, dispatch ptr) are the
                    // encoder's too; metadata-level ones (printf) are the
                    // loader's, which never hands such a kernel over.
                    if !descriptor_refusals(&k.descriptor, code.family, &Limits::RDNA).is_empty() {
                        let mut b = IbBuilder::new(code.family, EncodeOptions::default());
                        let kernarg = vec![0; k.descriptor.kernarg_size as usize];
                        let e = b.dispatch(&code, &LAUNCH, &kernarg, k.kernarg_align);
                        assert!(
                            matches!(e, Err(EncodeError::Refused { .. })),
                            "{path} {}: {e:?}",
                            k.name
                        );
                        refused.push(format!("{target}/{}", k.name));
                    }
                    continue;
                }
                let kd = k.descriptor;
                let mut b = IbBuilder::new(code.family, EncodeOptions::default());
                let kernarg = vec![0x5A; kd.kernarg_size as usize];
                for _ in 0..2 {
                    b.boundary(BoundaryKind::Rmw);
                    b.dispatch(&code, &LAUNCH, &kernarg, k.kernarg_align)
                        .unwrap_or_else(|e| panic!("{path} {}: {e}", k.name));
                }
                // Kernels with scratch get a ring (a backing at SCRATCH_BASE).
                let ring = b.scratch_need().map(|need| {
                    let plan = ScratchPlan::new(code.family, need, 4, 1).unwrap();
                    plan.at(SCRATCH_BASE).unwrap()
                });
                let ib = b.finish_with_scratch(KERNARG_BASE, ring.as_ref()).unwrap();
                let seen = replay(&ib);
                assert_eq!(seen.len(), 2, "{path} {}", k.name);
                let srd = ring.map(|r| srd_for_wave(r.srd, !kd.wave32()));
                let entry = kd.code_entry(code.kd_address);
                let lds = (kd.group_segment_fixed_size + LAUNCH.dynamic_group_bytes).div_ceil(512);
                let count = kd.user_sgpr_count();
                for (i, s) in seen.iter().enumerate() {
                    let what = format!("{path} {} dispatch {i}", k.name);
                    assert_eq!(s.groups, [2, 1, 1], "{what}");
                    assert_eq!(s.reg(0x20C), (entry >> 8) as u32, "{what}");
                    assert_eq!(s.reg(0x212), kd.compute_pgm_rsrc1, "{what}");
                    let trap = relaunch_facts::regs::rsrc2_trap_bits(code.family, true);
                    assert_eq!(
                        s.reg(0x213),
                        kd.compute_pgm_rsrc2 | lds << 15 | trap,
                        "{what}"
                    );
                    assert_eq!(s.reg(0x228), kd.compute_pgm_rsrc3, "{what}");
                    // Exactly RSRC2's user SGPRs are written, each defined.
                    let user: Vec<Option<u32>> = s.regs[0x40..0x50].to_vec();
                    let written = user.iter().take_while(|v| v.is_some()).count();
                    assert_eq!(written as u32, count, "{what}: {user:x?}");
                    assert!(user[written..].iter().all(Option::is_none), "{what}");
                    let psb = if kd.wants_private_segment_buffer() {
                        4
                    } else {
                        0
                    };
                    let ka = KERNARG_BASE + ib.sites[i].kernarg_offset as u64;
                    // The synthesized dispatch packet's address comes first.
                    let (dp, kap) = match ib.dispatch_packet_range(i as u32) {
                        Some(r) => {
                            assert!(kd.wants_dispatch_ptr(), "{what}");
                            let p = DispatchPacketImage::parse(
                                ib.kernarg_image[r.clone()].try_into().unwrap(),
                            );
                            assert_eq!(p.kernarg_address, ka, "{what}");
                            assert_eq!(p.kernel_object, code.kd_address, "{what}");
                            assert_eq!(p.grid_size, LAUNCH.grid, "{what}");
                            assert_eq!(p.workgroup_size, LAUNCH.block.map(|b| b as u16));
                            (Some(KERNARG_BASE + r.start as u64), psb + 2)
                        }
                        None => {
                            assert!(!kd.wants_dispatch_ptr(), "{what}");
                            (None, psb)
                        }
                    };
                    if dp.is_some() {
                        dispatch_packets += 1;
                    }
                    if let Some(r) = ring {
                        assert_eq!(s.reg(0x218), r.plan.tmpring_size, "{what}: TMPRING_SIZE");
                    }
                    let fsi = kap + if kd.wants_kernarg_segment_ptr() { 2 } else { 0 };
                    for (j, v) in user[..written].iter().enumerate() {
                        let want = if let (Some(srd), true) = (srd, j < psb) {
                            srd[j]
                        } else if kd.wants_flat_scratch_init() && j == fsi {
                            SCRATCH_BASE as u32
                        } else if kd.wants_flat_scratch_init() && j == fsi + 1 {
                            (SCRATCH_BASE >> 32) as u32
                        } else if let (Some(dp), true) = (dp, j == psb) {
                            dp as u32
                        } else if let (Some(dp), true) = (dp, j == psb + 1) {
                            (dp >> 32) as u32
                        } else if kd.wants_kernarg_segment_ptr() && j == kap {
                            ka as u32
                        } else if kd.wants_kernarg_segment_ptr() && j == kap + 1 {
                            (ka >> 32) as u32
                        } else {
                            0
                        };
                        assert_eq!(*v, Some(want), "{what}: USER_DATA_{j}");
                    }
                }
                encoded.push(format!("{target}/{}", k.name));
            }
        }
    }
    // add_scalar-v4 (gfx1030, gfx1100) reads its dispatch packet: two
    // dispatches each.
    assert_eq!(dispatch_packets, 4);
    // Every fixture set holds at least these; scratch_hog gets scratch.
    for target in TARGETS {
        for name in [
            "counter",
            "add_scalar",
            "axpy",
            "produce",
            "consume",
            "lds_reverse",
            "scratch_hog",
        ] {
            let want = format!("{target}/{name}");
            assert!(encoded.contains(&want), "{want} was not encoded");
        }
    }
    for target in ["gfx1030", "gfx1100"] {
        assert!(
            !refused.contains(&format!("{target}/add_scalar")),
            "{target}"
        );
    }
}
