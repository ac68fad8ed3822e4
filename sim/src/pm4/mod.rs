//! Executing one IB: read it with the CP's own parser (`cp`, on the packet
//! and register tables of `relaunch-facts`: whoever wrote the IB, the
//! hardware's rules apply), keep the SH register file, check the
//! programmed state at every DISPATCH_DIRECT by what the hardware does
//! with it (see `check`, `rules`), run the twins of dispatches (and the CP DMA transfers,
//! `dma`) between two waits in a seeded random order, and feed everything
//! to the ordering model.
//!
//! The register file starts empty at every IB: a retained IB must program
//! everything its dispatches use, never inherit state from an earlier one.

mod check;
pub mod cp;
mod dispatch_packet;
mod dma;
mod overlap;
pub use overlap::execute_overlapping_ib;
mod rules;
pub mod scratch;
mod strict;
pub(crate) use strict::ib_control as check_ib_control;
pub mod timestamp;
mod wait_mem;

use std::sync::Arc;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use relaunch_facts::packet::{event, release_cntl, release_data, write_data};

use crate::device::{KernelEntry, SimDevice};
use crate::isa::runner::{self, NoRunner, Runner};
use crate::memory::VmFault;
use crate::ordering::{CacheOps, DispatchRef, IbEnd, IbLocation, OrderingModel};
use crate::trace::RangeSet;
use crate::twins::{DispatchContext, KernelFault};

pub use check::StateError;
use cp::{Cp, ParseError};
use relaunch_facts::body::Packet;

/// What went wrong executing an IB.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Pm4ErrorKind {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("{0} is not modelled by the simulated device")]
    Unsupported(String),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("no host twin is registered for kernel {0}: register one (twins::register_twin)")]
    NoTwin(String),
    #[error("kernel {kernel} faulted: {fault}")]
    Kernel { kernel: String, fault: KernelFault },
    #[error(transparent)]
    Vm(#[from] VmFault),
    #[error("{0}")]
    WaitTimeout(String),
}

/// An IB execution error with its location.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("queue {}, AQL packet {}, PM4 packet {packet} (dword {dword}){}: {kind}",
    .at.queue, .at.aql_packet,
    .dispatch.map(|d| format!(", dispatch {d}")).unwrap_or_default())]
pub struct Pm4Error {
    pub at: IbLocation,
    /// Index of the PM4 packet within the IB.
    pub packet: usize,
    /// Dword offset of that packet.
    pub dword: usize,
    pub dispatch: Option<usize>,
    /// Boxed: the kinds carry messages and faults, the Ok path stays small.
    pub kind: Box<Pm4ErrorKind>,
}

impl Pm4Error {
    /// True when the cause is a GPU page fault (kernel or CP access).
    /// The VM fault behind this error, if it is one.
    pub fn vm_fault(&self) -> Option<&VmFault> {
        match &*self.kind {
            Pm4ErrorKind::Vm(f)
            | Pm4ErrorKind::Kernel {
                fault: KernelFault::Vm(f),
                ..
            } => Some(f),
            _ => None,
        }
    }

    pub fn is_vm_fault(&self) -> bool {
        matches!(
            *self.kind,
            Pm4ErrorKind::Vm(_)
                | Pm4ErrorKind::Kernel {
                    fault: KernelFault::Vm(_),
                    ..
                }
        )
    }
}

/// A dispatch waiting for its group to be run.
struct Pending {
    packet: usize,
    dword: usize,
    dispatch: usize,
    kernel: Arc<KernelEntry>,
    runner: Runner,
    ctx: DispatchContext,
    /// Modelled clock ticks it takes (`timestamp`).
    ticks: u64,
}

/// A DMA_DATA waiting for its group, run among the dispatches (`dma`).
struct PendingTransfer {
    packet: usize,
    dword: usize,
    /// Index among the IB's transfers (reported in violations).
    index: usize,
    transfer: dma::Transfer,
    trace: crate::trace::AccessTrace,
}

/// Program-ordered events since the last wait.
enum Event {
    Dispatch(Box<Pending>),
    Transfer(Box<PendingTransfer>),
    Acquire(CacheOps),
    /// RELEASE_MEM: cache ops plus an optional end-of-pipe data write.
    Release(CacheOps, Option<(u64, Vec<u8>, usize, usize)>),
    /// RELEASE_MEM DATA_SEL 3: the modelled clock, read in program order
    /// (address, packet, dword).
    Timestamp(CacheOps, u64, usize, usize),
}

