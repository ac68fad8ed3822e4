//! Event record and wait nodes within one graph: ordering only. Both are
//! ordering nodes (like empty nodes); a wait node whose event is recorded
//! by a node of the same graph gets an edge from that record node, so what
//! precedes the record runs before what follows the wait. A wait for an
//! event no node of the graph records (recorded outside it, or by an
//! earlier launch), an event recorded by two nodes, or a wait that
//! precedes its own record makes the graph fall through with the reason.
//!
//! An event recorded inside the graph may also be waited for outside it
//! (`hipEventSynchronize`, `hipStreamWaitEvent`): each launch records the
//! event for real on the launch stream after the replay (later than HIP
//! would, at the graph's end, so a waiter waits at least as long as it
//! must).

use std::collections::{HashMap, HashSet};

use crate::hip::{Handle, HIP_SUCCESS};
use crate::model::reason::Reason;
use crate::model::shadow::ShadowGraph;

/// The event nodes of one graph: (node handle, event handle).
#[derive(Debug, Default, Clone)]
pub struct EventNodes {
    pub records: Vec<(usize, usize)>,
    pub waits: Vec<(usize, usize)>,
}

impl EventNodes {
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.waits.is_empty()
    }

    /// Every event a record node records (each once).
    pub fn recorded(&self) -> Vec<usize> {
        let mut events: Vec<usize> = self.records.iter().map(|&(_, e)| e).collect();
        events.sort_unstable();
        events.dedup();
        events
    }
}

impl ShadowGraph {
    /// Record (`wait` false) or wait node `handle` on `event`, after `deps`.
    pub fn add_event_node(&mut self, handle: usize, event: usize, wait: bool, deps: &[usize]) {
        let list = if wait {
            &mut self.events.waits
        } else {
            &mut self.events.records
        };
        list.push((handle, event));
        self.add_ordering_node(handle, deps);
    }

    /// The record -> wait edges (as handles) the graph's event nodes imply.
    pub fn event_edges(&self) -> Result<Vec<(usize, usize)>, Reason> {
        let mut out = Vec::new();
        for &(wait, event) in &self.events.waits {
            let records: Vec<usize> = self
                .events
                .records
                .iter()
                .filter(|&&(_, e)| e == event)
                .map(|&(n, _)| n)
                .collect();
            let record = match records[..] {
                [] => return Err(Reason::WaitUnrecorded { event }),
                [one] => one,
                _ => {
                    return Err(Reason::RecordedTwice {
                        event,
                        records: records.len(),
                    })
                }
            };
            if self.reaches(wait, record) {
                return Err(Reason::WaitBeforeRecord { event });
            }
            out.push((record, wait));
        }
        Ok(out)
    }

    /// Is node `to` reachable from `from` along any edge (kernel, memset,
    /// memcpy or ordering nodes)?
    fn reaches(&self, from: usize, to: usize) -> bool {
        let mut next: HashMap<usize, Vec<usize>> = HashMap::new();
        for &(f, t) in &self.edges {
            next.entry(self.nodes[f].0)
                .or_default()
                .push(self.nodes[t].0);
        }
        for (f, t) in self.ordering.handle_edges() {
            next.entry(f).or_default().push(t);
        }
        let mut seen = HashSet::new();
        let mut stack = vec![from];
        while let Some(h) = stack.pop() {
            if h == to {
                return true;
            }
            if seen.insert(h) {
                stack.extend(next.get(&h).into_iter().flatten().copied());
            }
        }
        false
    }
}

/// After a replay was put on `stream`: the real `hipEventRecord` of every
/// event the graph records, behind the replay.
pub(crate) fn record_after_replay(events: &[usize], stream: Handle) {
    if events.is_empty() {
        return;
    }
    let Some(record) = crate::hip::real::hipEventRecord() else {
        return;
    };
    for &e in events {
        // SAFETY: an event handle the application gave a record node of
        // this graph, and the application's launch stream.
        let rc = unsafe { record(e as Handle, stream) };
        if rc != HIP_SUCCESS {
            tracing::warn!(status = rc, "hipEventRecord of a graph's event node failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_depends_on_its_record_and_other_waits_fall_through() {
        let mut g = ShadowGraph::default();
        g.add_event_node(1, 0xE, false, &[]);
        g.add_event_node(2, 0xE, true, &[1]);
        assert_eq!(g.event_edges().unwrap(), vec![(1, 2)]);
        g.add_event_node(3, 0xF, true, &[]);
        assert!(matches!(
            g.event_edges(),
            Err(Reason::WaitUnrecorded { event: 0xF })
        ));

        let mut g = ShadowGraph::default();
        g.add_event_node(1, 0xE, true, &[]);
        g.add_event_node(2, 0xE, false, &[1]);
        assert!(matches!(
            g.event_edges(),
            Err(Reason::WaitBeforeRecord { event: 0xE })
        ));

        let mut g = ShadowGraph::default();
        g.add_event_node(1, 0xE, false, &[]);
        g.add_event_node(2, 0xE, false, &[]);
        g.add_event_node(3, 0xE, true, &[]);
        let e = g.event_edges().unwrap_err();
        assert!(e.to_string().contains("by 2 nodes"), "{e}");
        assert_eq!(g.events.recorded(), vec![0xE]);
    }
}
