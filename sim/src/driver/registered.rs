//! The process's own memory registered with the driver. As with the
//! kernel driver, registrations may overlap (each is its own user-pointer
//! object) and an identical one is counted rather than refused: runtimes
//! pin the same heap pages for two transfers at once, and a refusal sends
//! them down other, rarer paths. What the GPU may touch is the union of
//! the mapped pieces, kept as disjoint runs the device memory adopts and
//! replaced in one step as pieces come and go.

use std::collections::BTreeMap;

use super::memory::{DriverMemoryError, MemFlags, Origin, Region, RegionInfo};
use crate::memory::{AllocOptions, DeviceMemory, MemKind};

#[derive(Debug)]
struct Registration {
    region: Region,
    /// Identical registrations (same base and length) still held.
    count: u32,
}

/// A piece of the union: `[start, end)` held by `holders` mapped pieces,
/// `executable` of which allow instruction fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    end: u64,
    holders: u32,
    executable: u32,
}

/// A run the device memory adopts: `(start, len, executable)`.
type Run = (u64, u64, bool);

#[derive(Debug, Default)]
pub(super) struct Registered {
    /// (base, sequence) -> registration; the newest wins address lookups.
    ranges: BTreeMap<(u64, u64), Registration>,
    next_seq: u64,
    /// Disjoint spans of the union of mapped pieces, by start.
    spans: BTreeMap<u64, Span>,
    /// What the device memory holds for them: start -> (len, executable).
    adopted: BTreeMap<u64, (u64, bool)>,
}

impl Registered {
    /// Record `[addr, addr+len)`; an identical registration is counted.
    pub fn register(&mut self, addr: u64, len: u64, flags: MemFlags) {
        if let Some(r) = self
            .ranges
            .range_mut((addr, 0)..=(addr, u64::MAX))
            .map(|(_, r)| r)
            .find(|r| r.region.info.len == len)
        {
            r.count += 1;
            return;
        }
        let info = RegionInfo {
            base: addr,
            len,
            node: 0,
            flags,
            origin: Origin::Registered,
            mapped_nodes: Vec::new(),
            user_data: 0,
        };
        self.next_seq += 1;
        let registration = Registration {
            region: Region::new(info),
            count: 1,
        };
        self.ranges.insert((addr, self.next_seq), registration);
    }

    /// The newest registration that starts at `addr`, else the newest
    /// that holds `[addr, addr+len)`.
    fn lookup(&self, addr: u64, len: u64) -> Option<(u64, u64)> {
        let starting = self.ranges.range((addr, 0)..=(addr, u64::MAX)).next_back();
        let holding = || {
            self.ranges
                .range(..=(addr, u64::MAX))
                .filter(|((b, _), r)| addr.saturating_add(len) <= b + r.region.info.len)
                .max_by_key(|((_, seq), _)| *seq)
        };
        let ((b, seq), _) = starting
            .filter(|(_, r)| len <= r.region.info.len)
            .or_else(holding)?;
        Some((*b, *seq))
    }

    pub fn query(&self, addr: u64) -> Option<RegionInfo> {
        let key = self.lookup(addr, 1)?;
        Some(self.ranges[&key].region.info.clone())
    }

    pub fn set_user_data(&mut self, addr: u64, data: u64) -> bool {
        match self.lookup(addr, 1) {
            Some(key) => {
                let r = self.ranges.get_mut(&key).expect("looked up");
                r.region.info.user_data = data;
                true
            }
            None => false,
        }
    }

    /// Map `[addr, addr+len)` (inside one registration; `len` 0: to its
    /// end) for `nodes`. `None` when no registration holds it.
    pub fn map(
        &mut self,
        device: &DeviceMemory,
        addr: u64,
        len: u64,
        nodes: &[u32],
    ) -> Option<Result<(), DriverMemoryError>> {
        let key = self.lookup(addr, len.max(1))?;
        let region = &mut self.ranges.get_mut(&key).expect("looked up").region;
        let Some(len) = region.note_map(addr, len, nodes) else {
            return Some(Ok(()));
        };
        let executable = region.info.flags.executable;
        self.add(addr, addr + len, executable);
        let synced = self.sync(device, addr, addr + len);
        match synced {
            Ok(()) => {
                let r = self.ranges.get_mut(&key).expect("looked up");
                r.region.mapped.insert(addr, len);
            }
            // Keep the book as the device memory has it.
            Err(_) => self.remove(addr, addr + len, executable),
        }
        Some(synced)
    }

