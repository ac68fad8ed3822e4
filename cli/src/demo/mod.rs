//! `relaunch demo`: the main job. Builds the reference decode-step graph
//! (TARGETS.md) with real decode kernels on one device, replays it token by
//! token, and checks every token against a CPU oracle. Per token the host
//! patches the position into every rope, kv-append and attention kernarg
//! and writes the embedding of each sequence's last sampled token (its
//! start token at first) into that sequence's residual-stream buffer.
//!
//! Owns: the demo model, its kernels' layouts and twins, the oracle and
//! the report. Refuses: devices without decode kernels (pass `--bundle`
//! or `--code-object`), runs longer than the kv cache. Must not import the
//! simulator except to register twins on a simulated device.

mod device_graph;
mod kernels;
mod math;
mod model;
mod oracle;
mod report;
mod source;
mod twins;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use relaunch::twins::KernelMode;

use super::{open_device, Failure};
use model::{Weights, CAPACITY, HIDDEN, VOCAB};
use oracle::Oracle;
use report::{Progress, TokenCheck};

/// Seed of the demo's weights (any value works; fixed so runs compare).
const WEIGHT_SEED: u64 = 0x5eed_0fde_c0de;
/// Hardware (and the simulator's instruction interpreter) evaluates
/// exp/exp2/sin/cos approximately; the simulated twins (`--twins`) use the
/// oracle's functions and must match exactly.
const HARDWARE_TOLERANCE: f32 = 2e-3;

#[derive(clap::Args)]
pub struct Args {
    /// Device selector (uuid:, bdf:, slot:, name:, index:, @alias, sim:<target>);
    /// default: RELAUNCH_DEVICE, else the first real GPU, else sim:gfx1201.
    #[arg(long)]
    device: Option<String>,
    #[command(flatten)]
    dump: crate::dump_ib::DumpIb,
    /// Transformer layers (12 dispatches each per sequence).
    #[arg(long, default_value_t = 28)]
    layers: usize,
    /// Independent sequences (they become lanes on separate queues).
    #[arg(long, default_value_t = 2)]
    sequences: usize,
    /// Tokens to decode (at most the kv-cache capacity, 64).
    #[arg(long, default_value_t = 16)]
    tokens: usize,
    /// Decode code object to use instead of the bundle (build it with
    /// tests/kernels/decode/build.sh OUT_DIR <target>).
    #[arg(long, conflicts_with = "bundle")]
    code_object: Option<PathBuf>,
    /// Bundle tree to load the decode kernels from (toc key demo/decode,
    /// verified by the catalog); default: the tree built into the binary
    /// (tests/kernels/bundles).
    #[arg(long)]
    bundle: Option<PathBuf>,
    /// On a simulated device, run the decode kernels as their host twins
    /// (exact host math, checked bit for bit) instead of the instruction
    /// interpreter executing their machine code (the default, checked
    /// within the hardware tolerance). RELAUNCH_SIM_KERNELS, when set,
    /// decides instead (twin and both use the twins too); with =isa this
    /// flag is refused as a contradiction.
    #[arg(long)]
    twins: bool,
    /// How the lanes are submitted: auto (retained PM4, public AQL for a
    /// lane with a kernel PM4 refuses), pm4, or aql (standard AQL
    /// kernel-dispatch packets, one per node).
    #[arg(long, default_value = "auto", value_parser = parse_submission)]
    submission: relaunch::Submission,
}

fn parse_submission(name: &str) -> Result<relaunch::Submission, String> {
    match relaunch::Submission::parse(name) {
        Some(relaunch::Submission::Hip) | None => Err(format!("{name:?} is not auto, pm4 or aql")),
        Some(s) => Ok(s),
    }
}

/// What executes the decode kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runner {
    Gpu,
    /// The simulator's instruction interpreter on the machine code.
    Interpreter,
    /// The host twins only.
    Twins,
    /// Interpreter and twins, every written byte compared; the twins'
    /// bytes are the results (`RELAUNCH_SIM_KERNELS=both`).
    Both,
}

