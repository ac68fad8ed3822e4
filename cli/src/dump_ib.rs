//! `--dump-ib DIR` of `selftest` and `demo`: every IB the command installs,
//! each segment of each lane as raw little-endian dwords
//! (`lane<L>-ib<N>-seg<S>.bin`), for `relaunch pm4 dump --strict` and bug
//! reports.

use std::path::PathBuf;

use super::Failure;

#[derive(clap::Args, Debug, Default)]
pub struct DumpIb {
    /// Write every installed IB segment (raw little-endian dwords, one file
    /// per lane and segment) into this directory.
    #[arg(long = "dump-ib", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl DumpIb {
    /// Turns dumping on before anything is installed.
    pub fn enable(&self) -> Result<(), Failure> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        relaunch::dump_ibs_to(Some(dir))
            .map_err(|e| Failure::input(format!("--dump-ib: cannot use {}: {e}", dir.display())))?;
        eprintln!("relaunch: dumping IB segments to {}", dir.display());
        Ok(())
    }
}
