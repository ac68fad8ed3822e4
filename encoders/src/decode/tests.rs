use super::*;
use crate::emit;
use crate::writer::DwordWriter;

#[test]
fn decodes_every_packet_kind() {
    let mut w = DwordWriter::new();
    emit::set_sh_reg(&mut w, 0x212, &[1, 2]);
    emit::dispatch_direct(&mut w, [3, 2, 1], 0x8045);
    emit::event_write(&mut w, 7, 4);
    emit::acquire_mem_all(&mut w, 0x380);
    emit::release_mem(&mut w, 0x28 | 5 << 8, 2 << 29, 0x1000, 0xAB);
    emit::write_data(&mut w, 5 << 8, 0x2000, &[9, 8]);
    emit::wait_reg_mem(&mut w, 0x13, 0x3000, 1, 0xFFFF_FFFF, 4);
    emit::indirect_buffer(&mut w, 0x4_0000_1000, 77);
    emit::copy_data(&mut w, 0x500, 0x10, 0x20);
    emit::nop(&mut w, 3);
    let v = decode(w.as_slice(), Family::Gfx11).unwrap();
    assert_eq!(v.len(), 10);
    assert_eq!(
        v[0],
        Packet::SetShReg {
            offset: 0x212,
            values: &[1, 2]
        }
    );
    assert_eq!(
        v[1],
        Packet::DispatchDirect {
            groups: [3, 2, 1],
            initiator: 0x8045
        }
    );
    assert_eq!(
        v[2],
        Packet::EventWrite {
            event_type: 7,
            event_index: 4,
            address: None
        }
    );
    assert_eq!(
        v[3],
        Packet::AcquireMem {
            coher_cntl: 0,
            coher_size: 0x00FF_FFFF_FFFF_FFFF,
            coher_base: 0,
            poll_interval: 10,
            gcr_cntl: 0x380
        }
    );
    assert_eq!(v[4].event_type(), Some(0x28));
    assert_eq!(v[4].release_data_sel(), Some(2));
    assert_eq!(v[5].write_data_dst_sel(), Some(5));
    assert_eq!(v[6].wait_function(), Some(3));
    assert_eq!(
        v[7],
        Packet::IndirectBuffer {
            address: 0x4_0000_1000,
            dwords: 77,
            control: 77 | 1 << 23
        }
    );
    assert_eq!(
        v[8],
        Packet::CopyData {
            control: 0x500,
            src: 0x10,
            dst: 0x20
        }
    );
    assert_eq!(v[9], Packet::Nop { body: &[0, 0, 0] });
}

#[test]
fn rejects_unknown_opcode_bad_count_and_truncation() {
    let e = decode(&[0xC000_9900, 0], Family::Gfx12).unwrap_err();
    assert_eq!(
        e,
        DecodeError::UnknownOpcode {
            at: 0,
            opcode: 0x99,
            header: 0xC000_9900
        }
    );
    let e = decode(&[0xC002_1502, 1, 1, 1], Family::Gfx12).unwrap_err();
    assert!(
        e.to_string()
            .contains("DISPATCH_DIRECT with 3 body dwords; expected 4"),
        "{e}"
    );
    let e = decode(&[0xC003_1502, 1, 1], Family::Gfx12).unwrap_err();
    assert!(
        matches!(
            e,
            DecodeError::Truncated {
                at: 0,
                need: 5,
                have: 3
            }
        ),
        "{e}"
    );
    let e = decode(&[0x8000_0000], Family::Gfx12).unwrap_err();
    assert!(matches!(e, DecodeError::NotType3 { kind: 2, .. }));
}

#[test]
fn rejects_queue_owned_and_missing_registers() {
    // RSRC3 written at 0x223 on gfx12 lands in the SE8 CU mask.
    let e = decode(&[0xC001_7602, 0x223, 0], Family::Gfx12).unwrap_err();
    assert!(
        e.to_string().contains("COMPUTE_STATIC_THREAD_MGMT_SE8"),
        "{e}"
    );
    let e = decode(&[0xC001_7602, 0x223, 0], Family::Gfx11).unwrap_err();
    assert!(matches!(
        e,
        DecodeError::UnknownRegister { offset: 0x223, .. }
    ));
    let e = decode(&[0xC001_7602, 0x216, 0], Family::Gfx10).unwrap_err();
    assert!(
        e.to_string().contains("COMPUTE_STATIC_THREAD_MGMT_SE0"),
        "{e}"
    );
    // The scratch ring is the IB's to program.
    assert!(decode(&[0xC001_7602, 0x218, 0], Family::Gfx10).is_ok());
    let e = decode(&[0xC001_7602, 0x3FF, 0, 0], Family::Gfx10).unwrap_err();
    assert!(matches!(
        e,
        DecodeError::BadCount { .. } | DecodeError::UnknownRegister { .. }
    ));
}

#[test]
fn lenient_dump_marks_and_continues() {
    let words = [
        0xC000_9900,
        0xDEAD,
        0xC001_7602,
        0x216,
        5,
        0xC000_4600,
        0x407,
        0xC003_1502,
        1,
    ];
    let text = dump_lenient(&words, Family::Gfx11);
    assert!(text.contains("UNKNOWN(0x99)"), "{text}");
    assert!(
        text.contains("COMPUTE_STATIC_THREAD_MGMT_SE0") && text.contains("!! queue-owned"),
        "{text}"
    );
    assert!(
        text.contains("CS_PARTIAL_FLUSH (type 0x7, index 4)"),
        "{text}"
    );
    assert!(text.contains("stopped"), "{text}");
}

#[test]
fn garbage_never_panics() {
    let mut x: u32 = 0x1234_5678;
    for len in 0..64 {
        let words: Vec<u32> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x
            })
            .collect();
        for f in [Family::Gfx10, Family::Gfx11, Family::Gfx12] {
            let _ = decode(&words, f);
            let _ = dump_lenient(&words, f);
        }
    }
}
