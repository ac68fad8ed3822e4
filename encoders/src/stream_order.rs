//! Stream-ordered IBs: an IB that runs in order with another queue's work
//! (a HIP stream) through one gate word per lane in memory, as the stream's
//! own memory operations (`hipStreamWriteValue32` / `hipStreamWaitValue32`)
//! see it.
//!
//! The gate holds [`GATE_CLOSED`] (0) while no launch is in progress, and
//! the launch's sequence number (never 0) from when the stream reaches the
//! launch until the replay finished. The IB starts, before its prologue's
//! acquire, with a WAIT_REG_MEM until the gate is not [`GATE_CLOSED`], and
//! ends, after the epilogue's release, with a WRITE_DATA of
//! [`GATE_CLOSED`]: the IB never needs to know the sequence number, so the
//! retained IB stays the same for every replay. The other side, per launch
//! and in its stream order: write the sequence number to the gate, then
//! wait until the gate is closed again. Why this has no ABA and no lost
//! wake-up (and what the sequence numbers are for): docs/pm4.md, "Stream
//! order". One gate per lane (each lane's IB closes its own).

use crate::emit;
use crate::packet::{wait_reg_mem, write_data};
use crate::writer::DwordWriter;

/// The word of one stream-ordered IB (a GPU address, 4-byte aligned, in
/// memory both the other queue and the CP reach).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamWords {
    pub gate: u64,
}

/// The gate's value when no launch is in progress; any other value is the
/// sequence number of the launch the stream let through.
pub const GATE_CLOSED: u32 = 0;

/// WAIT_REG_MEM FUNCTION "not equal" (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >).
pub const FUNCTION_NOT_EQUAL: u32 = 4;
/// WAIT_REG_MEM MEM_SPACE "memory" (0 is a register).
pub const MEM_SPACE_MEMORY: u32 = 1;
/// WAIT_REG_MEM OPERATION "wait" (1 is write-then-wait, for registers).
pub const OPERATION_WAIT: u32 = 0;
/// Poll interval (CP clocks x 16 between reads): short, since the gate
/// opens when the stream reaches the launch and the IB waits for nothing else.
pub const POLL_INTERVAL: u32 = 4;
/// WRITE_DATA DST_SEL "memory".
pub const DST_SEL_MEMORY: u32 = 5;

/// Dwords [`emit_gate`] writes (WAIT_REG_MEM).
pub const GATE_DWORDS: usize = 7;
/// Dwords [`emit_done`] writes (WRITE_DATA of one dword).
pub const DONE_DWORDS: usize = 5;

fn write_control() -> u32 {
    // WR_CONFIRM: the CP moves on only once the write reached memory.
    write_data::DST_SEL.place(DST_SEL_MEMORY) | write_data::WR_CONFIRM.place(1)
}

/// The WAIT_REG_MEM control dword of the gate wait.
pub fn gate_wait_control() -> u32 {
    wait_reg_mem::FUNCTION.place(FUNCTION_NOT_EQUAL)
        | wait_reg_mem::MEM_SPACE.place(MEM_SPACE_MEMORY)
        | wait_reg_mem::OPERATION.place(OPERATION_WAIT)
}

/// Wait for the stream to open the gate (any sequence number).
pub(crate) fn emit_gate(w: &mut DwordWriter, words: StreamWords) {
    emit::wait_reg_mem(
        w,
        gate_wait_control(),
        words.gate,
        GATE_CLOSED,
        u32::MAX,
        POLL_INTERVAL,
    );
}

/// Close the gate: the replay is done (after the epilogue's release, so
/// whoever sees the gate closed sees the replay's results).
pub(crate) fn emit_done(w: &mut DwordWriter, words: StreamWords) {
    emit::write_data(w, write_control(), words.gate, &[GATE_CLOSED]);
}

/// Checks `words` before they go into an IB.
pub(crate) fn check(words: StreamWords) -> Result<(), crate::EncodeError> {
    let a = words.gate;
    if a == 0 || a % 4 != 0 || a >> 48 != 0 {
        return Err(crate::EncodeError::BadStreamWord {
            what: "gate",
            address: a,
        });
    }
    Ok(())
}
