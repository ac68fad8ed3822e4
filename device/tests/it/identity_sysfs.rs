//! sysfs enumeration on fixture trees: the four-GPU host (hipx), four
//! identical gfx1201 boards (hiptrx), a CPU-only host, and broken inputs.

use crate::identity_support;

use identity_support::{fixture_root, sysfs_inventory, Scratch};
use relaunch_device::identity::{
    gfx_name_from_target_version, has_slot_labels, parse_properties, scan, FactSource,
    IdentityError, SysfsRoot,
};

/// node, gfx name, BDF, UUID, card, slot.
type GpuRow<'a> = (
    u32,
    &'a str,
    String,
    Option<String>,
    Option<&'a str>,
    Option<&'a str>,
);

#[test]
fn hipx_lists_four_gpus_in_kfd_order_with_all_facts() {
    let gpus = scan(&fixture_root("hipx")).unwrap();
    let summary: Vec<GpuRow> = gpus
        .iter()
        .map(|g| {
            (
                g.kfd_node,
                g.name.as_str(),
                g.bdf.to_string(),
                g.uuid.as_ref().map(|u| u.to_string()),
                g.card.as_deref(),
                g.slot.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                1,
                "gfx1100",
                "0000:66:00.0".to_string(),
                Some("GPU-43390a851e296ee5".to_string()),
                Some("card0"),
                None
            ),
            (
                2,
                "gfx1151",
                "0000:bf:00.0".to_string(),
                None,
                Some("card1"),
                None
            ),
            (
                3,
                "gfx1010",
                "0000:6e:00.0".to_string(),
                None,
                Some("card2"),
                Some("1")
            ),
            (
                4,
                "gfx1030",
                "0000:99:00.0".to_string(),
                Some("GPU-c7ff6b154d0128bc".to_string()),
                Some("card3"),
                Some("3")
            ),
        ]
    );
    assert_eq!(gpus[0].gpu_id, Some(4660));
    assert_eq!(gpus[0].render_minor, Some(128));
    assert_eq!(gpus[0].gfx_target_version, 110000);
}

#[test]
fn hipx_describe_lines_match_the_seed_listing() {
    let inventory = sysfs_inventory("hipx");
    assert_eq!(inventory.source(), FactSource::Sysfs);
    let lines: Vec<String> = inventory.devices().iter().map(|d| d.describe()).collect();
    assert_eq!(
        lines,
        vec![
            "gfx1100 0000:66:00.0 [uuid:GPU-43390a851e296ee5] card0 kfd_node=1 rocr#0(volatile)",
            "gfx1151 0000:bf:00.0 [bdf:0000:bf:00.0] card1 kfd_node=2 rocr#1(volatile)",
            "gfx1010 0000:6e:00.0 [bdf:0000:6e:00.0] slot=1 card2 kfd_node=3 rocr#2(volatile)",
            "gfx1030 0000:99:00.0 [uuid:GPU-c7ff6b154d0128bc] slot=3 card3 kfd_node=4 rocr#3(volatile)",
        ]
    );
}

#[test]
fn hiptrx_maps_cards_by_render_node_not_by_number() {
    // card0 is the firmware framebuffer there, so card N+1 belongs to renderD128+N.
    let gpus = scan(&fixture_root("hiptrx")).unwrap();
    let found: Vec<(String, &str, Option<&str>)> = gpus
        .iter()
        .map(|g| (g.bdf.to_string(), g.name.as_str(), g.card.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("0000:03:00.0".to_string(), "gfx1201", Some("card1")),
            ("0000:c3:00.0".to_string(), "gfx1201", Some("card2")),
            ("0000:e3:00.0".to_string(), "gfx1201", Some("card3")),
            ("0000:13:00.0".to_string(), "gfx1201", Some("card4")),
        ]
    );
    assert!(gpus.iter().all(|g| g.uuid.is_some() && g.slot.is_none()));
    assert!(!has_slot_labels(&fixture_root("hiptrx")).unwrap());
    assert!(has_slot_labels(&fixture_root("hipx")).unwrap());
}

#[test]
fn cpu_only_and_driverless_hosts_have_no_gpus() {
    assert!(scan(&fixture_root("nogpu")).unwrap().is_empty());
    let scratch = Scratch::new("nokfd");
    assert!(scan(&SysfsRoot::new(scratch.path())).unwrap().is_empty());
    assert!(sysfs_inventory("nogpu").summary().contains("sim:gfx1201"));
}

