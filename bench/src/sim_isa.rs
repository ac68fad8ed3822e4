//! `sim_isa`: the simulator's instruction interpreter on the decode kernels
//! (tests/kernels/build/gfx1100/decode.co, what `relaunch demo` runs), one
//! thread (TARGETS.md: `sim_isa_minst_per_s`, at least twice the figure
//! before the speed work, 9a99d8c, measured side by side on one machine:
//! machines differ, so the bench reports the figure and checks no
//! absolute threshold).
//!
//! Each kernel is dispatched with the demo's sizes (hidden 64, ffn 128,
//! 4 heads of 16, kv capacity 64, position 31) on device buffers holding
//! small values, straight through the interpreter (`isa::dispatch::run`,
//! no queue or IB around it), repeatedly; the figure is wave-instructions
//! executed over the thread's CPU time (per core, whatever else the
//! machine runs), median of the rounds; the wall-clock rate is printed too.

use std::sync::Arc;
use std::time::Instant;

use relaunch_sim::isa::dispatch::{run, Launch};
use relaunch_sim::memory::MemKind;
use relaunch_sim::twins::DispatchContext;
use relaunch_sim::{SimConfig, SimDevice};

use crate::report::Report;

const TARGET: &str = "gfx1100";
const ROUNDS: usize = 31;

/// (kernel, grid, block, kernarg bytes as (offset, value) pairs: a value
/// below 16 names a buffer).
fn cases(buf: &[u64; 6]) -> Vec<(&'static str, u32, u32, Vec<u8>)> {
    let mut out = Vec::new();
    let args = |parts: &[(u64, bool)]| {
        let mut v = Vec::new();
        for &(x, wide) in parts {
            if wide {
                v.extend(x.to_le_bytes());
            } else {
                v.extend((x as u32).to_le_bytes());
            }
        }
        v
    };
    let f = |x: f32| u64::from(x.to_bits());
    let p = |i: usize| (buf[i], true);
    let u = |x: u64| (x, false);
    out.push((
        "rmsnorm",
        64,
        64,
        args(&[p(0), p(1), p(2), u(64), u(f(1e-5))]),
    ));
    out.push(("matvec", 128, 64, args(&[p(0), p(1), p(2), u(128), u(64)])));
    out.push(("rope", 64, 64, args(&[p(0), u(64), u(16), u(31)])));
    out.push((
        "kv_append",
        64,
        64,
        args(&[p(3), p(1), u(64), u(64), u(31)]),
    ));
    out.push((
        "attention",
        64,
        64,
        args(&[p(0), p(1), p(3), u(64), u(16), u(64), u(31)]),
    ));
    out.push(("residual_add", 64, 64, args(&[p(0), p(1), u(64)])));
    out.push(("silu_mul", 128, 64, args(&[p(4), p(1), u(128)])));
    out.push((
        "sampler",
        1,
        1,
        args(&[p(5), p(1), p(2), p(3), u(64), u(64), u(f(1e-5))]),
    ));
    out
}

