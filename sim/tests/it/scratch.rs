//! Private (scratch) memory on the interpreter, per family, from the state
//! a dispatch sets up: OpenCL kernels built by clang-19 that keep a
//! private array in scratch (a run-time index) or spill everything (-O0),
//! on gfx1030 (wave32 and wave64, buffer scratch through the private
//! segment buffer), gfx1100 and gfx1200 (architected flat scratch,
//! scratch_* instructions), against host references; llvm-mc kernels that
//! write private memory through one view and read it through the others
//! (buffer scratch, scratch_*, flat in the private aperture) and check the
//! backing's documented dword interleave; and the faults: a slot too small
//! ("scratch needed"), an access past the slot, an unmapped backing.
//! Dispatched straight through the interpreter with the user SGPRs the AQL
//! packet processor delivers (`aql_user_sgprs` with a `ScratchSetup`).
//! Fails under `CI` when clang-19 or llvm-mc-19 is missing.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use relaunch_sim::isa::dispatch::{aql_user_sgprs, run, AqlSource, Launch};
use relaunch_sim::isa::scratch::{scratch_srd, ScratchSetup};
use relaunch_sim::isa::scratch_needed;
use relaunch_sim::memory::MemKind;
use relaunch_sim::twins::{DispatchContext, KernelFault};
use relaunch_sim::{SimConfig, SimDevice};
use relaunch_testsupport::asm;

/// Build `source` (OpenCL C) for `cpu` with clang-19 into a code object.
pub(crate) fn opencl(cpu: &str, source: &str, flags: &[&str]) -> Option<Vec<u8>> {
    if !relaunch_testsupport::require_tool("clang-19", "apt-get install clang-19 lld-19") {
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "sim-scratch-{cpu}-{}-{}",
        flags.join("_").replace('-', ""),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, out) = (dir.join("k.cl"), dir.join("k.co"));
    std::fs::write(&src, source).unwrap();
    let st = Command::new("clang-19")
        .args([
            "-x",
            "cl",
            "-Xclang",
            "-finclude-default-header",
            "-nogpulib",
        ])
        .args(["-target", "amdgcn-amd-amdhsa", &format!("-mcpu={cpu}")])
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spawn clang-19");
    assert!(st.success(), "clang-19 failed for {cpu} {flags:?}");
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    Some(bytes)
}

/// A private array the compiler must keep in scratch: written in full,
/// read at run-time indices.
pub(crate) const PRIVATE_ARRAY: &str = r#"
__kernel void priv_array(__global uint *out, __global const uint *idx, uint bs) {
    uint gid = __builtin_amdgcn_workgroup_id_x() * bs + __builtin_amdgcn_workitem_id_x();
    volatile uint a[40];
    for (uint i = 0; i < 40; i++) a[i] = gid * 3u + i * i;
    uint k = idx[gid] % 40u;
    out[gid] = a[k] + a[(k + 7u) % 40u];
}
"#;

pub(crate) fn private_array_ref(gid: u32, idx: u32) -> u32 {
    let a = |i: u32| gid * 3 + i * i;
    let k = idx % 40;
    a(k).wrapping_add(a((k + 7) % 40))
}

/// At -O0 every local lives in scratch (no function calls: builtins only).
const SPILLS: &str = r#"
__kernel void spills(__global uint *out, __global const uint *idx, uint bs) {
    uint gid = __builtin_amdgcn_workgroup_id_x() * bs + __builtin_amdgcn_workitem_id_x();
    uint acc = idx[gid];
    ulong wide = (ulong)gid << 20;
    for (uint i = 0; i < 9u; i++) {
        acc = acc * 1664525u + 1013904223u + i;
        wide += acc;
    }
    out[gid] = acc ^ (uint)(wide >> 7);
}
"#;

