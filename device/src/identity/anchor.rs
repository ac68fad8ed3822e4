//! The two stable anchors of a GPU: its PCI address (`Bdf`) and, when the
//! device reports a real one, its ROCr-style UUID (`GpuUuid`).

use std::fmt;

/// A PCI address: domain, bus, device (0-31), function (0-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Bdf {
    pub domain: u32,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

/// How a BDF was written in a selector: `0000:66:00.0` or `66:00.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BdfForm {
    Full,
    Short,
}

impl Bdf {
    /// A BDF from its parts; device above 31 or function above 7 is refused.
    pub fn new(domain: u32, bus: u8, device: u8, function: u8) -> Result<Self, String> {
        if device > 0x1f {
            return Err(format!("PCI device number {device:#x} is above 0x1f"));
        }
        if function > 7 {
            return Err(format!("PCI function number {function} is above 7"));
        }
        Ok(Bdf {
            domain,
            bus,
            device,
            function,
        })
    }

    /// From KFD `location_id` / HSA `BDFID`: bus in bits 15:8, device in
    /// 7:3, function in 2:0.
    pub fn from_location_id(domain: u32, location_id: u64) -> Result<Self, String> {
        if location_id > 0xffff {
            return Err(format!(
                "location id {location_id:#x} does not fit in 16 bits (bus<<8 | device<<3 | function)"
            ));
        }
        let id = location_id as u16;
        Ok(Bdf {
            domain,
            bus: (id >> 8) as u8,
            device: ((id >> 3) & 0x1f) as u8,
            function: (id & 7) as u8,
        })
    }

    /// The 16-bit `location_id` / `BDFID` form.
    pub fn location_id(&self) -> u16 {
        (u16::from(self.bus) << 8) | (u16::from(self.device) << 3) | u16::from(self.function)
    }

    /// Parse `dddd:bb:dd.f` (domain 1-8 hex digits) or `bb:dd.f` (domain 0).
    pub fn parse(text: &str) -> Result<(Self, BdfForm), String> {
        let (head, function) = text
            .rsplit_once('.')
            .ok_or_else(|| format!("{text:?} has no `.function` part"))?;
        let parts: Vec<&str> = head.split(':').collect();
        let (domain, bus, device, form) = match parts.as_slice() {
            [bus, device] => ("0", *bus, *device, BdfForm::Short),
            [domain, bus, device] => (*domain, *bus, *device, BdfForm::Full),
            _ => {
                return Err(format!(
                    "{text:?} is neither domain:bus:device.function nor bus:device.function"
                ))
            }
        };
        let domain = hex_field(domain, 1, 8, "domain")?;
        let bus = hex_field(bus, 2, 2, "bus")?;
        let device = hex_field(device, 2, 2, "device")?;
        let function = hex_field(function, 1, 1, "function")?;
        let bdf = Bdf::new(domain, bus as u8, device as u8, function as u8)?;
        Ok((bdf, form))
    }
}

fn hex_field(text: &str, min: usize, max: usize, what: &str) -> Result<u32, String> {
    let ok_len = text.len() >= min && text.len() <= max;
    if !ok_len || !text.chars().all(|c| c.is_ascii_hexdigit()) {
        let digits = if min == max {
            format!("{min}")
        } else {
            format!("{min}-{max}")
        };
        return Err(format!("PCI {what} {text:?} must be {digits} hex digit(s)"));
    }
    u32::from_str_radix(text, 16).map_err(|e| format!("PCI {what} {text:?}: {e}"))
}

impl fmt::Display for Bdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

/// A real device UUID as ROCr reports it: `GPU-` and hex digits (kept in
/// lower case). The placeholder `GPU-XX` (no UUID) is never a `GpuUuid`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GpuUuid(String);

impl GpuUuid {
    /// From KFD `unique_id`; 0 means the device has none. ROCr prints it as
    /// 16 lower-case hex digits after `GPU-`.
    pub fn from_unique_id(unique_id: u64) -> Option<Self> {
        (unique_id != 0).then(|| GpuUuid(format!("GPU-{unique_id:016x}")))
    }

    /// From a runtime-reported string (HSA `AMD_AGENT_INFO_UUID`): `None` for
    /// placeholders such as `GPU-XX`, empty strings, or anything not hex.
    pub fn from_reported(text: &str) -> Option<Self> {
        Self::parse(text.trim_end_matches('\0').trim()).ok()
    }

    /// Parse `GPU-` followed by 1-32 hex digits (case-insensitive).
    pub fn parse(text: &str) -> Result<Self, String> {
        let hex = text
            .strip_prefix("GPU-")
            .or_else(|| text.strip_prefix("gpu-"))
            .ok_or_else(|| format!("{text:?} does not start with `GPU-`"))?;
        if hex.eq_ignore_ascii_case("xx") {
            return Err(format!(
                "{text:?} is the placeholder a device without a UUID reports; \
                 anchor such a device by PCI address (bdf:...)"
            ));
        }
        if hex.is_empty() || hex.len() > 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "{text:?} must be `GPU-` followed by 1-32 hex digits"
            ));
        }
        Ok(GpuUuid(format!("GPU-{}", hex.to_ascii_lowercase())))
    }

    /// The canonical text, e.g. `GPU-43390a851e296ee5`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for GpuUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The gfx processor name for a KFD `gfx_target_version` (decimal
/// major*10000 + minor*100 + stepping, e.g. 110501 -> gfx1151, 90010 -> gfx90a).
pub fn gfx_name_from_target_version(version: u64) -> Result<String, String> {
    let major = version / 10000;
    let minor = (version / 100) % 100;
    let stepping = version % 100;
    if major == 0 || minor > 15 || stepping > 15 {
        return Err(format!(
            "gfx_target_version {version} is not major*10000 + minor*100 + stepping \
             with minor and stepping below 16"
        ));
    }
    Ok(format!("gfx{major}{minor:x}{stepping:x}"))
}
