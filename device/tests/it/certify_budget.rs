//! The certifier's cost on hostile code (issue 30, finding 1): a loop whose
//! back edge shifts 50 kernarg-pointer copies by one SGPR pair loses one
//! pair per trip, so a plain fixed point walks its body ~50 times; 48
//! kernels whose symbol ranges all cover that loop were each proved again.
//! The proof of a whole code object is bounded: it ends in seconds, and a
//! kernel the budget did not reach is scalar_or_unknown saying so.
//! Assembled with llvm-mc-19 / ld.lld-19 (skipped without them unless `CI`).

use std::time::{Duration, Instant};

use relaunch_device::codeobj::certify::{certify, ReadCache};
use relaunch_device::codeobj::CodeObject;
use relaunch_testsupport::asm;

const PAIRS: usize = 50;
/// Forward branches within the body hop at most this many instructions, so
/// every branch stays inside s_branch's +-32k-dword reach.
const CHUNK: usize = 16_000;

/// `kernels` entry stubs (each its own kernel, its symbol running to the
/// end of the text, so the ranges overlap) jumping into one shared loop of
/// `body` instructions whose back edge shifts s[0:1]..s[98:99] into
/// s[2:3]..s[100:101] and clobbers s[0:1]. `same_entry`: every kernel's
/// symbol is the first stub (identical entry and extent).
pub fn stress_source(kernels: usize, body: usize, same_entry: bool) -> String {
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
    for p in 1..=PAIRS {
        s += &format!("  s_mov_b64 s[{}:{}], s[0:1]\n", 2 * p, 2 * p + 1);
    }
    s += "  s_mov_b32 s102, 0\n.Lloop:\n";
    // The body in chunks; after each, a hop the back edge takes backwards.
    let chunks = body.div_ceil(CHUNK);
    for c in 0..chunks {
        let n = CHUNK.min(body - c * CHUNK);
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
    for p in (1..=PAIRS).rev() {
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
    s
}

fn certify_timed(kernels: usize, body: usize, same_entry: bool) -> (CodeObject, Duration) {
    let bytes = asm::code_object("gfx1100", &stress_source(kernels, body, same_entry));
    let code = CodeObject::parse(&bytes).unwrap();
    let t = Instant::now();
    let certs = certify(&code);
    let took = t.elapsed();
    assert_eq!(certs.len(), kernels);
    for c in &certs {
        // Whatever the budget allowed, the loaded pair is not kernarg on
        // every path (the shift clobbers it): never vmem_only.
        assert_eq!(c.read_cache, ReadCache::ScalarOrUnknown, "{}", c.kernel);
        assert!(c.reason.is_some(), "{}", c.kernel);
    }
    eprintln!(
        "{kernels} kernels over a {body}-instruction loop (same entry: {same_entry}): {took:?}"
    );
    (code, took)
}

/// Debug builds decode ~10x slower than release; the bound holds for both.
const CEILING: Duration = Duration::from_secs(if cfg!(debug_assertions) { 30 } else { 3 });

#[test]
fn overlapping_kernels_over_a_shifting_loop_certify_within_the_bound() {
    if !asm::tools() {
        return;
    }
    let (_, took) = certify_timed(48, 20_000, false);
    assert!(took < CEILING, "certify took {took:?}");
}

#[test]
fn kernels_sharing_entry_and_extent_are_proved_once() {
    if !asm::tools() {
        return;
    }
    let (code, took) = certify_timed(48, 20_000, true);
    assert!(took < CEILING, "certify took {took:?}");
    // One proof, so one verdict and one reason for all.
    let certs = certify(&code);
    assert!(certs.windows(2).all(|w| w[0].reason == w[1].reason));
}
