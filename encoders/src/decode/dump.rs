//! Text dumps that read like the hardware docs: one line per packet, one line
//! per register written, fields by name from the same declarations.

use std::fmt::Write;

use relaunch_device::Family;

use super::{decode_at, sh_registers, Entry, LenientDecoder, Packet};
use crate::error::DecodeError;
use crate::field::describe;
use crate::packet::{
    copy_data, dma_command, dma_data, event, gcr, ib_control, release_cntl, release_data,
    wait_reg_mem, write_data,
};
use crate::regs::table;

/// Strict dump: fails on the first packet the strict decoder refuses.
pub fn dump(dwords: &[u32], family: Family) -> Result<String, DecodeError> {
    let mut out = String::new();
    dump_each(dwords, family, |line| {
        out.push_str(line);
        Ok::<(), std::convert::Infallible>(())
    })
    .map_err(|e| match e {
        DumpError::Decode(e) => e,
        DumpError::Sink(never) => match never {},
    })?;
    Ok(out)
}

/// Lenient dump: unknown opcodes print as `UNKNOWN(0xNN)`, problems are
/// marked with `!!`, and decoding continues wherever it safely can.
pub fn dump_lenient(dwords: &[u32], family: Family) -> String {
    let mut out = String::new();
    let done: Result<(), std::convert::Infallible> = dump_lenient_each(dwords, family, |line| {
        out.push_str(line);
        Ok(())
    });
    match done {
        Ok(()) => out,
        Err(never) => match never {},
    }
}

/// Why a streamed strict dump stopped.
#[derive(Debug)]
pub enum DumpError<E> {
    /// The strict decoder refused a packet (the lines before it were given).
    Decode(DecodeError),
    /// The line sink failed (e.g. a closed pipe).
    Sink(E),
}

/// Strict dump, one packet's text (ending in a newline) at a time, so a
/// dump needs memory for one packet, not for the whole text.
pub fn dump_each<E>(
    dwords: &[u32],
    family: Family,
    mut line: impl FnMut(&str) -> Result<(), E>,
) -> Result<(), DumpError<E>> {
    let mut text = String::new();
    let mut at = 0;
    while at < dwords.len() {
        let (p, n) = decode_at(dwords, at, family, true).map_err(DumpError::Decode)?;
        text.clear();
        write_packet(&mut text, at, dwords[at], &p, family);
        line(&text).map_err(DumpError::Sink)?;
        at += n;
    }
    Ok(())
}

/// Lenient dump, one entry's text at a time (see `dump_each`).
pub fn dump_lenient_each<E>(
    dwords: &[u32],
    family: Family,
    mut line: impl FnMut(&str) -> Result<(), E>,
) -> Result<(), E> {
    let mut text = String::new();
    for e in LenientDecoder::new(dwords, family) {
        text.clear();
        match e {
            Entry::Packet { at, packet } => {
                write_packet(&mut text, at, dwords[at], &packet, family)
            }
            Entry::Unknown {
                at,
                header,
                opcode,
                dwords: n,
            } => {
                let _ = writeln!(
                    text,
                    "{at:06}  {header:08X}  UNKNOWN({opcode:#04x})  {n} dwords skipped"
                );
            }
            Entry::Bad { at, error, skip } => {
                let _ = writeln!(text, "{at:06}  {:08X}  !! {error}", dwords[at]);
                if skip == 0 {
                    let _ = writeln!(text, "        !! stopped: read past the end of the IB");
                }
            }
        }
        line(&text)?;
    }
    Ok(())
}

