//! Bandwidth test: each sender sends `window` messages back to back, the receiver answers
//! the last one with an acknowledgement; one sample per window, from the first message's
//! creation to the acknowledgement (bandwidth = window x message size / that time).
//! Ping-pong is the same exchange with a window of one message: the sample is the round trip.
//! Each sample also keeps when the data was complete and the sender's NIC counters over it,
//! from which the report computes the paper's cost model.

use super::{tag, untag, Ctx, Delivered, MessageSize, Sample, Workload};
use crate::nic::Counters;

pub struct Bandwidth {
    name: &'static str,
    pairs: Vec<(u32, u32)>,
    message: MessageSize,
    ack: MessageSize,
    window: u32,
    iterations: u32,
    received: Vec<u32>,
    done: Vec<u32>,
    started: Vec<u64>,
    /// When the window's last data message was complete.
    data_done: Vec<u64>,
    /// The sender's counters when the window started.
    counters_at_start: Vec<Counters>,
    active_pairs: usize,
}

impl Bandwidth {
    pub fn new(pairs: Vec<(u32, u32)>, message: MessageSize, ack: MessageSize, window: u32, iterations: u32) -> Self {
        let n = pairs.len();
        Bandwidth {
            name: if window == 1 { "ping_pong" } else { "bandwidth" },
            pairs,
            message,
            ack,
            window,
            iterations,
            received: vec![0; n],
            done: vec![0; n],
            started: vec![0; n],
            data_done: vec![0; n],
            counters_at_start: vec![Counters::default(); n],
            active_pairs: n,
        }
    }

    fn send_window(&mut self, i: usize, cx: &mut Ctx) {
        let (s, r) = self.pairs[i];
        self.started[i] = cx.now;
        self.counters_at_start[i] = cx.nic_totals[s as usize];
        for _ in 0..self.window {
            cx.posts.push(self.message.post(s, r, tag(i, false)));
        }
    }
}

impl Workload for Bandwidth {
    fn name(&self) -> &'static str {
        self.name
    }
    fn start(&mut self, cx: &mut Ctx) {
        for i in 0..self.pairs.len() {
            self.send_window(i, cx);
        }
    }
    fn wants_delivery(&self) -> bool {
        true
    }
    fn is_acknowledgement(&self, tag: u32) -> bool {
        untag(tag).1
    }
    fn delivered(&mut self, msg: &Delivered, cx: &mut Ctx) {
        let (i, ack) = untag(msg.tag);
        let (s, r) = self.pairs[i];
        if !ack {
            self.received[i] += 1;
            if self.received[i] == self.window {
                self.received[i] = 0;
                self.data_done[i] = cx.now;
                cx.posts.push(self.ack.post(r, s, tag(i, true)));
            }
            return;
        }
        cx.samples.push(Sample {
            src: s,
            dst: r,
            iteration: self.done[i],
            start: self.started[i],
            cycles: cx.now - self.started[i],
            message_cycles: self.data_done[i] - self.started[i],
            phits: self.window as u64 * self.message.payload_phits,
            counters: cx.nic_totals[s as usize].since(&self.counters_at_start[i]),
        });
        self.done[i] += 1;
        if self.done[i] < self.iterations {
            self.send_window(i, cx);
        } else {
            self.active_pairs -= 1;
        }
    }
    fn finished(&self) -> bool {
        self.active_pairs == 0
    }
}
