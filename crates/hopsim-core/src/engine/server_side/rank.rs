//! The servers' side of one rank of a run over several (engine/ranks): which servers are
//! its own, the messages it exchanges with other ranks, and, for a workload whose servers
//! share state, what keeps every rank's copy of that workload the same as one process's.
//!
//! **Messages between ranks.** A message's record (its size, tag and reassembly) is made
//! at its source, where its packets are cut, and read at its destination, where they are
//! put together. It travels with its packets: each packet's head that crosses to another
//! rank carries a copy, so that a rank's messages go only to the ranks its links reach. A
//! rank keeps one copy while any of the message's packets is at it (`transit`, `riding`);
//! the destination's rank makes its own record from the first copy that reaches it. The
//! source frees its record once the last packet is made. The packets of such a message
//! carry, instead of the source's record number, a serial number the ranks know it by. Under a GET protocol the message completes back at its source: the
//! target answers each request from its copy of the record and frees the copy with the last
//! answer, the responses carry the serial back, and the source keeps its record until they
//! complete it.
//!
//! **A shared workload** (closed loops and jobs under GET, jobs under App-Aware without a
//! protocol: `workload::servers_independent` false; otherwise each rank runs its own
//! servers' part, `Workload::partition`) runs whole on every rank, and every rank makes the calls one process makes, in its order:
//! every rank fires every timer, and the calls a delivery makes (a packet or a message
//! delivered) wait until the rank's deliveries of the cycle are done; every rank then
//! sends its calls to all, and all make them in the one-process order (by the cycle their
//! ejection was scheduled in, then by rank, since ranks own ascending ranges of switches).
//! Only a server's own rank sends what the workload posts for it. A workload draws random
//! numbers only in a server's timer (`Ctx::rng`), from the server's stream, which the NIC
//! and routing draw from too at its own rank: after each cycle that rank sends the others
//! the streams it drew from, so that every rank's timers draw the same numbers.

use crate::engine::parallel::Partition;
use crate::message::Message;
use crate::route::Rng;
use crate::topology::ServerMap;
use crate::workload::Delivered;
use std::collections::HashMap;

pub(crate) struct RankView {
    rank: usize,
    part: Partition,
    /// Source side: the serial of each record sent, by record number, and back (a GET
    /// message's responses come back with it).
    serial_of: HashMap<u32, u32>,
    own_serial: HashMap<u32, u32>,
    next_serial: u32,
    /// The copies of records travelling with packets at this rank, by (source rank,
    /// serial), with how many of their packets are here; and each such packet's record.
    transit: HashMap<(u32, u32), (Message, u32)>,
    riding: HashMap<u32, (u32, u32)>,
    /// Destination side: (source rank, serial) to the local record, and back.
    local: HashMap<(u32, u32), u32>,
    key_of: HashMap<u32, (u32, u32)>,
    /// Packets this rank delivered whose source is another rank's, which the source's NIC
    /// counts: (source, measured) to (packets, latencies summed). Sent to the sources' ranks
    /// at the end of the run, or with a cycle's exchange once they are many for the rank's
    /// servers (`deliveries_due`), so that they take memory in proportion to its share: a
    /// workload whose servers are independent reads no NIC counter while it runs, and a
    /// shared one counts its deliveries among its calls instead.
    deliveries: HashMap<(u32, bool), (u64, u64)>,
    /// For a shared workload.
    pub shared: Option<Shared>,
    /// The last cycle a packet reached the application here: a run whose workload finished
    /// ends after the later of this over the ranks and the workload's stop, which ranks
    /// learn only at a window's end.
    pub last_delivery: u64,
}

/// What keeps a shared workload the same on every rank.
#[derive(Default)]
pub(crate) struct Shared {
    /// The calls this rank's deliveries of the cycle make, in order, each with the cycle
    /// its packet's last ejection was scheduled in.
    pub calls: Vec<(u64, Call)>,
    /// The cycle each packet's last ejection so far was scheduled in (its switch's step).
    pub eject_sent: HashMap<u32, u64>,
    /// The cycle of the ejection being delivered.
    pub delivering_sent: u64,
    /// Own servers whose random streams were drawn from since the last exchange.
    pub drawn: Vec<u32>,
}

/// A call a delivery makes to the workload.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) enum Call {
    /// A packet from `src` reached the application, `latency` cycles after its creation;
    /// `measuring`: in the measured window (its source NIC counts it).
    Packet { src: u32, latency: u64, measuring: bool },
    /// A response came back to `requester`, `latency` cycles after its request left.
    Response { requester: u32, latency: u64, measuring: bool },
    Message(Delivered),
}