/// Execute `dwords` as one IB on `device`, with writes left unreleased by
/// the queue's earlier packets (`carried`). `host_observes`: the packet's
/// completion tells the host the work is done, so everything must be
/// released by the end. Violations are returned, not raised: the caller
/// decides whether they fail the packet.
pub fn execute_ib(
    device: &SimDevice,
    at: IbLocation,
    dwords: &[u32],
    carried: &RangeSet,
    host_observes: bool,
) -> Result<IbEnd, Pm4Error> {
    let seed = device.config().seed
        ^ at.queue.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ at.aql_packet.rotate_left(32);
    let mut run = IbRun {
        device,
        at,
        rng: ChaCha8Rng::seed_from_u64(seed),
        regs: check::ShFile::new(),
        model: OrderingModel::new(at),
        events: Vec::new(),
        dispatches: 0,
        transfers: 0,
    };
    run.model.carry_in(carried);
    for (index, item) in Cp::new(dwords, device.family()).enumerate() {
        let (dword, packet) = item.map_err(|e| run.error(index, e.at(), None, e.into()))?;
        device.cp.pm4_packet(
            matches!(packet, Packet::DispatchDirect { .. }),
            matches!(
                packet,
                Packet::WaitRegMem { .. } | Packet::EventWrite { .. }
            ),
        );
        run.packet(index, dword, packet)?;
    }
    run.flush()?;
    device.cp.ib_floor(run.model.floor());
    Ok(run.model.finish_parts(host_observes))
}

struct IbRun<'d> {
    device: &'d SimDevice,
    at: IbLocation,
    rng: ChaCha8Rng,
    regs: check::ShFile,
    model: OrderingModel,
    events: Vec<Event>,
    dispatches: usize,
    transfers: usize,
}

