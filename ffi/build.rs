//! Gives librelaunch.so its SONAME (the file name itself, so programs
//! linked against a build tree or an SDK load it by that name).

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librelaunch.so");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
