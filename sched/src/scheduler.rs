//! The scheduler of one device: its queue actors, the lane-to-actor
//! mapping (balanced by estimated work), installing a plan's lanes as IBs
//! on their actors, fanning a replay out and gathering the completions.
//!
//! Lowering is not done here: the facade lowers a plan's lanes through
//! `relaunch_lanes::encode` (in parallel) and hands the programs in, so the
//! scheduler takes lanes already recorded as programs. Installing runs in
//! parallel: each actor finishes and copies its
//! own lanes' IBs.

use std::time::Duration;

use relaunch_encoders::IbBuilder;

use crate::actor::{Actor, ActorOptions, Claimed};
use crate::backend::{Published, QueueBackend};
use crate::completion::Completion;
use crate::error::{IbName, SchedError};
use crate::handle::IbHandle;
use crate::loom::{self, Arc, Mutex};

/// One lane to install: its program and an estimate of its work (dwords or
/// dispatches: only the relative sizes matter).
#[derive(Debug, Clone)]
pub struct LaneProgram<P> {
    pub program: P,
    pub work: u64,
}

impl LaneProgram<IbBuilder> {
    /// A recorded lane, its work counted in IB dwords.
    pub fn of(program: IbBuilder) -> Self {
        LaneProgram {
            work: program.dwords() as u64,
            program,
        }
    }
}

/// One lane to install: its index, its program and the actor it goes to.
type Job<P> = (usize, (P, usize));

/// Which actor runs each lane: longest-processing-time first onto the least
/// loaded of `queues` actors (ties go to the lower index), so the heaviest
/// lanes spread out. Deterministic for the same input.
pub fn assign_lanes(work: &[u64], queues: usize) -> Vec<usize> {
    assign_lanes_onto(work, &vec![0; queues.max(1)])
}

/// [`assign_lanes`] onto queues that already carry `base` work.
pub fn assign_lanes_onto(work: &[u64], base: &[u64]) -> Vec<usize> {
    let mut load = if base.is_empty() {
        vec![0]
    } else {
        base.to_vec()
    };
    let mut order: Vec<usize> = (0..work.len()).collect();
    order.sort_by(|&a, &b| work[b].cmp(&work[a]).then(a.cmp(&b)));
    let mut assigned = vec![0usize; work.len()];
    for lane in order {
        let (queue, _) = load
            .iter()
            .enumerate()
            .min_by(|(ia, la), (ib, lb)| la.cmp(lb).then(ia.cmp(ib)))
            .unwrap_or((0, &0));
        // Count at least 1 so empty estimates still spread round-robin.
        load[queue] = load[queue].saturating_add(work[lane].max(1));
        assigned[lane] = queue;
    }
    assigned
}

/// The queue actors of one device.
pub struct Scheduler<B: QueueBackend> {
    actors: Vec<Actor<B>>,
    /// Work installed per actor, so separate installs spread out too.
    load: Arc<Mutex<Vec<u64>>>,
}

impl<B: QueueBackend> Scheduler<B> {
    /// One actor per backend (one backend per hardware queue).
    pub fn new(backends: Vec<B>, opts: ActorOptions) -> Result<Self, SchedError> {
        if backends.is_empty() {
            return Err(SchedError::Empty {
                what: "a scheduler needs at least one queue backend",
            });
        }
        let actors = backends
            .into_iter()
            .enumerate()
            .map(|(i, b)| Actor::spawn(i, b, opts))
            .collect::<Result<Vec<_>, _>>()?;
        let load = Arc::new(Mutex::new(vec![0; actors.len()]));
        Ok(Scheduler { actors, load })
    }

    /// Number of queues (actors).
    pub fn queue_count(&self) -> usize {
        self.actors.len()
    }

    pub fn actor(&self, index: usize) -> Option<&Actor<B>> {
        self.actors.get(index)
    }

