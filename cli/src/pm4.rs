//! `relaunch pm4 dump FILE [--family gfx10|gfx11|gfx12] [--strict]`: decode a
//! raw little-endian dword file into packets with register names.

use std::path::PathBuf;

use relaunch_device::Family;
use relaunch_encoders::decode::{dump_each, dump_lenient_each, DumpError};

use super::output::{read_capped, to_stdout};
use super::Failure;

/// Largest file `pm4 dump` reads (64 Mi dwords: far beyond any IB segment).
const MAX_DUMP_BYTES: u64 = 256 << 20;

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
        /// Stop at the first packet the simulated device would refuse
        /// (default: mark problems with `!!` and continue).
        #[arg(long)]
        strict: bool,
    },
}

pub fn run(args: Args) -> Result<(), Failure> {
    match args.command {
        Pm4Command::Dump {
            file,
            family,
            strict,
        } => {
            let family = parse_family(&family)?;
            let dwords = read_dwords(&file)?;
            // Streamed one packet at a time: the text is many times the input.
            let mut refused = None;
            to_stdout(|out| {
                if !strict {
                    return dump_lenient_each(&dwords, family, |line| {
                        out.write_all(line.as_bytes())
                    });
                }
                match dump_each(&dwords, family, |line| out.write_all(line.as_bytes())) {
                    Ok(()) => Ok(()),
                    Err(DumpError::Sink(e)) => Err(e),
                    Err(DumpError::Decode(e)) => {
                        refused = Some(e);
                        Ok(())
                    }
                }
            })?;
            match refused {
                Some(e) => Err(Failure::input(format!("pm4 dump: {}: {e}", file.display()))),
                None => Ok(()),
            }
        }
    }
}

fn parse_family(name: &str) -> Result<Family, Failure> {
    Family::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
        let (last, rest) = names.split_last().expect("at least one family");
        let choices = match rest {
            [] => last.to_string(),
            _ => format!("{} or {last}", rest.join(", ")),
        };
        Failure::input(format!("pm4 dump: unknown family {name:?}; use {choices}"))
    })
}

fn read_dwords(path: &std::path::Path) -> Result<Vec<u32>, Failure> {
    let shown = path.display();
    let bytes = read_capped("pm4 dump", path, MAX_DUMP_BYTES)?;
    if bytes.len() % 4 != 0 {
        return Err(Failure::input(format!(
            "pm4 dump: {shown} is {} bytes, not a whole number of dwords",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("relaunch-pm4-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn reads_little_endian_dwords() {
        let path = temp_file("ok.bin", &[0x00, 0x46, 0x00, 0xC0, 0x07, 0x04, 0, 0]);
        assert_eq!(read_dwords(&path).ok(), Some(vec![0xC000_4600, 0x407]));
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn refuses_partial_dwords_and_unknown_families() {
        let path = temp_file("odd.bin", &[1, 2, 3]);
        let err = read_dwords(&path).err().unwrap();
        assert!(
            err.message
                .contains("3 bytes, not a whole number of dwords"),
            "{}",
            err.message
        );
        let _ = std::fs::remove_file(path);
        let err = parse_family("gfx9").err().unwrap();
        assert!(err.message.contains("use gfx10, gfx11 or gfx12"));
        assert_eq!(parse_family("gfx11").ok(), Some(Family::Gfx11));
    }
}
