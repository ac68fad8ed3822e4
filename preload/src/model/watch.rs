//! The watcher: one thread that follows every stream-ordered launch
//! (`ordered.rs`) until it is resolved, i.e. until the application's stream
//! got past it (its `passed` word reached the launch's sequence number).
//! Only then are the launch's words free for the next launch on another
//! stream, and its build's memory free to go.
//!
//! A replay that fails never closes its gates, and the stream would wait
//! forever: the watcher logs the error, makes the exec fall through from
//! then on and closes the launch's gates from the host, each with a
//! compare-exchange from the launch's sequence number. The stream may not
//! have opened them yet (it may be far behind); the exchange is retried
//! until the stream passed, so it closes exactly the gate the stream opened
//! for this launch: never earlier (a gate closed before the stream opened
//! it would stay open), never a later launch's (the stream opens the next
//! launch's gates only after this one's are closed). The launch's results
//! are not there; the error says so.
//!
//! Launches of one build are judged in submission order, so a failure is
//! known before the launches after it are judged: those may have been
//! replayed on a queue replaced after the fault, and such a replay can
//! pass the failed launch's open gate instead of its own; their gates are
//! closed from the host too (docs/pm4.md, "Stream order").

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use relaunch::LaunchInFlight;

use crate::model::build::Build;
use crate::model::exec::ShadowExec;
use crate::model::ordered::{reached, StreamOrder};
use crate::model::reason::Reason;

/// How often the watcher looks at the launches it follows.
const POLL: Duration = Duration::from_millis(1);

/// A submitted launch followed to its end.
pub(crate) struct Watched {
    // Fields drop in order: the flight before the build it replays.
    pub(crate) flight: LaunchInFlight,
    pub(crate) shadow: Arc<ShadowExec>,
    /// The build replayed (kept alive until the stream got past the
    /// launch, even when a geometry change replaced it meanwhile).
    build: Arc<Build>,
    pub(crate) seq: u32,
    phase: Phase,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The replay has not finished.
    Running,
    /// It finished; `close`: its gates are closed from the host (it failed,
    /// or ran after a failed launch of its build).
    Finished { close: bool },
}

impl Watched {
    pub(crate) fn new(
        flight: LaunchInFlight,
        shadow: &Arc<ShadowExec>,
        build: &Arc<Build>,
        seq: u32,
    ) -> Watched {
        Watched {
            flight,
            shadow: Arc::clone(shadow),
            build: Arc::clone(build),
            seq,
            phase: Phase::Running,
        }
    }

    fn order(&self) -> &StreamOrder {
        match self.build.stream_order.get() {
            Some(Ok(order)) => order,
            _ => invariant_broken(),
        }
    }

    /// Judges a running replay (`first`: no earlier launch of its build is
    /// still running).
    fn judge(&mut self, first: bool) {
        if self.phase != Phase::Running || !first {
            return;
        }
        let order = self.order();
        match self.flight.is_complete() {
            Ok(false) => {}
            Ok(true) => {
                self.phase = Phase::Finished {
                    close: order.tainted.load(Ordering::SeqCst),
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "a stream-ordered replay failed; its stream is released");
                order.tainted.store(true, Ordering::SeqCst);
                self.shadow.fall_back(Reason::ReplayFailed(Arc::new(e)));
                self.phase = Phase::Finished { close: true };
            }
        }
    }

    /// True once the stream got past the launch (its gates closed first,
    /// when they are the host's to close).
    fn resolved(&self) -> bool {
        let Phase::Finished { close } = self.phase else {
            return false;
        };
        let order = self.order();
        if close {
            order.close_all_if(self.seq);
        }
        reached(order.passed().load(Ordering::SeqCst), self.seq)
    }
}

#[cold]
fn invariant_broken() -> ! {
    panic!("a stream-ordered launch's build has no stream words")
}

/// Follows `w` until resolved (on the watcher thread; here, blocking, when
/// that thread cannot run).
pub(crate) fn follow(w: Watched) {
    if let Err(crossbeam_channel::SendError(mut w)) = watcher().send(w) {
        loop {
            w.judge(true);
            if w.resolved() {
                break;
            }
            std::thread::sleep(POLL);
        }
        w.shadow.in_flight.leave();
    }
}

/// One pass over the launches followed: judge, resolve, release.
fn pass(live: &mut Vec<Watched>) {
    // Builds with a launch still running among those judged so far (in
    // submission order): one look-up per launch, however many are live.
    let mut running: HashSet<*const Build> = HashSet::new();
    for w in live.iter_mut() {
        let build = Arc::as_ptr(&w.build);
        w.judge(!running.contains(&build));
        if w.phase == Phase::Running {
            running.insert(build);
        }
    }
    live.retain(|w| {
        let done = w.resolved();
        if done {
            w.shadow.in_flight.leave();
        }
        !done
    });
}

fn watcher() -> &'static crossbeam_channel::Sender<Watched> {
    static TX: OnceLock<crossbeam_channel::Sender<Watched>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = crossbeam_channel::unbounded::<Watched>();
        let spawned = std::thread::Builder::new()
            .name("relaunch-hip-watch".into())
            .spawn(move || {
                let mut live: Vec<Watched> = Vec::new();
                loop {
                    // The sender is a static: the channel stays connected.
                    let next = if live.is_empty() {
                        rx.recv().ok()
                    } else {
                        rx.recv_timeout(POLL).ok()
                    };
                    live.extend(next);
                    live.extend(rx.try_iter());
                    pass(&mut live);
                }
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start the replay watcher thread");
        }
        tx
    })
}
