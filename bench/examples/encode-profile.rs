//! Encode one benchmark shape once, for profilers:
//! `valgrind --tool=callgrind target/release/examples/encode-profile cycle12 100000`.
//! Instructions per dispatch are the difference of two runs' totals over
//! the difference of their dispatch counts (start-up cancels out), which
//! does not depend on the machine's load. An optional third argument
//! encodes that many times, each into the previous IB's buffers (as the
//! benchmark does), so a sampling profiler sees the encoder, not page faults.

use std::hint::black_box;
use std::process::ExitCode;

use relaunch_bench::shapes::Workload;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(n)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<u64>().ok()),
    ) else {
        eprintln!(
            "usage: encode-profile serial|serial_same|independent|alternating|cycle12 <dispatches> [rounds]"
        );
        return ExitCode::from(2);
    };
    let shape = match name.as_str() {
        "serial" => Workload::serial(),
        "serial_same" => Workload::serial_same(),
        "independent" => Workload::independent(),
        "alternating" => Workload::alternating(),
        "cycle12" => match Workload::cycle12() {
            Ok(w) => w,
            Err(e) => {
                eprintln!("encode-profile: {e}");
                return ExitCode::FAILURE;
            }
        },
        other => {
            eprintln!("encode-profile: unknown shape {other:?}");
            return ExitCode::from(2);
        }
    };
    let rounds = args.get(2).and_then(|r| r.parse::<u64>().ok()).unwrap_or(1);
    let mut storage = None;
    for _ in 0..rounds {
        match shape.encode_in(n, storage.take()) {
            Ok(ib) => storage = Some(black_box(ib).into_storage()),
            Err(e) => {
                eprintln!("encode-profile: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
