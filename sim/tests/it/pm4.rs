use relaunch_encoders::decode::Decoder;
use relaunch_encoders::{BoundaryKind, KernelCode, Packet};
use relaunch_facts::regs::off;

use relaunch_sim::memory::MemKind;
use relaunch_sim::ordering::Rule;
use relaunch_sim::pm4::*;
use relaunch_testsupport::simkit::{linear, Rig};

/// `n` counter dispatches over 64 work-items (groups of 32), one segment.
fn counter_ib(rig: &Rig, counter: u64, n: usize, boundary: Option<BoundaryKind>) -> Vec<u32> {
    rig.dwords(rig.counter(counter, n, boundary, &linear(64, 32)))
}

/// produce(buf, 3) then consume(out, buf), `boundary` between; (dwords, out).
fn producer_consumer(rig: &Rig, boundary: Option<BoundaryKind>) -> (Vec<u32>, u64) {
    let (b, _, out) = rig.producer_consumer(boundary);
    (rig.dwords(b), out)
}

/// Dword index of the value written to SH `offset` (last write wins).
pub(crate) fn reg_position(dwords: &[u32], family: relaunch_device::Family, offset: u16) -> usize {
    let mut found = None;
    for item in Decoder::new(dwords, family) {
        let (at, p) = item.unwrap();
        if let Packet::SetShReg { offset: o, values } = p {
            let o = o as usize;
            if (o..o + values.len()).contains(&(offset as usize)) {
                found = Some(at + 2 + offset as usize - o);
            }
        }
    }
    found.expect("register written")
}

#[test]
fn counter_with_rmw_boundaries_counts_exactly_and_is_clean() {
    let rig = Rig::new("gfx1201", "counter", 1);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 256, Some(BoundaryKind::Rmw));
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 256 * 64);
    assert_eq!(rig.run(&ib).unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 512 * 64);
}

#[test]
fn healthy_producer_consumer_passes_under_twenty_seeds() {
    for seed in 0..20 {
        let rig = Rig::new("gfx1100", "produce_consume", seed);
        let (ib, out) = producer_consumer(&rig, Some(BoundaryKind::Rmw));
        assert_eq!(rig.run(&ib).unwrap(), vec![], "seed {seed}");
        assert_eq!(rig.dev.memory.read_u32(out + 4 * 5).unwrap(), 15);
    }
}

#[test]
fn missing_boundary_is_reported_as_a_race() {
    let rig = Rig::new("gfx1030", "produce_consume", 3);
    let (ib, _) = producer_consumer(&rig, None);
    let v = rig.run(&ib).unwrap();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].rule, Rule::Race);
    assert_eq!((v[0].dispatch, v[0].kernel.as_str()), (1, "consume"));
    assert!(v[0].detail.contains("dispatch 0 (produce)"), "{}", v[0]);
}

#[test]
fn wait_only_boundary_is_reported_as_a_stale_read() {
    let rig = Rig::new("gfx1151", "produce_consume", 3);
    let (ib, _) = producer_consumer(&rig, Some(BoundaryKind::Wait));
    let v = rig.run(&ib).unwrap();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].rule, Rule::StaleRead);
    assert_eq!(v[0].kernel, "consume");
}

#[test]
fn missing_prologue_or_epilogue_is_reported() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let ib = counter_ib(&rig, c, 4, Some(BoundaryKind::Rmw));
    let v = rig.run(&ib[..ib.len() - 10]).unwrap();
    assert_eq!(
        v.iter().map(|v| v.rule).collect::<Vec<_>>(),
        vec![Rule::UnreleasedResult]
    );
    assert_eq!(v[0].address, c);
    let v = rig.run(&ib[8..]).unwrap();
    assert_eq!(
        v.iter().map(|v| v.rule).collect::<Vec<_>>(),
        vec![Rule::HostWriteNotAcquired]
    );
    assert_eq!(v[0].dispatch, 0);
}

#[test]
fn user_sgpr_count_mismatch_in_rsrc2_is_refused() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let mut ib = counter_ib(&rig, c, 2, Some(BoundaryKind::Rmw));
    let at = reg_position(&ib, rig.dev.family(), off::COMPUTE_PGM_RSRC2);
    ib[at] += 1 << 1; // one more user SGPR
    let err = rig.run(&ib).unwrap_err();
    assert!(
        matches!(*err.kind, Pm4ErrorKind::State(StateError::Mismatch { .. })),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("COMPUTE_PGM_RSRC2") && text.contains("USER_SGPR count 3"),
        "{text}"
    );
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0, "nothing ran");
}