pub fn run_bench(report: &mut Report) -> Result<(), String> {
    // The per-core figure runs one worker (this thread's CPU time is the
    // whole interpreter's); the parallel one compares with all cores.
    relaunch_sim::isa::set_workers(1);
    let dev = SimDevice::new(SimConfig::new(TARGET)).map_err(|e| e.to_string())?;
    let bytes = relaunch_testsupport::rig::fixture(TARGET, "decode").map_err(|e| e.to_string())?;
    let image = dev.load_code_object(&bytes).map_err(|e| e.to_string())?;
    let mem = &dev.memory;
    // Buffers of 64k floats with small values (the kv cache is 2 x 64 x 64).
    let mut buf = [0u64; 6];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = mem
            .allocate(1 << 18, MemKind::Device)
            .map_err(|e| e.to_string())?;
        let vals: Vec<u8> = (0..1 << 16)
            .flat_map(|k: u32| (((k * 7 + i as u32) % 13) as f32 * 0.01 - 0.06).to_le_bytes())
            .collect();
        mem.write(*b, &vals).map_err(|e| e.to_string())?;
    }
    let processor = dev.target().processor().to_string();
    let mut prepared = Vec::new();
    for (name, grid, block, args) in cases(&buf) {
        let kernel = image
            .kernels
            .iter()
            .find(|k| k.symbol == name)
            .ok_or_else(|| format!("decode.co has no kernel {name}"))?;
        let ka = mem
            .allocate(256, MemKind::Device)
            .map_err(|e| e.to_string())?;
        mem.write(ka, &args).map_err(|e| e.to_string())?;
        let kd = kernel.descriptor;
        // No queue here: the decode kernels enable neither the dispatch
        // nor the queue pointer, so there is no packet to point at.
        let trap = dev.config().trap_handler;
        let launch = Launch::without_queue(&processor, dev.family(), &kd, ka, trap)?;
        prepared.push((Arc::clone(kernel), ka, grid, block, launch));
    }
    let mut rates: Vec<f64> = Vec::new();
    let mut wall: Vec<f64> = Vec::new();
    let mut total = 0u64;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let cpu0 = thread_cpu_seconds()?;
        let mut executed = 0u64;
        for (kernel, ka, grid, block, launch) in &prepared {
            let mut ctx = DispatchContext::new(
                *ka,
                kernel.descriptor.kernarg_size as usize,
                [*grid, 1, 1],
                [*block, 1, 1],
                0,
            );
            ctx.user_sgprs = launch.user_sgprs.clone();
            executed += run(&mut ctx, mem, kernel, launch)
                .map_err(|e| format!("{}: {e}", kernel.symbol))?;
        }
        let cpu = thread_cpu_seconds()? - cpu0;
        let secs = start.elapsed().as_secs_f64();
        rates.push(executed as f64 / cpu.max(1e-9) / 1e6);
        wall.push(executed as f64 / secs / 1e6);
        total = executed;
    }
    println!(
        "  {} wave-instructions per round over {} decode kernels on {TARGET}, {ROUNDS} rounds",
        total,
        prepared.len()
    );
    rates.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    println!(
        "  wall-clock rate {:.3} Minst/s (median; below the CPU-time rate when the machine is shared)",
        wall[wall.len() / 2]
    );
    report.metric(
        "sim_isa_minst_per_s",
        rates[rates.len() / 2],
        "Minst/s",
        None,
    );
    parallel(report, &dev, &image, &buf)
}

/// Rounds of the parallel comparison.
const PARALLEL_ROUNDS: usize = 9;

/// Elements of the parallel case's vectors (residual_add, silu_mul) and
/// rows of its matvec: 256 workgroups of 64 for matvec, 1024 for the
/// element-wise kernels.
const PARALLEL_ROWS: u32 = 16384;
const PARALLEL_ELEMS: u32 = 65536;

