//! The reference's certification calls on the simulated gfx1201.

use std::ptr::null_mut;

use super::{cstr, fixture, last_error, open_sim};
use crate::*;

fn manifest(code: &[u8]) -> serde_json::Value {
    let co = facade::CodeObject::parse(code).unwrap();
    let certs = facade::certify(&co);
    facade::manifest::write(code, &co, &certs)
}

fn load(gpu: *mut RlGpu, code: &[u8], m: &str) -> (i32, *mut RlModule) {
    let mut out = null_mut();
    // SAFETY: live buffers sized as passed.
    let rc = unsafe {
        rl_gpu_load_module_radiowave(
            gpu,
            code.as_ptr(),
            code.len(),
            m.as_ptr(),
            m.len(),
            &mut out,
        )
    };
    (rc, out)
}

#[test]
fn radiowave_load_binds_to_the_bytes_and_reports_the_proof() {
    let gpu = open_sim();
    let code = fixture("decode");
    let mut m = manifest(&code);
    m["scheduler_profile"] = "pipeline_ilp".into();
    let (rc, module) = load(gpu, &code, &m.to_string());
    assert_eq!(rc, RL_OK, "{}", last_error());
    assert!(rl_module_radiowave_certified(module));
    assert_eq!(
        rl_module_scheduler_profile(module),
        RlSchedulerProfile::RlSchedulerPipelineIlp
    );
    assert_eq!(rl_module_wavefront_size(module), 32);
    let read = |s: &str| {
        let s = cstr(s);
        // SAFETY: a NUL-terminated symbol.
        unsafe { rl_module_kernel_read_cache(module, s.as_ptr()) }
    };
    assert_eq!(read("rope.kd"), RlMutableReadCache::RlMutableVmemOnly);
    assert_eq!(read("matvec"), RlMutableReadCache::RlMutableScalarOrUnknown);
    assert_eq!(read("nope"), RlMutableReadCache::RlMutableScalarOrUnknown);
    // SAFETY: NULL symbol is refused, fail closed.
    let null = unsafe { rl_module_kernel_read_cache(module, std::ptr::null()) };
    assert_eq!(null, RlMutableReadCache::RlMutableScalarOrUnknown);
    rl_module_free(module);

    // Without a manifest: not certified, no profile, the real wave size.
    let mut plain = null_mut();
    // SAFETY: live buffers sized as passed.
    let rc = unsafe { rl_gpu_load_module(gpu, code.as_ptr(), code.len(), &mut plain) };
    assert_eq!(rc, RL_OK);
    assert!(!rl_module_radiowave_certified(plain));
    assert_eq!(
        rl_module_scheduler_profile(plain),
        RlSchedulerProfile::RlSchedulerUnknown
    );
    assert_eq!(rl_module_wavefront_size(plain), 32);
    rl_module_free(plain);

    // One flipped hex digit of output_sha256.
    let sha = m["output_sha256"].as_str().unwrap();
    let first = if sha.starts_with('0') { '1' } else { '0' };
    let flipped = format!("{first}{}", &sha[1..]);
    m["output_sha256"] = flipped.into();
    let (rc, module) = load(gpu, &code, &m.to_string());
    assert_eq!(rc, RL_ERR_CERTIFICATION);
    assert!(module.is_null());
    assert!(last_error().contains("output_sha256"), "{}", last_error());
    assert!(!rl_module_radiowave_certified(std::ptr::null()));
    assert_eq!(rl_module_wavefront_size(std::ptr::null()), 0);
    rl_gpu_free(gpu);
}