impl Runner {
    /// On a simulated device `RELAUNCH_SIM_KERNELS` (`mode`, parsed as the
    /// simulator parses it when the device opens) decides, and its `twin`
    /// and `both` register the twins they need; `--twins` is the same as
    /// `twin`, so it is refused with `isa`, which contradicts it. Unset or
    /// `auto`: the interpreter unless `--twins`.
    fn choose(simulated: bool, twins: bool, mode: &KernelMode) -> Result<Runner, Failure> {
        if !simulated {
            return if twins {
                Err(Failure::input(
                    "demo: --twins runs host twins on a simulated device (sim:<target>); \
                     this device is a GPU, which runs the kernels' machine code",
                ))
            } else {
                Ok(Runner::Gpu)
            };
        }
        match (mode, twins) {
            (KernelMode::Auto, false) => Ok(Runner::Interpreter),
            (KernelMode::Auto, true) | (KernelMode::Twin, _) => Ok(Runner::Twins),
            (KernelMode::Both, _) => Ok(Runner::Both),
            (KernelMode::Isa, false) => Ok(Runner::Interpreter),
            (KernelMode::Isa, true) => Err(Failure::input(
                "demo: --twins asks for the host twins but RELAUNCH_SIM_KERNELS=isa runs \
                 the instruction interpreter: drop one (RELAUNCH_SIM_KERNELS=both runs both)",
            )),
            (KernelMode::Invalid(other), _) => Err(Failure::input(format!(
                "demo: RELAUNCH_SIM_KERNELS={other:?} is not one of isa, twin, both \
                 (or unset for auto)"
            ))),
        }
    }

    fn needs_twins(self) -> bool {
        matches!(self, Runner::Twins | Runner::Both)
    }

    /// The check's tolerance: the twins compute with the oracle's own
    /// functions (and with `both` their bytes are the results); the
    /// interpreter and hardware evaluate exp/sin/cos/rsqrt to the
    /// hardware's precision.
    fn tolerance(self) -> f32 {
        if self.needs_twins() {
            0.0
        } else {
            HARDWARE_TOLERANCE
        }
    }

    /// What runs the kernels, for the report.
    fn describe(self) -> &'static str {
        match self {
            Runner::Gpu => "the GPU",
            Runner::Interpreter => {
                "the kernels' machine code on the simulator's instruction interpreter, \
                 checked within the hardware tolerance"
            }
            Runner::Twins => "the kernels' host twins, checked bit for bit",
            Runner::Both => {
                "the kernels' machine code on the simulator's instruction interpreter, \
                 cross-checked byte for byte against their host twins, whose results are \
                 checked bit for bit (RELAUNCH_SIM_KERNELS=both)"
            }
        }
    }
}

