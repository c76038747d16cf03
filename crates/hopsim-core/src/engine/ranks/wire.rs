//! What one rank sends another after each window of cycles (`Window`, a part per cycle),
//! and how the receiver takes it in: the events the sender's switch steps scheduled for the
//! receiver's switches, in step order, and the record of each packet whose head crosses, which the receiver copies into
//! its own packet arena, with the copy of its message's record it carries. A packet's
//! number is its slot in its rank's arena, so the body flits that follow a head find the
//! receiver's copy through `Crossing`; the sender frees its copy once the tail has left.

use crate::calendar::Event;
use crate::message::Message;
use crate::route::Rng;
use crate::packet::{Arena, Packet};
use std::collections::HashMap;

/// What a rank tells every other rank about itself after a cycle: enough for all of them to
/// take the same decisions at the end of the cycle (stop, deadlock, the next cycle to run),
/// which a one-process run takes from its whole state. Summed over the ranks (`add`), the
/// run's state: the exchange adds it up as two reductions, a sum and a maximum of unsigned
/// 64-bit words (`reductions`, `from_reductions`), which MPI has built in.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Status {
    /// Packets the rank's NICs injected, and packets its NICs received.
    pub injected: u64,
    pub delivered: u64,
    pub generated: u64,
    /// The last cycle anything moved at this rank (the watchdog's).
    pub last_progress: u64,
    /// Anything left on its way at this rank after the cycle: events or visits in its
    /// calendar, or events it sends.
    pub busy: bool,
    /// The rank's next workload timer.
    pub next_timer: Option<u64>,
    /// Its workload has nothing more to send (a closed-loop one), and the cycle it finished
    /// at (`Workload::finished_at`, 0 if it does not tell); the run's is the latest.
    pub workload_finished: bool,
    pub finished_at: u64,
    /// The last cycle a packet reached the application at this rank.
    pub last_delivery: u64,
    /// Phits of packets measured (sent or generated in the window), and of those delivered.
    pub measured_phits: u64,
    pub measured_delivered_phits: u64,
}

impl Status {
    /// Nothing yet: what `add` starts from to sum the ranks' statuses into the run's.
    #[cfg(test)]
    pub fn none() -> Self {
        Status { workload_finished: true, ..Default::default() }
    }
    /// Add another rank's status: counts add up, the last progress and the next timer are
    /// the latest and the earliest, the run is busy if any rank is, and its workload
    /// finished if every rank's is. The meaning of the reductions, which the tests hold
    /// them to.
    #[cfg(test)]
    pub fn add(&mut self, s: &Status) {
        self.injected += s.injected;
        self.delivered += s.delivered;
        self.generated += s.generated;
        self.last_progress = self.last_progress.max(s.last_progress);
        self.busy |= s.busy;
        self.next_timer = match (self.next_timer, s.next_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.workload_finished &= s.workload_finished;
        self.finished_at = self.finished_at.max(s.finished_at);
        self.last_delivery = self.last_delivery.max(s.last_delivery);
        self.measured_phits += s.measured_phits;
        self.measured_delivered_phits += s.measured_delivered_phits;
    }
    /// The status as words to sum over the ranks and words to take the maximum of: the
    /// flags as counts of ranks (busy, and whose workload is not finished), and the next
    /// timer as its distance below `u64::MAX` (the earliest timer is then the maximum; no
    /// timer is 0).
    pub fn reductions(&self) -> (Vec<u64>, Vec<u64>) {
        let sums = vec![self.injected, self.delivered, self.generated, self.measured_phits, self.measured_delivered_phits, self.busy as u64, !self.workload_finished as u64];
        let maxima = vec![self.last_progress, self.next_timer.map_or(0, |t| u64::MAX - t), self.finished_at, self.last_delivery];
        (sums, maxima)
    }

    /// The run's status from the reductions of every rank's (`reductions`): what `add`
    /// makes of them.
    pub fn from_reductions(sums: &[u64], maxima: &[u64]) -> Result<Self, String> {
        let (&[injected, delivered, generated, measured_phits, measured_delivered_phits, busy, unfinished], &[last_progress, timer, finished_at, last_delivery]) = (sums, maxima) else {
            return Err(format!("the exchange returned {} sums and {} maxima, not 7 and 4", sums.len(), maxima.len()));
        };
        Ok(Status {
            injected,
            delivered,
            generated,
            last_progress,
            busy: busy > 0,
            next_timer: (timer > 0).then(|| u64::MAX - timer),
            workload_finished: unfinished == 0,
            finished_at,
            last_delivery,
            measured_phits,
            measured_delivered_phits,
        })
    }

    /// Packets injected and not delivered yet.
    pub fn in_network(&self) -> u64 {
        self.injected - self.delivered
    }
    pub fn measured_undelivered(&self) -> bool {
        self.measured_delivered_phits < self.measured_phits
    }
}

/// A cycle's part of one rank's message to another, made only when not empty (`is_empty`).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Window {
    /// (cycle due, event), in the order the sender's steps scheduled them.
    pub events: Vec<(u64, Event)>,
    /// The records of the packets whose heads are among `events`, in their order.
    pub packets: Vec<Packet>,
    /// For each of those packets, the copy of its message's record it carries, if it does
    /// (`RankView::carries`): ((source rank, serial), record).
    pub carried: Vec<Option<Carried>>,
    /// Packets the sender delivered from the receiver's servers, when it had kept enough
    /// of them (`RankView::deliveries_due`): (source, measured, packets, latencies summed).
    pub deliveries: Vec<(u32, bool, u64, u64)>,
    /// The random streams of the sender's servers it drew from (a shared workload).
    pub streams: Vec<(u32, Rng)>,
    /// The backlogs of the sender's ports that changed in the cycle, (network port,
    /// backlog), where routing reads other switches' ports (router/observer.rs).
    pub observed: Vec<(u32, u32)>,
}

