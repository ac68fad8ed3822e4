//! Workgroups on every core: a dispatch of many workgroups gives the same
//! memory and the same access trace (what race and stale-read reports are
//! made of) on one worker and on several, and a fault is the lowest
//! failing workgroup's however the workers interleave.

use relaunch_sim::isa::dispatch::{aql_user_sgprs, run, AqlSource, Launch};
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
        let at = AqlSource {
            packet: 0,
            queue: None,
            id: 0,
            private_segment_size: 0,
        };
        let launch = Launch {
            processor: TARGET.to_string(),
            rsrc1: kd.compute_pgm_rsrc1,
            rsrc2: kd.compute_pgm_rsrc2,
            wave64: !kd.wave32(),
            user_sgprs: aql_user_sgprs(&kd, dev.family(), ka, at, None).unwrap(),
            trap_handler: false,
            scratch: None,
            private_segment_bytes: 0,
        };
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