    /// Unmap the mapped piece starting at `addr`. `None` when no
    /// registration has a piece there.
    pub fn unmap(
        &mut self,
        device: &DeviceMemory,
        addr: u64,
    ) -> Option<Result<(), DriverMemoryError>> {
        let (&key, _) = self
            .ranges
            .iter()
            .filter(|(_, r)| r.region.mapped.contains_key(&addr))
            .max_by_key(|((_, seq), _)| *seq)?;
        Some(self.unmap_piece(device, key, addr))
    }

    fn unmap_piece(
        &mut self,
        device: &DeviceMemory,
        key: (u64, u64),
        addr: u64,
    ) -> Result<(), DriverMemoryError> {
        let region = &mut self.ranges.get_mut(&key).expect("caller found it").region;
        let len = region.forget_piece(addr).expect("caller found it");
        let executable = region.info.flags.executable;
        self.remove(addr, addr + len, executable);
        self.sync(device, addr, addr + len)
    }

    /// Drop one hold on the newest registration starting at `addr`; the
    /// last one unmaps it. False when none starts there.
    pub fn release(&mut self, device: &DeviceMemory, addr: u64) -> bool {
        let Some((&key, _)) = self.ranges.range((addr, 0)..=(addr, u64::MAX)).next_back() else {
            return false;
        };
        let r = self.ranges.get_mut(&key).expect("found above");
        r.count -= 1;
        if r.count == 0 {
            let pieces: Vec<u64> = r.region.mapped.keys().copied().collect();
            for piece in pieces {
                // The pages stay the process's; a device refusal here
                // leaves nothing mapped that the book does not know.
                let _ = self.unmap_piece(device, key, piece);
            }
            self.ranges.remove(&key);
        }
        true
    }

    /// Forget every registration (the process closed the driver).
    pub fn release_all(&mut self, device: &DeviceMemory) {
        let starts: Vec<u64> = self.adopted.keys().copied().collect();
        let _ = release_runs(device, &starts);
        self.ranges.clear();
        self.spans.clear();
        self.adopted.clear();
    }

    /// Cut the span holding `at` so that one starts exactly there.
    fn split_at(&mut self, at: u64) {
        let Some((&start, &span)) = self.spans.range(..at).next_back() else {
            return;
        };
        if span.end > at {
            self.spans.insert(start, Span { end: at, ..span });
            self.spans.insert(at, span);
        }
    }

    fn add(&mut self, a: u64, b: u64, executable: bool) {
        self.split_at(a);
        self.split_at(b);
        let exec = u32::from(executable);
        let mut cursor = a;
        let inside: Vec<u64> = self.spans.range(a..b).map(|(&s, _)| s).collect();
        for start in inside {
            if cursor < start {
                let gap = Span {
                    end: start,
                    holders: 1,
                    executable: exec,
                };
                self.spans.insert(cursor, gap);
            }
            let span = self.spans.get_mut(&start).expect("listed above");
            span.holders += 1;
            span.executable += exec;
            cursor = span.end;
        }
        if cursor < b {
            let tail = Span {
                end: b,
                holders: 1,
                executable: exec,
            };
            self.spans.insert(cursor, tail);
        }
        self.merge_around(a, b);
    }

    fn remove(&mut self, a: u64, b: u64, executable: bool) {
        self.split_at(a);
        self.split_at(b);
        let inside: Vec<u64> = self.spans.range(a..b).map(|(&s, _)| s).collect();
        for start in inside {
            let span = self.spans.get_mut(&start).expect("listed above");
            span.holders -= 1;
            span.executable -= u32::from(executable);
            if span.holders == 0 {
                self.spans.remove(&start);
            }
        }
        self.merge_around(a, b);
    }

    /// Join neighbouring spans with the same holds inside `[a, b]` and at
    /// its edges, so pinning and unpinning does not fragment the book.
    fn merge_around(&mut self, a: u64, b: u64) {
        let first = self.spans.range(..a).next_back().map_or(a, |(&s, _)| s);
        let mut starts: Vec<u64> = self.spans.range(first..=b).map(|(&s, _)| s).collect();
        starts.reverse();
        for pair in starts.windows(2) {
            let (later, earlier) = (pair[0], pair[1]);
            let (e, l) = (self.spans[&earlier], self.spans[&later]);
            if e.end == later && e.holders == l.holders && e.executable == l.executable {
                self.spans.remove(&later);
                self.spans.get_mut(&earlier).expect("listed").end = l.end;
            }
        }
    }

