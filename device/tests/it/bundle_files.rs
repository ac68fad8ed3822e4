//! What a bundle tree's files may be: regular files inside the root, read
//! through their ceilings. A `.kpack` that is a device, a FIFO, or a link
//! out of the root, and an arch directory linked out of it, are refused
//! without blocking or reading more than the ceiling; listings in errors
//! are capped.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use relaunch_device::bundle::kpack::limits::MAX_ARCHIVE_BYTES;
use relaunch_device::bundle::tree::name_list;
use relaunch_device::bundle::{ArchDir, Compression};
use relaunch_device::file::read_regular;

use crate::bundle_tree::{pack_into, scratch};

/// `f()`, failing the test when it has not returned within 10 s (a reader
/// blocked on a FIFO stays blocked; the test binary exits around it).
pub fn within_10s<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what}: still blocked after 10 s"))
}

/// Make a FIFO at `path` (mkfifo(1)).
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A packed gfx1100 tree and the path of its archive.
fn tree(name: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    pack_into(&root, "demo", &["gfx1100"], &["counter"], Compression::None);
    let kpack = root.join("gfx1100/relaunch_demo_gfx1100.kpack");
    assert!(kpack.is_file(), "{}", kpack.display());
    (root, kpack)
}

fn open_error(root: &Path) -> String {
    let root = root.to_path_buf();
    within_10s("ArchDir::open", move || ArchDir::open(&root, "gfx1100"))
        .unwrap_err()
        .to_string()
}

#[test]
fn a_kpack_linked_to_dev_zero_is_refused_unread() {
    let (root, kpack) = tree("files-zero");
    std::fs::remove_file(&kpack).unwrap();
    symlink("/dev/zero", &kpack).unwrap();
    // Refused as a link out of the root, and by the reader as a device.
    let err = open_error(&root);
    assert!(err.contains("outside the bundle root"), "{err}");
    let err = within_10s("read_regular", move || {
        read_regular(&kpack, MAX_ARCHIVE_BYTES, "a .kpack archive")
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("a character device") && err.contains("not a regular file"),
        "{err}"
    );
}

#[test]
fn a_fifo_kpack_is_refused_without_blocking() {
    let (root, kpack) = tree("files-fifo");
    std::fs::remove_file(&kpack).unwrap();
    mkfifo(&kpack);
    let err = open_error(&root);
    assert!(err.contains("a FIFO"), "{err}");
}

#[test]
fn links_out_of_the_root_are_refused() {
    // An archive linked to a regular file outside the root.
    let (root, kpack) = tree("files-out");
    let (_, outside) = tree("files-out-elsewhere");
    std::fs::remove_file(&kpack).unwrap();
    symlink(&outside, &kpack).unwrap();
    let err = open_error(&root);
    assert!(err.contains("outside the bundle root"), "{err}");

    // An arch directory linked to one outside the root.
    let (elsewhere, _) = tree("files-arch-elsewhere");
    let root = scratch("files-arch");
    symlink(elsewhere.join("gfx1100"), root.join("gfx1100")).unwrap();
    let err = open_error(&root);
    assert!(err.contains("outside the bundle root"), "{err}");

    // A link that stays inside the root is followed.
    let (root, kpack) = tree("files-inside");
    let moved = root.join("gfx1100/stored.bin");
    std::fs::rename(&kpack, &moved).unwrap();
    symlink("stored.bin", &kpack).unwrap();
    ArchDir::open(&root, "gfx1100")
        .unwrap()
        .verify("demo/counter")
        .unwrap();
}

#[test]
fn listings_in_messages_are_capped() {
    let names: Vec<String> = (0..40).map(|i| format!("n{i:02}")).collect();
    let text = name_list(names.iter().map(String::as_str));
    assert!(
        text.starts_with("n00, n01") && text.contains("n15") && !text.contains("n16"),
        "{text}"
    );
    assert!(text.ends_with("and 24 more"), "{text}");
    assert_eq!(name_list(["a", "b"].into_iter()), "a, b");
}
