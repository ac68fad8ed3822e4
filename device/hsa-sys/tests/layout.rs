//! Compares every layout and constant this crate declares with the installed
//! HSA headers (Debian `libhsa-runtime-dev`, `/usr/include/hsa`): a small C
//! program prints sizeof/offsetof/values and the test checks them one by one.
//! Skips, with a note, when the headers or a C compiler are absent.

use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::path::Path;
use std::process::Command;

use relaunch_hsa_sys::*;

/// One check: a C expression and the value Rust says it has.
struct Check {
    c_expr: String,
    rust: u64,
}

fn size(c_type: &str, rust: usize) -> Check {
    Check {
        c_expr: format!("sizeof({c_type})"),
        rust: rust as u64,
    }
}

fn offset(c_type: &str, c_field: &str, rust: usize) -> Check {
    Check {
        c_expr: format!("offsetof({c_type}, {c_field})"),
        rust: rust as u64,
    }
}

fn konst(c_name: &str, rust: u64) -> Check {
    Check {
        c_expr: c_name.to_string(),
        rust,
    }
}

macro_rules! consts {
    ($($name:ident),* $(,)?) => {
        vec![$(konst(stringify!($name), $name as u64)),*]
    };
}

fn checks() -> Vec<Check> {
    let mut v = vec![
        size("hsa_agent_t", size_of::<Agent>()),
        size("hsa_signal_t", size_of::<Signal>()),
        size("hsa_region_t", size_of::<Region>()),
        size("hsa_amd_memory_pool_t", size_of::<MemoryPool>()),
        size("hsa_executable_t", size_of::<Executable>()),
        size("hsa_code_object_reader_t", size_of::<CodeObjectReader>()),
        size("hsa_loaded_code_object_t", size_of::<LoadedCodeObject>()),
        size("hsa_executable_symbol_t", size_of::<ExecutableSymbol>()),
        size("hsa_signal_value_t", size_of::<SignalValue>()),
        size("hsa_status_t", size_of::<Status>()),
        size("hsa_agent_info_t", size_of::<AgentInfo>()),
        size("hsa_dim3_t", size_of::<Dim3>()),
        offset("hsa_dim3_t", "y", offset_of!(Dim3, y)),
        offset("hsa_dim3_t", "z", offset_of!(Dim3, z)),
        size("hsa_queue_t", size_of::<Queue>()),
        offset("hsa_queue_t", "type", offset_of!(Queue, queue_type)),
        offset("hsa_queue_t", "features", offset_of!(Queue, features)),
        offset(
            "hsa_queue_t",
            "base_address",
            offset_of!(Queue, base_address),
        ),
        offset(
            "hsa_queue_t",
            "doorbell_signal",
            offset_of!(Queue, doorbell_signal),
        ),
        offset("hsa_queue_t", "size", offset_of!(Queue, size)),
        offset("hsa_queue_t", "reserved1", offset_of!(Queue, reserved1)),
        offset("hsa_queue_t", "id", offset_of!(Queue, id)),
        size("hsa_barrier_and_packet_t", size_of::<BarrierAndPacket>()),
        offset(
            "hsa_barrier_and_packet_t",
            "dep_signal",
            offset_of!(BarrierAndPacket, dep_signal),
        ),
        offset(
            "hsa_barrier_and_packet_t",
            "reserved2",
            offset_of!(BarrierAndPacket, reserved2),
        ),
        offset(
            "hsa_barrier_and_packet_t",
            "completion_signal",
            offset_of!(BarrierAndPacket, completion_signal),
        ),
        size(
            "hsa_amd_vendor_packet_header_t",
            size_of::<AmdVendorPacketHeader>(),
        ),
        offset(
            "hsa_amd_vendor_packet_header_t",
            "AmdFormat",
            offset_of!(AmdVendorPacketHeader, amd_format),
        ),
        offset(
            "hsa_amd_vendor_packet_header_t",
            "reserved",
            offset_of!(AmdVendorPacketHeader, reserved),
        ),
        size("hsa_ext_amd_aql_pm4_packet_t", size_of::<AmdPm4IbPacket>()),
        // Our PM4 dwords start right after the 4-byte vendor header, i.e.
        // 2 bytes into aqlprofile's `pm4_command` (which starts at byte 2).
        Check {
            c_expr: "offsetof(hsa_ext_amd_aql_pm4_packet_t, pm4_command) + 2".into(),
            rust: offset_of!(AmdPm4IbPacket, pm4_ib) as u64,
        },
        offset(
            "hsa_ext_amd_aql_pm4_packet_t",
            "completion_signal",
            offset_of!(AmdPm4IbPacket, completion_signal),
        ),
    ];
    v.extend([
        size("hsa_amd_event_t", size_of::<AmdEvent>()),
        offset(
            "hsa_amd_event_t",
            "event_type",
            offset_of!(AmdEvent, event_type),
        ),
        offset(
            "hsa_amd_event_t",
            "memory_fault",
            offset_of!(AmdEvent, memory_fault),
        ),
        size(
            "hsa_amd_gpu_memory_fault_info_t",
            size_of::<GpuMemoryFaultInfo>(),
        ),
        offset(
            "hsa_amd_gpu_memory_fault_info_t",
            "virtual_address",
            offset_of!(GpuMemoryFaultInfo, virtual_address),
        ),
        offset(
            "hsa_amd_gpu_memory_fault_info_t",
            "fault_reason_mask",
            offset_of!(GpuMemoryFaultInfo, fault_reason_mask),
        ),
    ]);
    // 1 << 31 in a C enum is a negative int: compare its 32 bits.
    v.push(konst(
        "(uint32_t)HSA_AMD_MEMORY_FAULT_HANG",
        HSA_AMD_MEMORY_FAULT_HANG as u64,
    ));
    let kd = "hsa_kernel_dispatch_packet_t";
    v.push(size(kd, size_of::<KernelDispatchPacket>()));
    macro_rules! kd_fields {
        ($($f:ident),*) => { $( v.push(offset(kd, stringify!($f), offset_of!(KernelDispatchPacket, $f))); )* };
    }
    kd_fields!(
        header,
        setup,
        workgroup_size_x,
        workgroup_size_y,
        workgroup_size_z,
        reserved0,
        grid_size_x,
        grid_size_y,
        grid_size_z,
        private_segment_size,
        group_segment_size,
        kernel_object,
        kernarg_address,
        reserved2,
        completion_signal
    );
    v.extend(
        STATUS_NAMES
            .iter()
            .map(|(value, name)| konst(name, *value as u64)),
    );
    v.extend(consts!(
        HSA_QUEUE_TYPE_MULTI,
        HSA_QUEUE_TYPE_SINGLE,
        HSA_QUEUE_TYPE_COOPERATIVE,
        HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
        HSA_QUEUE_FEATURE_AGENT_DISPATCH,
        HSA_PACKET_TYPE_VENDOR_SPECIFIC,
        HSA_PACKET_TYPE_INVALID,
        HSA_PACKET_TYPE_KERNEL_DISPATCH,
        HSA_PACKET_TYPE_BARRIER_AND,
        HSA_PACKET_TYPE_AGENT_DISPATCH,
        HSA_PACKET_TYPE_BARRIER_OR,
        HSA_FENCE_SCOPE_NONE,
        HSA_FENCE_SCOPE_AGENT,
        HSA_FENCE_SCOPE_SYSTEM,
        HSA_PACKET_HEADER_TYPE,
        HSA_PACKET_HEADER_BARRIER,
        HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
        HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
        HSA_PACKET_HEADER_WIDTH_TYPE,
        HSA_PACKET_HEADER_WIDTH_BARRIER,
        HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE,
        HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE,
        HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
        HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS,
        HSA_AMD_PACKET_TYPE_BARRIER_VALUE,
        HSA_SYSTEM_INFO_VERSION_MAJOR,
        HSA_SYSTEM_INFO_VERSION_MINOR,
        HSA_SYSTEM_INFO_TIMESTAMP,
        HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY,
        HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT,
        HSA_AMD_SYSTEM_INFO_BUILD_VERSION,
        HSA_AMD_GPU_MEMORY_FAULT_EVENT,
        HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT,
        HSA_AMD_MEMORY_FAULT_READ_ONLY,
        HSA_AMD_MEMORY_FAULT_NX,
        HSA_AMD_MEMORY_FAULT_HOST_ONLY,
        HSA_AMD_MEMORY_FAULT_DRAMECC,
        HSA_AMD_MEMORY_FAULT_IMPRECISE,
        HSA_AMD_MEMORY_FAULT_SRAMECC,
        HSA_DEVICE_TYPE_CPU,
        HSA_DEVICE_TYPE_GPU,
        HSA_DEVICE_TYPE_DSP,
        HSA_AGENT_INFO_NAME,
        HSA_AGENT_INFO_VENDOR_NAME,
        HSA_AGENT_INFO_FEATURE,
        HSA_AGENT_INFO_WAVEFRONT_SIZE,
        HSA_AGENT_INFO_WORKGROUP_MAX_DIM,
        HSA_AGENT_INFO_WORKGROUP_MAX_SIZE,
        HSA_AGENT_INFO_GRID_MAX_DIM,
        HSA_AGENT_INFO_GRID_MAX_SIZE,
        HSA_AGENT_INFO_QUEUES_MAX,
        HSA_AGENT_INFO_QUEUE_MIN_SIZE,
        HSA_AGENT_INFO_QUEUE_MAX_SIZE,
        HSA_AGENT_INFO_QUEUE_TYPE,
        HSA_AGENT_INFO_NODE,
        HSA_AGENT_INFO_DEVICE,
        HSA_AMD_AGENT_INFO_CHIP_ID,
        HSA_AMD_AGENT_INFO_CACHELINE_SIZE,
        HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
        HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY,
        HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
        HSA_AMD_AGENT_INFO_BDFID,
        HSA_AMD_AGENT_INFO_PRODUCT_NAME,
        HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES,
        HSA_AMD_AGENT_INFO_DOMAIN,
        HSA_AMD_AGENT_INFO_UUID,
        HSA_AMD_AGENT_INFO_ASIC_REVISION,
        HSA_AMD_SEGMENT_GLOBAL,
        HSA_AMD_SEGMENT_READONLY,
        HSA_AMD_SEGMENT_PRIVATE,
        HSA_AMD_SEGMENT_GROUP,
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
        HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS,
        HSA_AMD_MEMORY_POOL_INFO_SIZE,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE,
        HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT,
        HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL,
        HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE,
        HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
        HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED,
        HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT,
        HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT,
        HSA_SIGNAL_CONDITION_EQ,
        HSA_SIGNAL_CONDITION_NE,
        HSA_SIGNAL_CONDITION_LT,
        HSA_SIGNAL_CONDITION_GTE,
        HSA_WAIT_STATE_BLOCKED,
        HSA_WAIT_STATE_ACTIVE,
        HSA_PROFILE_BASE,
        HSA_PROFILE_FULL,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO,
        HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR,
        HSA_SYMBOL_KIND_VARIABLE,
        HSA_SYMBOL_KIND_KERNEL,
        HSA_SYMBOL_KIND_INDIRECT_FUNCTION,
        HSA_EXECUTABLE_SYMBOL_INFO_TYPE,
        HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH,
        HSA_EXECUTABLE_SYMBOL_INFO_NAME,
        HSA_EXECUTABLE_SYMBOL_INFO_AGENT,
        HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
        HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK,
    ));
    v
}

