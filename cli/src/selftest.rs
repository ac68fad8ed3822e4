//! `relaunch selftest`: the retained-PM4 gate. Encodes the counter kernel N
//! times with RMW boundaries into one retained IB per lane, installs it,
//! replays it twice and checks the counters exactly (N, then 2N).

use std::path::PathBuf;

use relaunch::{Gpu, QueuePolicy};

use super::output::{read_capped, MAX_CODE_OBJECT_FILE_BYTES};
use super::{bundled, open_device, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// Device selector (uuid:, bdf:, slot:, name:, index:, @alias, sim:<target>).
    #[arg(long)]
    device: Option<String>,
    /// Counter dispatches per lane.
    #[arg(long, default_value_t = 256)]
    dispatches: u32,
    /// Independent lanes (one counter each), replayed with the Auto queue width.
    #[arg(long, default_value_t = 1)]
    lanes: usize,
    /// Counter code object to use instead of the bundled one.
    #[arg(long)]
    code_object: Option<PathBuf>,
    /// Time the replays on the GPU (one lane): the IB writes timestamps
    /// around every dispatch; the span and the order of the dispatch times
    /// are checked.
    #[arg(long)]
    profile: bool,
    #[command(flatten)]
    dump: super::dump_ib::DumpIb,
}

pub fn run(args: Args) -> Result<(), Failure> {
    if args.dispatches == 0 || args.lanes == 0 || args.lanes > 64 {
        return Err(Failure::input(
            "selftest: --dispatches must be >= 1 and --lanes between 1 and 64",
        ));
    }
    if args.profile && args.lanes > 1 {
        return Err(Failure::input(
            "selftest: --profile times one lane; drop --lanes",
        ));
    }
    args.dump.enable()?;
    let gpu = open_device(args.device.as_deref())?;
    say!("device: {}", gpu.describe());
    let bytes = match &args.code_object {
        Some(path) => read_capped("selftest", path, MAX_CODE_OBJECT_FILE_BYTES)?,
        None => bundled::counter(gpu.target().processor())
            .ok_or_else(|| {
                Failure::input(format!(
                    "selftest: no bundled counter kernel for {}; bundled: {}; pass --code-object",
                    gpu.target(),
                    bundled::TARGETS.join(", ")
                ))
            })?
            .to_vec(),
    };
    let module = gpu.load_module(&bytes).map_err(Failure::from)?;
    let counters = (0..args.lanes)
        .map(|_| gpu.alloc(4, true))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::from)?;
    let mut builders = Vec::with_capacity(args.lanes);
    for counter in &counters {
        let mut b = gpu.builder();
        let kernarg = counter.address().to_le_bytes();
        for i in 0..args.dispatches {
            if i > 0 {
                b.wait_rmw(None).map_err(Failure::from)?;
            }
            b.dispatch(&module, "counter", [1, 1, 1], [1, 1, 1], 0, &kernarg)
                .map_err(Failure::from)?;
        }
        builders.push(b);
    }
    let expected = args.dispatches;
    let mut ok = true;
    if args.lanes == 1 {
        let builder = builders.pop().expect("one builder");
        let mut ib = if args.profile {
            gpu.finalize_profiled(builder, relaunch::Profiling::Dispatches)
        } else {
            gpu.finalize(builder)
        }
        .map_err(Failure::from)?;
        say!(
            "ib: {} dispatches, {} dwords ({:.1} per dispatch)",
            ib.dispatch_count(),
            ib.dwords(),
            ib.dwords() as f64 / ib.dispatch_count() as f64
        );
        for round in 1..=2 {
            if args.profile {
                let times = ib.replay_profiled().map_err(Failure::from)?;
                let dispatches = ib.dispatch_times().map_err(Failure::from)?;
                ok &= report_times(times.gpu_us, &dispatches, expected);
            } else {
                ib.replay().map_err(Failure::from)?;
            }
            ok &= report(&counters[0], None, expected * round)?;
        }
    } else {
        let multi = gpu
            .finalize_multi(builders, QueuePolicy::Auto)
            .map_err(Failure::from)?;
        say!(
            "lanes={} queues={}",
            multi.lane_count(),
            multi.queues_used()
        );
        for round in 1..=2 {
            multi.replay().map_err(Failure::from)?;
            for (lane, counter) in counters.iter().enumerate() {
                ok &= report(counter, Some(lane), expected * round)?;
            }
        }
    }
    if ok {
        Ok(())
    } else {
        Err(Failure {
            message: "selftest: a counter did not match".into(),
            code: 1,
        })
    }
}

fn report(
    counter: &relaunch::DeviceBuffer,
    lane: Option<usize>,
    expected: u32,
) -> Result<bool, Failure> {
    let value = counter.read_u32(0).map_err(Failure::from)?;
    let verdict = if value == expected { "PASS" } else { "FAIL" };
    match lane {
        Some(l) => say!("counter[{l}] = {value} / {expected} [{verdict}]"),
        None => say!("counter = {value} / {expected} [{verdict}]"),
    }
    Ok(value == expected)
}

/// A profiled replay's times: every dispatch timed, each ending after it
/// starts, in submission order (the IB orders them with RMW boundaries),
/// all within the span.
fn report_times(span_us: f64, times: &[relaunch::DispatchTime], expected: u32) -> bool {
    let ordered = times.windows(2).all(|w| w[1].start_us >= w[0].end_us);
    let inside = times
        .iter()
        .all(|t| t.start_us >= 0.0 && t.end_us >= t.start_us && t.end_us <= span_us);
    let ok = times.len() == expected as usize && ordered && inside && span_us > 0.0;
    say!(
        "profile: gpu span {span_us:.3} us, {} dispatch times, ordered {ordered}, within the span {inside} [{}]",
        times.len(),
        if ok { "PASS" } else { "FAIL" }
    );
    ok
}

/// Opens the named device, or the default (first real GPU, else sim).
pub fn open(selector: Option<&str>) -> Result<Gpu, relaunch::Error> {
    match selector {
        Some(s) => Gpu::open(s),
        None => Gpu::open_default(),
    }
}
