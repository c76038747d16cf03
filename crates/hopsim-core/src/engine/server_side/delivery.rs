//! Between the workload and the network: messages are cut into packets (or requests) and
//! queued at their NIC; arriving requests are answered; arriving packets that carry data are
//! reassembled (in order if asked) and complete messages are handed back to the workload.

use crate::calendar::NEVER;
use super::backlog::Queued;
use super::{Net, ServerSide};
use crate::message::Message;
use crate::packet::{Packet, PacketKind, NIL};
use crate::routing::RouteState;
use crate::workload::Delivered;

/// Packets made ahead in a NIC's queue; the rest of a source's messages wait in its backlog
/// as small records until the NIC is about to send them.
const READY_PACKETS: u32 = 2;

impl ServerSide {
    /// Queue a message at its source. Its packets are made only when the NIC is about to
    /// send them (`refill`), so a source queue that grows without bound at saturation costs
    /// a small record per message, not a packet per packet.
    pub(super) fn send_message(&mut self, net: &mut Net, now: u64, post: &crate::workload::Post) {
        let (src, dst, packets, bytes, tag) = (post.src as usize, post.dst as usize, post.packets, post.bytes, post.tag);
        // Above saturation open-loop traffic would grow the queue without bound: its message
        // that does not fit under `nic.source_queue_limit` is refused at the source and
        // counted. (Validation refuses a message longer than the whole queue.)
        let waiting = self.backlog[self.held_index(src)].packets() + self.nics.nic(src).queued as u64;
        if post.droppable && waiting + packets as u64 > self.source_queue_limit {
            self.stats.packets_dropped_at_source += packets as u64;
            return;
        }
        let measured = self.stats.in_window(now);
        // Under a protocol the message's requests need its size, and its answers it.
        let mode = post.mode.map_or(0, |m| m.code());
        let tracked = packets > 1 || self.workload.wants_delivery() || net.parts.params.protocol.is_on() || mode != 0;
        let message = if tracked {
            let record = Message { src: src as u32, dst: dst as u32, created: now, packets, tag, measured, bytes, mode, ..Default::default() };
            if let Some(view) = &mut self.rank {
                let id = self.messages.alloc(record.clone());
                view.posted(&net.parts.servers, id, &record);
                id
            } else {
                self.messages.alloc(record)
            }
        } else {
            NIL
        };
        // In one step: a message may have billions of packets.
        let phits = if net.parts.params.protocol.is_on() {
            net.parts.params.protocol.requests_phits(bytes)
        } else {
            packets as u64 * net.parts.params.packet_phits as u64
        };
        self.stats.on_generate_packets(now, packets as u64, phits);
        if packets == 1 && message == NIL && self.backlog[self.held_index(src)].is_empty() && self.nic_has_room(src) {
            // What `refill` would do with the message as the queue's only one, without
            // queueing it first: most messages below saturation.
            self.make_packet(net, src, Queued::untracked(dst as u32, now as u32));
            self.wake_nic(net, src, now);
            return;
        }
        let at = self.held_index(src);
        self.backlog[at].push_back(dst as u32, now as u32, packets, message);
        self.refill(net, src, now);
    }

    /// Keep `READY_PACKETS` packets ready in the NIC's queue, made from the oldest queued
    /// message, and have the NIC step from `wake_at` if it made any (`wake_nic`).
    /// Tested inline, the refill out of line: after most NIC steps there is nothing to make.
    #[inline(always)]
    pub(super) fn refill(&mut self, net: &mut Net, src: usize, wake_at: u64) {
        if !self.backlog[self.held_index(src)].is_empty() && self.nic_has_room(src) {
            self.refill_from_backlog(net, src, wake_at);
        }
    }

    /// Whether the NIC of `src` holds fewer than `READY_PACKETS` packets made ahead.
    #[inline(always)]
    fn nic_has_room(&self, src: usize) -> bool {
        self.nics.nic(src).queued < READY_PACKETS
    }

    /// What `refill` does when the NIC has room and the backlog a message.
    fn refill_from_backlog(&mut self, net: &mut Net, src: usize, wake_at: u64) {
        while self.nic_has_room(src) {
            let Some(q) = self.backlog[self.held_index(src)].front() else { break };
            let tie_dirs = self.make_packet(net, src, q);
            let at = self.held_index(src);
            self.backlog[at].advance_front(tie_dirs);
            let completes_here = net.parts.params.protocol.kind == crate::nic::protocol::ProtocolKind::Get;
            if q.next_seq + 1 == q.packets && q.message != NIL && self.rank.as_mut().is_some_and(|r| r.all_made(q.message, completes_here)) {
                self.messages.release(q.message);
            }
        }
        self.wake_nic(net, src, wake_at);
    }

