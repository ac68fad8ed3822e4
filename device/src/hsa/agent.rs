//! Agent information: identity (name, UUID, PCI location, CU count, product
//! name) and, for GPUs, the queue and grid/workgroup limits.

use std::ffi::c_void;

use relaunch_hsa_sys as sys;

pub use crate::identity::Bdf;

use super::runtime::RuntimeInner;
use super::HsaError;

/// `hsa_device_type_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Cpu,
    Gpu,
    Dsp,
    Other(u32),
}

/// Limits of a kernel (GPU) agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLimits {
    pub wavefront_size: u32,
    pub workgroup_max_dim: [u16; 3],
    pub workgroup_max_size: u32,
    pub grid_max_dim: [u32; 3],
    pub grid_max_size: u32,
    pub queues_max: u32,
    pub queue_min_size: u32,
    pub queue_max_size: u32,
    /// `hsa_queue_type32_t` the agent supports.
    pub queue_type: u32,
}

/// What the runtime says about one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    pub handle: sys::Agent,
    pub kind: DeviceKind,
    /// ISA-style name for GPUs ("gfx1100"), CPU model otherwise.
    pub name: String,
    pub vendor: String,
    pub product_name: Option<String>,
    /// `None` when the runtime reports none (`GPU-XX`) or the query fails.
    pub uuid: Option<String>,
    /// PCI address (BDFID with DOMAIN; domain 0 when DOMAIN is not reported).
    pub bdf: Option<Bdf>,
    pub domain: Option<u32>,
    pub compute_units: Option<u32>,
    /// Shader engines (`HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES`): scratch
    /// rings count their wave slots per engine from gfx11.
    pub shader_engines: Option<u32>,
    pub node: Option<u32>,
    /// Present for GPU agents only.
    pub limits: Option<KernelLimits>,
}

impl AgentInfo {
    /// The agent's name with its stable anchor, for messages: two boards of
    /// one target differ by PCI address (or UUID when the runtime reports
    /// no address), e.g. `gfx1100 at PCI 0000:03:00.0`.
    pub fn label(&self) -> String {
        match (&self.bdf, &self.uuid) {
            (Some(bdf), _) => format!("{} at PCI {bdf}", self.name),
            (None, Some(uuid)) => format!("{} {uuid}", self.name),
            (None, None) => self.name.clone(),
        }
    }
}

/// Parses the UUID attribute: "GPU-XX" (or empty) means the device has none.
pub fn parse_uuid(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() || trimmed.eq_ignore_ascii_case("GPU-XX") {
        None
    } else {
        Some(trimmed.to_string())
    }
}

/// Reads a NUL-terminated string out of a fixed buffer (lossy UTF-8).
pub(crate) fn c_buffer_to_string(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim().to_string()
}

/// Size of the buffer given to string attributes: the largest documented
/// one is char[64].
const STRING_ATTR_BYTES: usize = 64;

/// Raw `hsa_agent_get_info` into `T`.
///
/// # Safety
/// `T` must be exactly the type the runtime writes for `attribute` (see
/// `relaunch_hsa_sys::info`), or a larger buffer for strings.
unsafe fn get_info<T: Copy>(
    inner: &RuntimeInner,
    agent: sys::Agent,
    attribute: sys::AgentInfo,
    init: T,
) -> Result<T, sys::Status> {
    let mut value = init;
    // SAFETY: initialised runtime, agent from its own walk; the caller
    // guarantees `T` matches the attribute's type.
    let status = unsafe {
        (inner.api().agent_get_info)(agent, attribute, (&mut value as *mut T).cast::<c_void>())
    };
    if status == sys::HSA_STATUS_SUCCESS {
        Ok(value)
    } else {
        Err(status)
    }
}

fn required<T>(
    inner: &RuntimeInner,
    call: &'static str,
    result: Result<T, sys::Status>,
) -> Result<T, HsaError> {
    result.map_err(|status| HsaError::Call {
        call,
        status,
        message: inner.describe(status),
    })
}

fn optional<T>(attribute: &'static str, result: Result<T, sys::Status>) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(status) => {
            tracing::debug!(attribute, status, "agent attribute not available");
            None
        }
    }
}

