//! Installing a lane's program on an HSA queue: a PM4 IB (segments in
//! executable host memory, one vendor PM4-IB packet each) or a public-AQL
//! lane (prebuilt kernel-dispatch packet templates). Either way the
//! kernargs sit in one retained block patched in place between replays.

use relaunch_device::hsa::{pm4_ib_packet, AllocFlags, Allocation, AqlPacket};
use relaunch_encoders::{
    AqlBuilder, EncodeError, IbBuilder, KernargLayout, ScratchNeed, ScratchPlan, ScratchRing,
};
use relaunch_hsa_sys as sys;

use super::kernargs::{KernargBlock, Site};
use super::{HsaBackend, HsaBackendError, HsaIb, PacketSlot, SEGMENT_ALIGN};

/// What an HSA queue installs: a lane encoded as a PM4 IB, or lowered to
/// public-AQL kernel-dispatch packets.
pub enum HsaProgram {
    /// Boxed: a PM4 builder carries its encoder state (about 2 KiB).
    Pm4(Box<IbBuilder>),
    Aql(AqlBuilder),
}

impl From<IbBuilder> for HsaProgram {
    fn from(b: IbBuilder) -> Self {
        HsaProgram::Pm4(Box::new(b))
    }
}

impl From<AqlBuilder> for HsaProgram {
    fn from(b: AqlBuilder) -> Self {
        HsaProgram::Aql(b)
    }
}

impl HsaProgram {
    /// The lane's label (errors name its IB by it).
    pub fn label(&self) -> Option<&str> {
        match self {
            HsaProgram::Pm4(b) => b.label(),
            HsaProgram::Aql(b) => b.label(),
        }
    }

    pub fn set_label(&mut self, label: impl Into<String>) {
        match self {
            HsaProgram::Pm4(b) => b.set_label(label),
            HsaProgram::Aql(b) => b.set_label(label),
        }
    }

    /// An estimate of the lane's work for lane placement: IB dwords, or
    /// for AQL 16 dwords a packet (what the packet processor reads).
    pub fn work(&self) -> u64 {
        match self {
            HsaProgram::Pm4(b) => b.dwords() as u64,
            HsaProgram::Aql(b) => 16 * b.packet_count() as u64,
        }
    }
}

/// Alignment of a scratch backing's base (the scratch base registers hold
/// bits 47:8).
const SCRATCH_ALIGN: u64 = 256;

impl HsaBackend {
    /// Host memory for a program's kernarg image (none when it has no
    /// kernargs) and the address the encoder bakes in.
    fn kernarg_block(
        &self,
        layout: KernargLayout,
    ) -> Result<(Option<(Allocation, usize)>, u64), HsaBackendError> {
        if layout.bytes == 0 {
            return Ok((None, 0));
        }
        let bytes =
            usize::try_from(layout.bytes).map_err(|_| HsaBackendError::KernargTooLarge {
                bytes: layout.bytes,
                align: layout.align,
            })?;
        let (mem, offset) = self.host_block(bytes, layout.align as usize, false)?;
        let base = mem.addr() + offset as u64;
        Ok((Some((mem, offset)), base))
    }

    /// Device memory on this queue's GPU for an IB's scratch backing
    /// (`ScratchPlan`: slots by the GPU's compute units and shader
    /// engines), and the ring the IB programs for it. Freed with the IB.
    fn scratch_backing(
        &self,
        builder: &IbBuilder,
        need: ScratchNeed,
    ) -> Result<(Allocation, ScratchRing), HsaBackendError> {
        let gpu = &self.cold.gpu;
        let family = builder.family();
        let unknown = |what: &str| EncodeError::Scratch {
            reason: format!(
                "{} does not report its {what}, which the scratch backing is sized by",
                gpu.label()
            ),
        };
        let cus = gpu.compute_units.ok_or_else(|| unknown("compute units"))?;
        let engines = match family.scratch().waves_per_engine {
            true => gpu
                .shader_engines
                .ok_or_else(|| unknown("shader engines"))?,
            false => 1,
        };
        let plan = ScratchPlan::new(family, need, cus, engines)?;
        let pool = self.cold.runtime.device_pool(gpu)?;
        // COMPUTE_DISPATCH_SCRATCH_BASE holds bits 47:8: a 256-byte aligned base.
        let len =
            usize::try_from(plan.bytes + SCRATCH_ALIGN).map_err(|_| EncodeError::Scratch {
                reason: format!("{} bytes of scratch do not fit this host", plan.bytes),
            })?;
        let mem = self
            .cold
            .runtime
            .allocate(&pool, len, AllocFlags { executable: false })?;
        let base = mem.addr().next_multiple_of(SCRATCH_ALIGN);
        let ring = plan.at(base)?;
        tracing::debug!(
            bytes = plan.bytes,
            slots = plan.slots,
            wave_bytes = plan.wave_bytes,
            "scratch backing allocated"
        );
        Ok((mem, ring))
    }

