//! Assembling AMDGPU code with LLVM 19 for tests: single instructions to
//! their encodings (`llvm-mc-19 -show-encoding`) and assembly sources to
//! linked code objects (`llvm-mc-19` then `ld.lld-19`). Callers check
//! [`tools`] first (which fails under CI when a tool is missing).

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use relaunch_facts::Family;

const HINT: &str = "apt-get install llvm-19 lld-19";

/// Both tools are present (see [`crate::require_tool`]).
pub fn tools() -> bool {
    ["llvm-mc-19", "ld.lld-19"]
        .iter()
        .all(|t| crate::require_tool(t, HINT))
}

/// llvm-mc-19 is present (enough for [`encodings`]).
pub fn mc() -> bool {
    crate::require_tool("llvm-mc-19", HINT)
}

/// Assemble each of `lines` for `cpu` (one instruction a line); per line,
/// its encoding bytes, or None where llvm-mc refused it.
pub fn encodings(cpu: &str, lines: &[String]) -> Vec<Option<Vec<u8>>> {
    encodings_with(cpu, None, lines)
}

/// `encodings` with an llvm-mc `-mattr` (`+real-true16`: the true16 syntax
/// LLVM 19 requires for some gfx11+ 16-bit forms).
pub fn encodings_with(cpu: &str, mattr: Option<&str>, lines: &[String]) -> Vec<Option<Vec<u8>>> {
    let text = lines.join("\n") + "\n";
    let mut args = vec![
        "-arch=amdgcn".to_string(),
        format!("-mcpu={cpu}"),
        "-show-encoding".to_string(),
    ];
    if let Some(m) = mattr {
        args.push(format!("-mattr={m}"));
    }
    let mut child = Command::new("llvm-mc-19")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn llvm-mc-19");
    child
        .stdin
        .take()
        .expect("llvm-mc-19 stdin")
        .write_all(text.as_bytes())
        .expect("write to llvm-mc-19");
    let out = child.wait_with_output().expect("llvm-mc-19 output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let bad: BTreeSet<usize> = stderr
        .lines()
        .filter(|l| l.contains(": error:"))
        .filter_map(|l| l.split(':').nth(1)?.parse::<usize>().ok())
        .collect();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut enc = stdout.lines().filter_map(|l| {
        let e = l.split("encoding: [").nth(1)?;
        let e = e.split(']').next()?;
        Some(
            e.split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                .collect::<Vec<u8>>(),
        )
    });
    (1..=lines.len())
        .map(|n| if bad.contains(&n) { None } else { enc.next() })
        .collect()
}

/// Assemble `source` for `cpu` (amdhsa) and link it into a shared code
/// object; its bytes. Panics with the tool's name when a step fails.
pub fn code_object(cpu: &str, source: &str) -> Vec<u8> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("relaunch-asm-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (s, o, co) = (dir.join("k.s"), dir.join("k.o"), dir.join("k.co"));
    std::fs::write(&s, source).unwrap();
    let st = Command::new("llvm-mc-19")
        .args([
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={cpu}"),
            "-filetype=obj",
            "-o",
        ])
        .arg(&o)
        .arg(&s)
        .status()
        .expect("spawn llvm-mc-19");
    assert!(st.success(), "llvm-mc-19 failed for {cpu}");
    let st = Command::new("ld.lld-19")
        .arg("-shared")
        .arg(&o)
        .arg("-o")
        .arg(&co)
        .status()
        .expect("spawn ld.lld-19");
    assert!(st.success(), "ld.lld-19 failed for {cpu}");
    let bytes = std::fs::read(&co).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    bytes
}

/// A one-kernel code object for `cpu`: `body` as kernel `name`, wave32,
/// one kernarg (a global pointer in s[0:1]), 8 VGPRs, 16 SGPRs;
/// `directives` are extra `.amdhsa_*` lines (e.g. float modes).
pub fn one_kernel(cpu: &str, name: &str, body: &str, directives: &str) -> Vec<u8> {
    kernel_of_pointers(cpu, name, body, directives, 1)
}

/// [`one_kernel`] with `pointers` global-pointer kernargs (8 bytes each,
/// the kernarg segment pointer still in s[0:1]).
pub fn kernel_of_pointers(
    cpu: &str,
    name: &str,
    body: &str,
    directives: &str,
    pointers: usize,
) -> Vec<u8> {
    code_object(cpu, &kernel_source(cpu, name, body, directives, pointers))
}

/// The assembly source [`kernel_of_pointers`] assembles.
pub fn kernel_source(
    cpu: &str,
    name: &str,
    body: &str,
    directives: &str,
    pointers: usize,
) -> String {
    let user = 2;
    let bytes = 8 * pointers;
    let args: String = (0..pointers)
        .map(|i| {
            format!(
                "      - {{ .offset: {}, .size: 8, .value_kind: global_buffer, .address_space: global }}\n",
                8 * i
            )
        })
        .collect();
    format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--{cpu}"
  .text
  .globl {name}
  .p2align 8
  .type {name},@function
{name}:
{body}
.Lend:
  .size {name}, .Lend-{name}
  .rodata
  .p2align 6
  .amdhsa_kernel {name}
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_user_sgpr_count {user}
    .amdhsa_kernarg_size {bytes}
    .amdhsa_next_free_vgpr 8
    .amdhsa_next_free_sgpr 16
    .amdhsa_wavefront_size32 1
{directives}
  .end_amdhsa_kernel
  .amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.target: amdgcn-amd-amdhsa--{cpu}
amdhsa.kernels:
  - .name: {name}
    .symbol: {name}.kd
    .kernarg_segment_size: {bytes}
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 16
    .vgpr_count: 8
    .max_flat_workgroup_size: 64
    .args:
{args}...
  .end_amdgpu_metadata
"#
    )
}

