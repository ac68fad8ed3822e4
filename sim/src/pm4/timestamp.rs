//! The modelled GPU clock behind timestamp RELEASE_MEMs (DATA_SEL 3).
//! One process-wide counter, so readings are monotonic across IBs and
//! queues; a dispatch advances it by a cost that grows with its
//! workgroups, a timestamp reads it (and ticks once, so two readings are
//! never equal). A span therefore covers the dispatches inside it, and
//! more dispatches make a longer span, as on hardware.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use relaunch_facts::packet::release_data::DATA_SEL_TIMESTAMP;
use relaunch_facts::packet::release_data::{self, DST_SEL_MEMORY};

/// Bytes a timestamp writes: the 64-bit clock, to an 8-byte aligned address.
const TIMESTAMP_BYTES: u64 = 8;

/// The modelled clock's frequency, which the simulated runtime reports as
/// `HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY` (so host conversions of its
/// readings are right): 1 GHz, one tick per nanosecond.
pub const TIMESTAMP_FREQUENCY_HZ: u64 = 1_000_000_000;
/// Modelled fixed cost of one dispatch (2 us) and per workgroup (100 ns).
const DISPATCH_TICKS: u64 = 2_000;
const WORKGROUP_TICKS: u64 = 100;

static CLOCK: AtomicU64 = AtomicU64::new(1 << 20);

/// Ticks one dispatch of `groups` workgroups takes.
pub fn dispatch_ticks(groups: [u32; 3]) -> u64 {
    let n = groups.iter().map(|&g| u64::from(g.max(1))).product::<u64>();
    DISPATCH_TICKS.saturating_add(n.saturating_mul(WORKGROUP_TICKS))
}

/// Modelled ticks of a CP DMA transfer of `bytes` (one dispatch's fixed
/// cost plus one workgroup's per KiB).
pub fn transfer_ticks(bytes: u64) -> u64 {
    DISPATCH_TICKS.saturating_add(bytes.div_ceil(1024).saturating_mul(WORKGROUP_TICKS))
}

/// Runs a dispatch on the clock.
pub fn advance(ticks: u64) {
    CLOCK.fetch_add(ticks, Ordering::Relaxed);
}

/// The clock now, without ticking (a kernel's clock reads: `isa::clock`).
pub fn now() -> u64 {
    CLOCK.load(Ordering::Relaxed)
}

/// Reads the clock (and ticks once).
pub fn read() -> u64 {
    CLOCK.fetch_add(1, Ordering::Relaxed)
}

/// Why a timestamp RELEASE_MEM's encoding is refused, if it is.
pub fn check(data_cntl: u32, address: u64) -> Result<(), String> {
    let dst = release_data::DST_SEL.get(data_cntl);
    if dst != DST_SEL_MEMORY {
        return Err(format!(
            "timestamp RELEASE_MEM with DST_SEL {dst}; only memory (0) is modelled"
        ));
    }
    if address % TIMESTAMP_BYTES != 0 || address == 0 {
        return Err(format!(
            "timestamp RELEASE_MEM to {address:#x}: the 64-bit write needs a nonzero 8-byte aligned address"
        ));
    }
    Ok(())
}
