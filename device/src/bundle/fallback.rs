//! Which architecture directory of a bundle tree a device uses.
//!
//! Policy: the device's exact processor (`gfx1151` reads `<root>/gfx1151/`
//! and nothing else). There is no fallback to a sibling processor:
//! `gfx1151` does not take `gfx1150` code, nor `gfx1101` `gfx1100` code,
//! because their ISAs differ in ways the loader cannot check (register
//! counts, hardware workarounds the compiler applies per processor).
//! Generic targets (`gfx10-1-generic`, `gfx10-3-generic`, `gfx11-generic`,
//! `gfx12-generic`) would be the only legitimate fallback, and only for a
//! code object that declares that generic target in its metadata. The
//! code-object reader reads such an object for a processor it covers
//! (`CodeObject::parse_for`), but packing and verifying a tree read each
//! object for its directory's processor, which a generic directory does
//! not name; so such a directory is named in the error (so the user knows
//! why it was not used) and not searched yet.

use relaunch_facts::TargetFacts;

/// The generic target whose code `processor` could run, by LLVM's table
/// (its facts row), or `None` outside RDNA.
pub fn generic_of(processor: &str) -> Option<&'static str> {
    TargetFacts::lookup(processor).map(|row| row.generic_target)
}

/// Directories a device with `processor` may load from, in order. Today
/// exactly one: the processor itself (see the module docs).
pub fn candidates(processor: &str) -> Vec<String> {
    vec![processor.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_only_and_generic_names() {
        assert_eq!(candidates("gfx1151"), vec!["gfx1151"]);
        assert_eq!(generic_of("gfx1151"), Some("gfx11-generic"));
        assert_eq!(generic_of("gfx1012"), Some("gfx10-1-generic"));
        assert_eq!(generic_of("gfx1030"), Some("gfx10-3-generic"));
        assert_eq!(generic_of("gfx1201"), Some("gfx12-generic"));
        assert_eq!(generic_of("gfx90a"), None);
    }
}
