//! WAIT_REG_MEM on memory: the CP polls a dword until `value & mask`
//! compares true with the reference. relaunch's stream-ordered IBs wait on
//! a gate word another queue (a HIP stream) writes; the simulated CP polls
//! it for real, so a gate nobody opens shows up as a timeout, not a hang.
//! The encoding is checked like every other packet: memory space memory,
//! operation wait, a defined compare function, a 4-byte aligned address.

use std::time::{Duration, Instant};

use relaunch_facts::packet::wait_reg_mem;

use super::Pm4ErrorKind;
use crate::memory::DeviceMemory;

/// How long the simulated CP polls before it reports the wait as stuck.
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(20);

fn compare(function: u32, value: u32, reference: u32) -> Option<bool> {
    Some(match function {
        1 => value < reference,
        2 => value <= reference,
        3 => value == reference,
        4 => value != reference,
        5 => value >= reference,
        6 => value > reference,
        _ => return None,
    })
}

const FUNCTIONS: [&str; 8] = ["always", "<", "<=", "==", "!=", ">=", ">", "reserved"];

/// Poll `address` until the wait is satisfied.
pub(crate) fn wait(
    mem: &DeviceMemory,
    control: u32,
    address: u64,
    reference: u32,
    mask: u32,
    poll_interval: u32,
) -> Result<(), Pm4ErrorKind> {
    let bad = |what: String| Err(Pm4ErrorKind::Unsupported(format!("WAIT_REG_MEM {what}")));
    let function = wait_reg_mem::FUNCTION.get(control);
    if wait_reg_mem::MEM_SPACE.get(control) != 1 {
        return bad(format!(
            "on a register (MEM_SPACE {}); relaunch waits on memory only",
            wait_reg_mem::MEM_SPACE.get(control)
        ));
    }
    if wait_reg_mem::OPERATION.get(control) != 0 {
        return bad(format!(
            "with OPERATION {} (only 0, wait, applies to memory)",
            wait_reg_mem::OPERATION.get(control)
        ));
    }
    if compare(function, 0, 0).is_none() {
        return bad(format!(
            "with compare function {function} ({}): a wait needs a comparison",
            FUNCTIONS[function as usize & 7]
        ));
    }
    if poll_interval == 0 {
        return bad("with poll interval 0".into());
    }
    if address % 4 != 0 {
        return bad(format!("address {address:#x} is not 4-byte aligned"));
    }
    let start = Instant::now();
    loop {
        let value = mem.read_u32(address)? & mask;
        if compare(function, value, reference) == Some(true) {
            return Ok(());
        }
        if start.elapsed() > WAIT_TIMEOUT {
            return Err(Pm4ErrorKind::WaitTimeout(format!(
                "WAIT_REG_MEM on {address:#x} still sees {value:#x} (mask {mask:#x}) after {:?}, \
                 waiting for {} {reference:#x}: nobody opened the gate",
                WAIT_TIMEOUT, FUNCTIONS[function as usize]
            )));
        }
        std::thread::sleep(Duration::from_micros(20));
    }
}
