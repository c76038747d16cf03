//! Ping-pong: each sender sends a message to its receiver, which answers with an
//! acknowledgement; the round trip (message created to acknowledgement complete) is one
//! sample; repeated `iterations` times per pair.

use super::{tag, untag, Ctx, Delivered, Post, Sample, Workload};

pub struct PingPong {
    pairs: Vec<(u32, u32)>,
    packets: u32,
    ack_packets: u32,
    iterations: u32,
    phits_per_packet: u64,
    done: Vec<u32>,
    started: Vec<u64>,
    active_pairs: usize,
}

impl PingPong {
    pub fn new(pairs: Vec<(u32, u32)>, packets: u32, ack_packets: u32, iterations: u32, phits: usize) -> Self {
        let n = pairs.len();
        PingPong { pairs, packets, ack_packets, iterations, phits_per_packet: phits as u64, done: vec![0; n], started: vec![0; n], active_pairs: n }
    }
}

impl Workload for PingPong {
    fn name(&self) -> &'static str {
        "ping_pong"
    }
    fn start(&mut self, cx: &mut Ctx) {
        for (i, &(s, r)) in self.pairs.iter().enumerate() {
            self.started[i] = cx.now;
            cx.posts.push(Post { src: s, dst: r, packets: self.packets, tag: tag(i, false) });
        }
    }
    fn wants_delivery(&self) -> bool {
        true
    }
    fn delivered(&mut self, msg: &Delivered, cx: &mut Ctx) {
        let (i, ack) = untag(msg.tag);
        let (s, r) = self.pairs[i];
        if !ack {
            cx.posts.push(Post { src: r, dst: s, packets: self.ack_packets, tag: tag(i, true) });
            return;
        }
        cx.samples.push(Sample {
            src: s,
            dst: r,
            iteration: self.done[i],
            start: self.started[i],
            cycles: cx.now - self.started[i],
            phits: self.packets as u64 * self.phits_per_packet,
        });
        self.done[i] += 1;
        if self.done[i] < self.iterations {
            self.started[i] = cx.now;
            cx.posts.push(Post { src: s, dst: r, packets: self.packets, tag: tag(i, false) });
        } else {
            self.active_pairs -= 1;
        }
    }
    fn finished(&self) -> bool {
        self.active_pairs == 0
    }
}