impl IbRun<'_> {
    fn error(
        &self,
        packet: usize,
        dword: usize,
        dispatch: Option<usize>,
        kind: Pm4ErrorKind,
    ) -> Pm4Error {
        Pm4Error {
            at: self.at,
            packet,
            dword,
            dispatch,
            kind: Box::new(kind),
        }
    }

    fn packet(&mut self, index: usize, dword: usize, packet: Packet<'_>) -> Result<(), Pm4Error> {
        let unsupported = |s: &Self, what: String| {
            Err(s.error(index, dword, None, Pm4ErrorKind::Unsupported(what)))
        };
        match packet {
            Packet::Nop { .. } => Ok(()),
            Packet::SetShReg { offset, values } => {
                self.regs.write(offset, values);
                Ok(())
            }
            Packet::DispatchDirect { groups, initiator } => {
                self.dispatch(index, dword, groups, initiator)
            }
            Packet::EventWrite {
                event_type,
                event_index,
                address,
            } => {
                if event_type != event::CS_PARTIAL_FLUSH || address.is_some() {
                    return unsupported(
                        self,
                        format!(
                            "EVENT_WRITE of event {}",
                            event::name(event_type)
                                .map_or(format!("{event_type:#x}"), String::from)
                        ),
                    );
                }
                if event_index != event::INDEX_PARTIAL_FLUSH {
                    return unsupported(
                        self,
                        format!("CS_PARTIAL_FLUSH with EVENT_INDEX {event_index} (expected 4)"),
                    );
                }
                self.flush()?;
                self.model.wait();
                Ok(())
            }
            Packet::AcquireMem {
                coher_cntl,
                coher_size,
                coher_base,
                gcr_cntl,
                ..
            } => match strict::acquire_mem(coher_cntl, gcr_cntl, coher_base, coher_size) {
                Ok(ops) => {
                    self.device.cp.ib_cache(ops);
                    self.events.push(Event::Acquire(ops));
                    Ok(())
                }
                Err(what) => unsupported(self, what),
            },
            Packet::ReleaseMem {
                event_cntl,
                data_cntl,
                address,
                data,
                ..
            } => self.release_mem(index, dword, event_cntl, data_cntl, address, data),
            Packet::WriteData {
                control,
                address,
                data,
            } => {
                // DST_SEL 5 = memory; anything else (registers, GDS) is refused.
                let dst = write_data::DST_SEL.get(control);
                if dst != 5 || write_data::WR_ONE_ADDR.get(control) != 0 {
                    return unsupported(self, format!("WRITE_DATA with control {control:#010x}"));
                }
                let bytes: Vec<u8> = data.iter().flat_map(|d| d.to_le_bytes()).collect();
                // The CP writes when it reaches the packet: earlier dispatches
                // may or may not have run, later ones see it. Running the
                // group first is one valid interleaving.
                self.flush()?;
                // Another queue or the host may wait on this word.
                crate::ordering::clock::release_to_memory();
                self.cp_write(address, &bytes, index, dword)
            }
            Packet::WaitRegMem {
                control,
                address,
                reference,
                mask,
                poll_interval,
            } => {
                // The CP stops here until the wait is satisfied: what came
                // before may have run, what comes after has not.
                self.flush()?;
                wait_mem::wait(
                    &self.device.memory,
                    control,
                    address,
                    reference,
                    mask,
                    poll_interval,
                )
                .map_err(|k| self.error(index, dword, None, k))?;
                // Whoever wrote the word happened before what follows.
                crate::ordering::clock::acquire_from_memory();
                Ok(())
            }
            Packet::DmaData {
                control,
                src,
                dst,
                command,
            } => {
                let transfer = match dma::check(control, src, dst, command) {
                    Ok(t) => t,
                    Err(what) => return unsupported(self, what),
                };
                let n = self.transfers;
                self.transfers += 1;
                tracing::trace!(transfer = n, ?transfer, "sim DMA_DATA");
                self.events.push(Event::Transfer(Box::new(PendingTransfer {
                    packet: index,
                    dword,
                    index: n,
                    transfer,
                    trace: Default::default(),
                })));
                Ok(())
            }
            other @ (Packet::IndirectBuffer { .. } | Packet::CopyData { .. }) => {
                unsupported(self, other.name().to_string())
            }
        }
    }

    fn release_mem(
        &mut self,
        index: usize,
        dword: usize,
        event_cntl: u32,
        data_cntl: u32,
        address: u64,
        data: u64,
    ) -> Result<(), Pm4Error> {
        let ev = relaunch_facts::packet::event_cntl::EVENT_TYPE.get(event_cntl);
        if !matches!(
            ev,
            event::CACHE_FLUSH_AND_INV_TS_EVENT | event::BOTTOM_OF_PIPE_TS | event::CS_DONE
        ) {
            return Err(self.error(
                index,
                dword,
                None,
                Pm4ErrorKind::Unsupported(format!("RELEASE_MEM with event {ev:#x}")),
            ));
        }
        let ops = CacheOps {
            glk_inv: false,
            glv_inv: release_cntl::GCR_GLV_INV.get(event_cntl) != 0,
            gl1_inv: release_cntl::GCR_GL1_INV.get(event_cntl) != 0,
            gl2_inv: release_cntl::GCR_GL2_INV.get(event_cntl) != 0,
            gl2_wb: release_cntl::GCR_GL2_WB.get(event_cntl) != 0,
            gli_inv: false,
        };
        self.device.cp.ib_cache(ops);
        let bytes = match release_data::DATA_SEL.get(data_cntl) {
            release_data::DATA_SEL_NONE => None,
            release_data::DATA_SEL_DATA32 => Some((data as u32).to_le_bytes().to_vec()),
            release_data::DATA_SEL_DATA64 => Some(data.to_le_bytes().to_vec()),
            timestamp::DATA_SEL_TIMESTAMP => {
                timestamp::check(data_cntl, address).map_err(|why| {
                    self.error(index, dword, None, Pm4ErrorKind::Unsupported(why))
                })?;
                self.events
                    .push(Event::Timestamp(ops, address, index, dword));
                return Ok(());
            }
            other => {
                return Err(self.error(
                    index,
                    dword,
                    None,
                    Pm4ErrorKind::Unsupported(format!("RELEASE_MEM DATA_SEL {other}")),
                ))
            }
        };
        let write = bytes.map(|b| (address, b, index, dword));
        self.events.push(Event::Release(ops, write));
        Ok(())
    }

    fn dispatch(
        &mut self,
        index: usize,
        dword: usize,
        groups: [u32; 3],
        initiator: u32,
    ) -> Result<(), Pm4Error> {
        let n = self.dispatches;
        self.dispatches += 1;
        let checked = check::dispatch_state(self.device, &self.regs, groups, initiator)
            .map_err(|kind| self.error(index, dword, Some(n), kind))?;
        let runner = select_runner(self.device, &checked.kernel, &checked.ctx).map_err(|e| {
            let kind = match e {
                NoRunner::NoTwin(s) => Pm4ErrorKind::NoTwin(s),
                other => Pm4ErrorKind::Kernel {
                    kernel: checked.kernel.symbol.clone(),
                    fault: KernelFault::Interpreter(other.to_string()),
                },
            };
            self.error(index, dword, Some(n), kind)
        })?;
        tracing::trace!(dispatch = n, kernel = %checked.kernel.symbol, "sim DISPATCH_DIRECT");
        self.events.push(Event::Dispatch(Box::new(Pending {
            packet: index,
            dword,
            dispatch: n,
            kernel: checked.kernel,
            runner,
            ctx: checked.ctx,
            ticks: timestamp::dispatch_ticks(groups),
        })));
        Ok(())
    }

    /// Run the pending dispatches in a seeded random order, then feed every
    /// pending event to the model in program order. Called at each wait, at
    /// WRITE_DATA and at the end; the model's notion of the unordered group
    /// only resets at a wait.
    fn flush(&mut self) -> Result<(), Pm4Error> {
        let mut events = std::mem::take(&mut self.events);
        let mut order: Vec<usize> = events
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, Event::Dispatch(_) | Event::Transfer(_)))
            .map(|(i, _)| i)
            .collect();
        order.shuffle(&mut self.rng);
        for i in order {
            match &mut events[i] {
                Event::Dispatch(p) => {
                    let p = &mut **p;
                    p.runner
                        .run(&mut p.ctx, &self.device.memory, &p.kernel)
                        .map_err(|fault| {
                            let kind = Pm4ErrorKind::Kernel {
                                kernel: p.kernel.symbol.clone(),
                                fault,
                            };
                            self.error(p.packet, p.dword, Some(p.dispatch), kind)
                        })?;
                }
                Event::Transfer(t) => {
                    t.transfer
                        .run(&self.device.memory, &mut t.trace)
                        .map_err(|f| self.error(t.packet, t.dword, None, f.into()))?;
                }
                _ => {}
            }
        }
        for e in &events {
            match e {
                Event::Dispatch(p) => {
                    timestamp::advance(p.ticks);
                    self.model.dispatch(DispatchRef {
                        pm4_packet: p.packet,
                        dispatch: p.dispatch,
                        kernel: &p.kernel.symbol,
                        trace: &p.ctx.trace,
                    })
                }
                Event::Transfer(t) => {
                    timestamp::advance(timestamp::transfer_ticks(t.transfer.bytes()));
                    self.model.dispatch(DispatchRef {
                        pm4_packet: t.packet,
                        dispatch: t.index,
                        kernel: t.transfer.name(),
                        trace: &t.trace,
                    })
                }
                Event::Timestamp(ops, addr, packet, dword) => {
                    self.model.release(*ops);
                    let now = timestamp::read().to_le_bytes();
                    self.cp_write(*addr, &now, *packet, *dword)?;
                }
                Event::Acquire(ops) => self.model.acquire(*ops),
                Event::Release(ops, write) => {
                    self.model.release(*ops);
                    if let Some((addr, bytes, packet, dword)) = write {
                        crate::ordering::clock::release_to_memory();
                        self.cp_write(*addr, bytes, *packet, *dword)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn cp_write(
        &self,
        addr: u64,
        bytes: &[u8],
        packet: usize,
        dword: usize,
    ) -> Result<(), Pm4Error> {
        self.device
            .memory
            .write(addr, bytes)
            .map_err(|f| self.error(packet, dword, None, f.into()))
    }
}

/// The runner of a checked dispatch, by the device's kernel mode.
pub(crate) fn select_runner(
    device: &SimDevice,
    kernel: &KernelEntry,
    ctx: &DispatchContext,
) -> Result<Runner, NoRunner> {
    let kd = &kernel.descriptor;
    let trap_handler = device.config().trap_handler;
    let launch = crate::isa::Launch {
        processor: device.target().processor().to_string(),
        rsrc1: kd.compute_pgm_rsrc1,
        // RSRC2 as the waves get it: the descriptor's (TRAP_PRESENT 0 by
        // contract) with TRAP_PRESENT as the CP sets it for an AQL
        // dispatch, which is what `check` made a PM4 dispatch write.
        rsrc2: kd.compute_pgm_rsrc2
            | relaunch_facts::regs::rsrc2_trap_bits(device.family(), trap_handler),
        wave64: !kd.wave32(),
        user_sgprs: ctx.user_sgprs.clone(),
        trap_handler,
        scratch: ctx.scratch,
        private_segment_bytes: kd.private_segment_fixed_size.max(ctx.private_segment_bytes),
        compute_units: device.config().compute_units,
    };
    runner::select(&device.config().kernels, &kernel.symbol, launch)
}
