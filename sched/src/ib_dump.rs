//! Writing every installed IB segment to files, for bug reports and
//! `relaunch pm4 dump --strict`: raw little-endian dwords exactly as the
//! queue runs them (final kernarg pointers), one file per segment, named
//! `<label>-ib<N>-seg<S>.bin` (`label` is the lane, `N` counts installs in
//! this process). Off unless a directory is set.

use std::path::{Path, PathBuf};
// A process-wide setting, not a protocol primitive: std's directly.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
static INSTALLS: AtomicU64 = AtomicU64::new(0);

/// The directory setting (a panic while it was held changes nothing).
fn dir_setting() -> MutexGuard<'static, Option<PathBuf>> {
    DIR.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Dump every IB installed from now on into `dir` (created if needed);
/// `None` stops dumping.
pub fn dump_ibs_to(dir: Option<&Path>) -> std::io::Result<()> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)?;
    }
    *dir_setting() = dir.map(Path::to_path_buf);
    Ok(())
}

/// Writes `segments` if dumping is on; a write failure is logged (a dump
/// must not fail the install).
pub(crate) fn dump(label: Option<&str>, segments: &[&[u32]]) {
    let Some(dir) = dir_setting().clone() else {
        return;
    };
    let n = INSTALLS.fetch_add(1, Ordering::Relaxed);
    let label = label.unwrap_or("ib");
    for (s, dwords) in segments.iter().enumerate() {
        let path = dir.join(format!("{label}-ib{n}-seg{s}.bin"));
        let bytes: Vec<u8> = dwords.iter().flat_map(|d| d.to_le_bytes()).collect();
        match std::fs::write(&path, bytes) {
            Ok(()) => tracing::info!(path = %path.display(), "IB segment dumped"),
            Err(e) => tracing::warn!(path = %path.display(), "cannot dump an IB segment: {e}"),
        }
    }
}
