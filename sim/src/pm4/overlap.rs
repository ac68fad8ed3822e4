//! IBs whose PM4-IB packet has no BARRIER bit: what the model can run of
//! them without modelling the overlap with the packet before.

use relaunch_facts::body::Packet;
use relaunch_facts::packet::release_data;

use super::cp::Cp;
use super::{execute_ib, Pm4Error, Pm4ErrorKind};
use crate::device::SimDevice;
use crate::ordering::{IbEnd, IbLocation};
use crate::trace::RangeSet;

/// Execute an IB whose PM4-IB packet has no BARRIER bit (ROCr's
/// `ExecutePM4` sends its cache invalidations so): it may start while the
/// packets before it still run. The model runs packets one after another,
/// so it takes such an IB only where the overlap cannot matter: nothing in
/// it reads or writes memory (cache actions, waits, NOPs, register
/// writes), and its cache actions are not trusted to release the earlier
/// packets' writes (`carried` stays unreleased), which they may precede.
pub fn execute_overlapping_ib(
    device: &SimDevice,
    at: IbLocation,
    dwords: &[u32],
    carried: &RangeSet,
    host_observes: bool,
) -> Result<IbEnd, Pm4Error> {
    for (index, item) in Cp::new(dwords, device.family()).enumerate() {
        // A malformed packet is reported by `execute_ib` below.
        let Ok((dword, packet)) = item else { break };
        let memory = match packet {
            Packet::Nop { .. } | Packet::SetShReg { .. } | Packet::AcquireMem { .. } => false,
            Packet::EventWrite { address, .. } => address.is_some(),
            Packet::ReleaseMem { data_cntl, .. } => {
                release_data::DATA_SEL.get(data_cntl) != release_data::DATA_SEL_NONE
            }
            _ => true,
        };
        let unreleased_seen = host_observes && !carried.is_empty();
        if memory || unreleased_seen {
            let what = if memory {
                format!("its {} accesses memory", packet.name())
            } else {
                "the host observes it while earlier packets' writes are unreleased".to_string()
            };
            return Err(Pm4Error {
                at,
                packet: index,
                dword,
                dispatch: None,
                kind: Box::new(Pm4ErrorKind::Unsupported(format!(
                    "an IB whose PM4-IB packet has no BARRIER bit, so it may overlap the \
                     packet before it, where {what}: that overlap is not modelled; set BARRIER"
                ))),
            });
        }
    }
    let mut end = execute_ib(device, at, dwords, &RangeSet::new(), host_observes)?;
    end.unreleased.extend(carried);
    Ok(end)
}
