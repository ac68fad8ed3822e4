use super::*;

fn mem() -> DeviceMemory {
    DeviceMemory::new(1 << 24)
}

#[test]
fn allocation_is_zeroed_aligned_and_round_trips() {
    let m = mem();
    let a = m.allocate(100, MemKind::Device).unwrap();
    assert_eq!(a % ALLOCATION_ALIGN as u64, 0);
    assert_eq!(m.read_vec(a, 100).unwrap(), vec![0u8; 100]);
    m.write(a + 10, &[1, 2, 3]).unwrap();
    assert_eq!(m.read_vec(a + 9, 5).unwrap(), vec![0, 1, 2, 3, 0]);
    m.write_u64(a + 16, 0x1122_3344_5566_7788).unwrap();
    assert_eq!(m.read_u32(a + 16).unwrap(), 0x5566_7788);
    assert_eq!(m.read_u64(a + 16).unwrap(), 0x1122_3344_5566_7788);
}

#[test]
fn address_zero_faults_with_a_clear_message() {
    let m = mem();
    let err = m.read_u32(0).unwrap_err();
    assert_eq!(err.addr, 0);
    assert_eq!(err.cause, FaultCause::Unmapped);
    assert!(err.to_string().contains("address zero"), "{err}");
}

#[test]
fn access_past_the_end_faults() {
    let m = mem();
    let a = m.allocate(8, MemKind::HostFineGrained).unwrap();
    let err = m.read_u64(a + 4).unwrap_err();
    assert_eq!(err.cause, FaultCause::PastEnd { base: a, len: 8 });
    assert_eq!(err.access, Access::Read);
    let err = m.write(a + 8, &[0]).unwrap_err();
    assert!(matches!(
        err.cause,
        FaultCause::Unmapped | FaultCause::Freed { .. }
    ));
    // An address near u64::MAX never wraps into a valid range.
    assert!(m.check(u64::MAX, 2, Access::Read).is_err());
}

#[test]
fn use_after_free_names_the_freed_allocation() {
    let m = mem();
    let a = m.allocate(64, MemKind::HostFineGrained).unwrap();
    m.free(a).unwrap();
    let err = m.atomic_add_u32(a + 4, 1).unwrap_err();
    assert_eq!(err.cause, FaultCause::Freed { base: a, len: 64 });
    assert!(err.to_string().contains("use after free"), "{err}");
    assert_eq!(m.free(a), Err(MemoryError::NotAllocated(a)));
}

#[test]
fn atomics_add_and_check_alignment() {
    let m = mem();
    let a = m.allocate(16, MemKind::Device).unwrap();
    assert_eq!(m.atomic_add_u32(a + 4, 5).unwrap(), 0);
    assert_eq!(m.atomic_add_u32(a + 4, 2).unwrap(), 5);
    assert_eq!(m.read_u32(a + 4).unwrap(), 7);
    let err = m.atomic_add_u32(a + 2, 1).unwrap_err();
    assert_eq!(err.cause, FaultCause::Misaligned { align: 4 });
    m.store_u32_release(a, 9).unwrap();
    assert_eq!(m.load_u32_acquire(a).unwrap(), 9);
    assert_eq!(m.load_u16_acquire(a).unwrap(), 9);
}

#[test]
fn counters_track_live_allocations_and_limit() {
    let m = DeviceMemory::new(10_000);
    let a = m.allocate(4000, MemKind::Device).unwrap();
    let b = m.allocate(4000, MemKind::Code).unwrap();
    let s = m.stats();
    assert_eq!((s.live_allocations, s.live_bytes), (2, 8000));
    let err = m.allocate(4000, MemKind::Device).unwrap_err();
    assert!(matches!(
        err,
        MemoryError::OutOfMemory {
            available: 2000,
            ..
        }
    ));
    assert_eq!(m.allocate(0, MemKind::Device), Err(MemoryError::ZeroSize));
    assert_eq!(m.allocation_of(b + 3999).unwrap().kind, MemKind::Code);
    m.free(a).unwrap();
    m.free(b).unwrap();
    let s = m.stats();
    assert_eq!((s.live_allocations, s.live_bytes), (0, 0));
    assert_eq!(s.total_allocations, 2);
}

#[test]
fn hidden_and_non_executable_memory_fault_for_the_gpu() {
    let m = mem();
    let hidden = AllocOptions {
        gpu_visible: false,
        executable: false,
    };
    let a = m
        .allocate_with(64, MemKind::HostFineGrained, hidden)
        .unwrap();
    let err = m.read_u32(a).unwrap_err();
    assert_eq!(err.cause, FaultCause::NotGpuAccessible { base: a });
    assert!(err.to_string().contains("allow_access"), "{err}");
    assert!(m.allow_gpu_access(a + 8));
    assert!(!m.allow_gpu_access(8));
    m.write_u32(a, 0xC000_1000).unwrap();
    let err = m.fetch_ib(a, 1).unwrap_err();
    assert_eq!(err.cause, FaultCause::NotExecutable { base: a });
    let b = m.allocate(8, MemKind::HostFineGrained).unwrap();
    assert_eq!(m.fetch_ib(b, 2).unwrap(), vec![0, 0]);
}

#[test]
fn dwords_read_little_endian() {
    let m = mem();
    let a = m.allocate(8, MemKind::HostFineGrained).unwrap();
    m.write(a, &[0x02, 0x15, 0x03, 0xC0, 1, 0, 0, 0]).unwrap();
    assert_eq!(m.read_dwords(a, 2).unwrap(), vec![0xC003_1502, 1]);
    assert!(m.read_dwords(a, 3).is_err());
}
