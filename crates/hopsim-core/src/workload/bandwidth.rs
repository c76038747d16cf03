//! Bandwidth test: each sender sends `window` messages back to back, the receiver answers
//! the last one with an acknowledgement; one sample per window, from the first message's
//! creation to the acknowledgement (bandwidth = window x message size / that time).
//! Ping-pong is the same exchange with a window of one message: the sample is the round trip.
//! Each sample also keeps when the data was complete and the sender's NIC counters over it,
//! from which the report computes the paper's cost model.

use super::{tag, untag, BuildCtx, Ctx, Delivered, MessageSize, Sample, Workload, WorkloadKind};
use crate::error::{SpecError, SpecResult};
use crate::nic::Counters;
use crate::spec::{ProtocolKind, Spec};

/// What it keeps per pair of servers: the pair, its three counts and cycles, and its sender's
/// counters when its window started.
const PAIR_BYTES: u64 = 8 + 4 + 4 + 8 + std::mem::size_of::<Counters>() as u64;

pub const PING_PONG: WorkloadKind = WorkloadKind {
    name: "ping_pong",
    about: "a message, answered by an acknowledgement; one sample per round trip",
    closed_loop: true,
    servers_independent: true,
    tables_per_server: PAIR_BYTES / 2,
    keys: PingPongKeys::KEYS,
    defaults: PingPongKeys::defaults,
    check: |spec| check(spec, &ping_pong_keys(spec)?),
    build: |cx| build(cx, &ping_pong_keys(cx.spec)?),
};

pub const BANDWIDTH: WorkloadKind = WorkloadKind {
    name: "bandwidth",
    about: "window messages, then one acknowledgement; one sample per window",
    closed_loop: true,
    servers_independent: true,
    tables_per_server: PAIR_BYTES / 2,
    keys: BandwidthKeys::KEYS,
    defaults: BandwidthKeys::defaults,
    check: |spec| check(spec, &super::own_keys(spec)?),
    build: |cx| build(cx, &super::own_keys(cx.spec)?),
};

keys! {
    /// `ping_pong`'s keys: a bandwidth test with a window of one message.
    struct PingPongKeys {
        /// round trips or windows per pair
        iterations: u32 = 10,
        /// size of an acknowledgement, in bytes
        ack_bytes: Option<f64> = "one packet" => None,
    }
}

fn ping_pong_keys(spec: &Spec) -> SpecResult<BandwidthKeys> {
    let PingPongKeys { iterations, ack_bytes } = super::own_keys(spec)?;
    Ok(BandwidthKeys { iterations, window: 1, ack_bytes })
}

keys! {
    struct BandwidthKeys {
        /// round trips or windows per pair
        iterations: u32 = 10,
        /// messages per window
        window: u32 = 10,
        /// size of an acknowledgement, in bytes
        ack_bytes: Option<f64> = "one packet" => None,
    }
}

impl BandwidthKeys {
    /// Bytes of an acknowledgement under a `nic.protocol`: `ack_bytes`, or one full request.
    fn ack_message_bytes(&self, spec: &Spec) -> u64 {
        self.ack_bytes.map_or(spec.nic.payload_bytes as u64, |a| a.ceil() as u64)
    }

    /// Packets per acknowledgement.
    fn packets_per_ack(&self, spec: &Spec) -> usize {
        match (self.ack_bytes, spec.packet.bytes) {
            (Some(a), Some(p)) => (a / p).ceil().max(1.0) as usize,
            _ => 1,
        }
    }
}