pub(crate) fn query_agent(inner: &RuntimeInner, handle: sys::Agent) -> Result<AgentInfo, HsaError> {
    let text = [0u8; STRING_ATTR_BYTES];
    // SAFETY (each get_info below): the type passed matches the attribute as
    // documented in hsa.h / hsa_ext_amd.h; strings get a char[64] buffer.
    let name = required(inner, "hsa_agent_get_info(NAME)", unsafe {
        get_info(inner, handle, sys::HSA_AGENT_INFO_NAME, text)
    })?;
    let vendor = required(inner, "hsa_agent_get_info(VENDOR_NAME)", unsafe {
        get_info(inner, handle, sys::HSA_AGENT_INFO_VENDOR_NAME, text)
    })?;
    let device: u32 = required(inner, "hsa_agent_get_info(DEVICE)", unsafe {
        get_info(inner, handle, sys::HSA_AGENT_INFO_DEVICE, 0u32)
    })?;
    let kind = match device {
        sys::HSA_DEVICE_TYPE_CPU => DeviceKind::Cpu,
        sys::HSA_DEVICE_TYPE_GPU => DeviceKind::Gpu,
        sys::HSA_DEVICE_TYPE_DSP => DeviceKind::Dsp,
        other => DeviceKind::Other(other),
    };
    let product_name = optional("PRODUCT_NAME", unsafe {
        get_info(inner, handle, sys::HSA_AMD_AGENT_INFO_PRODUCT_NAME, text)
    })
    .map(|buf| c_buffer_to_string(&buf))
    .filter(|s| !s.is_empty());
    let uuid = optional("UUID", unsafe {
        get_info(inner, handle, sys::HSA_AMD_AGENT_INFO_UUID, text)
    })
    .and_then(|buf| parse_uuid(&c_buffer_to_string(&buf)));
    let domain = optional("DOMAIN", unsafe {
        get_info(inner, handle, sys::HSA_AMD_AGENT_INFO_DOMAIN, 0u32)
    });
    let bdf = optional("BDFID", unsafe {
        get_info(inner, handle, sys::HSA_AMD_AGENT_INFO_BDFID, 0u32)
    })
    .and_then(|id| Bdf::from_location_id(domain.unwrap_or(0), u64::from(id)).ok());
    let compute_units = optional("COMPUTE_UNIT_COUNT", unsafe {
        get_info(
            inner,
            handle,
            sys::HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT,
            0u32,
        )
    });
    let shader_engines = optional("NUM_SHADER_ENGINES", unsafe {
        get_info(
            inner,
            handle,
            sys::HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES,
            0u32,
        )
    });
    let node = optional("NODE", unsafe {
        get_info(inner, handle, sys::HSA_AGENT_INFO_NODE, 0u32)
    });
    let limits = if kind == DeviceKind::Gpu {
        Some(query_limits(inner, handle)?)
    } else {
        None
    };
    // Only GPUs have a meaningful BDF; CPUs may report 0.
    let bdf = if kind == DeviceKind::Gpu { bdf } else { None };
    Ok(AgentInfo {
        handle,
        kind,
        name: c_buffer_to_string(&name),
        vendor: c_buffer_to_string(&vendor),
        product_name,
        uuid,
        bdf,
        domain,
        compute_units,
        shader_engines,
        node,
        limits,
    })
}

fn query_limits(inner: &RuntimeInner, agent: sys::Agent) -> Result<KernelLimits, HsaError> {
    macro_rules! u32_attr {
        ($attr:ident) => {
            required(
                inner,
                concat!("hsa_agent_get_info(", stringify!($attr), ")"),
                unsafe {
                    // SAFETY: the attribute is documented as uint32_t.
                    get_info(inner, agent, sys::$attr, 0u32)
                },
            )?
        };
    }
    let workgroup_max_dim = required(inner, "hsa_agent_get_info(WORKGROUP_MAX_DIM)", unsafe {
        // SAFETY: documented as uint16_t[3].
        get_info(
            inner,
            agent,
            sys::HSA_AGENT_INFO_WORKGROUP_MAX_DIM,
            [0u16; 3],
        )
    })?;
    let grid = required(inner, "hsa_agent_get_info(GRID_MAX_DIM)", unsafe {
        // SAFETY: documented as hsa_dim3_t.
        get_info(
            inner,
            agent,
            sys::HSA_AGENT_INFO_GRID_MAX_DIM,
            sys::Dim3::default(),
        )
    })?;
    Ok(KernelLimits {
        wavefront_size: u32_attr!(HSA_AGENT_INFO_WAVEFRONT_SIZE),
        workgroup_max_dim,
        workgroup_max_size: u32_attr!(HSA_AGENT_INFO_WORKGROUP_MAX_SIZE),
        grid_max_dim: [grid.x, grid.y, grid.z],
        grid_max_size: u32_attr!(HSA_AGENT_INFO_GRID_MAX_SIZE),
        queues_max: u32_attr!(HSA_AGENT_INFO_QUEUES_MAX),
        queue_min_size: u32_attr!(HSA_AGENT_INFO_QUEUE_MIN_SIZE),
        queue_max_size: u32_attr!(HSA_AGENT_INFO_QUEUE_MAX_SIZE),
        queue_type: u32_attr!(HSA_AGENT_INFO_QUEUE_TYPE),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_board_by_its_anchor() {
        let mut a = AgentInfo {
            handle: sys::Agent { handle: 1 },
            kind: DeviceKind::Gpu,
            name: "gfx1100".into(),
            vendor: "AMD".into(),
            product_name: None,
            uuid: None,
            bdf: None,
            domain: None,
            compute_units: None,
            shader_engines: None,
            node: None,
            limits: None,
        };
        assert_eq!(a.label(), "gfx1100");
        a.uuid = Some("GPU-0123456789abcdef".into());
        assert_eq!(a.label(), "gfx1100 GPU-0123456789abcdef");
        a.bdf = Some(Bdf {
            domain: 0,
            bus: 3,
            device: 0,
            function: 0,
        });
        assert_eq!(a.label(), "gfx1100 at PCI 0000:03:00.0");
    }
}
