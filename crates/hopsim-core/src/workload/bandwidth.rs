//! Bandwidth test: each sender sends `window` messages back to back, the receiver answers
//! the last one with an acknowledgement; one sample per window, from the first message's
//! creation to the acknowledgement (bandwidth = window x message size / that time).
//! Ping-pong is the same exchange with a window of one message: the sample is the round trip.

use super::{tag, untag, Ctx, Delivered, Post, Sample, Workload};

pub struct Bandwidth {
    name: &'static str,
    pairs: Vec<(u32, u32)>,
    packets: u32,
    ack_packets: u32,
    window: u32,
    iterations: u32,
    phits_per_packet: u64,
    received: Vec<u32>,
    done: Vec<u32>,
    started: Vec<u64>,
    active_pairs: usize,
}

impl Bandwidth {
    pub fn new(pairs: Vec<(u32, u32)>, packets: u32, ack_packets: u32, window: u32, iterations: u32, phits: usize) -> Self {
        let n = pairs.len();
        Bandwidth {
            name: if window == 1 { "ping_pong" } else { "bandwidth" },
            pairs,
            packets,
            ack_packets,
            window,
            iterations,
            phits_per_packet: phits as u64,
            received: vec![0; n],
            done: vec![0; n],
            started: vec![0; n],
            active_pairs: n,
        }
    }

    fn send_window(&mut self, i: usize, cx: &mut Ctx) {
        let (s, r) = self.pairs[i];
        self.started[i] = cx.now;
        for _ in 0..self.window {
            cx.posts.push(Post { src: s, dst: r, packets: self.packets, tag: tag(i, false) });
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
                cx.posts.push(Post { src: r, dst: s, packets: self.ack_packets, tag: tag(i, true) });
            }
            return;
        }
        cx.samples.push(Sample {
            src: s,
            dst: r,
            iteration: self.done[i],
            start: self.started[i],
            cycles: cx.now - self.started[i],
            phits: self.window as u64 * self.packets as u64 * self.phits_per_packet,
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
