//! A target's facts row is the one place its limits and queue width come
//! from: a dummy row (gfx1100's, with a 256-byte LDS limit and a queue
//! width of 3) reaches the PM4 verdict, the encoder, the automatic
//! queue-width policy and the simulator's DISPATCH_DIRECT check, while the
//! real row accepts the same kernel and launch.

use std::path::PathBuf;

use relaunch_device::codeobj::CodeObject;
use relaunch_encoders::kernarg_pack::{pack, Geometry};
use relaunch_encoders::verdict::{descriptor_refusals, Refusal};
use relaunch_encoders::{EncodeError, EncodeOptions, IbBuilder, KernelCode, Launch};
use relaunch_facts::{Limits, TargetFacts};
use relaunch_sched::{queue_count, queue_count_of, QueuePolicy};
use relaunch_sim::memory::MemKind;
use relaunch_sim::ordering::IbLocation;
use relaunch_sim::pm4::execute_ib;
use relaunch_sim::trace::RangeSet;
use relaunch_sim::{SimConfig, SimDevice};

const TARGET: &str = "gfx1100";

fn real() -> &'static TargetFacts {
    TargetFacts::lookup(TARGET).unwrap()
}

fn dummy() -> TargetFacts {
    TargetFacts {
        limits: Limits {
            max_lds_bytes: 256,
            ..real().limits
        },
        auto_queue_width: 3,
        ..*real()
    }
}

/// 64 work-items with 1 KiB of dynamic LDS: within every real RDNA row.
const LAUNCH: Launch = Launch {
    grid: [64, 1, 1],
    block: [64, 1, 1],
    dynamic_group_bytes: 1024,
};

fn counter() -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/build")
        .join(TARGET)
        .join("counter.co");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_verdict_reads_the_rows_limits() {
    let object = CodeObject::parse(&counter()).unwrap();
    let mut kd = object.kernel("counter").unwrap().descriptor;
    kd.group_segment_fixed_size = 512;
    assert!(descriptor_refusals(&kd, real().family, &real().limits).is_empty());
    assert_eq!(
        descriptor_refusals(&kd, dummy().family, &dummy().limits),
        vec![Refusal::LdsTooLarge {
            bytes: 512,
            limit: 256
        }]
    );
}

#[test]
fn the_queue_width_policy_reads_the_row() {
    assert_eq!(queue_count(TARGET, QueuePolicy::Auto, 8), 2);
    assert_eq!(queue_count_of(Some(real()), QueuePolicy::Auto, 8), 2);
    assert_eq!(queue_count_of(Some(&dummy()), QueuePolicy::Auto, 8), 3);
    assert_eq!(queue_count_of(Some(&dummy()), QueuePolicy::Fixed(1), 8), 1);
    assert_eq!(queue_count_of(None, QueuePolicy::Auto, 8), 1);
}

/// A device for `row`, the counter loaded, and one encoded IB of `LAUNCH`
/// (encoded for the real row) run on it directly.
fn run_on(row: TargetFacts) -> Result<(), String> {
    let mut config = SimConfig::new(TARGET);
    config.seed = 7;
    let dev = SimDevice::with_facts(config, row).unwrap();
    let bytes = counter();
    let image = dev.load_code_object(&bytes).unwrap();
    let object = CodeObject::parse(&bytes).unwrap();
    let entry = image
        .kernels
        .iter()
        .find(|k| k.symbol == "counter")
        .unwrap();
    let code = KernelCode {
        symbol: &entry.symbol,
        family: entry.family,
        descriptor: entry.descriptor,
        kd_address: entry.kd_addr,
        unread: Default::default(),
    };
    let target = dev.memory.allocate(4, MemKind::Device).unwrap();
    let info = object.kernel("counter").unwrap();
    let geometry = Geometry {
        grid: LAUNCH.grid,
        block: LAUNCH.block,
        dynamic_group_bytes: LAUNCH.dynamic_group_bytes,
    };
    let kernargs = pack(info, &target.to_le_bytes(), &geometry).unwrap();
    let mut b = IbBuilder::for_target(real(), EncodeOptions::default());
    b.dispatch(&code, &LAUNCH, &kernargs, info.kernarg_align)
        .unwrap();
    let layout = b.kernarg_layout();
    let base = dev
        .memory
        .allocate(layout.bytes.max(1) as usize, MemKind::HostFineGrained)
        .unwrap();
    let ib = b.finish(base).unwrap();
    dev.memory.write(base, &ib.kernarg_image).unwrap();
    let dwords = &ib.segments[0].dwords;
    execute_ib(&dev, IbLocation::default(), dwords, &RangeSet::new(), true)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn the_simulators_dispatch_check_reads_the_row() {
    run_on(*real()).unwrap();
    let err = run_on(dummy()).unwrap_err();
    assert!(err.contains("a workgroup may use at most 256"), "{err}");
}

#[test]
fn the_encoder_reads_the_rows_limits() {
    let bytes = counter();
    let object = CodeObject::parse(&bytes).unwrap();
    let info = object.kernel("counter").unwrap();
    let code = KernelCode {
        symbol: "counter",
        family: real().family,
        descriptor: info.descriptor,
        kd_address: 0x7F00_0000_1000u64
            .wrapping_add_signed(-info.descriptor.kernel_code_entry_byte_offset),
        unread: Default::default(),
    };
    let kernargs = vec![0; info.kernarg_size as usize];
    let mut ok = IbBuilder::for_target(real(), EncodeOptions::default());
    ok.dispatch(&code, &LAUNCH, &kernargs, info.kernarg_align)
        .unwrap();
    let mut refused = IbBuilder::for_target(&dummy(), EncodeOptions::default());
    let err = refused
        .dispatch(&code, &LAUNCH, &kernargs, info.kernarg_align)
        .unwrap_err();
    assert!(
        matches!(
            err,
            EncodeError::LdsTooLarge {
                bytes: 1024,
                limit: 256,
                ..
            }
        ),
        "{err}"
    );
}