const SHIFTED_PAIRS: usize = 50;
/// Forward branches within the body hop at most this many instructions, so
/// every branch stays inside s_branch's +-32k-dword reach.
const HOP_CHUNK: usize = 16_000;

/// A gfx1100 code object hostile to the certifier (issue 30): `kernels`
/// entry stubs (each its own kernel, its symbol running to the end of the
/// text, so the ranges overlap) jumping into one shared loop of `body`
/// instructions whose back edge shifts s[0:1]..s[98:99] into
/// s[2:3]..s[100:101] and clobbers s[0:1], so a plain fixed point loses one
/// kernarg pair per trip. `same_entry`: every kernel's symbol is the first
/// stub (identical entry and extent).
pub fn shifting_loop_kernels(kernels: usize, body: usize, same_entry: bool) -> Vec<u8> {
    let mut s = String::from("  .amdgcn_target \"amdgcn-amd-amdhsa--gfx1100\"\n  .text\n");
    for k in 0..kernels {
        let name = format!("k{k}");
        s += &format!("  .globl {name}\n  .type {name},@function\n");
        if same_entry {
            s += &format!("  .set {name}, k_entry\n  .size {name}, .Lend-k_entry\n");
        }
    }
    let stubs = if same_entry { 1 } else { kernels };
    for k in 0..stubs {
        let name = if same_entry {
            "k_entry".to_string()
        } else {
            format!("k{k}")
        };
        s += &format!("  .p2align 8\n{name}:\n  s_branch .Lpre\n");
        if !same_entry {
            s += &format!("  .size {name}, .Lend-{name}\n");
        }
    }
    s += "  .p2align 8\n.Lpre:\n";
    for p in 1..=SHIFTED_PAIRS {
        s += &format!("  s_mov_b64 s[{}:{}], s[0:1]\n", 2 * p, 2 * p + 1);
    }
    s += "  s_mov_b32 s102, 0\n.Lloop:\n";
    // The body in chunks; after each, a hop the back edge takes backwards.
    let chunks = body.div_ceil(HOP_CHUNK);
    for c in 0..chunks {
        let n = HOP_CHUNK.min(body - c * HOP_CHUNK);
        for _ in 0..n {
            s += "  v_mov_b32 v1, v2\n";
        }
        s += &format!("  s_branch .Lover{c}\n.Lhop{c}:\n");
        if c == 0 {
            s += "  s_branch .Lloop\n";
        } else {
            s += &format!("  s_branch .Lhop{}\n", c - 1);
        }
        s += &format!(".Lover{c}:\n");
    }
    for p in (1..=SHIFTED_PAIRS).rev() {
        s += &format!(
            "  s_mov_b64 s[{}:{}], s[{}:{}]\n",
            2 * p,
            2 * p + 1,
            2 * p - 2,
            2 * p - 1
        );
    }
    s += "  s_mov_b64 s[0:1], 0\n  s_add_u32 s102, s102, 1\n  s_cmp_lg_u32 s102, 64\n";
    s += &format!("  s_cbranch_scc1 .Lhop{}\n", chunks - 1);
    s += "  s_load_b32 s104, s[100:101], 0x0\n  s_waitcnt lgkmcnt(0)\n  s_endpgm\n.Lend:\n";
    s += "  .rodata\n";
    for k in 0..kernels {
        s += &format!(
            "  .p2align 6\n  .amdhsa_kernel k{k}\n    .amdhsa_user_sgpr_kernarg_segment_ptr 1\n    \
             .amdhsa_user_sgpr_count 2\n    .amdhsa_kernarg_size 8\n    .amdhsa_next_free_vgpr 8\n    \
             .amdhsa_next_free_sgpr 106\n    .amdhsa_wavefront_size32 1\n  .end_amdhsa_kernel\n"
        );
    }
    s += "  .amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.target: amdgcn-amd-amdhsa--gfx1100\namdhsa.kernels:\n";
    for k in 0..kernels {
        s += &format!(
            "  - .name: k{k}\n    .symbol: k{k}.kd\n    .kernarg_segment_size: 8\n    \
             .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n    \
             .private_segment_fixed_size: 0\n    .wavefront_size: 32\n    .sgpr_count: 106\n    \
             .vgpr_count: 8\n    .max_flat_workgroup_size: 64\n    .args:\n      \
             - {{ .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }}\n"
        );
    }
    s += "...\n  .end_amdgpu_metadata\n";
    code_object("gfx1100", &s)
}

