//! Selector grammar: every accepted form, and the errors for everything else.

use relaunch_device::identity::{Bdf, BdfForm, GpuUuid, Selector, ACCEPTED_FORMS};

fn parse(text: &str) -> Selector {
    Selector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn problem(text: &str) -> String {
    let err = Selector::parse(text).expect_err(text);
    let message = err.to_string();
    assert!(message.contains(ACCEPTED_FORMS), "{message}");
    err.problem
}

#[test]
fn uuid_form_is_canonicalised_to_lower_case() {
    let selector = parse("uuid:GPU-43390A851E296EE5");
    assert_eq!(
        selector,
        Selector::Uuid(GpuUuid::parse("GPU-43390a851e296ee5").unwrap())
    );
    assert_eq!(selector.to_string(), "uuid:GPU-43390a851e296ee5");
}

#[test]
fn uuid_placeholder_is_refused_with_a_bdf_hint() {
    let placeholder = problem("uuid:GPU-XX");
    assert!(placeholder.contains("placeholder"), "{placeholder}");
    assert!(placeholder.contains("bdf:"), "{placeholder}");
    assert!(problem("uuid:43390a851e296ee5").contains("GPU-"));
    assert!(problem("uuid:GPU-zz12").contains("hex"));
}

#[test]
fn bdf_full_and_short_forms() {
    let full = parse("bdf:0000:66:00.0");
    let short = parse("bdf:66:00.0");
    let expected = Bdf::new(0, 0x66, 0, 0).unwrap();
    assert_eq!(
        full,
        Selector::Bdf {
            bdf: expected,
            form: BdfForm::Full
        }
    );
    assert_eq!(
        short,
        Selector::Bdf {
            bdf: expected,
            form: BdfForm::Short
        }
    );
    assert_eq!(full.to_string(), "bdf:0000:66:00.0");
    assert_eq!(short.to_string(), "bdf:66:00.0");
    assert_eq!(
        parse("bdf:10000:c3:1f.7"),
        Selector::Bdf {
            bdf: Bdf::new(0x10000, 0xc3, 0x1f, 7).unwrap(),
            form: BdfForm::Full
        }
    );
}

#[test]
fn malformed_bdfs_say_what_is_wrong() {
    assert!(problem("bdf:0000:66:00").contains("function"));
    assert!(problem("bdf:66.0").contains("bus:device.function"));
    assert!(problem("bdf:0000:6:00.0").contains("bus"));
    assert!(problem("bdf:0000:66:20.0").contains("above 0x1f"));
    assert!(problem("bdf:0000:66:00.8").contains("above 7"));
    assert!(problem("bdf:0000:6g:00.0").contains("hex"));
}

#[test]
fn slot_name_index_alias_and_sim_forms() {
    assert_eq!(parse("slot:3"), Selector::Slot("3".into()));
    assert_eq!(parse("name:gfx1100"), Selector::Name("gfx1100".into()));
    assert_eq!(
        parse("name:AMD Radeon RX 7900 XTX"),
        Selector::Name("AMD Radeon RX 7900 XTX".into())
    );
    assert_eq!(parse("index:1"), Selector::Index(1));
    assert_eq!(parse("@dev0"), Selector::Alias("dev0".into()));
    assert_eq!(
        parse("  @big-box.gpu_1 "),
        Selector::Alias("big-box.gpu_1".into())
    );
    let Selector::Sim(target) = parse("sim:gfx1201") else {
        panic!("not sim");
    };
    assert_eq!(target.processor(), "gfx1201");
    assert_eq!(
        parse("sim:gfx1100:xnack-").to_string(),
        "sim:gfx1100:xnack-"
    );
}

#[test]
fn unprefixed_input_is_refused() {
    for text in ["0", "1", "gfx1100", "GPU-43390a851e296ee5", "dev0"] {
        let refused = problem(text);
        assert!(refused.contains("no kind prefix"), "{text}: {refused}");
    }
    // Bare BDFs look prefixed (`0000:` / `66:`) but are unknown prefixes.
    assert!(problem("0000:66:00.0").contains("unknown prefix `0000:`"));
    assert!(problem("66:00.0").contains("unknown prefix `66:`"));
}

#[test]
fn unknown_prefixes_and_empty_values_are_refused() {
    assert!(problem("gpu:0").contains("unknown prefix `gpu:`"));
    assert!(problem("UUID:GPU-43390a851e296ee5").contains("unknown prefix `UUID:`"));
    assert!(problem("uuid:").contains("nothing after `uuid:`"));
    assert!(problem("").contains("empty"));
    assert!(problem("   ").contains("empty"));
    assert!(problem("@").contains("nothing after `@`"));
}

#[test]
fn malformed_values_are_refused() {
    assert!(problem("index:-1").contains("decimal"));
    assert!(problem("index:one").contains("decimal"));
    assert!(problem("index:99999999999").contains("decimal"));
    assert!(problem("slot:3 4").contains("without spaces"));
    assert!(problem("@dev 0").contains("alias name"));
    assert!(problem("@dev/0").contains("alias name"));
    assert!(problem("sim:gfx906").contains("not an RDNA GPU"));
    assert!(problem("sim:rtx4090").contains("gfxNNNN"));
}

#[test]
fn overlong_input_is_refused_and_cut_in_the_message() {
    let long = format!("name:{}", "x".repeat(10_000));
    let err = Selector::parse(&long).unwrap_err();
    assert!(err.problem.contains("longer than 256"), "{}", err.problem);
    assert_eq!(err.input.chars().count(), 256);
}

#[test]
fn bdf_location_id_round_trip() {
    let bdf = Bdf::from_location_id(0, 0x6e00 | (3 << 3) | 1).unwrap();
    assert_eq!(bdf.to_string(), "0000:6e:03.1");
    assert_eq!(bdf.location_id(), 0x6e19);
    assert!(Bdf::from_location_id(0, 0x1_0000).is_err());
}

#[test]
fn gpu_uuid_from_unique_id_and_reported_strings() {
    assert_eq!(
        GpuUuid::from_unique_id(0x43390a851e296ee5)
            .unwrap()
            .as_str(),
        "GPU-43390a851e296ee5"
    );
    assert_eq!(
        GpuUuid::from_unique_id(0x12).unwrap().as_str(),
        "GPU-0000000000000012"
    );
    assert_eq!(GpuUuid::from_unique_id(0), None);
    assert_eq!(GpuUuid::from_reported("GPU-XX"), None);
    assert_eq!(GpuUuid::from_reported(""), None);
    assert_eq!(
        GpuUuid::from_reported("GPU-c7ff6b154d0128bc\0\0"),
        GpuUuid::parse("GPU-c7ff6b154d0128bc").ok()
    );
}

mod properties {
    use proptest::prelude::*;
    use relaunch_device::identity::{Bdf, Selector};

    proptest! {
        #[test]
        fn parsing_arbitrary_text_never_panics(text in "\\PC{0,300}") {
            let _ = Selector::parse(&text);
        }

        #[test]
        fn bdf_text_round_trips(domain in 0u32..=0xffff_ffff, bus: u8, device in 0u8..32, function in 0u8..8) {
            let bdf = Bdf::new(domain, bus, device, function).unwrap();
            let selector = Selector::parse(&format!("bdf:{bdf}")).unwrap();
            prop_assert_eq!(selector.to_string(), format!("bdf:{bdf}"));
            prop_assert_eq!(Bdf::from_location_id(domain, u64::from(bdf.location_id())).unwrap(), bdf);
        }
    }
}
