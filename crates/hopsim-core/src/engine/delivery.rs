//! Between the workload and the network: messages are cut into packets and queued at their
//! NIC; arriving packets are reassembled (in order if asked) and complete messages are
//! handed back to the workload.

use super::calendar::NEVER;
use super::Simulation;
use crate::message::Message;
use crate::packet::{Packet, NIL};
use crate::routing::{Candidates, RouteState};
use crate::workload::{Ctx, Delivered, Workload};
use std::cmp::Reverse;

impl Simulation {
    /// Call the workload, then send the messages it posted and arm the timers it set.
    pub(super) fn with_workload(&mut self, now: u64, f: impl FnOnce(&mut dyn Workload, &mut Ctx)) {
        let mut cx = Ctx { now, rng: &mut self.nic_rng, posts: &mut self.posts, timers: &mut self.new_timers, samples: &mut self.samples };
        f(self.workload.as_mut(), &mut cx);
        for (t, s) in self.new_timers.drain(..) {
            self.timers.push(Reverse((t, s)));
        }
        let posts = std::mem::take(&mut self.posts);
        for post in &posts {
            self.send_message(now, post.src as usize, post.dst as usize, post.packets, post.tag);
        }
        self.posts = posts;
        self.posts.clear();
    }

    /// Queue a message at its source. Its packets are made only when the NIC is about to
    /// send them (`refill`), so a source queue that grows without bound at saturation costs
    /// a small record per message, not a packet per packet.
    fn send_message(&mut self, now: u64, src: usize, dst: usize, packets: u32, tag: u32) {
        // Above saturation the queue would grow without bound: a message that does not fit
        // under `nic.source_queue_limit` is refused at the source and counted.
        let waiting = self.backlog[src].packets() + self.nics.nics[src].queued as u64;
        if waiting + packets as u64 > self.spec.nic.source_queue_limit {
            self.stats.packets_dropped_at_source += packets as u64;
            return;
        }
        let measured = self.stats.in_window(now);
        let tracked = packets > 1 || self.workload.wants_delivery();
        let message = if tracked {
            self.messages.alloc(Message { src: src as u32, dst: dst as u32, created: now, packets, tag, measured, ..Default::default() })
        } else {
            NIL
        };
        for _ in 0..packets {
            self.stats.on_generate(now, self.params.packet_phits as u64);
        }
        self.backlog[src].push_back(dst as u32, now as u32, packets, message);
        self.refill(src, now);
    }

    /// Keep a couple of packets ready in the NIC's queue, made from the oldest queued message.
    pub(super) fn refill(&mut self, src: usize, wake_at: u64) {
        if self.backlog[src].is_empty() || self.nics.nics[src].queued >= 2 {
            return;
        }
        let src_switch = self.servers.switch_of(src) as u32;
        while self.nics.nics[src].queued < 2 {
            let Some(q) = self.backlog[src].front() else { break };
            let (dst, seq, created, message) = (q.dst as usize, q.next_seq, q.created as u64, q.message);
            let mut state = RouteState { src_switch, dst_switch: self.servers.switch_of(dst) as u32, ..Default::default() };
            self.routing.on_inject(&mut state, &mut self.nic_rng[src]);
            // Ties (half-way round a ring) are broken once per message, so a routing with one
            // path per pair, like DOR, keeps a message's packets in order.
            state.tie_dirs = q.tie_dirs.unwrap_or(state.tie_dirs);
            self.backlog[src].advance_front(state.tie_dirs);
            let id = self.packets.alloc(Packet {
                src: src as u32,
                dst: dst as u32,
                created,
                injected: NEVER,
                state,
                candidates: Candidates::default(),
                flits_ejected: 0,
                measured: self.stats.in_window(created),
                next: NIL,
                message,
                seq,
            });
            self.nics.enqueue(src, id, &mut self.packets);
        }
        self.cal.wake_nic(src, wake_at);
    }

    /// Phits of messages waiting in source queues that have no packet made yet.
    pub(super) fn backlog_phits(&self) -> u64 {
        let p = self.params.packet_phits as u64;
        self.backlog.iter().map(|b| b.packets() * p).sum()
    }

    /// The last phit of a packet has reached its destination NIC.
    pub(super) fn packet_arrived(&mut self, now: u64, id: u32) {
        let p = *self.packets.get(id);
        if p.message == NIL {
            self.packet_delivered(now, id);
            self.stats.on_message(now, p.created, p.measured, false);
            return;
        }
        let in_order = self.spec.message.in_order;
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
            self.packet_delivered(now, id);
            for (_, pid, arrival) in released {
                self.stats.on_reorder_release(now - arrival);
                if in_order {
                    self.packet_delivered(now, pid);
                }
            }
            self.reorder_held[p.dst as usize] -= held;
        } else {
            self.stats.packets_out_of_order += 1;
            m.pending.push((p.seq, id, now));
            let held = &mut self.reorder_held[p.dst as usize];
            *held += 1;
            self.stats.reorder_buffer_max = self.stats.reorder_buffer_max.max(*held as u64);
            if !in_order {
                self.packet_delivered(now, id);
            }
        }
        let m = self.messages.get(p.message);
        if m.arrived == m.packets && m.pending.is_empty() {
            let done = Delivered { src: m.src, dst: m.dst, tag: m.tag, created: m.created };
            let measured = m.measured;
            self.messages.release(p.message);
            let ack = self.workload.is_acknowledgement(done.tag);
            self.stats.on_message(now, done.created, measured, ack);
            if self.workload.wants_delivery() {
                self.with_workload(now, |w, cx| w.delivered(&done, cx));
            }
        }
    }

    /// The packet reaches the application (on arrival, or when in-order delivery lets it).
    fn packet_delivered(&mut self, now: u64, id: u32) {
        let p = *self.packets.get(id);
        self.stats.on_deliver(now, p.created, p.injected, p.state.hops as u64, p.measured);
        if self.stats.in_window(now) {
            let c = &mut self.nics.counters[p.src as usize];
            c.packets += 1;
            c.latency_sum += now - p.created;
        }
        self.packets.release(id);
    }
}
