//! Workgroups on every core: a dispatch of many workgroups gives the same
//! memory and the same access trace (what race and stale-read reports are
//! made of) on one worker and on several, and a fault is the lowest
//! failing workgroup's however the workers interleave.

use relaunch_sim::isa::dispatch::{run, Launch};
use relaunch_sim::memory::MemKind;
use relaunch_sim::trace::AccessTrace;
use relaunch_sim::twins::{DispatchContext, KernelFault};
use relaunch_sim::{SimConfig, SimDevice};

const TARGET: &str = "gfx1100";

/// residual_add(x, y, n) over `n` elements in workgroups of 64, with y
/// `y_len` bytes long, on one device: run it with [`Rig::run`].
struct Rig {
    dev: std::sync::Arc<SimDevice>,
    kernel: std::sync::Arc<relaunch_sim::device::KernelEntry>,
    launch: Launch,
    ka: u64,
    x: u64,
    y_end: u64,
    n: u32,
}

impl Rig {
    fn new(n: u32, y_len: usize) -> Rig {
        let dev = SimDevice::new(SimConfig::new(TARGET)).unwrap();
        let bytes = relaunch_testsupport::fixture(TARGET, "decode");
        let image = dev.load_code_object(&bytes).unwrap();
        let kernel = image
            .kernels
            .iter()
            .find(|k| k.symbol == "residual_add")
            .unwrap()
            .clone();
        let mem = &dev.memory;
        let x = mem.allocate(4 * n as usize, MemKind::Device).unwrap();
        let y = mem.allocate(y_len, MemKind::Device).unwrap();
        let ys: Vec<u8> = (0..y_len / 4)
            .flat_map(|i| (i as f32 * 0.25).to_le_bytes())
            .collect();
        mem.write(y, &ys).unwrap();
        let ka = mem.allocate(64, MemKind::Device).unwrap();
        let args = [
            x.to_le_bytes().as_slice(),
            &y.to_le_bytes(),
            &n.to_le_bytes(),
        ]
        .concat();
        mem.write(ka, &args).unwrap();
        let kd = kernel.descriptor;
        let launch = Launch::without_queue(TARGET, dev.family(), &kd, ka, false).unwrap();
        Rig {
            dev,
            kernel,
            launch,
            ka,
            x,
            y_end: y + y_len as u64,
            n,
        }
    }

    /// Run on `workers` workers from fresh x: x afterwards and the trace.
    fn run(&self, workers: usize) -> (Result<Vec<u8>, KernelFault>, AccessTrace) {
        let mem = &self.dev.memory;
        let xs: Vec<u8> = (0..self.n)
            .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
            .collect();
        mem.write(self.x, &xs).unwrap();
        relaunch_sim::isa::set_workers(workers);
        let kd = self.kernel.descriptor;
        let mut ctx = DispatchContext::new(
            self.ka,
            kd.kernarg_size as usize,
            [self.n, 1, 1],
            [64, 1, 1],
            0,
        );
        ctx.user_sgprs = self.launch.user_sgprs.clone();
        let result = run(&mut ctx, mem, &self.kernel, &self.launch)
            .map(|_| mem.read_vec(self.x, 4 * self.n as usize).unwrap());
        relaunch_sim::isa::set_workers(0);
        (result, ctx.trace)
    }
}

#[test]
fn many_workgroups_give_the_same_memory_and_trace_on_one_worker_and_on_several() {
    let n = 64 * 40;
    let rig = Rig::new(n, 4 * n as usize);
    let (one, trace_one) = rig.run(1);
    let (several, trace_several) = rig.run(4);
    let one = one.unwrap();
    assert_eq!(one, several.unwrap());
    assert_eq!(trace_one, trace_several);
    // And the values are the sum.
    let got = f32::from_le_bytes(one[4 * 100..4 * 101].try_into().unwrap());
    assert_eq!(got, 100.0 * 0.5 + 100.0 * 0.25);
}