    /// Installs each lane on an actor chosen by [`assign_lanes`] (in
    /// parallel when there are several lanes). Any failure names its lane;
    /// lanes already installed are uninstalled again.
    pub fn install<P: Into<B::Program>>(
        &self,
        lanes: Vec<LaneProgram<P>>,
    ) -> Result<MultiIb<B>, SchedError> {
        if lanes.is_empty() {
            return Err(SchedError::Empty {
                what: "a multi-lane IB needs at least one lane",
            });
        }
        let work: Vec<u64> = lanes.iter().map(|l| l.work.max(1)).collect();
        let assigned = {
            let mut load = loom::lock(&self.load);
            let assigned = assign_lanes_onto(&work, &load);
            for (&queue, &w) in assigned.iter().zip(&work) {
                load[queue] = load[queue].saturating_add(w);
            }
            assigned
        };
        let charged: Vec<(usize, u64)> = assigned.iter().copied().zip(work).collect();
        let install = |(lane, (program, queue)): Job<B::Program>| {
            let actor = &self.actors[queue];
            actor.install(program).map_err(|source| SchedError::Lane {
                lane,
                actor: queue,
                ib: None,
                source: Box::new(source),
            })
        };
        let jobs: Vec<Job<B::Program>> = lanes
            .into_iter()
            .map(|l| l.program.into())
            .zip(assigned)
            .enumerate()
            .collect();
        // One scoped thread per actor used, each installing its own lanes
        // in lane order (std's threads are not loom threads: sequential
        // under loom).
        let queues_used = {
            let mut used: Vec<usize> = jobs.iter().map(|j| j.1 .1).collect();
            used.sort_unstable();
            used.dedup();
            used
        };
        let results: Vec<Result<IbHandle<B>, SchedError>> = if queues_used.len() > 1 && !cfg!(loom)
        {
            let mut per_queue: Vec<Vec<Job<B::Program>>> =
                queues_used.iter().map(|_| Vec::new()).collect();
            for job in jobs {
                let at = queues_used.binary_search(&job.1 .1).unwrap_or(0);
                per_queue[at].push(job);
            }
            let mut done: Vec<(usize, Result<IbHandle<B>, SchedError>)> = std::thread::scope(|s| {
                let install = &install;
                let workers: Vec<_> = per_queue
                    .into_iter()
                    .map(|jobs| {
                        s.spawn(move || {
                            jobs.into_iter()
                                .map(|job| (job.0, install(job)))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            done.sort_by_key(|d| d.0);
            done.into_iter().map(|d| d.1).collect()
        } else {
            jobs.into_iter().map(install).collect()
        };
        let mut handles = Vec::with_capacity(results.len());
        let mut failures = Vec::new();
        for r in results {
            match r {
                Ok(h) => handles.push(h),
                Err(e) => failures.push(e),
            }
        }
        let names = handles.iter().map(|h| h.name().clone()).collect();
        let multi = MultiIb {
            names,
            lanes: handles,
            charged,
            load: Arc::clone(&self.load),
        };
        match failures.len() {
            0 => Ok(multi),
            1 => Err(failures.remove(0)),
            _ => Err(SchedError::Lanes { failures }),
        }
    }
}

/// A plan's lanes retained on their actors. Dropping it uninstalls them.
pub struct MultiIb<B: QueueBackend> {
    lanes: Vec<IbHandle<B>>,
    /// Each lane's IB name, shared with its completions' errors (std's
    /// Arc: an immutable value, not a protocol primitive).
    names: std::sync::Arc<[IbName]>,
    /// (actor, work) added to the scheduler's load book at install.
    charged: Vec<(usize, u64)>,
    load: Arc<Mutex<Vec<u64>>>,
}

impl<B: QueueBackend> Drop for MultiIb<B> {
    fn drop(&mut self) {
        let mut load = loom::lock(&self.load);
        for &(queue, work) in &self.charged {
            if let Some(l) = load.get_mut(queue) {
                *l = l.saturating_sub(work);
            }
        }
    }
}

impl<B: QueueBackend> MultiIb<B> {
    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// The IB of one lane.
    pub fn lane(&self, lane: usize) -> Result<&IbHandle<B>, SchedError> {
        self.lanes.get(lane).ok_or(SchedError::NoSuchLane {
            lane,
            count: self.lanes.len(),
        })
    }

    /// The IB of one lane, to patch it.
    pub fn lane_mut(&mut self, lane: usize) -> Result<&mut IbHandle<B>, SchedError> {
        let count = self.lanes.len();
        self.lanes
            .get_mut(lane)
            .ok_or(SchedError::NoSuchLane { lane, count })
    }

    /// Distinct queues the lanes run on.
    pub fn queues_used(&self) -> usize {
        let mut used: Vec<usize> = self.lanes.iter().map(|h| h.actor().index()).collect();
        used.sort_unstable();
        used.dedup();
        used.len()
    }

    /// Submits every lane. A lane whose submission fails is reported in the
    /// error (naming the lane); the others were submitted and run.
    ///
    /// Publish every lane, then ring: each idle actor is claimed and its
    /// lanes' packets are written, and only then is every claimed queue's
    /// doorbell rung, so the lanes start as close together as possible.
    /// Lanes whose actor is busy go through its mailbox afterwards (in lane
    /// order, after the rings), as a single `replay` would.
    pub fn replay(&self) -> Result<MultiCompletion<B::Watch>, SchedError> {
        let mut parts = Vec::with_capacity(self.lanes.len());
        let mut failures = Vec::new();
        let mut busy = Vec::new();
        {
            // Claimed actors and the last replay published on each.
            let mut claims: Vec<(Claimed<'_, B>, Option<Published>)> = Vec::new();
            for (lane, ib) in self.lanes.iter().enumerate() {
                let shared = ib.shared();
                // An actor found busy takes all its lanes through the mailbox.
                if busy
                    .iter()
                    .any(|&b: &usize| std::ptr::eq(self.lanes[b].shared(), shared))
                {
                    busy.push(lane);
                    continue;
                }
                let at = match claims.iter().position(|(c, _)| c.is_of(shared)) {
                    Some(at) => at,
                    None => match shared.claim() {
                        Ok(Ok(claimed)) => {
                            claims.push((claimed, None));
                            claims.len() - 1
                        }
                        Ok(Err(inbox)) => {
                            drop(inbox);
                            busy.push(lane);
                            continue;
                        }
                        Err(source) => {
                            failures.push(lane_error(lane, ib, source));
                            continue;
                        }
                    },
                };
                let (claimed, last) = &mut claims[at];
                match claimed
                    .core()
                    .and_then(|core| core.publish(shared.index, ib.id()))
                {
                    Ok(published) => {
                        *last = Some(published);
                        let watch = Arc::clone(&shared.watch);
                        let done = Completion::issued(shared.index, watch, published.ticket);
                        parts.push((lane, done));
                    }
                    Err(source) => failures.push(lane_error(lane, ib, source)),
                }
            }
            for (claimed, last) in &mut claims {
                if let (Some(published), Ok(core)) = (last.as_ref(), claimed.core()) {
                    core.ring(published);
                }
            }
            // Dropping the claims releases the actors.
        }
        for lane in busy {
            let ib = &self.lanes[lane];
            match ib.replay() {
                Ok(c) => parts.push((lane, c)),
                Err(source) => failures.push(lane_error(lane, ib, source)),
            }
        }
        parts.sort_by_key(|(lane, _)| *lane);
        match failures.len() {
            0 => Ok(MultiCompletion {
                parts,
                names: std::sync::Arc::clone(&self.names),
            }),
            1 => Err(failures.remove(0)),
            _ => {
                failures.sort_by_key(|e| match e {
                    SchedError::Lane { lane, .. } => *lane,
                    _ => usize::MAX,
                });
                Err(SchedError::Lanes { failures })
            }
        }
    }

    /// Patches kernargs of `dispatch` in `lane` (ordered after that lane's
    /// running replays, without waiting for them).
    pub fn set_kernargs(
        &mut self,
        lane: usize,
        dispatch: usize,
        offset: usize,
        bytes: &[u8],
    ) -> Result<(), SchedError> {
        let ib = self.lane_mut(lane)?;
        ib.patch(dispatch, offset, bytes)
            .map_err(|source| lane_error(lane, ib, source))
    }
}

fn lane_error<B: QueueBackend>(lane: usize, ib: &IbHandle<B>, source: SchedError) -> SchedError {
    SchedError::Lane {
        lane,
        actor: ib.actor().index(),
        ib: Some(ib.name().clone()),
        source: Box::new(source),
    }
}

/// Completions of one fanned-out replay.
pub struct MultiCompletion<W: crate::backend::CompletionWatch> {
    parts: Vec<(usize, Completion<W>)>,
    /// Every lane's IB name, by lane (the multi-lane IB's).
    names: std::sync::Arc<[IbName]>,
}

impl<W: crate::backend::CompletionWatch> MultiCompletion<W> {
    /// Waits for every lane (each up to `timeout` from the call); every
    /// failing lane is named in the error.
    pub fn wait(&self, timeout: Duration) -> Result<(), SchedError> {
        self.wait_each(timeout, Completion::wait)
    }

    /// [`Self::wait`], abandoning every lane that has not finished in time
    /// ([`Completion::wait_or_abandon`]); the other lanes are unaffected.
    pub fn wait_or_abandon(&self, timeout: Duration) -> Result<(), SchedError> {
        self.wait_each(timeout, Completion::wait_or_abandon)
    }

    fn wait_each(
        &self,
        timeout: Duration,
        wait: impl Fn(&Completion<W>, Duration) -> Result<(), SchedError>,
    ) -> Result<(), SchedError> {
        let start = std::time::Instant::now();
        let mut failures = Vec::new();
        for (lane, c) in &self.parts {
            let left = timeout.saturating_sub(start.elapsed());
            if let Err(source) = wait(c, left) {
                failures.push(self.lane_error(*lane, c, source));
            }
        }
        match failures.len() {
            0 => Ok(()),
            1 => Err(failures.remove(0)),
            _ => Err(SchedError::Lanes { failures }),
        }
    }

    /// Each lane's completion (for watching lanes one by one, e.g. to keep
    /// code alive until every lane settled, failed lanes included).
    pub fn lanes(&self) -> impl Iterator<Item = &Completion<W>> {
        self.parts.iter().map(|(_, c)| c)
    }

    /// True once every lane finished; an error naming a failed lane.
    pub fn is_complete(&self) -> Result<bool, SchedError> {
        let mut all = true;
        for (lane, c) in &self.parts {
            all &= c
                .is_complete()
                .map_err(|source| self.lane_error(*lane, c, source))?;
        }
        Ok(all)
    }

    /// `source` as lane `lane`'s failure, naming its actor and IB.
    fn lane_error(&self, lane: usize, c: &Completion<W>, source: SchedError) -> SchedError {
        SchedError::Lane {
            lane,
            actor: c.actor(),
            ib: self.names.get(lane).cloned(),
            source: Box::new(source),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn heavy_lanes_spread_and_ties_are_deterministic() {
        assert_eq!(assign_lanes(&[10, 10, 10, 10], 2), vec![0, 1, 0, 1]);
        // 9 alone; 5+4 together.
        assert_eq!(assign_lanes(&[4, 9, 5], 2), vec![1, 0, 1]);
        assert_eq!(assign_lanes(&[0, 0, 0], 3), vec![0, 1, 2]);
        assert_eq!(assign_lanes(&[7, 1], 4), vec![0, 1]);
        assert_eq!(assign_lanes(&[], 2), Vec::<usize>::new());
        assert_eq!(assign_lanes(&[3, 3], 0), vec![0, 0]);
        assert_eq!(assign_lanes_onto(&[5], &[8, 2]), vec![1]);
        assert_eq!(assign_lanes_onto(&[5, 5], &[8, 2]), vec![1, 1]);
    }
}