    pub(super) fn install_pm4(&mut self, builder: IbBuilder) -> Result<HsaIb, HsaBackendError> {
        let layout = builder.kernarg_layout();
        let label = builder.label().map(str::to_string);
        let scratch = match builder.scratch_need() {
            Some(need) => Some(self.scratch_backing(&builder, need)?),
            None => None,
        };
        let (kernargs, base) = self.kernarg_block(layout)?;
        let encoded = builder.finish_with_scratch(base, scratch.as_ref().map(|(_, r)| r))?;
        let segments: Vec<&[u32]> = encoded.segments.iter().map(|s| &s.dwords[..]).collect();
        crate::ib_dump::dump(label.as_deref(), &segments);
        let sites = encoded
            .sites
            .iter()
            .map(|s| (s.kernarg_offset, s.kernarg_len));
        let own = !encoded.kernargs_shared;
        let kernargs = placed(kernargs, &encoded.kernarg_image, sites, own)?;
        let starts: Vec<usize> = encoded
            .segments
            .iter()
            .scan(0usize, |at, s| {
                let start = *at;
                *at = (start + s.dwords.len() * 4).next_multiple_of(SEGMENT_ALIGN);
                Some(start)
            })
            .collect();
        let total = encoded
            .segments
            .last()
            .map_or(4, |s| starts[starts.len() - 1] + s.dwords.len() * 4);
        if encoded.segments.len() > self.ring as usize {
            return Err(HsaBackendError::RingTooSmall {
                segments: encoded.segments.len(),
                ring: self.ring,
            });
        }
        let (mut code, offset) = self.host_block(total, SEGMENT_ALIGN, true)?;
        let mut packets = Vec::with_capacity(encoded.segments.len());
        for (segment, start) in encoded.segments.iter().zip(&starts) {
            let bytes: Vec<u8> = segment
                .dwords
                .iter()
                .flat_map(|d| d.to_le_bytes())
                .collect();
            code.write(offset + start, &bytes)?;
            let addr = code.addr() + (offset + start) as u64;
            let packet = pm4_ib_packet(addr, segment.dwords.len() as u32, sys::Signal::default())?;
            packets.push(PacketSlot(AqlPacket::Pm4Ib(packet).words()));
        }
        let dwords = encoded.total_dwords();
        tracing::debug!(
            dispatches = encoded.dispatch_count(),
            segments = packets.len(),
            dwords,
            "IB installed"
        );
        // The queue reads the copies in `code` and the kernarg block;
        // patching needs only the sites (it writes the block directly), so
        // the encoder's host copies go.
        drop(encoded);
        Ok(HsaIb {
            packets,
            kernargs,
            dwords,
            code: Some(code),
            scratch: scratch.map(|(mem, _)| mem),
            batch: false,
            label: label.map(std::sync::Arc::from),
        })
    }

    /// A public-AQL lane: its kernarg image in one block, its packets kept
    /// as prebuilt templates (kernarg addresses filled) that a submit
    /// writes into the ring as one batch.
    pub(super) fn install_aql(&mut self, builder: AqlBuilder) -> Result<HsaIb, HsaBackendError> {
        let layout = builder.kernarg_layout();
        let label = builder.label().map(str::to_string);
        if builder.packet_count() > self.ring as usize {
            return Err(HsaBackendError::RingTooSmall {
                segments: builder.packet_count(),
                ring: self.ring,
            });
        }
        let (kernargs, base) = self.kernarg_block(layout)?;
        let encoded = builder.finish(base)?;
        let sites = encoded
            .sites
            .iter()
            .map(|s| (s.kernarg_offset, s.kernarg_len));
        let kernargs = placed(kernargs, &encoded.kernarg_image, sites, true)?;
        let packets: Vec<PacketSlot> = encoded.packets.into_iter().map(PacketSlot).collect();
        tracing::debug!(
            label = label.as_deref().unwrap_or("-"),
            packets = packets.len(),
            "public-AQL lane installed"
        );
        Ok(HsaIb {
            packets,
            kernargs,
            dwords: 0,
            code: None,
            scratch: None,
            batch: true,
            label: label.map(std::sync::Arc::from),
        })
    }
}

/// The kernarg image written into its block, and the block with the patch
/// sites of its dispatches (`(offset, len)` in the image) the IB keeps: what
/// the PM4 and the AQL installs share.
fn placed(
    mut block: Option<(Allocation, usize)>,
    image: &[u8],
    sites: impl Iterator<Item = (u32, u32)>,
    patchable: bool,
) -> Result<KernargBlock, HsaBackendError> {
    if let Some((mem, offset)) = block.as_mut() {
        mem.write(*offset, image)?;
    }
    let sites = sites.map(|(offset, len)| Site { offset, len }).collect();
    Ok(KernargBlock::new(block, sites, patchable)?)
}
