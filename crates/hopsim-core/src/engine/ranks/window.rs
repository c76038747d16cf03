//! The ranks' window: how many cycles a rank runs before it must hear from the others, and
//! what it holds back meanwhile.
//!
//! An event a rank's switch schedules for another rank's switch is due one link (or credit)
//! latency after the cycle it was scheduled in at the earliest. If every link crossing
//! between ranks is `lookahead` cycles long, a rank can run `lookahead` cycles alone: nothing
//! another rank schedules in them is due before they end. The one-process order of the
//! events due at a cycle is by the cycle they were scheduled in, then by rank, then the NICs'
//! (`ranks` module). So a rank puts the events it schedules for itself that are due inside
//! the window into its calendar at once (none of another rank's can be due there), and
//! holds back those due later, cycle by cycle, to put them in at the window's end between
//! the other ranks' of the same cycle.

use crate::calendar::{Calendar, Event};

/// The smallest latency of the links of this rank's switches that reach another rank's
/// switches (`u64::MAX` if none do): the ranks' lookahead is the smallest over all ranks.
/// A link's credits come back over the same class of link, with its latency.
pub fn lookahead_of(ports: &[crate::router::Port], owner: impl Fn(usize) -> usize, rank: usize) -> u64 {
    ports
        .iter()
        .filter_map(|p| match p.peer {
            crate::router::Peer::Switch { switch, .. } if owner(switch as usize) != rank => Some(p.link.latency as u64),
            _ => None,
        })
        .min()
        .unwrap_or(u64::MAX)
}

/// What a rank holds back during a window: per cycle, the events it scheduled for itself
/// due after the window, and its NICs' events due after it, and for each other rank the
/// cycle's message part (`wire::encode`).
#[derive(Default)]
pub struct Held {
    /// The cycles of the window so far, each with where its events end in `own` and `nic`.
    cycles: Vec<(u64, usize, usize)>,
    own: Vec<(u64, Event)>,
    nic: Vec<(u64, Event)>,
    /// Per rank, the message so far: parts of (cycle, window) one after another.
    pub parts: Vec<Vec<u8>>,
    /// Whether any part holds events.
    pub events_out: bool,
}

impl Held {
    pub fn new(ranks: usize) -> Self {
        Held { parts: vec![Vec::new(); ranks], ..Default::default() }
    }

    /// Events still to go into a calendar, this rank's or another's.
    pub fn holds_events(&self) -> bool {
        !self.own.is_empty() || !self.nic.is_empty() || self.events_out
    }

    /// End cycle `now` of a window ending before `to`: the rank's own events (`own`,
    /// emptied) and its NICs' (`nic`, emptied) due inside the window go into `cal` now, in
    /// that order, the others are held for the window's end.
    pub fn hold(&mut self, cal: &mut Calendar, now: u64, to: u64, own: &mut Vec<(u64, Event)>, nic: &mut Vec<(u64, Event)>) {
        for (list, held) in [(own, &mut self.own), (nic, &mut self.nic)] {
            if to == now + 1 {
                // A window of one cycle: every event is due after it.
                if held.is_empty() {
                    std::mem::swap(held, list);
                } else {
                    held.append(list);
                }
                continue;
            }
            for (at, ev) in list.drain(..) {
                if at < to {
                    cal.schedule(at, now, ev);
                } else {
                    held.push((at, ev));
                }
            }
        }
        self.cycles.push((now, self.own.len(), self.nic.len()));
    }

    /// Put into `cal`, at the window's last cycle `now`, the events held and those every
    /// other rank sent (`received`, by ascending rank, each its parts by ascending cycle,
    /// which `take_in` schedules), in the one-process order: cycle by cycle, the ranks'
    /// switch events in rank order, this rank's among them, then its NICs'. Fails if a
    /// part is of no cycle of the window.
    pub fn release<W>(&mut self, cal: &mut Calendar, now: u64, rank: usize, received: &mut [(usize, std::collections::VecDeque<(u64, W)>)], mut take_in: impl FnMut(&mut Calendar, usize, &mut W)) -> Result<(), String> {
        let split = received.partition_point(|(r, _)| *r < rank);
        let (mut own_from, mut nic_from) = (0, 0);
        let mut from_ranks = |cal: &mut Calendar, ranks: &mut [(usize, std::collections::VecDeque<(u64, W)>)], cycle: u64| {
            for (r, parts) in ranks {
                while let Some(mut part) = parts.pop_front_if(|(c, _)| *c == cycle) {
                    take_in(cal, *r, &mut part.1);
                }
            }
        };
        for &(cycle, own_to, nic_to) in &self.cycles {
            from_ranks(cal, &mut received[..split], cycle);
            for &(at, ev) in &self.own[own_from..own_to] {
                cal.schedule(at, now, ev);
            }
            from_ranks(cal, &mut received[split..], cycle);
            for &(at, ev) in &self.nic[nic_from..nic_to] {
                cal.schedule(at, now, ev);
            }
            (own_from, nic_from) = (own_to, nic_to);
        }
        if let Some((r, (cycle, _))) = received.iter().find_map(|(r, parts)| parts.front().map(|p| (r, p))) {
            return Err(format!("rank {r} sent events of cycle {cycle}, outside this window ending at {now}"));
        }
        self.cycles.clear();
        self.own.clear();
        self.nic.clear();
        self.events_out = false;
        Ok(())
    }
}
