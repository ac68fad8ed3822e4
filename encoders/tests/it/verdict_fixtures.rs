//! The PM4 verdicts of the committed test kernels
//! (`tests/kernels/build/<target>/<name>.co`); what the reader reads from
//! them is `device/tests/codeobj_fixtures.rs`'s.

use std::path::PathBuf;

use relaunch_device::codeobj::{ArgFill, CodeObject, CodeObjectVersion, KernelInfo, ValueKind};
use relaunch_encoders::{Pm4Verdict, Refusal};

const TARGETS: [&str; 5] = ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/build")
}

fn load(target: &str, name: &str) -> CodeObject {
    let path = fixture_dir().join(target).join(format!("{name}.co"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn only(object: &CodeObject) -> &KernelInfo {
    assert_eq!(object.kernels().len(), 1);
    &object.kernels()[0]
}

/// (offset, size, kind) of the explicit arguments.
fn explicit(k: &KernelInfo) -> Vec<(u32, u32, &str)> {
    k.explicit_args()
        .map(|a| (a.offset, a.size, a.value_kind.as_str()))
        .collect()
}

#[test]
fn counter_is_accepted_on_every_target() {
    for target in TARGETS {
        let object = load(target, "counter");
        assert_eq!(object.version(), CodeObjectVersion::V5);
        let k = only(&object);
        assert!(k.pm4_verdict().accepted(), "{target}: {}", k.pm4_verdict());
    }
}

#[test]
fn the_plain_fixture_kernels_are_accepted() {
    for target in TARGETS {
        for file in ["add_scalar", "axpy", "produce_consume", "lds_reverse"] {
            for k in load(target, file).kernels() {
                assert!(
                    k.pm4_verdict().accepted(),
                    "{target}/{}: {}",
                    k.name,
                    k.pm4_verdict()
                );
                for a in &k.args {
                    assert_ne!(a.fill(), ArgFill::Unfillable, "{target}/{}", k.name);
                }
            }
        }
    }
}

#[test]
fn scratch_is_accepted_up_to_the_cap_and_refused_past_it() {
    for target in TARGETS {
        let object = load(target, "scratch_hog");
        let k = only(&object);
        assert!(k.private_segment_size > 0);
        let v = k.pm4_verdict();
        assert!(v.accepted(), "{target}: {v}");
        // Past the per-work-item cap it is refused, saying so.
        let mut big = k.clone();
        big.descriptor.private_segment_fixed_size = 1 << 20;
        let v = big.pm4_verdict();
        assert!(
            v.refusals.contains(&Refusal::Scratch {
                private_segment_fixed_size: 1 << 20
            }),
            "{target}: {v}"
        );
        assert!(v.to_string().starts_with("refused: scratch"), "{v}");
        // scratch_huge's 68004 bytes per work-item are past the cap.
        let object = load(target, "scratch_huge");
        let v = only(&object).pm4_verdict();
        assert_eq!(
            v.refusals,
            vec![Refusal::Scratch {
                private_segment_fixed_size: 68004
            }],
            "{target}"
        );
        assert!(v.aql_refusals().is_empty(), "{target}: public AQL runs it");
    }
}

#[test]
fn v4_objects_read_and_group_size_comes_from_the_synthesized_dispatch_packet() {
    for target in ["gfx1030", "gfx1100"] {
        let counter = load(target, "counter-v4");
        assert_eq!(counter.version(), CodeObjectVersion::V4);
        assert!(only(&counter).pm4_verdict().accepted());
        // V4 has no hidden_group_size: clang reads the AQL packet instead.
        let add = load(target, "add_scalar-v4");
        let k = only(&add);
        assert_eq!(
            explicit(k),
            vec![(0, 8, "global_buffer"), (8, 4, "by_value")]
        );
        assert!(k.descriptor.wants_dispatch_ptr());
        assert_eq!(
            k.pm4_verdict().to_string(),
            "accepted (dispatch packet synthesized)"
        );
    }
}

#[test]
fn printf_kernel_is_refused_for_its_hidden_buffer() {
    for target in TARGETS {
        let object = load(target, "uses_printf");
        let k = only(&object);
        let printf = k
            .args
            .iter()
            .find(|a| a.value_kind == ValueKind::HiddenPrintfBuffer)
            .expect("hidden_printf_buffer listed");
        assert_eq!(printf.fill(), ArgFill::Unfillable);
        assert_eq!(
            k.pm4_verdict().refusals,
            vec![Refusal::UnfillableHiddenArgument {
                value_kind: "hidden_printf_buffer".into(),
                offset: printf.offset,
            }],
            "{target}"
        );
    }
}

#[test]
fn cdna_object_reads_but_is_refused_by_family() {
    let object = load("gfx90a", "counter");
    let k = only(&object);
    assert_eq!(k.wavefront_size, 64);
    assert_eq!(
        k.pm4_verdict().to_string(),
        "refused: unsupported target family (gfx90a)"
    );
}