#[test]
fn gfx_names_from_target_versions() {
    for (version, name) in [
        (110000, "gfx1100"),
        (110501, "gfx1151"),
        (100100, "gfx1010"),
        (100300, "gfx1030"),
        (100306, "gfx1036"),
        (120001, "gfx1201"),
        (90010, "gfx90a"),
    ] {
        assert_eq!(gfx_name_from_target_version(version).unwrap(), name);
    }
    assert!(gfx_name_from_target_version(7).is_err());
    assert!(gfx_name_from_target_version(101700).is_err());
}

#[test]
fn properties_parse_and_malformed_lines_name_the_file_and_line() {
    let path = std::path::Path::new("nodes/1/properties");
    let props = parse_properties(path, "cpu_cores_count 0\n\nlocation_id 26112\n").unwrap();
    assert_eq!(props["location_id"], 26112);
    let err = parse_properties(path, "cpu_cores_count 0\nlocation_id\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "sysfs nodes/1/properties: line 2: \"location_id\" is not `key value`"
    );
    let err = parse_properties(path, "domain -1\n").unwrap_err();
    assert!(err
        .to_string()
        .contains("value of domain (\"-1\") is not a decimal number"));
}

fn write_node(scratch: &Scratch, node: u32, properties: &str) {
    scratch.write(
        &format!("sys/class/kfd/kfd/topology/nodes/{node}/properties"),
        properties,
    );
}

#[test]
fn gpu_node_without_location_id_is_an_error() {
    let scratch = Scratch::new("noloc");
    write_node(&scratch, 1, "gfx_target_version 110000\ndomain 0\n");
    let err = scan(&SysfsRoot::new(scratch.path())).unwrap_err();
    let IdentityError::Sysfs { path, message } = err else {
        panic!("wrong error");
    };
    assert!(path.ends_with("nodes/1/properties"));
    assert!(message.contains("no location_id"), "{message}");
}

#[test]
fn missing_drm_and_domain_still_enumerate() {
    // Older kernels have no `domain` key; hosts may lack DRM entries.
    let scratch = Scratch::new("minimal");
    write_node(&scratch, 0, "cpu_cores_count 8\ngfx_target_version 0\n");
    write_node(
        &scratch,
        1,
        "gfx_target_version 120001\nlocation_id 768\nunique_id 0\n",
    );
    let gpus = scan(&SysfsRoot::new(scratch.path())).unwrap();
    assert_eq!(gpus.len(), 1);
    assert_eq!(gpus[0].bdf.to_string(), "0000:03:00.0");
    assert_eq!(
        (gpus[0].card.as_deref(), gpus[0].uuid.as_ref()),
        (None, None)
    );
    assert_eq!(gpus[0].gpu_id, None);
}

#[test]
fn malformed_slot_address_names_the_file() {
    let scratch = Scratch::new("badslot");
    write_node(
        &scratch,
        1,
        "gfx_target_version 110000\nlocation_id 26112\n",
    );
    scratch.write("sys/bus/pci/slots/3/address", "zz:66\n");
    let err = scan(&SysfsRoot::new(scratch.path())).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("slots/3/address"), "{message}");
    assert!(message.contains("not domain:bus:device"), "{message}");
}

#[test]
fn oversized_attribute_is_refused() {
    let scratch = Scratch::new("huge");
    write_node(&scratch, 1, &"x 1\n".repeat(20_000));
    let err = scan(&SysfsRoot::new(scratch.path())).unwrap_err();
    assert!(err.to_string().contains("larger than 65536 bytes"), "{err}");
}

/// `RELAUNCH_SYSFS_ROOT` may point anywhere: a FIFO where an attribute
/// should be is refused, not waited on.
#[test]
fn a_fifo_attribute_does_not_block_the_scan() {
    let scratch = Scratch::new("fifo");
    let path = scratch.write("sys/class/kfd/kfd/topology/nodes/1/properties", "");
    std::fs::remove_file(&path).unwrap();
    crate::bundle_files::mkfifo(&path);
    let root = SysfsRoot::new(scratch.path());
    let err = crate::bundle_files::within_10s("scan", move || scan(&root)).unwrap_err();
    assert!(err.to_string().contains("a FIFO"), "{err}");
}