fn spills_ref(gid: u32, idx: u32) -> u32 {
    let mut acc = idx;
    let mut wide = u64::from(gid) << 20;
    for i in 0..9u32 {
        acc = acc
            .wrapping_mul(1_664_525)
            .wrapping_add(1_013_904_223)
            .wrapping_add(i);
        wide = wide.wrapping_add(u64::from(acc));
    }
    acc ^ (wide >> 7) as u32
}

/// What one dispatch on a fresh device left.
struct Outcome {
    dev: Arc<SimDevice>,
    setup: ScratchSetup,
    result: Result<u64, KernelFault>,
}

/// How to size (or break) the scratch ring of a dispatch.
#[derive(Clone, Copy)]
enum Ring {
    /// Slots of exactly what the kernel needs, rounded to the granule.
    Fits,
    /// Slots of this many bytes.
    Bytes(u64),
    /// A ring whose backing was freed.
    Unmapped,
}

/// Dispatch kernel `name` of `co` on `cpu` with `grid`/`block` work-items
/// and kernargs `args(out, idx)`; every wave gets a scratch slot.
fn dispatch(
    cpu: &str,
    co: &[u8],
    name: &str,
    (grid, block): (u32, u32),
    ring: Ring,
    args: impl Fn(u64, u64) -> Vec<u8>,
) -> (Outcome, u64) {
    let dev = SimDevice::new(SimConfig::new(cpu)).unwrap();
    let image = dev.load_code_object(co).unwrap();
    let kernel = image
        .kernels
        .iter()
        .find(|k| k.symbol == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
        .clone();
    let kd = kernel.descriptor;
    let wave64 = !kd.wave32();
    let mem = &dev.memory;
    let n = grid as usize;
    let out = mem.allocate(16 * n, MemKind::Device).unwrap();
    let idx = mem.allocate(4 * n, MemKind::Device).unwrap();
    let idx_vals: Vec<u8> = (0..n as u32)
        .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 7).to_le_bytes())
        .collect();
    mem.write(idx, &idx_vals).unwrap();
    let ka = mem.allocate(512, MemKind::Device).unwrap();
    mem.write(ka, &args(out, idx)).unwrap();
    let granule = dev.family().scratch().wavesize_granule;
    let wave_bytes = match ring {
        Ring::Fits | Ring::Unmapped => scratch_needed(&kd, wave64).div_ceil(granule) * granule,
        Ring::Bytes(b) => b,
    };
    let slots = 4;
    let len = (wave_bytes * slots as u64).max(4) as usize;
    let base = mem.allocate(len, MemKind::Device).unwrap();
    if matches!(ring, Ring::Unmapped) {
        mem.free(base).unwrap();
    }
    let setup = ScratchSetup {
        base,
        wave_bytes,
        slots,
        srd: scratch_srd(dev.family(), base, len as u32),
    };
    let at = AqlSource {
        packet: 0,
        queue: None,
        id: 0,
        private_segment_size: kd.private_segment_fixed_size,
    };
    let user = aql_user_sgprs(&kd, dev.family(), ka, at, Some(&setup)).unwrap();
    let launch = Launch {
        processor: cpu.to_string(),
        rsrc1: kd.compute_pgm_rsrc1,
        rsrc2: kd.compute_pgm_rsrc2,
        wave64,
        user_sgprs: user.clone(),
        trap_handler: false,
        scratch: Some(setup),
        private_segment_bytes: kd.private_segment_fixed_size,
        compute_units: relaunch_sim::device::DEFAULT_COMPUTE_UNITS,
    };
    let mut ctx =
        DispatchContext::new(ka, kd.kernarg_size as usize, [grid, 1, 1], [block, 1, 1], 0);
    ctx.user_sgprs = user;
    let result = run(&mut ctx, mem, &kernel, &launch);
    (
        Outcome {
            dev: dev.clone(),
            setup,
            result,
        },
        out,
    )
}

