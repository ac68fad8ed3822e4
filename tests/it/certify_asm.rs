//! Certification end to end on hand-written kernels (tests/kernels/asm,
//! assembled here with llvm-mc-19 and ld.lld-19): a kernel that s_loads
//! through a pointer read from a buffer is scalar_or_unknown naming that
//! load; with a private-segment buffer the kernarg pair is s[4:5] and the
//! proof follows it; a manifest bound to other bytes is refused; a manifest
//! claiming vmem_only for the pointer-chasing kernel is overridden.
//! Without the tools these tests skip with a message, unless `CI` is set.

use std::path::Path;

use relaunch::{ErrorClass, Gpu, ReadCache};

/// Assemble chase.s for gfx1030 with or without the private segment buffer.
fn build(psb: bool) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/asm/chase.s");
    let text = std::fs::read_to_string(src).unwrap();
    let (ka, user) = if psb { (4, 6) } else { (0, 2) };
    let text = text
        .replace("@TARGET@", "gfx1030")
        .replace("@PSB@", if psb { "1" } else { "0" })
        .replace("@KA1@", &(ka + 1).to_string())
        .replace("@KA@", &ka.to_string())
        .replace("@USER@", &user.to_string());
    relaunch_testsupport::asm::code_object("gfx1030", &text)
}

#[test]
fn pointer_chasing_is_scalar_or_unknown_and_direct_is_vmem_only_with_s4_s5() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    for psb in [true, false] {
        let gpu = Gpu::open("sim:gfx1030").unwrap();
        let module = gpu.load_module(&build(psb)).unwrap();
        let chase = module.certificate("chase").unwrap();
        assert_eq!(chase.read_cache, ReadCache::ScalarOrUnknown);
        let reason = chase.reason.as_ref().unwrap();
        assert_eq!(
            reason.instruction.as_deref(),
            Some("s_load_dword s12, s[10:11], 0x0"),
            "{reason}"
        );
        let direct = module.certificate("direct.kd").unwrap();
        assert_eq!(
            direct.read_cache,
            ReadCache::VmemOnly,
            "psb {psb}: {:?}",
            direct.reason
        );
        assert_eq!(direct.kernarg_sgpr, Some(if psb { 4 } else { 0 }));
        assert_eq!(
            direct.kernarg_loads.len(),
            3,
            "the copy through s[12:13] is followed"
        );
        assert_eq!(module.read_cache("direct"), ReadCache::VmemOnly);
        assert_eq!(module.read_cache("nope"), ReadCache::ScalarOrUnknown);
        assert_eq!(module.wavefront_size(), 32);
        assert!(!module.radiowave_certified());
    }
}

#[test]
fn certification_can_be_turned_off_per_load() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    let bytes = build(true);
    let gpu = Gpu::open("sim:gfx1030").unwrap();
    let off = gpu
        .load_module_with(&bytes, &relaunch::LoadOptions { certify: false })
        .unwrap();
    assert_eq!(off.read_cache("direct"), ReadCache::ScalarOrUnknown);
    assert!(off.certificates().is_empty());
    assert_eq!(off.wavefront_size(), 32, "the real size, certified or not");
}

fn manifest(bytes: &[u8]) -> serde_json::Value {
    let code = relaunch::CodeObject::parse(bytes).unwrap();
    let certs = relaunch::certify(&code);
    relaunch::manifest::write(bytes, &code, &certs)
}

