//! Code objects bundled into the binary (the committed fixtures under
//! `tests/kernels/build/`), so `selftest` and `demo` run from a clean
//! checkout without a compiler.

/// Targets the fixtures are built for.
pub const TARGETS: &[&str] = &["gfx1010", "gfx1030", "gfx1100", "gfx1151", "gfx1201"];

/// The counter kernel (`counter(uint *c)`: every work-item adds 1).
pub fn counter(target: &str) -> Option<&'static [u8]> {
    Some(match target {
        "gfx1010" => include_bytes!("../../tests/kernels/build/gfx1010/counter.co"),
        "gfx1030" => include_bytes!("../../tests/kernels/build/gfx1030/counter.co"),
        "gfx1100" => include_bytes!("../../tests/kernels/build/gfx1100/counter.co"),
        "gfx1151" => include_bytes!("../../tests/kernels/build/gfx1151/counter.co"),
        "gfx1201" => include_bytes!("../../tests/kernels/build/gfx1201/counter.co"),
        _ => return None,
    })
}
