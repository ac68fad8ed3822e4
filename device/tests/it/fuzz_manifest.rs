//! Fuzzing the host-manifest parser (a proptest corpus run, bounded): random
//! text and mutations of the real example manifest never panic, and a
//! refusal always names the file.

use std::path::Path;

use proptest::prelude::*;
use relaunch_device::identity::HostManifest;

const EXAMPLE: &str = include_str!("../../../tests/fixtures/manifests/devices.toml");

fn parse(text: &str) {
    let mut manifest = HostManifest::empty("hipx");
    if let Err(e) = manifest.merge_text(Path::new("/fuzz/devices.toml"), text) {
        assert!(e.to_string().contains("/fuzz/devices.toml"), "{e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        parse(&text);
    }

    #[test]
    fn mutated_example_never_panics(
        edits in proptest::collection::vec((0usize..EXAMPLE.len(), any::<char>()), 1..8),
        cut in 0usize..EXAMPLE.len(),
    ) {
        let mut chars: Vec<char> = EXAMPLE.chars().collect();
        for (at, c) in edits {
            let at = at % chars.len();
            chars[at] = c;
        }
        chars.truncate(cut.max(1).min(chars.len()));
        parse(&chars.into_iter().collect::<String>());
    }
}

#[test]
fn the_example_parses() {
    let mut manifest = HostManifest::empty("hipx");
    manifest
        .merge_text(Path::new("devices.toml"), EXAMPLE)
        .unwrap();
    assert!(manifest.alias("dev0").is_some());
}