impl RankView {
    pub fn new(rank: usize, part: Partition, shared: bool) -> Self {
        RankView {
            rank,
            part,
            serial_of: HashMap::new(),
            own_serial: HashMap::new(),
            next_serial: 0,
            transit: HashMap::new(),
            riding: HashMap::new(),
            local: HashMap::new(),
            key_of: HashMap::new(),
            deliveries: HashMap::new(),
            shared: shared.then(Shared::default),
            last_delivery: 0,
        }
    }

    pub fn owner(&self, servers: &ServerMap, server: u32) -> usize {
        self.part.owner(servers.switch_of(server as usize))
    }

    pub fn owns(&self, servers: &ServerMap, server: u32) -> bool {
        self.owner(servers, server) == self.rank
    }

    /// A message record `id` was just made at its source: numbered for the ranks if its
    /// destination is another's.
    pub fn posted(&mut self, servers: &ServerMap, id: u32, record: &Message) {
        if self.owner(servers, record.dst) != self.rank {
            let serial = self.next_serial;
            self.next_serial = self.next_serial.wrapping_add(1);
            self.serial_of.insert(id, serial);
            self.own_serial.insert(serial, id);
        }
    }

    /// Packet `packet` of record `id` was just made at its source: if the record goes to
    /// another rank, the packet carries it.
    #[inline]
    pub fn made(&mut self, packet: u32, id: u32, record: &Message) {
        if let Some(&serial) = self.serial_of.get(&id) {
            self.ride(packet, (self.rank as u32, serial), || record.as_sent());
        }
    }

    fn ride(&mut self, packet: u32, key: (u32, u32), record: impl FnOnce() -> Message) {
        self.transit.entry(key).or_insert_with(|| (record(), 0)).1 += 1;
        self.riding.insert(packet, key);
    }

    /// A flit of packet `packet` leaves for another rank: if it is the head, the copy of its
    /// message's record it carries (with the record's (source rank, serial)); if it is the
    /// tail, the packet is gone from here.
    pub fn carries(&mut self, packet: u32, head: bool, tail: bool) -> Option<((u32, u32), Message)> {
        let key = *self.riding.get(&packet)?;
        let carried = head.then(|| (key, self.transit[&key].0.clone()));
        if tail {
            self.riding.remove(&packet);
            let (_, here) = self.transit.get_mut(&key).expect("a riding packet's record is in transit");
            *here -= 1;
            if *here == 0 {
                self.transit.remove(&key);
            }
        }
        carried
    }

    /// Packet `packet`, whose destination is `dst`, reached this rank with a copy of its
    /// message's record: the destination's rank makes its record of it (`alloc`) from the
    /// first copy; another rank keeps the copy while the packet is here.
    pub fn arrived_with(&mut self, servers: &ServerMap, packet: u32, dst: u32, key: (u32, u32), record: Message, alloc: impl FnOnce(Message) -> u32) {
        if self.owns(servers, dst) {
            if !self.local.contains_key(&key) {
                let id = alloc(record);
                self.local.insert(key, id);
                self.key_of.insert(id, key);
            }
        } else {
            self.ride(packet, key, || record);
        }
    }

    /// What the packets of record `id` carry as their message.
    #[inline]
    pub fn carried(&self, id: u32) -> u32 {
        self.serial_of.get(&id).copied().unwrap_or(id)
    }

    /// The last packet of record `id` is made: whether the record went to another rank and
    /// can be freed here. Not if the message completes here (`completes_here`: a GET
    /// message, whose responses bring its data back): it is freed then (`completed`).
    pub fn all_made(&mut self, id: u32, completes_here: bool) -> bool {
        if completes_here {
            return false;
        }
        let serial = self.serial_of.remove(&id);
        if let Some(serial) = serial {
            self.own_serial.remove(&serial);
        }
        serial.is_some()
    }

    /// A packet from `src`, another rank's server, was delivered here.
    pub fn delivered_for(&mut self, src: u32, latency: u64, measuring: bool) {
        let (packets, latencies) = self.deliveries.entry((src, measuring)).or_default();
        *packets += 1;
        *latencies += latency;
    }

    /// Whether the deliveries kept for other ranks' servers are more than the rank's own
    /// `servers`, and go with this cycle's exchange.
    pub fn deliveries_due(&self, servers: usize) -> bool {
        self.deliveries.len() > servers
    }

