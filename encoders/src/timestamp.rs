//! Timestamp packets for profiled IBs: a RELEASE_MEM at end of pipe
//! (BOTTOM_OF_PIPE_TS, EVENT_INDEX 5) whose DATA_SEL 3 makes the CP write
//! the 64-bit GPU clock counter to memory once all earlier work has
//! finished (PM4 facts: the kernel's `nvd.h`/`soc15d.h` EOP DATA_SEL
//! values, see `docs/pm4.md`). Placed at an IB's start and end it brackets
//! the IB's execution; around a dispatch, that dispatch's. Ticks convert
//! to time with the agent's timestamp frequency
//! (`HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY`).

use crate::emit;
use crate::packet::{event, event_cntl, release_data};
use crate::writer::DwordWriter;

/// RELEASE_MEM DATA_SEL 3 (the 64-bit GPU clock) and DST_SEL 0 (memory).
pub use crate::packet::release_data::{DATA_SEL_TIMESTAMP, DST_SEL_MEMORY};
/// EVENT_INDEX of end-of-pipe events.
pub const EVENT_INDEX_EOP: u32 = 5;
/// Dwords one timestamp takes.
pub const TIMESTAMP_DWORDS: usize = 8;
/// Bytes one timestamp writes (and the alignment its address needs).
pub const TIMESTAMP_BYTES: u64 = 8;

/// Body dword 1 of a timestamp RELEASE_MEM (no cache actions: the write
/// goes to memory through the CP, which the host reads after completion).
pub const fn timestamp_event_cntl() -> u32 {
    event_cntl::EVENT_TYPE.place(event::BOTTOM_OF_PIPE_TS)
        | event_cntl::EVENT_INDEX.place(EVENT_INDEX_EOP)
}

/// Body dword 2 of a timestamp RELEASE_MEM.
pub const fn timestamp_data_cntl() -> u32 {
    release_data::DST_SEL.place(DST_SEL_MEMORY) | release_data::DATA_SEL.place(DATA_SEL_TIMESTAMP)
}

/// Appends a timestamp write to `address` (8-byte aligned).
pub fn emit_timestamp(w: &mut DwordWriter, address: u64) {
    debug_assert!(address % TIMESTAMP_BYTES == 0);
    emit::release_mem(w, timestamp_event_cntl(), timestamp_data_cntl(), address, 0);
}

/// Microseconds between two clock readings at `frequency_hz` (0 when the
/// end is not after the start).
pub fn ticks_to_us(start: u64, end: u64, frequency_hz: u64) -> f64 {
    if frequency_hz == 0 {
        return 0.0;
    }
    end.saturating_sub(start) as f64 * 1e6 / frequency_hz as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{decode, Packet};
    use crate::packet::{op, type3};
    use relaunch_device::Family;

    #[test]
    fn a_timestamp_is_an_end_of_pipe_release_mem_of_the_gpu_clock() {
        let mut w = DwordWriter::new();
        emit_timestamp(&mut w, 0x1_2345_6780);
        let d = w.into_vec();
        assert_eq!(d.len(), TIMESTAMP_DWORDS);
        assert_eq!(d[0], type3(op::RELEASE_MEM, 7, false));
        assert_eq!(d[1], 0x528, "BOTTOM_OF_PIPE_TS, EVENT_INDEX 5");
        assert_eq!(d[2], 3 << 29, "DATA_SEL 3, DST_SEL 0 (memory)");
        assert_eq!((d[3], d[4]), (0x2345_6780, 1));
        let packets = decode(&d, Family::Gfx11).expect("decodes");
        match &packets[0] {
            Packet::ReleaseMem {
                event_cntl,
                data_cntl,
                address,
                ..
            } => {
                assert_eq!(*event_cntl, timestamp_event_cntl());
                assert_eq!(release_data::DATA_SEL.get(*data_cntl), DATA_SEL_TIMESTAMP);
                assert_eq!(*address, 0x1_2345_6780);
            }
            other => panic!("decoded {other:?}"),
        }
        assert_eq!(packets[0].release_data_sel(), Some(DATA_SEL_TIMESTAMP));
    }

    #[test]
    fn ticks_convert_with_the_frequency() {
        assert_eq!(ticks_to_us(100, 350, 100_000_000), 2.5);
        assert_eq!(ticks_to_us(5, 4, 100_000_000), 0.0);
        assert_eq!(ticks_to_us(0, 10, 0), 0.0);
    }
}
