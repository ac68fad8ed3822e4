//! `relaunch inspect PATH [--target gfx…]`.

use std::path::PathBuf;

use super::Failure;

#[derive(clap::Args)]
pub struct Args {
    /// Code object (ELF) or clang offload bundle.
    path: PathBuf,
    /// Pick this target's entry from an offload bundle.
    #[arg(long)]
    target: Option<String>,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let _ = (args.path, args.target);
    Err(Failure::input(
        "inspect: the code-object reader is not built yet",
    ))
}