    /// The maximal runs of the union (same executability) that touch
    /// `[a, b]`.
    fn runs_touching(&self, a: u64, b: u64) -> Vec<Run> {
        // The first span touching `[a, b]`: one ending at `a` counts.
        let mut start = match self.spans.range(..a).next_back() {
            Some((&s, span)) if span.end >= a => s,
            _ => match self.spans.range(a..=b).next() {
                Some((&s, _)) => s,
                None => return Vec::new(),
            },
        };
        // Walk back over contiguous spans of the same executability.
        let exec_of = |s: &Span| s.executable > 0;
        while let Some((&p, prev)) = self.spans.range(..start).next_back() {
            if prev.end == start && exec_of(prev) == exec_of(&self.spans[&start]) {
                start = p;
            } else {
                break;
            }
        }
        let mut runs: Vec<Run> = Vec::new();
        for (&s, span) in self.spans.range(start..) {
            match runs.last_mut() {
                Some((rs, rl, rx)) if *rs + *rl == s && *rx == exec_of(span) => {
                    *rl = span.end - *rs;
                }
                _ if s > b => break,
                _ => runs.push((s, span.end - s, exec_of(span))),
            }
        }
        runs
    }

    /// Make the device memory hold the union's runs around `[a, b]`.
    fn sync(&mut self, device: &DeviceMemory, a: u64, b: u64) -> Result<(), DriverMemoryError> {
        let old: Vec<Run> = self
            .adopted
            .range(..=b)
            .filter(|(&s, &(len, _))| s + len >= a)
            .map(|(&s, &(len, x))| (s, len, x))
            .collect();
        let new = self.runs_touching(a, b);
        if old == new {
            return Ok(());
        }
        let remove: Vec<u64> = old.iter().map(|r| r.0).collect();
        let add: Vec<(u64, usize, AllocOptions)> = new
            .iter()
            .map(|&(s, len, executable)| {
                let opts = AllocOptions {
                    gpu_visible: true,
                    executable,
                };
                (s, len as usize, opts)
            })
            .collect();
        // SAFETY: every run lies inside memory the process registered
        // (its own readable, writable pages), which it keeps mapped until
        // it deregisters, and deregistering takes the run back first.
        unsafe { device.replace_adopted(&remove, &add, MemKind::Driver) }
            .map_err(|e| DriverMemoryError::Device(e.to_string()))?;
        for r in &old {
            self.adopted.remove(&r.0);
        }
        for &(s, len, x) in &new {
            self.adopted.insert(s, (len, x));
        }
        Ok(())
    }
}