    /// Make the next packet of message `q` and queue it at its NIC. Returns the tie
    /// directions its packets take. Forced inline into its two callers: it runs once a packet,
    /// and its call and frame were a third of its instructions (docs/benchmark-log.md).
    #[inline(always)]
    fn make_packet(&mut self, net: &mut Net, src: usize, q: Queued) -> u32 {
        let src_switch = net.parts.servers.switch_of(src) as u32;
        let (dst, seq, created, message) = (q.dst as usize, q.next_seq, q.created as u64, q.message);
        let (phits, kind) = if net.parts.params.protocol.is_on() {
            (Self::request_phits(&net.parts.params, self.messages.get(message).bytes, seq), PacketKind::Request)
        } else {
            (net.parts.params.packet_phits, PacketKind::Data)
        };
        let mode = if message == NIL { 0 } else { self.messages.get(message).mode };
        let mut state = RouteState { src_switch, dst_switch: net.parts.servers.switch_of(dst) as u32, header: seq, mode, ..Default::default() };
        net.parts.routing.on_inject(&mut state, &mut self.nic_rng[src]);
        if let Some(view) = &mut self.rank {
            view.drew(src as u32);
        }
        // Ties (half-way round a ring) are broken once per message, so a routing with one
        // path per pair, like DOR, keeps a message's packets in order.
        state.tie_dirs = q.tie_dirs.unwrap_or(state.tie_dirs);
        // Measured at injection: marked when its head leaves the NIC (nic/mod.rs, `step`).
        let measured = !net.parts.params.measure_at_injection && self.stats.in_window(created);
        let id = net.packets.make(|candidates| Packet {
            src: src as u32,
            dst: dst as u32,
            created,
            injected: NEVER,
            state,
            candidates,
            flits_ejected: 0,
            phits,
            kind,
            measured,
            next: NIL,
            message: self.rank.as_ref().filter(|_| message != NIL).map_or(message, |r| r.carried(message)),
            seq,
            extra_link_latency: 0,
            request_injected: NEVER,
        });
        if message != NIL {
            if let Some(view) = &mut self.rank {
                view.made(id, message, self.messages.get(message));
            }
        }
        self.nics.enqueue(src, id, net.packets);
        state.tie_dirs
    }

    /// Step the NIC of `server` at `at`, or once its channel is free if that is later: a step
    /// before then would only find the channel busy and ask again (a third of the NICs' steps
    /// on the 8x8 torus, when a packet made for a NIC still sending woke it at once).
    #[inline(always)]
    pub(super) fn wake_nic(&self, net: &mut Net, server: usize, at: u64) {
        net.cal.wake_nic(server, at.max(self.nics.nic(server).channel_free));
    }

    /// Phits of packet (or request) `seq` of a message of `bytes`.
    fn request_phits(params: &crate::params::Params, bytes: u64, seq: u32) -> u16 {
        if params.protocol.is_on() {
            params.protocol.request_phits(bytes, seq)
        } else {
            params.packet_phits
        }
    }

    /// Phits of messages waiting in source queues that have no packet made yet.
    pub fn backlog_phits(&self, params: &crate::params::Params) -> u64 {
        if !params.protocol.is_on() {
            let p = params.packet_phits as u64;
            return self.backlog.iter().map(|b| b.packets() * p).sum();
        }
        let left = |q: Queued| {
            let bytes = self.messages.get(q.message).bytes;
            (q.next_seq..q.packets).map(|s| Self::request_phits(params, bytes, s) as u64).sum::<u64>()
        };
        self.backlog.iter().flat_map(|b| b.iter()).map(left).sum()
    }

    /// A request has reached its destination NIC, which answers it: the response is queued
    /// at that NIC's response queue, sent ahead of its own requests.
    fn answer(&mut self, net: &mut Net, now: u64, req: &Packet) {
        let protocol = net.parts.params.protocol;
        let (src, dst) = (req.dst as usize, req.src as usize);
        let get = protocol.kind == crate::nic::protocol::ProtocolKind::Get;
        // Only GET responses need the message (their length; they complete it).
        let (bytes, message) = if get { (self.messages.get(req.message).bytes, req.message) } else { (0, NIL) };
        // A response goes by its request's routing mode.
        let (src_switch, dst_switch) = (net.parts.servers.switch_of(src) as u32, net.parts.servers.switch_of(dst) as u32);
        let mut state = RouteState { src_switch, dst_switch, mode: req.state.mode, header: req.seq, ..Default::default() };
        // The requester's rank knows the message by its serial (`RankView::answer_carries`).
        let carried = self.rank.as_ref().filter(|_| message != NIL).map_or(message, |v| v.answer_carries(message));
        net.parts.routing.on_inject(&mut state, &mut self.nic_rng[src]);
        if let Some(view) = &mut self.rank {
            view.drew(src as u32);
        }
        let phits = protocol.response_phits(bytes, req.seq);
        let measured = !net.parts.params.measure_at_injection && self.stats.in_window(now);
        let id = net.packets.make(|candidates| Packet {
            src: src as u32,
            dst: dst as u32,
            created: now,
            injected: NEVER,
            state,
            candidates,
            flits_ejected: 0,
            phits,
            kind: PacketKind::Response,
            measured,
            next: NIL,
            message: carried,
            seq: req.seq,
            extra_link_latency: 0,
            request_injected: req.injected,
        });
        self.stats.on_generate(now, phits as u64);
        self.nics.enqueue_response(src, id, net.packets);
        self.wake_nic(net, src, now);
        if let Some(view) = self.rank.as_mut().filter(|v| get && v.is_copy(message)) {
            // A copy of another rank's record: freed once every request is answered, which
            // is all this rank reads of it.
            view_answered(view, &mut self.messages, message);
        }
    }