fn args3(block: u32) -> impl Fn(u64, u64) -> Vec<u8> {
    move |out, idx| {
        let mut v = Vec::new();
        v.extend(out.to_le_bytes());
        v.extend(idx.to_le_bytes());
        v.extend(block.to_le_bytes());
        v
    }
}

/// (cpu, extra clang flags) of every family and wave size.
pub(crate) const TARGETS: [(&str, &[&str]); 4] = [
    ("gfx1030", &[]),
    ("gfx1030", &["-mwavefrontsize64"]),
    ("gfx1100", &[]),
    ("gfx1200", &[]),
];

fn check_against(cpu: &str, o: &Outcome, out: u64, grid: u32, reference: impl Fn(u32, u32) -> u32) {
    o.result.as_ref().unwrap_or_else(|e| panic!("{cpu}: {e}"));
    for g in 0..grid {
        let idx = g.wrapping_mul(2_654_435_761) >> 7;
        let got = o.dev.memory.read_u32(out + 4 * u64::from(g)).unwrap();
        assert_eq!(got, reference(g, idx), "{cpu} work-item {g}");
    }
}

#[test]
fn private_arrays_run_from_scratch_on_every_family() {
    for (cpu, flags) in TARGETS {
        let mut f = vec!["-O2"];
        f.extend(flags);
        let Some(co) = opencl(cpu, PRIVATE_ARRAY, &f) else {
            return;
        };
        let (o, out) = dispatch(cpu, &co, "priv_array", (256, 128), Ring::Fits, args3(128));
        check_against(cpu, &o, out, 256, private_array_ref);
    }
}

#[test]
fn kernels_spilling_at_o0_run_from_scratch() {
    for (cpu, flags) in TARGETS {
        let mut f = vec!["-O0"];
        f.extend(flags);
        let Some(co) = opencl(cpu, SPILLS, &f) else {
            return;
        };
        let (o, out) = dispatch(cpu, &co, "spills", (128, 64), Ring::Fits, args3(64));
        check_against(cpu, &o, out, 128, spills_ref);
    }
}

#[test]
fn a_slot_smaller_than_the_kernel_needs_is_scratch_needed() {
    let Some(co) = opencl("gfx1100", PRIVATE_ARRAY, &["-O2"]) else {
        return;
    };
    let (o, _) = dispatch(
        "gfx1100",
        &co,
        "priv_array",
        (64, 64),
        Ring::Bytes(256),
        args3(64),
    );
    let e = o.result.unwrap_err().to_string();
    assert!(
        e.contains("scratch needed") && e.contains("256 bytes"),
        "{e}"
    );
}

#[test]
fn an_unmapped_backing_is_a_vm_fault() {
    for (cpu, flags) in [TARGETS[0], TARGETS[2]] {
        let mut f = vec!["-O2"];
        f.extend(flags);
        let Some(co) = opencl(cpu, PRIVATE_ARRAY, &f) else {
            return;
        };
        let (o, _) = dispatch(cpu, &co, "priv_array", (64, 64), Ring::Unmapped, args3(64));
        match o.result {
            Err(KernelFault::Vm(f)) => assert!(
                (o.setup.base..o.setup.base + o.setup.bytes()).contains(&f.addr),
                "{cpu}: {f}"
            ),
            other => panic!("{cpu}: expected a VM fault, got {other:?}"),
        }
    }
}

/// Waits after memory (the simulator performs memory synchronously, the
/// waits are there for the kernels to be valid code).
fn wait(cpu: &str) -> &'static str {
    if cpu.starts_with("gfx12") {
        "s_wait_loadcnt 0x0\n  s_wait_storecnt 0x0\n  s_wait_kmcnt 0x0"
    } else {
        "s_waitcnt vmcnt(0) lgkmcnt(0)\n  s_waitcnt_vscnt null, 0x0"
    }
}

