//! The `relaunch` command line: parsing and dispatch. Each subcommand lives
//! in its own module and returns an exit code; errors are printed once, here.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// First: `say!` is used by the subcommands below.
#[macro_use]
mod output;

mod bundle;
mod bundled;
mod certify;
mod coverage;
mod demo;
mod devices;
mod dump_ib;
mod inspect;
mod pm4;
mod selftest;
mod sim_rocm;

#[derive(Parser)]
#[command(
    name = "relaunch",
    version,
    about = "Retained PM4 dispatch for AMD RDNA GPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List this host's GPUs with their stable anchors and deny marks (read-only).
    Devices(devices::Args),
    /// List the kernels in code objects with their PM4 verdicts, or
    /// (`--sim-coverage`) whether the simulator executes all their code.
    Inspect(inspect::Args),
    /// Prove per kernel whether it reads mutable data only through vector
    /// memory; print the verdicts and optionally write a manifest.
    Certify(certify::Args),
    /// PM4 tools (dump a raw dword file).
    Pm4(pm4::Args),
    /// Replay N counter dispatches as retained PM4 and check the counters.
    Selftest(selftest::Args),
    /// The main job: replay the reference decode step token by token and
    /// check every token against a CPU oracle.
    Demo(demo::Args),
    /// Per-architecture kernel bundles (.kpack + manifest): pack, list, verify.
    Bundle(bundle::Args),
    /// Run a command with the system's ROCm (ROCr, HIP, rocminfo) over a
    /// simulated GPU: `relaunch sim-rocm --target gfx1030 -- CMD [ARGS...]`.
    SimRocm(sim_rocm::Args),
}

/// A failure to report: the message and the exit code to use.
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl From<relaunch::Error> for Failure {
    /// Device problems exit 3, everything else 1.
    fn from(e: relaunch::Error) -> Self {
        let code = match e.class() {
            relaunch::ErrorClass::Device | relaunch::ErrorClass::DeviceLost => 3,
            _ => 1,
        };
        Failure {
            message: format!("{} error: {}", e.class().name(), e.message()),
            code,
        }
    }
}

/// Opens `--device SEL`, or the default (RELAUNCH_DEVICE, the first real
/// GPU, else the simulated gfx1201).
pub fn open_device(selector: Option<&str>) -> Result<relaunch::Gpu, Failure> {
    let gpu = selftest::open(selector).map_err(Failure::from)?;
    // Once, on stderr: which device the command runs on (real or simulated).
    eprintln!("relaunch: device: {}", gpu.describe());
    Ok(gpu)
}

impl Failure {
    /// Exit code 2: the input was malformed or refused.
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
}

fn main() -> ExitCode {
    init_logging();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Devices(args) => devices::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Certify(args) => certify::run(args),
        Command::Pm4(args) => pm4::run(args),
        Command::Selftest(args) => selftest::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Bundle(args) => bundle::run(args),
        Command::SimRocm(args) => sim_rocm::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("relaunch: error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

/// Logging goes to stderr, filtered by `RELAUNCH_LOG` (default: warnings).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RELAUNCH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
