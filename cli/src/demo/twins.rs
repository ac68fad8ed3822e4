//! Host twins of the decode kernels for the simulated device. Each reads
//! its kernargs at the offsets of `kernels::LAYOUTS` and computes, per work
//! item, what `tests/kernels/decode/*.cl` computes (same operations, same
//! order, via `math`). Loads and stores go through the workgroup's checked
//! accessors, in whole ranges, so the simulator's ordering model sees
//! exactly the memory each dispatch touched.

use std::sync::Once;

use relaunch::twins::{register_twin, KernelFault, Workgroup};

use super::math::{attend, attention_scale, dot, rms_inv, rope_cos_sin, rotate, sample, silu_mul};

/// The element-wise kernels' `reqd_work_group_size` (decode.h DECODE_BLOCK).
const BLOCK: u32 = 64;
/// Most floats one twin load may ask for: far above the demo's sizes, and
/// keeps a corrupt count in a kernarg from allocating without bound.
const MAX_LOAD_FLOATS: u64 = 1 << 22;

/// Registers every decode twin once per process.
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        register_twin("rmsnorm", rmsnorm);
        register_twin("matvec", matvec);
        register_twin("rope", rope);
        register_twin("kv_append", kv_append);
        register_twin("attention", attention);
        register_twin("residual_add", residual_add);
        register_twin("silu_mul", silu_mul_kernel);
        register_twin("sampler", sampler);
    });
}

fn fault(msg: String) -> KernelFault {
    KernelFault::Twin(msg)
}

/// The work items `[lo, hi)` of this workgroup that pass `i < n`, after
/// checking the block the kernel was compiled for.
fn items(wg: &Workgroup<'_>, kernel: &str, n: u32) -> Result<(u32, u32), KernelFault> {
    let block = wg.workgroup_size();
    if block != [BLOCK, 1, 1] {
        return Err(fault(format!(
            "{kernel} is compiled for {BLOCK}x1x1 workgroups (reqd_work_group_size) but was \
             dispatched with {block:?}"
        )));
    }
    let lo = wg.workgroup_id()[0].saturating_mul(BLOCK);
    Ok((lo.min(n), lo.saturating_add(BLOCK).min(n)))
}

fn at(base: u64, index: u64) -> u64 {
    base.wrapping_add(index.wrapping_mul(4))
}

fn load_f32s(
    wg: &mut Workgroup<'_>,
    base: u64,
    start: u64,
    count: u64,
) -> Result<Vec<f32>, KernelFault> {
    if count > MAX_LOAD_FLOATS {
        return Err(fault(format!(
            "a load of {count} floats exceeds the twin limit of {MAX_LOAD_FLOATS}: a size \
             kernarg is corrupt"
        )));
    }
    let mut bytes = vec![0u8; count as usize * 4];
    wg.load(at(base, start), &mut bytes)?;
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

fn store_f32s(
    wg: &mut Workgroup<'_>,
    base: u64,
    start: u64,
    values: &[f32],
) -> Result<(), KernelFault> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    wg.store(at(base, start), &bytes)
}

/// rmsnorm(out 0, x 8, w 16, n 24, eps 28)
fn rmsnorm(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let (out, x, w) = (wg.arg_u64(0)?, wg.arg_u64(8)?, wg.arg_u64(16)?);
    let (n, eps) = (wg.arg_u32(24)?, wg.arg_f32(28)?);
    let (lo, hi) = items(wg, "rmsnorm", n)?;
    if lo == hi {
        return Ok(());
    }
    let xs = load_f32s(wg, x, 0, n.into())?;
    let ws = load_f32s(wg, w, lo.into(), (hi - lo).into())?;
    let inv = rms_inv(&xs, eps);
    let values: Vec<f32> = (lo..hi)
        .map(|i| xs[i as usize] * inv * ws[(i - lo) as usize])
        .collect();
    store_f32s(wg, out, lo.into(), &values)
}

/// matvec(out 0, x 8, w 16, rows 24, cols 28)
fn matvec(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let (out, x, w) = (wg.arg_u64(0)?, wg.arg_u64(8)?, wg.arg_u64(16)?);
    let (rows, cols) = (wg.arg_u32(24)?, wg.arg_u32(28)?);
    let (lo, hi) = items(wg, "matvec", rows)?;
    if lo == hi {
        return Ok(());
    }
    let cols = u64::from(cols);
    let xs = load_f32s(wg, x, 0, cols)?;
    let block = load_f32s(wg, w, u64::from(lo) * cols, u64::from(hi - lo) * cols)?;
    let values: Vec<f32> = if cols == 0 {
        vec![0.0; (hi - lo) as usize]
    } else {
        block
            .chunks_exact(cols as usize)
            .map(|row| dot(row, &xs))
            .collect()
    };
    store_f32s(wg, out, lo.into(), &values)
}

/// rope(qk 0, n 8, head_dim 12, pos 16)
fn rope(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let qk = wg.arg_u64(0)?;
    let (n, head_dim, pos) = (wg.arg_u32(8)?, wg.arg_u32(12)?, wg.arg_u32(16)?);
    let (lo, hi) = items(wg, "rope", n)?;
    let half = head_dim / 2;
    if lo < hi && half == 0 {
        return Err(fault(format!(
            "rope: head_dim {head_dim} has no pairs (the kernel would divide by zero)"
        )));
    }
    for i in lo..hi {
        let m = i % half;
        let first = u64::from(i / half) * u64::from(head_dim) + 2 * u64::from(m);
        let pair = load_f32s(wg, qk, first, 2)?;
        let (a, b) = rotate(pair[0], pair[1], rope_cos_sin(m, head_dim, pos));
        store_f32s(wg, qk, first, &[a, b])?;
    }
    Ok(())
}