fn write_packet(out: &mut String, at: usize, h: u32, p: &Packet<'_>, family: Family) {
    let _ = write!(out, "{at:06}  {h:08X}  {}", p.name());
    let mut fields = String::new();
    match *p {
        Packet::Nop { body } => {
            let _ = writeln!(out, "  ({} body dwords)", body.len());
        }
        Packet::SetShReg { offset, values } => {
            let _ = writeln!(out, "  {} register(s) from {offset:#x}", values.len());
            for (o, reg, v) in sh_registers(family, offset, values) {
                fields.clear();
                match reg {
                    Some(r) => {
                        describe(v, r.fields, &mut fields);
                        let flag = if r.class.forbidden() {
                            format!("  !! {} register", r.class.name())
                        } else {
                            String::new()
                        };
                        let _ = writeln!(
                            out,
                            "        [{o:#05x}] {:<34} = {v:#010x}  {fields}{flag}",
                            r.name
                        );
                    }
                    None => {
                        let _ = writeln!(
                            out,
                            "        [{o:#05x}] {:<34} = {v:#010x}  !! {family} has no register here",
                            "?"
                        );
                    }
                }
            }
        }
        Packet::DispatchDirect { groups, initiator } => {
            let t = table(family);
            let init_fields = t.get(0x200).map(|r| r.fields).unwrap_or(&[]);
            describe(initiator, init_fields, &mut fields);
            let _ = writeln!(
                out,
                "  groups=[{}, {}, {}] initiator={initiator:#x} {fields}",
                groups[0], groups[1], groups[2]
            );
        }
        Packet::EventWrite {
            event_type,
            event_index,
            address,
        } => {
            let name = event::name(event_type).unwrap_or("?");
            let _ = write!(out, "  {name} (type {event_type:#x}, index {event_index})");
            if let Some(a) = address {
                let _ = write!(out, " address={a:#x}");
            }
            out.push('\n');
        }
        Packet::AcquireMem {
            coher_cntl,
            coher_size,
            coher_base,
            poll_interval,
            gcr_cntl,
        } => {
            describe(gcr_cntl, &gcr::FIELDS, &mut fields);
            let _ = writeln!(
                out,
                "  coher_cntl={coher_cntl:#x} size={coher_size:#x} base={coher_base:#x} \
                 poll={poll_interval} GCR_CNTL={gcr_cntl:#x} [{fields}]"
            );
        }
        Packet::ReleaseMem {
            event_cntl,
            data_cntl,
            address,
            data,
            int_ctxid,
        } => {
            describe(event_cntl, &release_cntl::FIELDS, &mut fields);
            let mut d = String::new();
            describe(data_cntl, &release_data::FIELDS, &mut d);
            let _ = writeln!(
                out,
                "  [{fields}] [{d}] address={address:#x} data={data:#x} int_ctxid={int_ctxid:#x}"
            );
        }
        Packet::WriteData {
            control,
            address,
            data,
        } => {
            describe(control, &write_data::FIELDS, &mut fields);
            let _ = writeln!(out, "  [{fields}] address={address:#x} data={data:x?}");
        }
        Packet::WaitRegMem {
            control,
            address,
            reference,
            mask,
            poll_interval,
        } => {
            describe(control, &wait_reg_mem::FIELDS, &mut fields);
            let _ = writeln!(
                out,
                "  [{fields}] address={address:#x} reference={reference:#x} mask={mask:#x} poll={poll_interval}"
            );
        }
        Packet::IndirectBuffer {
            address,
            dwords,
            control,
        } => {
            describe(control, &ib_control::FIELDS, &mut fields);
            let _ = writeln!(out, "  address={address:#x} dwords={dwords} [{fields}]");
        }
        Packet::CopyData { control, src, dst } => {
            describe(control, &copy_data::FIELDS, &mut fields);
            let _ = writeln!(out, "  [{fields}] src={src:#x} dst={dst:#x}");
        }
        Packet::DmaData {
            control,
            src,
            dst,
            command,
        } => {
            describe(control, &dma_data::FIELDS, &mut fields);
            let mut cmd = String::new();
            describe(command, &dma_command::FIELDS, &mut cmd);
            let _ = writeln!(out, "  [{fields}] src={src:#x} dst={dst:#x} [{cmd}]");
        }
    }
}
