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
/// `links`: each port of the rank's switches, its peer and its link's latency.
pub fn lookahead_of(links: impl Iterator<Item = (crate::router::Peer, u16)>, owner: impl Fn(usize) -> usize, rank: usize) -> u64 {
    links
        .filter_map(|(peer, latency)| match peer {
            crate::router::Peer::Switch { switch, .. } if owner(switch as usize) != rank => Some(latency as u64),
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

#[cfg(test)]
mod tests {
    use super::Held;
    use crate::calendar::{Calendar, Event};
    use std::collections::VecDeque;

    /// A credit tagged `tag` (in its phits), due at `at`.
    fn credit(tag: u16) -> Event {
        Event::Credit { switch: 0, port: 0, vc: 0, phits: tag }
    }

    fn tags(cal: &mut Calendar, at: u64) -> Vec<u16> {
        cal.take_events(at).iter().map(|e| if let Event::Credit { phits, .. } = *e { phits } else { 0 }).collect()
    }

    #[test]
    fn a_window_puts_events_in_by_cycle_then_rank_then_nics() {
        // Rank 1 of 3, a window of cycles 10..13. Its own events due inside the window (at 11
        // and 12) go in at once; those due at 20 wait for the window's end, and go in among
        // ranks 0's and 2's of the same cycle, cycle by cycle, the NICs' last.
        let mut cal = Calendar::new(64, 1, 1);
        let mut held = Held::new(3);
        let (mut own, mut nic) = (vec![(11, credit(1)), (20, credit(110))], vec![(12, credit(2)), (20, credit(111))]);
        held.hold(&mut cal, 10, 13, &mut own, &mut nic);
        assert!(own.is_empty() && nic.is_empty());
        let (mut own, mut nic) = (vec![(20, credit(120))], vec![(20, credit(121))]);
        held.hold(&mut cal, 11, 13, &mut own, &mut nic);
        held.hold(&mut cal, 12, 13, &mut Vec::new(), &mut Vec::new());
        assert!(held.holds_events());
        // What ranks 0 and 2 sent: per cycle, the tags of their events due at 20.
        let mut received: Vec<(usize, VecDeque<(u64, Vec<u16>)>)> = vec![(0, VecDeque::from([(10, vec![100]), (12, vec![102])])), (2, VecDeque::from([(10, vec![200]), (11, vec![201])]))];
        held.release(&mut cal, 12, 1, &mut received, |cal, _r, part| {
            for &t in part.iter() {
                cal.schedule(20, 12, credit(t));
            }
        })
        .unwrap();
        assert_eq!(tags(&mut cal, 11), [1]);
        assert_eq!(tags(&mut cal, 12), [2]);
        assert_eq!(tags(&mut cal, 20), [100, 110, 200, 111, 120, 201, 121, 102]);
        assert!(!held.holds_events());
        // A part of a cycle outside the window is an error, not lost.
        held.hold(&mut cal, 30, 31, &mut Vec::new(), &mut Vec::new());
        let mut stray: Vec<(usize, VecDeque<(u64, Vec<u16>)>)> = vec![(0, VecDeque::from([(29, vec![1])]))];
        assert!(held.release(&mut cal, 30, 1, &mut stray, |_, _, _| {}).is_err());
    }

    #[test]
    fn the_lookahead_is_the_shortest_link_to_another_rank() {
        use crate::router::Peer;
        let links = [(Peer::Switch { switch: 1, port: 0 }, 3), (Peer::Switch { switch: 5, port: 0 }, 20), (Peer::Server(0), 1), (Peer::Switch { switch: 9, port: 0 }, 7)];
        // Switches 0-3 are rank 0's, 4-7 rank 1's, 8-11 rank 2's.
        let of = |n: usize, rank: usize| super::lookahead_of(links[..n].iter().copied(), |s| s / 4, rank);
        assert_eq!(of(4, 0), 7);
        assert_eq!(of(2, 0), 20);
        assert_eq!(of(1, 0), u64::MAX, "no link leaves the rank");
        assert_eq!(of(4, 1), 3, "seen from rank 1, switches 1 and 9 are other ranks'");
    }
}