pub fn run(args: Args) -> Result<(), Failure> {
    args.dump.enable()?;
    if args.layers == 0 || args.layers > 256 {
        return Err(Failure::input("demo: --layers must be between 1 and 256"));
    }
    if args.sequences == 0 || args.sequences > 16 {
        return Err(Failure::input("demo: --sequences must be between 1 and 16"));
    }
    if args.tokens == 0 || args.tokens > CAPACITY {
        return Err(Failure::input(format!(
            "demo: --tokens must be between 1 and {CAPACITY} (the kv-cache capacity)"
        )));
    }
    let gpu = open_device(args.device.as_deref())?;
    say!("device: {}", gpu.describe());
    let module = source::load(&gpu, args.code_object.as_deref(), args.bundle.as_deref())?;
    kernels::check(&module).map_err(|e| Failure::input(format!("demo: {e}")))?;
    let mode = KernelMode::from_env();
    let runner = Runner::choose(gpu.is_simulated(), args.twins, &mode)?;
    if runner.needs_twins() {
        twins::register();
    }
    say!("execution: {}", runner.describe());
    let weights = Weights::generate(args.layers, WEIGHT_SEED);
    let built = device_graph::build(&gpu, &module, &weights, args.sequences)?;
    let exec = built
        .graph
        .instantiate_with(args.submission)
        .map_err(Failure::from)?;
    report::model(args.layers, args.sequences);
    exec.with_plan(report::plan);
    for (lane, l) in exec.lane_submissions().iter().enumerate() {
        if let Some(reason) = &l.reason {
            say!("lane {lane} runs as {}: {reason}", l.kind);
        }
    }
    report::per_token(built.position_sites.len());

    let tolerance = runner.tolerance();
    let mut oracles: Vec<Oracle> = (0..args.sequences)
        .map(|_| Oracle::new(args.layers))
        .collect();
    let mut inputs: Vec<u32> = (0..args.sequences).map(model::start_token).collect();
    let mut sampled: Vec<Vec<u32>> = vec![Vec::new(); args.sequences];
    let mut times: Vec<Duration> = Vec::with_capacity(args.tokens);
    let mut checks: Vec<TokenCheck> = Vec::with_capacity(args.tokens);
    let mut progress = Progress::new(args.tokens);
    for pos in 0..args.tokens {
        for (s, &token) in inputs.iter().enumerate() {
            let seq = &built.decode.buffers.sequences[s];
            built
                .buffer(seq.hidden)
                .write(0, &f32_le(weights.embed(token)))
                .map_err(Failure::from)?;
        }
        let started = Instant::now();
        for &(node, offset) in &built.position_sites {
            exec.set_node_kernargs(node, offset, &(pos as u32).to_le_bytes())
                .map_err(Failure::from)?;
        }
        exec.launch(&gpu).map_err(Failure::from)?;
        times.push(started.elapsed());
        if pos == 0 {
            report::installed(&exec);
        }
        let mut check = TokenCheck::new(pos);
        for s in 0..args.sequences {
            let seq = &built.decode.buffers.sequences[s];
            let token = built.buffer(seq.token).read_u32(0).map_err(Failure::from)?;
            let mut raw = vec![0u8; HIDDEN * 4];
            built
                .buffer(seq.hidden)
                .read(0, &mut raw)
                .map_err(Failure::from)?;
            let hidden = f32_from_le(&raw);
            let want = oracles[s].step(&weights, weights.embed(inputs[s]), pos);
            check.add(s, token, &hidden, &want, tolerance);
            sampled[s].push(token);
            // A real engine feeds back what the device sampled.
            inputs[s] = token % VOCAB as u32;
        }
        progress.update(pos + 1, &check);
        checks.push(check);
    }
    progress.finish();
    let dispatches = exec.with_plan(|p| p.node_count());
    let verified = report::summary(&checks, &sampled, &times, dispatches, tolerance);
    if verified == args.tokens {
        Ok(())
    } else {
        Err(Failure {
            message: format!(
                "demo: {} of {} tokens did not match the CPU oracle",
                args.tokens - verified,
                args.tokens
            ),
            code: 1,
        })
    }
}

fn f32_le(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn f32_from_le(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Runner;
    use relaunch::twins::KernelMode;

    fn choose(simulated: bool, twins: bool, env: Option<&str>) -> Result<Runner, String> {
        let mode = env.map_or(KernelMode::Auto, KernelMode::parse);
        Runner::choose(simulated, twins, &mode).map_err(|f| f.message)
    }

    #[test]
    fn the_environment_decides_and_a_contradiction_is_refused() {
        use Runner::*;
        for (twins, env, want) in [
            (false, None, Interpreter),
            (true, None, Twins),
            (false, Some("auto"), Interpreter),
            (true, Some(""), Twins),
            (false, Some("isa"), Interpreter),
            (false, Some("twin"), Twins),
            (true, Some("twin"), Twins),
            (false, Some("both"), Both),
            (true, Some("both"), Both),
        ] {
            assert_eq!(
                choose(true, twins, env),
                Ok(want),
                "--twins={twins} {env:?}"
            );
        }
        let err = choose(true, true, Some("isa")).unwrap_err();
        assert!(
            err.contains("--twins") && err.contains("RELAUNCH_SIM_KERNELS=isa"),
            "{err}"
        );
        let err = choose(true, false, Some("twins")).unwrap_err();
        assert!(err.contains("\"twins\" is not one of"), "{err}");
        assert_eq!(choose(false, false, Some("both")), Ok(Gpu));
        assert!(choose(false, true, None)
            .unwrap_err()
            .contains("simulated device"));
    }

    #[test]
    fn what_runs_sets_the_check() {
        assert_eq!(Runner::Interpreter.tolerance(), super::HARDWARE_TOLERANCE);
        assert_eq!(Runner::Gpu.tolerance(), super::HARDWARE_TOLERANCE);
        assert_eq!(Runner::Twins.tolerance(), 0.0);
        assert_eq!(Runner::Both.tolerance(), 0.0);
        assert!(Runner::Interpreter.describe().contains("interpreter"));
        assert!(!Runner::Interpreter.describe().contains("twin"));
    }
}
