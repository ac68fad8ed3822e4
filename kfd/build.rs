// The thunk is found by its soname and its symbols carry HSAKMT_1, as
// ROCr links them (`nm -D libhsa-runtime64.so.1 | grep hsaKmt`).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it");
    println!("cargo:rerun-if-changed=hsakmt.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={dir}/hsakmt.map");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsakmt.so.1");
}