fn c_program(checks: &[Check]) -> String {
    let mut src = String::from(
        "#include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\n\
         #include <hsa/hsa_ven_amd_aqlprofile.h>\n#include <stdio.h>\n#include <stddef.h>\n\
         int main(void) {\n",
    );
    for (i, check) in checks.iter().enumerate() {
        src.push_str(&format!(
            "  printf(\"{i} %llu\\n\", (unsigned long long)({}));\n",
            check.c_expr
        ));
    }
    src.push_str("  return 0;\n}\n");
    src
}

#[test]
fn rust_layouts_and_constants_match_the_installed_headers() {
    if !Path::new("/usr/include/hsa/hsa.h").exists() {
        relaunch_testsupport::missing("/usr/include/hsa/hsa.h", "install libhsa-runtime-dev");
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let dir = std::env::temp_dir().join(format!("relaunch-hsa-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let checks = checks();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, c_program(&checks)).unwrap();
    let compiled = match Command::new(&cc)
        .arg("-std=c11")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
    {
        Ok(out) => out,
        Err(err) => {
            relaunch_testsupport::missing(
                &format!("C compiler `{cc}` ({err})"),
                "install a C compiler",
            );
            return;
        }
    };
    assert!(
        compiled.status.success(),
        "layout.c failed to compile:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let values: HashMap<usize, u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (i, v) = line.split_once(' ').unwrap();
            (i.parse().unwrap(), v.parse().unwrap())
        })
        .collect();
    let mismatches: Vec<String> = checks
        .iter()
        .enumerate()
        .filter(|(i, check)| values[i] != check.rust)
        .map(|(i, check)| format!("{}: C {} vs Rust {}", check.c_expr, values[&i], check.rust))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(checks.len() > 150, "only {} checks", checks.len());
    assert!(
        mismatches.is_empty(),
        "layout mismatches:\n{}",
        mismatches.join("\n")
    );
}
