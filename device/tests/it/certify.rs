//! The certifier on the committed code objects: the decode-step kernels
//! certify per family, each refusal naming its instruction.

use std::path::Path;

use relaunch_device::codeobj::certify::{certify, ReadCache};
use relaunch_device::codeobj::CodeObject;

fn load(target: &str, file: &str) -> CodeObject {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/build")
        .join(target)
        .join(file);
    CodeObject::parse(&std::fs::read(&p).unwrap()).unwrap()
}

const TARGETS: [&str; 5] = ["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

#[test]
fn decode_kernels_certify_per_family_with_named_reasons() {
    for t in TARGETS {
        let co = load(t, "decode.co");
        for c in certify(&co) {
            // rmsnorm, matvec and the sampler read a buffer element through
            // the scalar cache (a uniform load of x or w); the rest read
            // only their kernel arguments that way.
            let scalar_reader = matches!(c.kernel.as_str(), "rmsnorm" | "matvec" | "sampler");
            let expect = if scalar_reader {
                ReadCache::ScalarOrUnknown
            } else {
                ReadCache::VmemOnly
            };
            assert_eq!(c.read_cache, expect, "{t} {}: {:?}", c.kernel, c.reason);
            if scalar_reader {
                let r = c.reason.as_ref().unwrap();
                let insn = r.instruction.as_deref().unwrap();
                assert!(insn.starts_with("s_load_"), "{t} {}: {r}", c.kernel);
                assert!(
                    r.why.contains("not the kernarg segment pointer"),
                    "{t} {}: {r}",
                    c.kernel
                );
                assert!(
                    r.address.unwrap() >= c.code_range.0 && r.address.unwrap() < c.code_range.1
                );
            } else {
                assert!(c.reason.is_none());
                assert!(!c.kernarg_loads.is_empty(), "{t} {}", c.kernel);
            }
            assert!(
                c.counts.scalar > 0 && c.counts.vector > 0,
                "{t} {}: {:?}",
                c.kernel,
                c.counts
            );
        }
    }
}

#[test]
fn kernarg_pair_follows_the_descriptor() {
    // gfx10 kernels here enable the private segment buffer (s[0:3]), so
    // the kernarg pointer is s[4:5]; gfx11/gfx12 deliver it in s[0:1].
    for (t, k) in [
        ("gfx1010", 4),
        ("gfx1030", 4),
        ("gfx1100", 0),
        ("gfx1151", 0),
        ("gfx1201", 0),
    ] {
        let co = load(t, "counter.co");
        let c = &certify(&co)[0];
        assert_eq!(c.kernarg_sgpr, Some(k), "{t}");
        assert_eq!(c.read_cache, ReadCache::VmemOnly, "{t}: {:?}", c.reason);
    }
}

#[test]
fn every_fixture_kernel_gets_a_verdict() {
    for t in TARGETS {
        for f in [
            "counter.co",
            "axpy.co",
            "add_scalar.co",
            "produce_consume.co",
            "lds_reverse.co",
        ] {
            for c in certify(&load(t, f)) {
                assert_eq!(
                    c.read_cache,
                    ReadCache::VmemOnly,
                    "{t} {f} {}: {:?}",
                    c.kernel,
                    c.reason
                );
            }
        }
    }
}

#[test]
fn v4_kernels_reading_the_dispatch_packet_are_vmem_only() {
    // add_scalar-v4 reads its workgroup size through the dispatch pointer
    // (clang's code object v4 lowering): s[4:5] after the private segment
    // buffer on gfx10.3, s[0:1] on gfx11, the kernarg pair after it.
    for (t, packet) in [("gfx1030", 4), ("gfx1100", 0)] {
        let c = &certify(&load(t, "add_scalar-v4.co"))[0];
        assert_eq!(c.read_cache, ReadCache::VmemOnly, "{t}: {:?}", c.reason);
        assert_eq!(c.dispatch_sgpr, Some(packet), "{t}");
        assert_eq!(c.kernarg_sgpr, Some(packet + 2), "{t}");
        assert!(!c.packet_loads.is_empty(), "{t}");
        for &(at, off) in &c.packet_loads {
            assert!((0..64).contains(&off), "{t}: 0x{at:x} reads offset {off}");
        }
        assert!(c.read_only_loads.is_empty(), "{t}");
    }
}
