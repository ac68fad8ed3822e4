//! The thunk's C types against Debian's `hsakmttypes.h` (libhsakmt-dev):
//! every struct ROCr passes across the seam has the header's size, and the
//! fields ROCr reads sit at the header's offsets. A C program built with
//! the system compiler prints the header's numbers.

use std::mem::{offset_of, size_of};
use std::process::Command;

use hsakmt::abi::*;

const HEADER: &str = "/usr/include/hsakmttypes.h";

/// (C expression, Rust value) for every size and offset checked.
fn ours() -> Vec<(&'static str, usize)> {
    macro_rules! size {
        ($t:ident) => {
            (concat!("sizeof(", stringify!($t), ")"), size_of::<$t>())
        };
    }
    macro_rules! at {
        ($t:ident, $f:ident) => {
            (
                concat!("offsetof(", stringify!($t), ", ", stringify!($f), ")"),
                offset_of!($t, $f),
            )
        };
    }
    vec![
        size!(HsaVersionInfo),
        size!(HsaSystemProperties),
        size!(HsaNodeProperties),
        at!(HsaNodeProperties, NumFComputeCores),
        at!(HsaNodeProperties, Capability),
        at!(HsaNodeProperties, EngineId),
        at!(HsaNodeProperties, VendorId),
        at!(HsaNodeProperties, DeviceId),
        at!(HsaNodeProperties, LocationId),
        at!(HsaNodeProperties, LocalMemSize),
        at!(HsaNodeProperties, MarketingName),
        at!(HsaNodeProperties, AMDName),
        at!(HsaNodeProperties, Domain),
        at!(HsaNodeProperties, UniqueID),
        at!(HsaNodeProperties, NumSdmaEngines),
        size!(HsaMemoryProperties),
        at!(HsaMemoryProperties, SizeInBytes),
        at!(HsaMemoryProperties, VirtualBaseAddress),
        size!(HsaCacheProperties),
        at!(HsaCacheProperties, CacheType),
        at!(HsaCacheProperties, SiblingMap),
        size!(HsaIoLinkProperties),
        at!(HsaIoLinkProperties, Flags),
        size!(HsaQueueResource),
        at!(HsaQueueResource, Queue_DoorBell),
        at!(HsaQueueResource, Queue_read_ptr),
        size!(HsaSyncVar),
        at!(HsaSyncVar, SyncVarSize),
        size!(HsaMemoryAccessFault),
        at!(HsaMemoryAccessFault, VirtualAddress),
        at!(HsaMemoryAccessFault, Failure),
        at!(HsaMemoryAccessFault, Flags),
        size!(HsaEventData),
        at!(HsaEventData, EventData),
        at!(HsaEventData, HWData1),
        at!(HsaEventData, HWData2),
        at!(HsaEventData, HWData3),
        size!(HsaEventDescriptor),
        at!(HsaEventDescriptor, SyncVar),
        size!(HsaEvent),
        at!(HsaEvent, EventData),
        size!(HsaClockCounters),
        size!(HsaPointerInfo),
        at!(HsaPointerInfo, MemFlags),
        at!(HsaPointerInfo, GPUAddress),
        at!(HsaPointerInfo, NMappedNodes),
        at!(HsaPointerInfo, MappedNodes),
        at!(HsaPointerInfo, UserData),
        size!(HsaGpuTileConfig),
    ]
}

#[test]
fn the_thunk_types_match_the_system_header() {
    if !std::path::Path::new(HEADER).exists() {
        relaunch_testsupport::missing(HEADER, "apt-get install libhsakmt-dev");
        return;
    }
    if !relaunch_testsupport::require_tool("cc", "apt-get install gcc") {
        return;
    }
    let checks = ours();
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <hsakmttypes.h>\nint main(void) {\n",
    );
    for (expr, _) in &checks {
        c.push_str(&format!("    printf(\"%zu\\n\", (size_t){expr});\n"));
    }
    c.push_str("    return 0;\n}\n");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("kfd-layout");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("layout.c"), c).unwrap();
    let built = Command::new("cc")
        .current_dir(&dir)
        .args(["-o", "layout", "layout.c"])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(dir.join("layout")).output().unwrap();
    let theirs: Vec<usize> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(theirs.len(), checks.len());
    let wrong: Vec<String> = checks
        .iter()
        .zip(&theirs)
        .filter(|((_, ours), theirs)| ours != *theirs)
        .map(|((expr, ours), theirs)| format!("{expr}: header {theirs}, ours {ours}"))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