/// The code object metadata of the `views` kernel (one global pointer).
fn views_metadata(cpu: &str) -> String {
    format!(
        "  .amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.target: amdgcn-amd-amdhsa--{cpu}\n\
         amdhsa.kernels:\n  - .name: views\n    .symbol: views.kd\n    .kernarg_segment_size: 8\n\
         \x20   .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n\
         \x20   .private_segment_fixed_size: 16\n    .wavefront_size: 32\n    .sgpr_count: 16\n\
         \x20   .vgpr_count: 16\n    .max_flat_workgroup_size: 64\n    .args:\n\
         \x20     - {{ .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }}\n\
         ...\n  .end_amdgpu_metadata\n"
    )
}

/// gfx1030 (wave32): private bytes 4, 8 and 12 written through buffer
/// scratch, scratch_store and a flat store in the private aperture, each
/// read back through another view.
fn views_gfx10() -> String {
    format!(
        ".amdgcn_target \"amdgcn-amd-amdhsa--gfx1030\"\n.text\n.p2align 8\n.globl views\n\
         .type views,@function\nviews:\n\
  s_load_dwordx2 s[10:11], s[4:5], 0x0\n\
  s_add_u32 s6, s6, s8\n  s_addc_u32 s7, s7, 0\n\
  s_setreg_b32 hwreg(HW_REG_FLAT_SCR_LO), s6\n  s_setreg_b32 hwreg(HW_REG_FLAT_SCR_HI), s7\n\
  v_add_nc_u32 v2, 0x100, v0\n  buffer_store_dword v2, off, s[0:3], s8 offset:4\n\
  v_mov_b32 v4, 8\n  v_add_nc_u32 v3, 0x200, v0\n  scratch_store_dword v4, v3, off\n\
  s_mov_b64 s[12:13], src_private_base\n  v_mov_b32 v7, 12\n  v_mov_b32 v8, s13\n\
  v_add_nc_u32 v9, 0x300, v0\n  flat_store_dword v[7:8], v9\n  {w}\n\
  scratch_load_dword v5, v4, off offset:-4\n\
  buffer_load_dword v6, off, s[0:3], s8 offset:8\n\
  flat_load_dword v10, v[7:8]\n  {w}\n\
  v_mul_u32_u24 v11, 12, v0\n\
  global_store_dword v11, v5, s[10:11]\n  global_store_dword v11, v6, s[10:11] offset:4\n\
  global_store_dword v11, v10, s[10:11] offset:8\n  s_endpgm\n\
.rodata\n.p2align 6\n.amdhsa_kernel views\n  .amdhsa_next_free_vgpr 16\n  .amdhsa_next_free_sgpr 16\n\
  .amdhsa_private_segment_fixed_size 16\n  .amdhsa_kernarg_size 8\n  .amdhsa_user_sgpr_private_segment_buffer 1\n\
  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_user_sgpr_flat_scratch_init 1\n\
  .amdhsa_system_sgpr_workgroup_id_x 0\n  .amdhsa_system_sgpr_private_segment_wavefront_offset 1\n\
  .amdhsa_wavefront_size32 1\n.end_amdhsa_kernel\n{m}",
        w = wait("gfx1030"),
        m = views_metadata("gfx1030")
    )
}

