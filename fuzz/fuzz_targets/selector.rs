//! The device selector grammar. Properties: no panic; a selector that
//! parses displays as text that parses back to the same selector.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relaunch_device::identity::Selector;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(selector) = Selector::parse(text) {
        let shown = selector.to_string();
        assert_eq!(
            Selector::parse(&shown).as_ref(),
            Ok(&selector),
            "{text:?} parsed, displayed as {shown:?}"
        );
    }
});