/// The keys in range, and a window that fits the source queue (a closed-loop workload whose
/// message is dropped would wait for its answer forever).
fn check(spec: &Spec, k: &BandwidthKeys) -> SpecResult<()> {
    if k.iterations == 0 {
        return Err(SpecError::new("workload.iterations", 0, "must be at least 1"));
    }
    if k.window == 0 {
        return Err(SpecError::new("workload.window", 0, "must be at least 1 message"));
    }
    if let Some(a) = k.ack_bytes {
        if !(a > 0.0 && a.is_finite()) || (spec.packet.bytes.is_none() && spec.nic.kind() == ProtocolKind::None) {
            return Err(SpecError::new("workload.ack_bytes", a, "must be a positive number of bytes, with packet.bytes given (or a nic.protocol)"));
        }
        if k.packets_per_ack(spec) > 1 << 20 {
            return Err(SpecError::new("workload.ack_bytes", a, "makes more than 1048576 packets per acknowledgement"));
        }
    }
    let limit = spec.nic.source_queue_limit;
    let burst = k.window as u64 * spec.packets_per_message() as u64;
    if burst > limit {
        return Err(SpecError::new(
            "workload.window",
            k.window,
            format!("{burst} packets sent at once do not fit nic.source_queue_limit = {limit} (closed-loop messages are never dropped)"),
        ));
    }
    Ok(())
}

fn build(cx: &BuildCtx, k: &BandwidthKeys) -> SpecResult<Box<dyn Workload>> {
    let ack = MessageSize::new(cx.spec, k.packets_per_ack(cx.spec), k.ack_message_bytes(cx.spec));
    Ok(Box::new(Bandwidth::new(super::pairs(cx.spec, cx.traffic)?, cx.message, ack, k.window, k.iterations)))
}

/// Packets a closed-loop sender may have queued at once: a window of messages and an
/// acknowledgement (what the memory estimate counts).
pub fn packets_at_once(spec: &Spec) -> u64 {
    let keys = if spec.workload.kind == PING_PONG.name { ping_pong_keys(spec) } else { super::own_keys(spec) };
    keys.map_or(0, |k| k.window as u64 * spec.packets_per_message() as u64 + k.packets_per_ack(spec) as u64)
}

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
    /// The sender's counters when the window started.
    counters_at_start: Vec<Counters>,
    /// Pairs not done (on an MPI rank running its part, `partition`: of its own senders),
    /// and the cycle the last was done at.
    active_pairs: usize,
    finished_at: Option<u64>,
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
            counters_at_start: vec![Counters::default(); n],
            active_pairs: n,
            finished_at: None,
        }
    }

    fn send_window(&mut self, i: usize, cx: &mut Ctx) {
        let (s, r) = self.pairs[i];
        self.started[i] = cx.now;
        self.counters_at_start[i] = cx.nic_totals.of(s as usize);
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
                // Made now, the acknowledgement tells its sender when the data was complete.
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
            message_cycles: msg.created - self.started[i],
            phits: self.window as u64 * self.message.payload_phits,
            counters: cx.nic_totals.of(s as usize).since(&self.counters_at_start[i]),
        });
        self.done[i] += 1;
        if self.done[i] < self.iterations {
            self.send_window(i, cx);
        } else {
            self.active_pairs -= 1;
            if self.active_pairs == 0 {
                self.finished_at = Some(cx.now);
            }
        }
    }
    fn finished(&self) -> bool {
        self.active_pairs == 0
    }
    fn finished_at(&self) -> Option<u64> {
        self.finished_at.filter(|_| self.finished())
    }
    fn partition(&mut self, holds: &dyn Fn(u32) -> bool) {
        self.active_pairs = self.pairs.iter().filter(|&&(s, _)| holds(s)).count();
        if self.active_pairs == 0 {
            self.finished_at = Some(0);
        }
    }
    fn save(&self) -> Vec<u8> {
        super::save_state(&(&self.received, &self.done, &self.started, &self.counters_at_start, self.active_pairs, self.finished_at))
    }
    fn restore(&mut self, saved: &[u8]) -> bincode::Result<()> {
        (self.received, self.done, self.started, self.counters_at_start, self.active_pairs, self.finished_at) = super::load_state(saved)?;
        Ok(())
    }
}
