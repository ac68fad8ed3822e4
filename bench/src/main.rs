//! relaunch-bench: measured figures from TARGETS.md.
//!
//! Each benchmark prints `METRIC <name> <value> <unit>` lines plus a human
//! table and writes `target/bench/<name>.json`. Run in release mode:
//! `cargo run --release -p relaunch-bench -- <name>|all`.

mod aql_vs_pm4;
mod cp_vs_hip;
mod decode_ratio;
mod density;
mod encode;
mod instantiate;
mod interposer;
mod memory;
mod patch;
mod profile;
mod report;
mod sim_isa;
mod simrig;
mod submit;

use std::process::ExitCode;

/// A named benchmark.
struct Bench {
    name: &'static str,
    about: &'static str,
    run: fn(&mut report::Report) -> Result<(), String>,
}

/// Every benchmark, in the order `all` runs them.
const BENCHES: &[Bench] = &[
    Bench {
        name: "density",
        about: "PM4 dwords per dispatch",
        run: density::run,
    },
    Bench {
        name: "encode",
        about: "record + finish per dispatch vs memcpy: serial, alternating, cycle12",
        run: encode::run,
    },
    Bench {
        name: "instantiate",
        about: "compile the reference decode graph at 10k and 100k nodes",
        run: instantiate::run,
    },
    Bench {
        name: "interposer",
        about: "shadow + instantiate 100k-node HIP graph shapes through the interposer",
        run: interposer::run,
    },
    Bench {
        name: "submit",
        about: "replay call to doorbell: scheduler vs direct, 4-lane fan-out",
        run: submit::run,
    },
    Bench {
        name: "aql_vs_pm4",
        about:
            "the same graph as public AQL vs retained PM4: submit cost, CP packets, cache actions",
        run: aql_vs_pm4::run,
    },
    Bench {
        name: "patch",
        about: "4-byte kernarg patch on an installed IB vs a checked copy",
        run: patch::run,
    },
    Bench {
        name: "profile",
        about: "extra IB dwords of profiled IBs: per IB, per dispatch",
        run: profile::run,
    },
    Bench {
        name: "memory",
        about: "kernarg and retained bytes per dispatch, 1M-dispatch replay",
        run: memory::run,
    },
    Bench {
        name: "cp_vs_hip",
        about:
            "CP packets and cache actions per graph launch: HIP vs the interposer, real ROCr on sim",
        run: cp_vs_hip::run,
    },
    Bench {
        name: "sim_isa",
        about: "the instruction interpreter on the decode kernels, one thread",
        run: sim_isa::run_bench,
    },
];

fn main() -> ExitCode {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    if wanted.is_empty() || wanted.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("usage: relaunch-bench <name>... | all");
        for bench in BENCHES {
            eprintln!("  {:<14} {}", bench.name, bench.about);
        }
        return ExitCode::from(2);
    }
    let selected: Vec<&Bench> = if wanted.iter().any(|a| a == "all") {
        BENCHES.iter().collect()
    } else {
        let mut out = Vec::new();
        for name in &wanted {
            match BENCHES.iter().find(|b| b.name == name) {
                Some(b) => out.push(b),
                None => {
                    eprintln!("relaunch-bench: unknown benchmark {name:?} (try --help)");
                    return ExitCode::from(2);
                }
            }
        }
        out
    };
    let mut failed = false;
    for bench in selected {
        let mut report = report::Report::new(bench.name);
        match (bench.run)(&mut report) {
            Ok(()) => {
                if let Err(e) = report.finish() {
                    eprintln!("relaunch-bench: {}: cannot write report: {e}", bench.name);
                    failed = true;
                }
            }
            Err(e) => {
                eprintln!("relaunch-bench: {} failed: {e}", bench.name);
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