/// gfx1100/gfx1201: the same through the scratch forms (SV with `off`, SS,
/// ST, SVS) and flat in the private aperture; FLAT_SCRATCH is the
/// hardware's. `past`: also a store at private byte 16, past a 16-byte
/// private segment.
fn views_architected(cpu: &str, past: bool) -> String {
    let (ld, gst) = if cpu.starts_with("gfx12") {
        ("s_load_b64 s[2:3], s[0:1], 0x0", "global_store_b32")
    } else {
        ("s_load_b64 s[2:3], s[0:1], null", "global_store_b32")
    };
    let past = if past {
        "scratch_store_b32 off, v2, off offset:16\n"
    } else {
        ""
    };
    format!(
        ".amdgcn_target \"amdgcn-amd-amdhsa--{cpu}\"\n.text\n.p2align 8\n.globl views\n\
         .type views,@function\nviews:\n  {ld}\n\
  v_and_b32 v0, 0x3ff, v0\n\
  v_add_nc_u32 v2, 0x100, v0\n  v_mov_b32 v4, 4\n  scratch_store_b32 v4, v2, off\n\
  s_mov_b32 s5, 8\n  v_add_nc_u32 v3, 0x200, v0\n  scratch_store_b32 off, v3, s5\n\
  s_mov_b64 s[6:7], src_private_base\n  v_mov_b32 v7, 12\n  v_mov_b32 v8, s7\n\
  v_add_nc_u32 v9, 0x300, v0\n  flat_store_b32 v[7:8], v9\n  {past}  {w}\n\
  scratch_load_b32 v5, off, off offset:4\n  scratch_load_b32 v6, v4, s5 offset:-4\n\
  flat_load_b32 v10, v[7:8]\n  {w}\n\
  v_mul_u32_u24 v11, 12, v0\n\
  {gst} v11, v5, s[2:3]\n  {gst} v11, v6, s[2:3] offset:4\n  {gst} v11, v10, s[2:3] offset:8\n\
  s_endpgm\n\
.rodata\n.p2align 6\n.amdhsa_kernel views\n  .amdhsa_next_free_vgpr 16\n  .amdhsa_next_free_sgpr 16\n\
  .amdhsa_private_segment_fixed_size 16\n  .amdhsa_kernarg_size 8\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n\
  .amdhsa_enable_private_segment 1\n  .amdhsa_wavefront_size32 1\n.end_amdhsa_kernel\n{m}",
        w = wait(cpu),
        m = views_metadata(cpu)
    )
}

fn args1(out: u64, _idx: u64) -> Vec<u8> {
    out.to_le_bytes().to_vec()
}

#[test]
fn buffer_scratch_and_flat_views_of_private_memory_agree() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1030", "gfx1100", "gfx1201"] {
        let src = match cpu {
            "gfx1030" => views_gfx10(),
            _ => views_architected(cpu, false),
        };
        let co = asm::code_object(cpu, &src);
        let (o, out) = dispatch(cpu, &co, "views", (64, 64), Ring::Fits, args1);
        o.result.as_ref().unwrap_or_else(|e| panic!("{cpu}: {e}"));
        let m = &o.dev.memory;
        for l in 0..64u64 {
            let got: Vec<u32> = (0..3)
                .map(|k| m.read_u32(out + 12 * l + 4 * k).unwrap())
                .collect();
            let t = l as u32;
            assert_eq!(got, [0x100 + t, 0x200 + t, 0x300 + t], "{cpu} lane {l}");
        }
        // The backing holds the documented interleave: private dword d of
        // lane l of a wave at slot + d * 4 * 32 + 4 * l. The two waves of
        // the one workgroup run in slots 0 and 1.
        for w in 0..2u64 {
            let slot = o.setup.slot_base(w as u32);
            for l in 0..32u64 {
                for d in 1..4u64 {
                    let v = m.read_u32(slot + d * 128 + 4 * l).unwrap();
                    assert_eq!(
                        u64::from(v),
                        d * 0x100 + 32 * w + l,
                        "{cpu} wave {w} lane {l} dword {d}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_private_access_past_the_slot_is_refused() {
    if !asm::tools() {
        return;
    }
    for cpu in ["gfx1100", "gfx1201"] {
        let co = asm::code_object(cpu, &views_architected(cpu, true));
        // 16 bytes x 32 lanes: exactly one slot of 512 bytes.
        let (o, _) = dispatch(cpu, &co, "views", (32, 32), Ring::Bytes(512), args1);
        let e = o.result.unwrap_err().to_string();
        assert!(e.contains("outside this wave's scratch slot"), "{cpu}: {e}");
    }
}
