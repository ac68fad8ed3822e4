//! The clocks a kernel reads: s_memtime and s_memrealtime (gfx10),
//! s_sendmsg_rtn MSG_RTN_GET_REALTIME (gfx11, gfx12) and the SHADER_CYCLES
//! hardware registers (`relaunch_facts::isa::hwreg`), which HIP's
//! `clock64()` and `wall_clock64()` compile to. One model for all: the
//! modelled GPU clock (`pm4::timestamp`, 1 GHz, the frequency the simulated
//! runtime reports) plus the instructions the reading wave has run, one
//! cycle each. Dispatches move the modelled clock only between dispatches
//! of a queue, so within a dispatch a wave's readings depend on its own
//! instructions alone: the same at any worker count, increasing within a
//! wave, and a wave waiting for its clock to pass a value sees it pass.

use super::wave::Wave;

/// The wave's clock now.
pub(crate) fn now(wave: &Wave) -> u64 {
    crate::pm4::timestamp::now().wrapping_add(wave.cycles)
}