#[test]
fn code_address_of_the_descriptor_is_refused_with_a_hint() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let mut ib = counter_ib(&rig, c, 1, None);
    let at = reg_position(&ib, rig.dev.family(), off::COMPUTE_PGM_LO);
    let kd = rig.image.kernels[0].kd_addr;
    ib[at] = (kd >> 8) as u32;
    let err = rig.run(&ib).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("no loaded kernel's code starts"), "{text}");
    assert!(text.contains("is the descriptor of counter"), "{text}");
    assert_eq!(err.dispatch, Some(0));
}

#[test]
fn kernarg_pointer_to_freed_memory_is_a_vm_fault() {
    let rig = Rig::new("gfx1100", "counter", 0);
    let c = rig.alloc(4);
    let (ib, base) = rig.finish(rig.counter(c, 1, None, &linear(32, 32)));
    rig.dev.memory.free(base).unwrap();
    let err = rig.run(&ib.segments[0].dwords).unwrap_err();
    assert!(err.is_vm_fault(), "{err}");
    assert!(err.to_string().contains("use after free"), "{err}");
}

#[test]
fn dispatch_without_a_twin_and_forbidden_registers_are_errors() {
    // Twins only: with the default mode the interpreter would run it.
    let mut cfg = relaunch_sim::SimConfig::new("gfx1201");
    cfg.kernels = relaunch_sim::isa::KernelMode::Twin;
    let rig = Rig::with_config(cfg, "counter");
    let c = rig.alloc(4);
    let other = rig
        .dev
        .install_kernel("no_such_twin_kernel", rig.image.kernels[0].descriptor)
        .unwrap();
    let mut b = rig.builder();
    let code = KernelCode {
        symbol: "no_such_twin_kernel",
        family: rig.dev.family(),
        descriptor: other.kernels[0].descriptor,
        kd_address: other.kernels[0].kd_addr,
        unread: Default::default(),
    };
    let launch = linear(32, 32);
    // The installed kernel shares counter's descriptor and kernarg layout.
    let kernargs = rig.kernargs("counter", &c.to_le_bytes(), &launch);
    b.dispatch(&code, &launch, &kernargs, 8).unwrap();
    let (ib, _) = rig.finish(b);
    let err = rig.run(&ib.segments[0].dwords).unwrap_err();
    assert_eq!(
        *err.kind,
        Pm4ErrorKind::NoTwin("no_such_twin_kernel".into())
    );
    // SET_SH_REG to a CU mask (queue-owned).
    let bad = [0xC001_7602, off::COMPUTE_STATIC_THREAD_MGMT_SE0 as u32, 0];
    let err = rig.run(&bad).unwrap_err();
    assert!(
        err.to_string().contains("COMPUTE_STATIC_THREAD_MGMT_SE0"),
        "{err}"
    );
    // State never inherited across IBs: a DISPATCH_DIRECT alone is refused.
    let err = rig.run(&[0xC003_1502, 1, 1, 1, 1]).unwrap_err();
    assert!(
        err.to_string().contains("was not written in this IB"),
        "{err}"
    );
}

#[test]
fn wave32_bit_must_match_the_descriptor() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let mut ib = counter_ib(&rig, c, 1, None);
    let at = Decoder::new(&ib, rig.dev.family())
        .map(|r| r.unwrap())
        .find(|(_, p)| matches!(p, Packet::DispatchDirect { .. }))
        .unwrap()
        .0;
    ib[at + 4] ^= 1 << 15;
    let err = rig.run(&ib).unwrap_err();
    assert!(err.to_string().contains("CS_W32_EN"), "{err}");
}