/// `sim_isa_parallel_speedup`: three decode kernels at dispatch sizes a
/// GPU spreads over its compute units (matvec of 16384 rows x 64 columns:
/// 256 workgroups; residual_add and silu_mul over 65536 elements: 1024
/// workgroups each), wall time on one worker over wall time on every core
/// (the dispatching thread and the interpreter's pool), interleaved round
/// by round, median of each; the outputs of both must be equal. What it
/// measures is how well workgroups spread over cores, so each dispatch is
/// large enough (milliseconds) that per-dispatch costs do not decide it.
fn parallel(
    report: &mut Report,
    dev: &Arc<SimDevice>,
    image: &relaunch_sim::device::LoadedImage,
    buf: &[u64; 6],
) -> Result<(), String> {
    let mem = &dev.memory;
    let alloc = |floats: u32, seed: u32| -> Result<u64, String> {
        let at = mem
            .allocate(4 * floats as usize, MemKind::Device)
            .map_err(|e| e.to_string())?;
        let vals: Vec<u8> = (0..floats)
            .flat_map(|k| (((k * 7 + seed) % 13) as f32 * 0.01 - 0.06).to_le_bytes())
            .collect();
        mem.write(at, &vals).map_err(|e| e.to_string())?;
        Ok(at)
    };
    let (rows, n) = (PARALLEL_ROWS, PARALLEL_ELEMS);
    let mv_out = alloc(rows, 0)?;
    let weights = alloc(rows * 64, 1)?;
    let resid = alloc(n, 2)?;
    let delta = alloc(n, 3)?;
    let gate_up = alloc(2 * n, 4)?;
    let silu_out = alloc(n, 5)?;
    let f = |x: u64| x.to_le_bytes().to_vec();
    let u = |x: u32| x.to_le_bytes().to_vec();
    let cases: [(&str, u32, Vec<u8>); 3] = [
        (
            "matvec",
            rows,
            [f(mv_out), f(buf[1]), f(weights), u(rows), u(64)].concat(),
        ),
        ("residual_add", n, [f(resid), f(delta), u(n)].concat()),
        ("silu_mul", n, [f(silu_out), f(gate_up), u(n)].concat()),
    ];
    let mut runs = Vec::new();
    for (name, grid, args) in cases {
        let kernel = image
            .kernels
            .iter()
            .find(|k| k.symbol == name)
            .ok_or_else(|| format!("decode.co has no kernel {name}"))?;
        let ka = mem
            .allocate(256, MemKind::Device)
            .map_err(|e| e.to_string())?;
        mem.write(ka, &args).map_err(|e| e.to_string())?;
        let kd = kernel.descriptor;
        let processor = dev.target().processor();
        let trap = dev.config().trap_handler;
        let launch = Launch::without_queue(processor, dev.family(), &kd, ka, trap)?;
        runs.push((Arc::clone(kernel), ka, grid, launch));
    }
    // Every round starts from the same inputs (residual_add updates its own).
    let initial = mem
        .read_vec(resid, 4 * n as usize)
        .map_err(|e| e.to_string())?;
    let round = |workers: usize| -> Result<(f64, Vec<u8>), String> {
        mem.write(resid, &initial).map_err(|e| e.to_string())?;
        relaunch_sim::isa::set_workers(workers);
        let start = Instant::now();
        for (kernel, ka, grid, launch) in &runs {
            let mut ctx = DispatchContext::new(
                *ka,
                kernel.descriptor.kernarg_size as usize,
                [*grid, 1, 1],
                [64, 1, 1],
                0,
            );
            ctx.user_sgprs = launch.user_sgprs.clone();
            run(&mut ctx, mem, kernel, launch).map_err(|e| format!("{}: {e}", kernel.symbol))?;
        }
        let secs = start.elapsed().as_secs_f64();
        let mut out = mem
            .read_vec(mv_out, 4 * rows as usize)
            .map_err(|e| e.to_string())?;
        for at in [resid, silu_out] {
            out.extend(
                mem.read_vec(at, 4 * n as usize)
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok((secs, out))
    };
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for _ in 0..PARALLEL_ROUNDS {
        let (t1, o1) = round(1)?;
        let (tn, on) = round(0)?;
        if o1 != on {
            return Err("the outputs differ between one worker and every core".into());
        }
        one.push(t1);
        all.push(tn);
    }
    relaunch_sim::isa::set_workers(0);
    one.sort_by(f64::total_cmp);
    all.sort_by(f64::total_cmp);
    let (t1, tn) = (one[one.len() / 2], all[all.len() / 2]);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "  parallel: {:.1} ms on one worker, {:.1} ms on {cores} cores (median of {PARALLEL_ROUNDS})",
        t1 * 1e3,
        tn * 1e3
    );
    report.metric(
        "sim_isa_parallel_speedup",
        t1 / tn.max(1e-9),
        "x",
        Some((1.7, false)),
    );
    Ok(())
}

/// This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu_seconds() -> Result<f64, String> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Err(format!(
            "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}