/// kv_append(kv 0, kv_new 8, n 16, capacity 20, pos 24)
fn kv_append(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let (kv, new) = (wg.arg_u64(0)?, wg.arg_u64(8)?);
    let (n, capacity, pos) = (wg.arg_u32(16)?, wg.arg_u32(20)?, wg.arg_u32(24)?);
    let (lo, hi) = items(wg, "kv_append", n)?;
    if lo == hi || pos >= capacity {
        return Ok(());
    }
    let (n, capacity, pos) = (u64::from(n), u64::from(capacity), u64::from(pos));
    let count = u64::from(hi - lo);
    let k = load_f32s(wg, new, lo.into(), count)?;
    let v = load_f32s(wg, new, n + u64::from(lo), count)?;
    store_f32s(wg, kv, pos * n + u64::from(lo), &k)?;
    store_f32s(wg, kv, capacity * n + pos * n + u64::from(lo), &v)
}

/// attention(out 0, q 8, kv 16, n 24, head_dim 28, capacity 32, pos 36)
fn attention(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let (out, q, kv) = (wg.arg_u64(0)?, wg.arg_u64(8)?, wg.arg_u64(16)?);
    let (n, head_dim) = (wg.arg_u32(24)?, wg.arg_u32(28)?);
    let (capacity, pos) = (wg.arg_u32(32)?, wg.arg_u32(36)?);
    let (lo, hi) = items(wg, "attention", n)?;
    if lo == hi || pos >= capacity {
        return Ok(());
    }
    if head_dim == 0 {
        return Err(fault(
            "attention: head_dim 0 (the kernel would divide by zero)".into(),
        ));
    }
    let (n64, rows) = (u64::from(n), u64::from(pos) + 1);
    let keys = load_f32s(wg, kv, 0, rows * n64)?;
    let values = load_f32s(wg, kv, u64::from(capacity) * n64, rows * n64)?;
    let scale = attention_scale(head_dim);
    let (n, hd) = (n as usize, head_dim as usize);
    let mut scores: Option<(usize, Vec<f32>)> = None;
    let mut result = Vec::with_capacity((hi - lo) as usize);
    for i in lo as usize..hi as usize {
        let h0 = (i / hd) * hd;
        // Every work-item of a head computes the same scores; compute once.
        if scores.as_ref().map(|(h, _)| *h) != Some(h0) {
            let qh = load_f32s(wg, q, h0 as u64, hd as u64)?;
            let s = (0..rows as usize)
                .map(|p| dot(&qh, &keys[p * n + h0..p * n + h0 + hd]) * scale)
                .collect();
            scores = Some((h0, s));
        }
        let s = &scores.as_ref().expect("set above").1;
        result.push(attend(s, |p| values[p * n + i]));
    }
    store_f32s(wg, out, lo.into(), &result)
}

/// residual_add(x 0, delta 8, n 16)
fn residual_add(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let (x, delta, n) = (wg.arg_u64(0)?, wg.arg_u64(8)?, wg.arg_u32(16)?);
    let (lo, hi) = items(wg, "residual_add", n)?;
    if lo == hi {
        return Ok(());
    }
    let count = u64::from(hi - lo);
    let xs = load_f32s(wg, x, lo.into(), count)?;
    let ds = load_f32s(wg, delta, lo.into(), count)?;
    let sums: Vec<f32> = xs.iter().zip(&ds).map(|(a, b)| a + b).collect();
    store_f32s(wg, x, lo.into(), &sums)
}

/// silu_mul(out 0, gate_up 8, n 16)
fn silu_mul_kernel(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let (out, gate_up, n) = (wg.arg_u64(0)?, wg.arg_u64(8)?, wg.arg_u32(16)?);
    let (lo, hi) = items(wg, "silu_mul", n)?;
    if lo == hi {
        return Ok(());
    }
    let count = u64::from(hi - lo);
    let gate = load_f32s(wg, gate_up, lo.into(), count)?;
    let up = load_f32s(wg, gate_up, u64::from(n) + u64::from(lo), count)?;
    let act: Vec<f32> = gate
        .iter()
        .zip(&up)
        .map(|(&g, &u)| silu_mul(g, u))
        .collect();
    store_f32s(wg, out, lo.into(), &act)
}

/// sampler(token 0, x 8, w 16, lm_head 24, n 32, vocab 36, eps 40); one
/// work-item per workgroup (reqd_work_group_size 1x1x1).
fn sampler(wg: &mut Workgroup<'_>) -> Result<(), KernelFault> {
    let block = wg.workgroup_size();
    if block != [1, 1, 1] {
        return Err(fault(format!(
            "sampler is compiled for 1x1x1 workgroups but was dispatched with {block:?}"
        )));
    }
    let (token, x, w, lm_head) = (
        wg.arg_u64(0)?,
        wg.arg_u64(8)?,
        wg.arg_u64(16)?,
        wg.arg_u64(24)?,
    );
    let (n, vocab, eps) = (wg.arg_u32(32)?, wg.arg_u32(36)?, wg.arg_f32(40)?);
    let xs = load_f32s(wg, x, 0, n.into())?;
    let ws = load_f32s(wg, w, 0, n.into())?;
    let rows = load_f32s(wg, lm_head, 0, u64::from(vocab) * u64::from(n))?;
    wg.store_u32(token, sample(&xs, &ws, &rows, eps))
}