#[test]
fn release_mem_epilogue_and_write_data_execute() {
    use relaunch_encoders::emit;
    use relaunch_encoders::writer::DwordWriter;
    use relaunch_facts::packet::{event, event_cntl, release_cntl, release_data, write_data};

    let rig = Rig::new("gfx1100", "counter", 0);
    let c = rig.alloc(4);
    let fence = rig
        .dev
        .memory
        .allocate(16, MemKind::HostFineGrained)
        .unwrap();
    let ib = counter_ib(&rig, c, 3, Some(BoundaryKind::Rmw));
    // Replace the ACQUIRE_MEM epilogue with an end-of-pipe RELEASE_MEM that
    // writes back GL2 and stores a fence value, then a WRITE_DATA.
    let mut w = DwordWriter::new();
    let head = &ib[..ib.len() - 8];
    w.reserve(head.len()).extend(head);
    let ev = event_cntl::EVENT_TYPE.place(event::BOTTOM_OF_PIPE_TS)
        | event_cntl::EVENT_INDEX.place(5)
        | release_cntl::GCR_GL2_WB.place(1);
    emit::release_mem(&mut w, ev, release_data::DATA_SEL.place(1), fence, 0x77);
    emit::write_data(
        &mut w,
        write_data::DST_SEL.place(5) | write_data::WR_CONFIRM.place(1),
        fence + 8,
        &[0xABCD],
    );
    let dwords = w.into_vec();
    assert_eq!(rig.run(&dwords).unwrap(), vec![]);
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 3 * 64);
    assert_eq!(rig.dev.memory.read_u32(fence).unwrap(), 0x77);
    assert_eq!(rig.dev.memory.read_u32(fence + 8).unwrap(), 0xABCD);
    // A RELEASE_MEM without GL2_WB releases nothing.
    let mut w = DwordWriter::new();
    let head = &ib[..ib.len() - 8];
    w.reserve(head.len()).extend(head);
    let ev = event_cntl::EVENT_TYPE.place(event::BOTTOM_OF_PIPE_TS);
    emit::release_mem(&mut w, ev, 0, 0, 0);
    let v = rig.run(&w.into_vec()).unwrap();
    assert_eq!(
        v.iter().map(|v| v.rule).collect::<Vec<_>>(),
        vec![Rule::UnreleasedResult]
    );
}

#[test]
fn lds_reverse_with_dynamic_group_memory_and_two_d_axpy_run_from_fixtures() {
    let rig = Rig::new("gfx1201", "lds_reverse", 0);
    // `pack` places the dynamic segment at LDS offset 0 (no static LDS).
    let (b, data) = rig.lds_reverse();
    rig.run_clean(b);
    assert_eq!(rig.dev.memory.read_u32(data).unwrap(), 63);
    assert_eq!(rig.dev.memory.read_u32(data + 4 * 64).unwrap(), 127);

    let rig = Rig::new("gfx1010", "axpy", 0);
    let (b, y) = rig.axpy(16, 4);
    rig.run_clean(b);
    let at = |i: u64| f32::from_bits(rig.dev.memory.read_u32(y + 4 * i).unwrap());
    assert_eq!((at(0), at(17), at(63)), (1.0, 35.0, 127.0));
}

#[test]
fn a_workgroup_count_past_64_bits_is_refused_not_wrapped() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let err = rig
        .dev
        .check_dispatch_size([1 << 31, 1 << 31, 4], [1, 1, 1])
        .unwrap_err();
    assert!(err.contains("overflows 64 bits"), "{err}");
}

#[test]
fn oversized_grids_are_refused_instead_of_run() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let mut ib = counter_ib(&rig, c, 1, None);
    let at = Decoder::new(&ib, rig.dev.family())
        .map(|r| r.unwrap())
        .find(|(_, p)| matches!(p, Packet::DispatchDirect { .. }))
        .unwrap()
        .0;
    ib[at + 1] = 1 << 12;
    ib[at + 2] = 1 << 12;
    let err = rig.run(&ib).unwrap_err();
    assert!(
        err.to_string().contains("max_workgroups_per_dispatch"),
        "{err}"
    );
    assert_eq!(rig.dev.memory.read_u32(c).unwrap(), 0);
}

#[test]
fn registers_the_family_lacks_or_the_queue_owns_are_refused() {
    // RSRC3 written at 0x223: absent on gfx11, the SE8 CU mask on gfx12.
    let bad = [0xC001_7602, 0x223, 0];
    let err = Rig::new("gfx1100", "counter", 0).run(&bad).unwrap_err();
    assert!(err.to_string().contains("does not have"), "{err}");
    let err = Rig::new("gfx1201", "counter", 0).run(&bad).unwrap_err();
    assert!(
        err.to_string().contains("COMPUTE_STATIC_THREAD_MGMT_SE8"),
        "{err}"
    );
}

#[test]
fn a_kernel_the_direct_path_refuses_is_refused_at_dispatch() {
    let rig = Rig::new("gfx1201", "counter", 0);
    let c = rig.alloc(4);
    let mut kd = rig.image.kernels[0].descriptor;
    kd.kernel_code_properties |= relaunch_facts::descriptor::properties::QUEUE_PTR;
    let queue_ptr = rig.dev.install_kernel("counter", kd).unwrap();
    let entry = queue_ptr.kernels[0].code_entry;
    let mut ib = counter_ib(&rig, c, 1, None);
    let lo = reg_position(&ib, rig.dev.family(), off::COMPUTE_PGM_LO);
    ib[lo] = (entry >> 8) as u32;
    ib[lo + 1] = (entry >> 40) as u32;
    let err = rig.run(&ib).unwrap_err();
    assert!(
        err.to_string().contains("cannot run it") && err.to_string().contains("queue pointer"),
        "{err}"
    );
}