    /// The deliveries for each rank's servers (`delivered_for`), by rank, each list in
    /// server order: (source, measured, packets, latencies summed).
    pub fn take_deliveries(&mut self, servers: &ServerMap, ranks: usize) -> Vec<Vec<(u32, bool, u64, u64)>> {
        let mut all: Vec<_> = self.deliveries.drain().map(|((src, measured), (packets, latencies))| (src, measured, packets, latencies)).collect();
        all.sort_unstable();
        let mut by_rank = vec![Vec::new(); ranks];
        for d in all {
            by_rank[self.owner(servers, d.0)].push(d);
        }
        by_rank
    }


    /// The local record of the message of a packet delivered here, if the packet came from
    /// another rank (its packets carry its serial until then, wherever they pass): a copy of
    /// the source's record, or for a response the record this rank made as the requester.
    pub fn local_record(&self, servers: &ServerMap, p: &crate::packet::Packet) -> Option<u32> {
        let from = self.owner(servers, p.src);
        if p.message == crate::packet::NIL || from == self.rank || self.owner(servers, p.dst) != self.rank {
            return None;
        }
        if p.kind == crate::packet::PacketKind::Response {
            return Some(*self.own_serial.get(&p.message).expect("a response comes back to the requester's record"));
        }
        Some(*self.local.get(&(from as u32, p.message)).expect("a message's record reaches its destination before its packets"))
    }

    /// What the response to a request of record `id` carries as its message: the serial the
    /// requester's rank knows it by, if `id` is a copy of another rank's record.
    pub fn answer_carries(&self, id: u32) -> u32 {
        self.key_of.get(&id).map_or(id, |&(_, serial)| serial)
    }

    /// Whether record `id` is a copy of another rank's record.
    pub fn is_copy(&self, id: u32) -> bool {
        self.key_of.contains_key(&id)
    }

    /// Record `id` is freed: a copy of another rank's whose message is complete here (or,
    /// under GET, all of whose requests are answered), or this rank's own GET message, whose
    /// responses completed it.
    pub fn completed(&mut self, id: u32) {
        if let Some(key) = self.key_of.remove(&id) {
            self.local.remove(&key);
        }
        if let Some(serial) = self.serial_of.remove(&id) {
            self.own_serial.remove(&serial);
        }
    }

    /// What a checkpoint keeps of it between two cycles (engine/checkpoint.rs), when the
    /// records to send and the calls of the cycle are all sent.
    pub fn save(&self, out: &mut dyn std::io::Write) -> bincode::Result<()> {
        let saved = (&self.serial_of, self.next_serial, &self.local, &self.key_of, self.shared.as_ref().map(|s| &s.eject_sent), &self.deliveries);
        bincode::serialize_into(out, &(saved, &self.transit, &self.riding, self.last_delivery))
    }

    /// Back to what `save` wrote, on a view made for the same rank.
    pub fn restore(&mut self, input: &mut dyn std::io::Read) -> bincode::Result<()> {
        type Saved = (HashMap<u32, u32>, u32, HashMap<(u32, u32), u32>, HashMap<u32, (u32, u32)>, Option<HashMap<u32, u64>>, HashMap<(u32, bool), (u64, u64)>);
        type Travelling = (HashMap<(u32, u32), (Message, u32)>, HashMap<u32, (u32, u32)>);
        let eject_sent;
        let saved: (Saved, Travelling, u64) = bincode::deserialize_from(input)?;
        ((self.serial_of, self.next_serial, self.local, self.key_of, eject_sent, self.deliveries), (self.transit, self.riding), self.last_delivery) = saved;
        self.own_serial = self.serial_of.iter().map(|(&id, &serial)| (serial, id)).collect();
        if let (Some(shared), Some(sent)) = (&mut self.shared, eject_sent) {
            shared.eject_sent = sent;
        }
        Ok(())
    }

    /// An own server's stream was drawn from outside the workload.
    #[inline]
    pub fn drew(&mut self, server: u32) {
        if let Some(shared) = &mut self.shared {
            shared.drawn.push(server);
        }
    }

    /// The streams drawn from since the last exchange, for the other ranks.
    pub fn drawn_streams(&mut self, rng: &crate::random::Streams) -> Vec<(u32, Rng)> {
        let Some(shared) = &mut self.shared else { return Vec::new() };
        shared.drawn.sort_unstable();
        shared.drawn.dedup();
        shared.drawn.drain(..).map(|s| (s, rng[s as usize].clone())).collect()
    }
}