#[test]
fn the_fault_is_the_lowest_failing_workgroups_on_any_number_of_workers() {
    // y holds 25 workgroups' worth: workgroup 25 is the first to read past it.
    let n = 64 * 40;
    let rig = Rig::new(n, 4 * 64 * 25);
    for workers in [1, 2, 4] {
        let (result, _) = rig.run(workers);
        let Err(KernelFault::Vm(fault)) = result else {
            panic!("{workers} workers: {result:?}");
        };
        assert_eq!(fault.addr, rig.y_end, "{workers} workers: {fault}");
    }
}

/// reduce_lds over `groups` workgroups of 64 on one device, once per
/// entry of `workers` on that many workers: each run's per-group sums and
/// trace.
fn reduce_lds(groups: u32, workers: &[usize]) -> Vec<(Vec<u8>, AccessTrace)> {
    let dev = SimDevice::new(SimConfig::new(TARGET)).unwrap();
    let bytes = relaunch_testsupport::fixture(TARGET, "reduce_lds");
    let image = dev.load_code_object(&bytes).unwrap();
    let kernel = image
        .kernels
        .iter()
        .find(|k| k.symbol == "reduce_lds")
        .unwrap()
        .clone();
    let mem = &dev.memory;
    let n = 64 * groups;
    let input = mem.allocate(4 * n as usize, MemKind::Device).unwrap();
    let ins: Vec<u8> = (0..n)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect();
    mem.write(input, &ins).unwrap();
    let out = mem.allocate(4 * groups as usize, MemKind::Device).unwrap();
    let ka = mem.allocate(256, MemKind::Device).unwrap();
    // The explicit arguments, then the hidden ones the kernel reads its
    // workgroup size from (code object v5: block counts, then group sizes).
    let mut args = [out.to_le_bytes(), input.to_le_bytes()].concat();
    for c in [groups, 1, 1] {
        args.extend(c.to_le_bytes());
    }
    for s in [64u16, 1, 1] {
        args.extend(s.to_le_bytes());
    }
    mem.write(ka, &args).unwrap();
    let kd = kernel.descriptor;
    let launch = Launch::without_queue(TARGET, dev.family(), &kd, ka, false).unwrap();
    workers
        .iter()
        .map(|&w| {
            mem.write(out, &vec![0u8; 4 * groups as usize]).unwrap();
            let mut ctx = DispatchContext::new(
                ka,
                kd.kernarg_size as usize,
                [n, 1, 1],
                [64, 1, 1],
                kd.group_segment_fixed_size as usize,
            );
            ctx.user_sgprs = launch.user_sgprs.clone();
            relaunch_sim::isa::set_workers(w);
            let result = run(&mut ctx, mem, &kernel, &launch);
            relaunch_sim::isa::set_workers(0);
            result.unwrap();
            (mem.read_vec(out, 4 * groups as usize).unwrap(), ctx.trace)
        })
        .collect()
}

#[test]
fn workgroups_sharing_lds_and_barriers_give_the_same_sums_and_trace_on_any_number_of_workers() {
    // Each worker has an LDS of its own, zeroed per workgroup, and its
    // waves meet at barriers: 300 workgroups on 1, 2 and 3 workers.
    let runs = reduce_lds(300, &[1, 2, 3]);
    let (one, trace_one) = &runs[0];
    for (workers, (several, trace_several)) in [2, 3].iter().zip(&runs[1..]) {
        assert_eq!(one, several, "{workers} workers");
        assert_eq!(trace_one, trace_several, "{workers} workers");
    }
    // Every group's inputs were read, and each sum is its group's.
    assert_eq!(
        trace_one
            .vector_reads
            .iter()
            .map(|(s, e)| e - s)
            .sum::<u64>(),
        4 * 64 * 300
    );
    for g in [0u32, 1, 299] {
        let want =
            (64 * g..64 * (g + 1)).fold(0u32, |a, i| a.wrapping_add(i.wrapping_mul(2_654_435_761)));
        let at = 4 * g as usize;
        assert_eq!(
            u32::from_le_bytes(one[at..at + 4].try_into().unwrap()),
            want,
            "group {g}"
        );
    }
}