#[test]
fn manifests_bind_to_the_bytes_and_never_widen_the_proof() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    let bytes = build(true);
    let gpu = Gpu::open("sim:gfx1030").unwrap();
    let mut m = manifest(&bytes);
    m["scheduler_profile"] = "max_ilp".into();
    let module = gpu
        .load_module_certified(&bytes, m.to_string().as_bytes())
        .unwrap();
    assert!(module.radiowave_certified());
    assert_eq!(
        module.scheduler_profile(),
        relaunch::SchedulerProfile::MaxIlp
    );
    assert!(module.overridden_claims().is_empty());

    // One flipped byte (hex digit) in output_sha256: refused, naming it.
    let mut flipped = m.clone();
    let sha = flipped["output_sha256"].as_str().unwrap().to_string();
    let mut chars: Vec<char> = sha.chars().collect();
    chars[10] = if chars[10] == '0' { '1' } else { '0' };
    flipped["output_sha256"] = chars.into_iter().collect::<String>().into();
    let e = gpu
        .load_module_certified(&bytes, flipped.to_string().as_bytes())
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::Certification);
    assert!(e.message().contains("output_sha256"), "{}", e.message());

    // Another target, and malformed documents.
    let mut other = m.clone();
    other["arch"] = "gfx1100".into();
    let e = gpu
        .load_module_certified(&bytes, other.to_string().as_bytes())
        .unwrap_err();
    assert!(e.message().contains("`arch`"), "{}", e.message());
    for (doc, field) in [
        ("not json".to_string(), "(document)"),
        ("{}".to_string(), "schema_version"),
        (
            {
                let mut x = m.clone();
                x["inspection"]["kernels"][0]["mutable_read_cache"] = "maybe".into();
                x.to_string()
            },
            "mutable_read_cache",
        ),
        (
            {
                let mut x = m.clone();
                x["scheduler_profile"] = "fastest".into();
                x.to_string()
            },
            "scheduler_profile",
        ),
    ] {
        let e = gpu
            .load_module_certified(&bytes, doc.as_bytes())
            .unwrap_err();
        assert_eq!(e.class(), ErrorClass::Certification);
        assert!(e.message().contains(field), "{field}: {}", e.message());
    }

    // The reference shape claiming vmem_only for the pointer chaser: loaded,
    // the claim overridden (and logged), relaunch's proof used.
    let mut lying = serde_json::json!({
        "schema_version": 1,
        "arch": "gfx1030",
        "output_sha256": m["output_sha256"],
        "wavefront": 32,
        "scheduler_profile": "default",
        "inspection": { "kernels": [
            { "name": "chase", "wavefront_size": 32, "vgpr_count": 4, "sgpr_count": 16,
              "vgpr_spill_count": 0, "sgpr_spill_count": 0, "private_segment_fixed_size": 0,
              "mutable_read_cache": "vmem_only" },
        ]},
    });
    let module = gpu
        .load_module_certified(&bytes, lying.to_string().as_bytes())
        .unwrap();
    assert!(module.radiowave_certified());
    assert_eq!(module.overridden_claims(), ["chase".to_string()]);
    assert_eq!(module.read_cache("chase"), ReadCache::ScalarOrUnknown);
    assert_eq!(
        module.scheduler_profile(),
        relaunch::SchedulerProfile::Default
    );
    // A checkable fact that disagrees is refused.
    lying["inspection"]["kernels"][0]["wavefront_size"] = 64.into();
    let e = gpu
        .load_module_certified(&bytes, lying.to_string().as_bytes())
        .unwrap_err();
    assert!(
        e.message().contains("inspection.kernels[0].wavefront_size"),
        "{}",
        e.message()
    );
}

/// Issue 30, finding 1: loading a code object whose 48 kernels share a loop
/// that sheds one kernarg pair per trip took minutes (the certifier walked
/// the loop ~50 times per kernel). Now the whole object's proof is bounded.
#[test]
fn a_code_object_hostile_to_the_certifier_loads_in_seconds() {
    if !relaunch_testsupport::asm::tools() {
        return;
    }
    let bytes = relaunch_testsupport::asm::shifting_loop_kernels(48, 20_000, false);
    let gpu = Gpu::open("sim:gfx1100").unwrap();
    let start = std::time::Instant::now();
    let module = gpu.load_module(&bytes).unwrap();
    let took = start.elapsed();
    eprintln!("{} bytes loaded in {took:?}", bytes.len());
    let ceiling = std::time::Duration::from_secs(if cfg!(debug_assertions) { 60 } else { 10 });
    assert!(took < ceiling, "load_module took {took:?}");
    assert_eq!(module.read_cache("k47"), ReadCache::ScalarOrUnknown);
}
