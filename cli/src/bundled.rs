//! Code objects bundled into the binary (the committed fixtures under
//! `tests/kernels/build/`), so `selftest` and `demo` run from a clean
//! checkout without a compiler, and the decode kernels' bundle tree
//! (`tests/kernels/bundles/`) that `demo` loads through a catalog.

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

/// Where the embedded decode bundle tree comes from (named in messages).
pub const DEMO_BUNDLE: &str = "tests/kernels/bundles";

macro_rules! demo_files {
    ($t:literal) => {
        (
            include_bytes!(concat!(
                "../../tests/kernels/bundles/",
                $t,
                "/relaunch_demo_",
                $t,
                ".json"
            ))
            .as_slice(),
            include_bytes!(concat!(
                "../../tests/kernels/bundles/",
                $t,
                "/relaunch_demo_",
                $t,
                ".kpack"
            ))
            .as_slice(),
        )
    };
}

/// The decode kernels' bundle for `target` (built by
/// `tests/kernels/build.sh`): its manifest and archive bytes.
pub fn demo_bundle(target: &str) -> Option<(&'static [u8], &'static [u8])> {
    Some(match target {
        "gfx1010" => demo_files!("gfx1010"),
        "gfx1030" => demo_files!("gfx1030"),
        "gfx1100" => demo_files!("gfx1100"),
        "gfx1151" => demo_files!("gfx1151"),
        "gfx1201" => demo_files!("gfx1201"),
        _ => return None,
    })
}
