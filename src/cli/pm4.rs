//! `relaunch pm4 dump FILE`.

use std::path::PathBuf;

use super::Failure;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Pm4Command,
}

#[derive(clap::Subcommand)]
enum Pm4Command {
    /// Decode a raw little-endian dword file into packets with register names.
    Dump {
        file: PathBuf,
        /// Register family to decode against (gfx10, gfx11, gfx12).
        #[arg(long, default_value = "gfx12")]
        family: String,
    },
}

pub fn run(args: Args) -> Result<(), Failure> {
    match args.command {
        Pm4Command::Dump { file, family } => {
            let _ = (file, family);
            Err(Failure::input("pm4 dump: the PM4 decoder is not built yet"))
        }
    }
}
