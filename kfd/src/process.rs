//! The process's one open thunk: the driver model (`relaunch_sim::driver`)
//! over the simulated GPUs named by the launcher, plus what the C front
//! must keep alive for its callers (event structs, pointer-info arrays).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use relaunch_sim::driver::Driver;
use relaunch_sim::memory::MemKind;
use relaunch_sim::SimConfig;

use crate::abi::HsaEvent;

/// The variable `relaunch sim-rocm` names the simulated GPUs in (one
/// target per GPU, comma-separated). Internal to the launcher.
pub const TARGETS_ENV: &str = "RELAUNCH_KFD_TARGETS";
/// `1`: ordering violations in the runtime's traffic stop the queue.
pub const STRICT_ENV: &str = "RELAUNCH_KFD_STRICT";
/// A file to write the command processor's counters to when the process
/// closes the thunk or exits (`relaunch-bench`'s `cp_*_vs_hip`).
pub const COUNTERS_ENV: &str = "RELAUNCH_KFD_COUNTERS";

pub struct Process {
    pub driver: Arc<Driver>,
    /// One MMIO remap page per GPU (ROCr reads HDP flush addresses there).
    pub mmio_pages: Vec<u64>,
    opens: u32,
    /// Events handed out, by id: the structs the caller holds pointers to.
    pub events: HashMap<u32, Box<HsaEvent>>,
    /// Node arrays pointer queries return, by region base.
    pub node_arrays: HashMap<u64, (Vec<u32>, Vec<u32>)>,
}

pub static PROCESS: Mutex<Option<Process>> = Mutex::new(None);

/// The targets to simulate, from [`TARGETS_ENV`] (default `gfx1030`).
pub fn targets() -> Vec<String> {
    std::env::var(TARGETS_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "gfx1030".to_string())
        .split(',')
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Open (or count another open of) the thunk.
pub fn open() -> Result<(), String> {
    let mut guard = PROCESS.lock();
    if let Some(p) = guard.as_mut() {
        p.opens += 1;
        return Ok(());
    }
    let strict = std::env::var(STRICT_ENV).is_ok_and(|v| v == "1");
    let targets = targets();
    let names: Vec<&str> = targets.iter().map(String::as_str).collect();
    // The same anchors `sim:` reports for these boards, so a deny entry
    // written against one names the same board under the real ROCr.
    let anchors = relaunch_sim::hsa::anchors::for_boards(&names);
    let configs: Vec<SimConfig> = targets
        .iter()
        .zip(anchors)
        .map(|(t, (uuid, pci))| {
            let mut c = SimConfig::new(t);
            c.uuid = Some(uuid);
            c.pci = Some(pci);
            c.strict = strict;
            c.product_name = format!("relaunch simulated {t}");
            // ROCr installs a trap handler for every GPU.
            c.trap_handler = true;
            c
        })
        .collect();
    let driver = Driver::open(configs).map_err(|e| e.to_string())?;
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain function with no captured state, once.
        unsafe { libc::atexit(at_exit) };
    });
    let mut mmio_pages = Vec::new();
    for _ in driver.gpus() {
        let page = driver
            .device_memory()
            .allocate(4096, MemKind::Driver)
            .map_err(|e| e.to_string())?;
        mmio_pages.push(page);
    }
    *guard = Some(Process {
        driver,
        mmio_pages,
        opens: 1,
        events: HashMap::new(),
        node_arrays: HashMap::new(),
    });
    Ok(())
}

/// Close once; the last close stops every queue and frees every mapping.
pub fn close() -> bool {
    let mut guard = PROCESS.lock();
    let Some(p) = guard.as_mut() else {
        return false;
    };
    p.opens -= 1;
    if p.opens == 0 {
        let p = guard.take().expect("checked above");
        report_violations(&p.driver);
        write_counters(&p.driver);
        p.driver.close();
    }
    true
}

/// What the simulator's checks found in the runtime's traffic, said once.
pub fn report_violations(driver: &Driver) {
    for gpu in driver.gpus() {
        let (found, dropped) = gpu.take_violations();
        if found.is_empty() {
            continue;
        }
        eprintln!(
            "relaunch-kfd: {} ordering violation(s) in this process's GPU traffic on {}{}:",
            found.len() as u64 + dropped,
            gpu.config().target,
            if dropped > 0 {
                " (some not listed)"
            } else {
                ""
            }
        );
        for v in found.iter().take(8) {
            eprintln!("  {v}");
        }
    }
}

/// The counters of every GPU, `gpu<i> <name> <value>` per line, into the
/// file [`COUNTERS_ENV`] names (last writer wins: close, then exit).
pub fn write_counters(driver: &Driver) {
    let Some(path) = std::env::var_os(COUNTERS_ENV) else {
        return;
    };
    let mut text = String::new();
    for (i, gpu) in driver.gpus().iter().enumerate() {
        for line in gpu.cp_counts().lines().lines() {
            text.push_str(&format!("gpu{i} {line}\n"));
        }
    }
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!(
            "relaunch-kfd: cannot write the counters to {}: {e}",
            std::path::Path::new(&path).display()
        );
    }
}

/// At exit (HIP never closes the thunk): what the checks found and the
/// counters, as they stand.
extern "C" fn at_exit() {
    // A thread may hold the lock at exit; then the report is skipped
    // rather than the exit blocked.
    if let Some(guard) = PROCESS.try_lock() {
        if let Some(p) = guard.as_ref() {
            report_violations(&p.driver);
            write_counters(&p.driver);
        }
    }
}

/// Run `f` on the open process.
pub fn with<T>(f: impl FnOnce(&mut Process) -> T) -> Option<T> {
    PROCESS.lock().as_mut().map(f)
}

/// The driver, without holding the process lock (for waits).
pub fn driver() -> Option<Arc<Driver>> {
    PROCESS.lock().as_ref().map(|p| Arc::clone(&p.driver))
}