fn release_runs(device: &DeviceMemory, starts: &[u64]) -> Result<(), DriverMemoryError> {
    // SAFETY: nothing is added, so no new pages are adopted.
    unsafe { device.replace_adopted(starts, &[], MemKind::Driver) }
        .map_err(|e| DriverMemoryError::Device(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::super::memory::{DriverMemory, MemFlags};
    use crate::memory::{Access, DeviceMemory};

    const SPAN: usize = 1 << 14;

    fn flags(executable: bool) -> MemFlags {
        MemFlags {
            executable,
            ..MemFlags::default()
        }
    }

    #[test]
    fn overlapping_and_repeated_registrations_are_held_until_the_last_goes() {
        let host = vec![0u8; SPAN];
        let base = host.as_ptr() as u64;
        let dev = Arc::new(DeviceMemory::new(1 << 20));
        let mem = DriverMemory::new(Arc::clone(&dev));
        mem.register(base, 3000, flags(true)).unwrap();
        mem.register(base + 1000, 5000, flags(true)).unwrap();
        mem.register(base + 1000, 5000, flags(true)).unwrap();
        mem.map(base, 3000, &[1]).unwrap();
        mem.map(base + 1000, 5000, &[1]).unwrap();
        // One run over the union: an access across the overlap is whole.
        dev.check(base + 10, 5900, Access::Read).unwrap();
        assert!(dev.check(base + 6000, 1, Access::Read).is_err());
        // The first goes: what the second maps stays reachable.
        mem.unmap(base).unwrap();
        mem.release(base).unwrap();
        assert!(dev.check(base + 999, 1, Access::Read).is_err());
        dev.check(base + 1000, 5000, Access::Write).unwrap();
        // The repeated registration is held twice.
        mem.release(base + 1000).unwrap();
        assert_eq!(mem.query(base + 1500).unwrap().base, base + 1000);
        dev.check(base + 1000, 4, Access::Read).unwrap();
        mem.release(base + 1000).unwrap();
        assert!(mem.query(base + 1500).is_none());
        assert!(dev.check(base + 1000, 4, Access::Read).is_err());
        assert_eq!(dev.stats().live_allocations, 0);
        assert!(mem.release(base + 1000).is_err(), "nothing left to release");
    }

    #[derive(Debug, Clone)]
    enum Op {
        Register { at: usize, len: usize, exec: bool },
        Map { pick: usize },
        Unmap { pick: usize },
        Release { pick: usize },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..SPAN - 1, 1..4096usize, any::<bool>()).prop_map(|(at, len, exec)| Op::Register {
                at,
                len: len.min(SPAN - at),
                exec
            }),
            any::<usize>().prop_map(|pick| Op::Map { pick }),
            any::<usize>().prop_map(|pick| Op::Unmap { pick }),
            any::<usize>().prop_map(|pick| Op::Release { pick }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The device lets the GPU touch a byte exactly when some mapped
        /// registration holds it, and fetch from it exactly when one of
        /// those is executable, whatever order registrations come and go.
        #[test]
        fn the_device_sees_the_union_of_mapped_registrations(ops in prop::collection::vec(op(), 1..40)) {
            let host = vec![0u8; SPAN];
            let base = host.as_ptr() as u64;
            let dev = Arc::new(DeviceMemory::new(1 << 20));
            let mem = DriverMemory::new(Arc::clone(&dev));
            // The model: (start, len, exec, holds, mapped), newest last.
            let mut model: Vec<(usize, usize, bool, u32, bool)> = Vec::new();
            for op in ops {
                match op {
                    Op::Register { at, len, exec } => {
                        mem.register(base + at as u64, len as u64, flags(exec)).unwrap();
                        match model.iter_mut().find(|m| m.0 == at && m.1 == len) {
                            Some(m) => m.3 += 1,
                            None => model.push((at, len, exec, 1, false)),
                        }
                    }
                    Op::Map { pick } if !model.is_empty() => {
                        let i = pick % model.len();
                        let (at, len) = (model[i].0, model[i].1);
                        mem.map(base + at as u64, len as u64, &[1]).unwrap();
                        // The newest registration starting there (and long
                        // enough) is the one mapped.
                        let j = model.iter().rposition(|m| m.0 == at && m.1 >= len).unwrap();
                        model[j].4 = true;
                    }
                    Op::Unmap { pick } if !model.is_empty() => {
                        let i = pick % model.len();
                        let at = model[i].0;
                        let result = mem.unmap(base + at as u64);
                        match model.iter().rposition(|m| m.0 == at && m.4) {
                            Some(j) => {
                                result.unwrap();
                                model[j].4 = false;
                            }
                            None => prop_assert!(result.is_err()),
                        }
                    }
                    Op::Release { pick } if !model.is_empty() => {
                        let i = pick % model.len();
                        let at = model[i].0;
                        mem.release(base + at as u64).unwrap();
                        let j = model.iter().rposition(|m| m.0 == at).unwrap();
                        model[j].3 -= 1;
                        if model[j].3 == 0 {
                            model.remove(j);
                        }
                    }
                    _ => {}
                }
                for probe in (0..SPAN).step_by(61) {
                    let holders: Vec<_> =
                        model.iter().filter(|m| m.4 && m.0 <= probe && probe < m.0 + m.1).collect();
                    let reachable = dev.check(base + probe as u64, 1, Access::Read).is_ok();
                    prop_assert_eq!(reachable, !holders.is_empty(), "byte {}", probe);
                    // Instruction fetch: where the four bytes of a dword
                    // agree, it follows whether any holder is executable.
                    let exec_at = |p: usize| {
                        let held: Vec<_> =
                            model.iter().filter(|m| m.4 && m.0 <= p && p < m.0 + m.1).collect();
                        (!held.is_empty()).then(|| held.iter().any(|m| m.2))
                    };
                    let dword = probe & !3;
                    let states: Vec<_> = (dword..dword + 4).map(exec_at).collect();
                    if let Some(exec) = states[0] {
                        if states.iter().all(|s| *s == Some(exec)) {
                            let fetch = dev.fetch_ib(base + dword as u64, 1).is_ok();
                            prop_assert_eq!(fetch, exec, "fetch at {}", dword);
                        }
                    }
                }
            }
            mem.release_all();
            prop_assert_eq!(dev.stats().live_allocations, 0);
            drop(host);
        }
    }
}
