// The thunk is found by its soname. hsakmt.map names the HSAKMT_1 version
// ROCr's references carry (`readelf -V libhsa-runtime64.so.1`), but rustc's
// own export list for a cdylib names each symbol exactly and wins over the
// map's pattern, so the symbols come out unversioned; glibc binds ROCr's
// versioned references to them all the same (a library without version
// definitions satisfies any), which cli/tests/it/sim_rocm.rs exercises.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it");
    println!("cargo:rerun-if-changed=hsakmt.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/hsakmt.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsakmt.so.1");
}