/// A message's record travelling with a packet: ((source rank, serial), record).
pub type Carried = ((u32, u32), Message);

/// Whether a window would tell its receiver nothing, so that it is not sent.
pub fn is_empty(events: &[(u64, Event)], streams: &[(u32, Rng)], deliveries: &[(u32, bool, u64, u64)], observed: &[(u32, u32)]) -> bool {
    events.is_empty() && streams.is_empty() && deliveries.is_empty() && observed.is_empty()
}

/// Append to `message` the part of cycle `cycle` for another rank: its events, and the
/// records of the packets whose heads cross with the message records they carry
/// (`carries`, told of every crossing flit: (packet, head, tail)); the sender's copy of a
/// packet whose tail crosses is freed. A message is the parts of a window's cycles one
/// after another (`decode`).
#[allow(clippy::too_many_arguments)]
pub fn encode(message: &mut Vec<u8>, cycle: u64, events: &[(u64, Event)], packets: &mut Arena, carries: &mut dyn FnMut(u32, bool, bool) -> Option<Carried>, streams: &[(u32, Rng)], deliveries: &[(u32, bool, u64, u64)], observed: &[(u32, u32)]) {
    let (mut records, mut carried) = (Vec::new(), Vec::new());
    for (_, ev) in events {
        if let Event::FlitArrive { packet, flit, .. } = *ev {
            let record = carries(packet, flit.is_head(), flit.is_tail());
            if flit.is_head() {
                records.push(*packets.get(packet));
                carried.push(record);
            }
            if flit.is_tail() {
                packets.release(packet);
            }
        }
    }
    bincode::serialize_into(message, &(cycle, events, records, carried, streams, deliveries, observed)).expect("a window serialises")
}

/// The parts of a message (`encode`), each with its cycle, in their order.
pub fn decode(mut bytes: &[u8]) -> bincode::Result<std::collections::VecDeque<(u64, Window)>> {
    let mut parts = std::collections::VecDeque::new();
    while !bytes.is_empty() {
        let (cycle, events, packets, carried, streams, deliveries, observed) = bincode::deserialize_from(&mut bytes)?;
        parts.push_back((cycle, Window { events, packets, carried, streams, deliveries, observed }));
    }
    Ok(parts)
}

/// The packets of other ranks whose heads have crossed and whose tails have not: the
/// sender's rank and packet number to the number of this rank's copy.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Crossing(HashMap<(u32, u32), u32>);

impl Crossing {
    /// The events of `window`, from rank `from`, with their packets numbered as in this
    /// rank's arena (a head's record copied in, and the message record it carries handed to
    /// `arrived` with the packet's number here), in the sender's order.
    pub fn take_in<'w>(&'w mut self, from: usize, window: &'w mut Window, packets: &'w mut Arena, arrived: &'w mut dyn FnMut(u32, &Packet, Carried)) -> impl Iterator<Item = (u64, Event)> + 'w {
        let mut records = window.packets.iter().zip(window.carried.iter_mut());
        window.events.iter().map(move |&(at, mut ev)| {
            if let Event::FlitArrive { packet, flit, .. } = &mut ev {
                let key = (from as u32, *packet);
                if flit.is_head() {
                    let (record, carried) = records.next().expect("a crossing head comes with its packet");
                    let local = packets.make(|candidates| Packet { candidates, ..*record });
                    if let Some(message) = carried.take() {
                        arrived(local, record, message);
                    }
                    self.0.insert(key, local);
                }
                let local = if flit.is_tail() { self.0.remove(&key) } else { self.0.get(&key).copied() };
                *packet = local.expect("a crossing flit follows its head");
            }
            (at, ev)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Status;

    #[test]
    fn the_reductions_of_statuses_add_up_as_the_statuses_do() {
        let ranks = [
            Status { injected: 5, delivered: 3, generated: 6, last_progress: 40, busy: false, next_timer: None, workload_finished: true, finished_at: 300, last_delivery: 310, measured_phits: 10, measured_delivered_phits: 7 },
            Status { injected: 2, delivered: 2, generated: 2, last_progress: 44, busy: true, next_timer: Some(90), workload_finished: false, finished_at: 0, last_delivery: 320, measured_phits: 4, measured_delivered_phits: 4 },
            Status { injected: 0, delivered: 1, generated: 0, last_progress: 12, busy: false, next_timer: Some(70), workload_finished: true, finished_at: 305, last_delivery: 0, measured_phits: 0, measured_delivered_phits: 1 },
        ];
        for take in 1..=ranks.len() {
            let mut added = Status::none();
            let (mut sums, mut maxima) = (vec![0u64; 7], vec![0u64; 4]);
            for s in &ranks[..take] {
                added.add(s);
                let (a, b) = s.reductions();
                sums.iter_mut().zip(a).for_each(|(x, y)| *x += y);
                maxima.iter_mut().zip(b).for_each(|(x, y)| *x = (*x).max(y));
            }
            let reduced = Status::from_reductions(&sums, &maxima).unwrap();
            assert_eq!(format!("{reduced:?}"), format!("{added:?}"), "{take} ranks");
        }
        assert!(Status::from_reductions(&[0; 6], &[0; 4]).is_err());
        assert!(Status::from_reductions(&[0; 7], &[0; 2]).is_err());
    }
}
