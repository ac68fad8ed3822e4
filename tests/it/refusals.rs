//! The facade's refusals are typed: a caller matches `Error::refusal()`
//! for what was refused and its data, and the class (C `RL_ERR_*`,
//! Python exception) follows from the variant.

use relaunch::{Error, ErrorClass, Gpu, Refusal};
use relaunch_testsupport::fixture;

/// The error of a call that must fail (its success types are not `Debug`).
fn refused<T>(result: Result<T, Error>) -> Error {
    match result {
        Ok(_) => panic!("the call was not refused"),
        Err(err) => err,
    }
}

fn refusal(err: &Error) -> &Refusal {
    err.refusal()
        .unwrap_or_else(|| panic!("not a typed refusal: {err:?}"))
}

/// A builder holding one dispatch of the counter kernel, and the word it
/// counts into (kept alive with the builder).
fn one_counter_dispatch(gpu: &Gpu) -> (relaunch::Pm4Builder, relaunch::DeviceBuffer) {
    let module = gpu.load_module(&fixture("gfx1201", "counter")).unwrap();
    let word = gpu.alloc(4, true).unwrap();
    let mut b = gpu.builder();
    b.dispatch(
        &module,
        "counter",
        [32, 1, 1],
        [32, 1, 1],
        0,
        &word.address().to_le_bytes(),
    )
    .unwrap();
    (b, word)
}

#[test]
fn a_builder_with_no_dispatches_is_refused_with_its_lane() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let err = refused(gpu.finalize(gpu.builder()));
    assert!(
        matches!(refusal(&err), Refusal::NoDispatches { lane: None }),
        "{err:?}"
    );
    assert_eq!(err.class(), ErrorClass::Compile);
    assert_eq!(err.message(), "the builder has no dispatches");

    let (full, _word) = one_counter_dispatch(&gpu);
    let err = refused(gpu.finalize_multi(vec![full, gpu.builder()], relaunch::QueuePolicy::Auto));
    assert!(
        matches!(refusal(&err), Refusal::NoDispatches { lane: Some(1) }),
        "{err:?}"
    );
    let err = refused(gpu.finalize_multi(Vec::new(), relaunch::QueuePolicy::Auto));
    assert!(matches!(refusal(&err), Refusal::NoBuilders), "{err:?}");
}

#[test]
fn an_unknown_kernel_names_the_symbol_and_the_kernels_there_are() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "counter")).unwrap();
    let err = module.kernel("nope").unwrap_err();
    assert_eq!(err.class(), ErrorClass::Record);
    match refusal(&err) {
        Refusal::UnknownKernel { symbol, known } => {
            assert_eq!(symbol, "nope");
            assert_eq!(known, &["counter".to_string()]);
        }
        other => panic!("not UnknownKernel: {other:?}"),
    }
    // Packing kernargs asks by name too, and is refused the same way.
    let geometry = relaunch::Geometry {
        grid: [32, 1, 1],
        block: [32, 1, 1],
        dynamic_group_bytes: 0,
    };
    let err = module.pack_kernargs("nope", &[], &geometry).unwrap_err();
    assert!(
        matches!(refusal(&err), Refusal::UnknownKernel { .. }),
        "{err:?}"
    );
}

#[test]
fn kernargs_of_neither_size_name_both_sizes() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let module = gpu.load_module(&fixture("gfx1201", "counter")).unwrap();
    let mut b = gpu.builder();
    let err = b
        .dispatch(&module, "counter", [32, 1, 1], [32, 1, 1], 0, &[0; 3])
        .unwrap_err();
    assert_eq!(err.class(), ErrorClass::Record);
    match refusal(&err) {
        Refusal::KernargSize {
            kernel,
            given,
            full,
            explicit,
        } => {
            assert_eq!((kernel.as_str(), *given, *explicit), ("counter", 3, 8));
            assert!(full >= explicit, "{err}");
        }
        other => panic!("not KernargSize: {other:?}"),
    }
}

#[test]
fn a_patch_of_a_dispatch_past_the_end_carries_the_index_and_the_count() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let (b, _word) = one_counter_dispatch(&gpu);
    let mut ib = gpu.finalize(b).unwrap();
    let err = ib.set_kernargs(3, 0, &[0; 4]).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Handle);
    assert!(
        matches!(
            refusal(&err),
            Refusal::NoSuchDispatch {
                lane: None,
                dispatch: 3,
                count: 1
            }
        ),
        "{err:?}"
    );
    let err = ib.dispatch_times().unwrap_err();
    assert_eq!(err.class(), ErrorClass::Replay);
    assert!(
        matches!(refusal(&err), Refusal::NoDispatchTimes { profiling: None }),
        "{err:?}"
    );
}

#[test]
fn argument_refusals_carry_their_values() {
    let err = Gpu::open_index(-2).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Device);
    assert!(
        matches!(refusal(&err), Refusal::NegativeOrdinal { ordinal: -2 }),
        "{err:?}"
    );
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let err = refused(gpu.alloc(0, true));
    assert_eq!(err.class(), ErrorClass::Record);
    assert!(matches!(refusal(&err), Refusal::ZeroAllocation), "{err:?}");
}

#[test]
fn a_malformed_certification_manifest_names_the_field() {
    let gpu = Gpu::open("sim:gfx1201").unwrap();
    let err = gpu
        .load_module_certified(&fixture("gfx1201", "counter"), b"[]")
        .unwrap_err();
    assert_eq!(err.class(), ErrorClass::Certification);
    match refusal(&err) {
        Refusal::ManifestField { field, why } => {
            assert_eq!(field, "(document)");
            assert_eq!(why, "is not a JSON object");
        }
        other => panic!("not ManifestField: {other:?}"),
    }
}

/// Errors of the crates underneath are not refusals of the facade.
#[test]
fn crate_errors_are_not_refusals() {
    let mut g = relaunch::Graph::new(relaunch::default_graph_options());
    let err = g.buffer("empty", 0).unwrap_err();
    assert!(err.refusal().is_none(), "{err:?}");
}