    /// The last phit of a packet has reached its destination NIC.
    pub(super) fn packet_arrived(&mut self, net: &mut Net, now: u64, id: u32) {
        let mut p = *net.packets.get(id);
        if let Some(view) = &self.rank {
            // A packet from another rank carries its message's serial (`RankView`).
            p.message = view.local_record(&net.parts.servers, &p).unwrap_or(p.message);
        }
        match p.kind {
            PacketKind::Data => {}
            PacketKind::Request => self.answer(net, now, &p),
            PacketKind::Response => {
                let requester = p.dst as usize;
                self.nics.response_back(requester);
                let (latency, measuring) = (now - p.request_injected, self.stats.in_window(now));
                match self.rank.as_mut().and_then(|r| r.shared.as_mut()) {
                    // Counted where the calls of the cycle are made, in their order: a shared
                    // workload may read the counters (App-Aware).
                    Some(shared) => shared.calls.push((shared.delivering_sent, super::rank::Call::Response { requester: requester as u32, latency, measuring })),
                    None => self.nics.count_response(requester, latency, measuring),
                }
                // It may have waited for this response (`nic.max_outstanding`).
                self.wake_nic(net, requester, now);
            }
        }
        if !net.parts.params.protocol.carries_data(p.kind) {
            self.packet_delivered(net, now, id);
            return;
        }
        if p.message == NIL {
            self.packet_delivered(net, now, id);
            self.stats.on_message(now, p.created, p.measured, false);
            return;
        }
        let in_order = self.in_order;
        let m = self.messages.get_mut(p.message);
        m.arrived += 1;
        if p.seq == m.next_seq {
            m.next_seq += 1;
            // Packets held for this one can go up too.
            let mut released = Vec::new();
            while let Some(i) = m.pending.iter().position(|&(s, _, _)| s == m.next_seq) {
                released.push(m.pending.swap_remove(i));
                m.next_seq += 1;
            }
            let held = released.len() as u32;
            self.packet_delivered(net, now, id);
            for (_, pid, arrival) in released {
                self.stats.on_reorder_release(now - arrival);
                if in_order {
                    self.packet_delivered(net, now, pid);
                }
            }
            let at = self.held_index(p.dst as usize);
            self.reorder_held[at] -= held;
        } else {
            self.stats.packets_out_of_order += 1;
            m.pending.push((p.seq, id, now));
            let at = self.held_index(p.dst as usize);
            let held = &mut self.reorder_held[at];
            *held += 1;
            self.stats.reorder_buffer_max = self.stats.reorder_buffer_max.max(*held as u64);
            if !in_order {
                self.packet_delivered(net, now, id);
            }
        }
        let m = self.messages.get(p.message);
        if m.arrived == m.packets && m.pending.is_empty() {
            let done = Delivered { src: m.src, dst: m.dst, tag: m.tag, created: m.created };
            let measured = m.measured;
            self.messages.release(p.message);
            if let Some(view) = &mut self.rank {
                view.completed(p.message);
            }
            let ack = self.workload.is_acknowledgement(done.tag);
            self.stats.on_message(now, done.created, measured, ack);
            if self.workload.wants_delivery() {
                match self.rank.as_mut().and_then(|r| r.shared.as_mut()) {
                    Some(shared) => shared.calls.push((shared.delivering_sent, super::rank::Call::Message(done))),
                    None => self.with_workload(net, now, |w, cx| w.delivered(&done, cx)),
                }
            }
        }
    }

    /// The packet reaches the application (on arrival, or when in-order delivery lets it).
    #[inline]
    fn packet_delivered(&mut self, net: &mut Net, now: u64, id: u32) {
        let p = net.packets.get(id);
        let (src, created) = (p.src, p.created);
        self.stats.on_deliver(now, p);
        if let Some(view) = &mut self.rank {
            view.last_delivery = now;
            if let Some(shared) = &mut view.shared {
                let call = super::rank::Call::Packet { src, latency: now - created, measuring: self.stats.in_window(now) };
                shared.calls.push((shared.delivering_sent, call));
                net.packets.release(id);
                return;
            }
        }
        self.workload.packet_delivered(src, now - created);
        let (latency, measuring) = (now - created, self.stats.in_window(now));
        if self.nics.held().contains(&(src as usize)) {
            self.count_delivery(src, latency, measuring);
        } else {
            // Counted at the source's NIC, which another rank holds.
            self.rank.as_mut().expect("only an MPI rank holds some servers").delivered_for(src, latency, measuring);
        }
        net.packets.release(id);
    }
}

/// A request of `message`, a copy of another rank's record, is answered: the copy is freed
/// with the last.
fn view_answered(view: &mut super::rank::RankView, messages: &mut crate::message::Messages, message: u32) {
    let m = messages.get_mut(message);
    m.arrived += 1;
    if m.arrived == m.packets {
        messages.release(message);
        view.completed(message);
    }
}
