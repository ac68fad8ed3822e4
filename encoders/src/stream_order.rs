//! Stream-ordered IBs: an IB that runs in order with another queue's work
//! (a HIP stream) through two words in memory, as the stream's own memory
//! operations (`hipStreamWriteValue32` / `hipStreamWaitValue32`) see them.
//!
//! The IB starts, before its prologue's acquire, with a WAIT_REG_MEM until
//! the gate word equals [`GATE_OPEN`], then a WRITE_DATA setting it back to
//! [`GATE_CLOSED`] (the IB consumes the gate, so one open lets exactly one
//! replay through); it ends, after the epilogue's release, with a
//! WRITE_DATA of [`DONE`] to the done word. The other side, for each
//! launch and in its stream order: clear done, open the gate, and wait for
//! done before anything enqueued after the launch. No ABA: a gate is only
//! opened after the previous launch's done was seen (which that replay
//! wrote after consuming its gate), and done is cleared before the gate
//! opens, so the done a waiter sees is always its own launch's. One pair
//! of words per lane (each lane's IB consumes its own gate).

use crate::emit;
use crate::packet::{wait_reg_mem, write_data};
use crate::writer::DwordWriter;

/// The two words of one stream-ordered IB (GPU addresses, 4-byte aligned,
/// in memory both the other queue and the CP reach).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamWords {
    pub gate: u64,
    pub done: u64,
}

pub const GATE_OPEN: u32 = 1;
pub const GATE_CLOSED: u32 = 0;
pub const DONE: u32 = 1;
pub const NOT_DONE: u32 = 0;

/// WAIT_REG_MEM FUNCTION "equal" (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >).
pub const FUNCTION_EQUAL: u32 = 3;
/// WAIT_REG_MEM MEM_SPACE "memory" (0 is a register).
pub const MEM_SPACE_MEMORY: u32 = 1;
/// WAIT_REG_MEM OPERATION "wait" (1 is write-then-wait, for registers).
pub const OPERATION_WAIT: u32 = 0;
/// Poll interval (CP clocks x 16 between reads): short, since the gate
/// opens when the stream reaches the launch and the IB waits for nothing else.
pub const POLL_INTERVAL: u32 = 4;
/// WRITE_DATA DST_SEL "memory".
pub const DST_SEL_MEMORY: u32 = 5;

/// Dwords [`emit_gate`] writes (WAIT_REG_MEM 7 + WRITE_DATA 5).
pub const GATE_DWORDS: usize = 12;
/// Dwords [`emit_done`] writes.
pub const DONE_DWORDS: usize = 5;

fn write_control() -> u32 {
    // WR_CONFIRM: the CP moves on only once the write reached memory.
    write_data::DST_SEL.place(DST_SEL_MEMORY) | write_data::WR_CONFIRM.place(1)
}

/// The WAIT_REG_MEM control dword of the gate wait.
pub fn gate_wait_control() -> u32 {
    wait_reg_mem::FUNCTION.place(FUNCTION_EQUAL)
        | wait_reg_mem::MEM_SPACE.place(MEM_SPACE_MEMORY)
        | wait_reg_mem::OPERATION.place(OPERATION_WAIT)
}

/// Wait for the gate to open, then close it.
pub(crate) fn emit_gate(w: &mut DwordWriter, words: StreamWords) {
    emit::wait_reg_mem(
        w,
        gate_wait_control(),
        words.gate,
        GATE_OPEN,
        u32::MAX,
        POLL_INTERVAL,
    );
    emit::write_data(w, write_control(), words.gate, &[GATE_CLOSED]);
}

/// Say the IB is done (after the epilogue).
pub(crate) fn emit_done(w: &mut DwordWriter, words: StreamWords) {
    emit::write_data(w, write_control(), words.done, &[DONE]);
}

/// Checks `words` before they go into an IB.
pub(crate) fn check(words: StreamWords) -> Result<(), crate::EncodeError> {
    for (what, a) in [("gate", words.gate), ("done", words.done)] {
        if a == 0 || a % 4 != 0 || a >> 48 != 0 {
            return Err(crate::EncodeError::BadStreamWord { what, address: a });
        }
    }
    if words.gate == words.done {
        return Err(crate::EncodeError::BadStreamWord {
            what: "gate and done (the same word)",
            address: words.gate,
        });
    }
    Ok(())
}