/// The mnemonics hand-written kernels spell differently per family.
#[derive(Debug, Clone, Copy)]
pub struct Spelling {
    pub s_load_b32: &'static str,
    pub s_load_b64: &'static str,
    pub s_load_b128: &'static str,
    /// Wait for the scalar loads.
    pub wait_scalar: &'static str,
    pub global_store_b32: &'static str,
    pub global_atomic_add_u32: &'static str,
}

/// [`Spelling`] for `cpu` (a target relaunch knows; panics otherwise).
pub fn spelling(cpu: &str) -> Spelling {
    let family = relaunch_facts::target::family_of(cpu)
        .unwrap_or_else(|| panic!("{cpu}: not a target relaunch knows"));
    match family {
        Family::Gfx10 => Spelling {
            s_load_b32: "s_load_dword",
            s_load_b64: "s_load_dwordx2",
            s_load_b128: "s_load_dwordx4",
            wait_scalar: "s_waitcnt lgkmcnt(0)",
            global_store_b32: "global_store_dword",
            global_atomic_add_u32: "global_atomic_add",
        },
        Family::Gfx11 => Spelling {
            s_load_b32: "s_load_b32",
            s_load_b64: "s_load_b64",
            s_load_b128: "s_load_b128",
            wait_scalar: "s_waitcnt lgkmcnt(0)",
            global_store_b32: "global_store_b32",
            global_atomic_add_u32: "global_atomic_add_u32",
        },
        // Split wait counters: scalar loads have their own (KMcnt).
        Family::Gfx12 => Spelling {
            s_load_b32: "s_load_b32",
            s_load_b64: "s_load_b64",
            s_load_b128: "s_load_b128",
            wait_scalar: "s_wait_kmcnt 0x0",
            global_store_b32: "global_store_b32",
            global_atomic_add_u32: "global_atomic_add_u32",
        },
    }
}

/// A kernel named `counter`, like `tests/kernels/counter.cl` (one global
/// pointer argument), whose machine code atomically adds `add` per
/// work-item instead of 1: where the result is `add` per work-item, the
/// kernel's own code ran, not the counter twin (which adds 1). `trap`
/// puts `s_trap 2` before the add. For gfx10.3, gfx11 and gfx12 `cpu`s.
pub fn counter_adding(cpu: &str, add: u32, trap: bool) -> Vec<u8> {
    let sp = spelling(cpu);
    let (load, wait, atomic) = (sp.s_load_b64, sp.wait_scalar, sp.global_atomic_add_u32);
    let trap = if trap { "  s_trap 2\n" } else { "" };
    let body = format!(
        "{trap}  {load} s[2:3], s[0:1], 0x0\n  v_mov_b32 v0, 0\n  v_mov_b32 v1, {add}\n  \
         {wait}\n  {atomic} v0, v1, s[2:3]\n  s_endpgm"
    );
    one_kernel(cpu, "counter", &body, "")
}

/// A hung kernel: `spin` (one global pointer argument, `out`) stores 1 to
/// `out[0]`, so a test sees that it started, then loops forever on vector
/// ALU work that touches no memory (memory refusals cannot end it; only
/// its queue being stopped can). For gfx10.3, gfx11 and gfx12 `cpu`s.
pub fn spinning(cpu: &str) -> Vec<u8> {
    spinning_named(cpu, "spin")
}

/// [`spinning`] under another kernel name (e.g. `counter`, for tools that
/// dispatch a kernel by that name).
pub fn spinning_named(cpu: &str, name: &str) -> Vec<u8> {
    let sp = spelling(cpu);
    let (load, wait, store) = (sp.s_load_b64, sp.wait_scalar, sp.global_store_b32);
    let body = format!(
        "  {load} s[2:3], s[0:1], 0x0\n  v_mov_b32 v0, 0\n  v_mov_b32 v1, 1\n  {wait}\n  \
         {store} v0, v1, s[2:3]\n.Lspin:\n  v_add_nc_u32 v1, 1, v1\n  s_branch .Lspin\n  s_endpgm"
    );
    one_kernel(cpu, name, &body, "")
}
