//! Workloads: when servers send messages and to whom. Open-loop ones (bernoulli) offer a load;
//! closed-loop ones (ping_pong, bandwidth) send when answered and record one sample per
//! round trip or window. The engine only calls this trait.

mod bandwidth;
mod bernoulli;

use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use crate::spec::Spec;
use crate::traffic::Traffic;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// A message a workload wants sent now.
#[derive(Debug, Clone, Copy)]
pub struct Post {
    pub src: u32,
    pub dst: u32,
    pub packets: u32,
    pub tag: u32,
}

/// One measurement of a closed-loop workload: a round trip or a window.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub src: u32,
    pub dst: u32,
    pub iteration: u32,
    pub start: u64,
    pub cycles: u64,
    /// Payload phits the sample moved from src to dst.
    pub phits: u64,
}

/// A message complete at its destination.
#[derive(Debug, Clone, Copy)]
pub struct Delivered {
    pub src: u32,
    pub dst: u32,
    pub tag: u32,
    pub created: u64,
}

pub struct Ctx<'a> {
    pub now: u64,
    pub rng: &'a mut [Rng],
    pub posts: &'a mut Vec<Post>,
    /// (cycle, server): call `timer` for that server then.
    pub timers: &'a mut Vec<(u64, u32)>,
    pub samples: &'a mut Vec<Sample>,
}

pub trait Workload: Send {
    fn name(&self) -> &'static str;
    fn start(&mut self, cx: &mut Ctx);
    fn timer(&mut self, _server: usize, _cx: &mut Ctx) {}
    /// Whether `delivered` must be called for every complete message.
    fn wants_delivery(&self) -> bool {
        false
    }
    fn delivered(&mut self, _msg: &Delivered, _cx: &mut Ctx) {}
    /// Whether a message with this tag is an acknowledgement (counted apart from the data
    /// messages, whose latency is what the papers report).
    fn is_acknowledgement(&self, _tag: u32) -> bool {
        false
    }
    /// A closed-loop workload that has nothing more to send ends the run.
    fn finished(&self) -> bool {
        false
    }
}

pub fn build(spec: &Spec, traffic: &Traffic) -> SpecResult<Box<dyn Workload>> {
    let packets = spec.packets_per_message() as u32;
    Ok(match spec.workload.kind.as_str() {
        "bernoulli" => Box::new(bernoulli::Bernoulli::new(spec, traffic, packets)),
        "ping_pong" => Box::new(bandwidth::Bandwidth::new(pairs(spec, traffic)?, packets, spec.packets_per_ack() as u32, 1, spec.workload.iterations, spec.packet.phits)),
        "bandwidth" => Box::new(bandwidth::Bandwidth::new(
            pairs(spec, traffic)?,
            packets,
            spec.packets_per_ack() as u32,
            spec.workload.window,
            spec.workload.iterations,
            spec.packet.phits,
        )),
        other => return Err(SpecError::new("workload.kind", format!("{other:?}"), "allowed: bernoulli, ping_pong, bandwidth")),
    })
}

/// The papers' pairing: the communicating servers, split at random into senders and
/// receivers, paired one to one.
fn pairs(spec: &Spec, traffic: &Traffic) -> SpecResult<Vec<(u32, u32)>> {
    let n = traffic.active.len();
    if n < 2 {
        return Err(SpecError::new("traffic.active_servers", n, "a ping_pong or bandwidth test needs at least 2 communicating servers"));
    }
    let mut order = traffic.active.clone();
    let mut rng = Rng::seed_from_u64(crate::engine::seed_for(spec.run.seed, 0x9a12, 0));
    order.shuffle(&mut rng);
    let half = n / 2;
    Ok((0..half).map(|i| (order[i], order[half + i])).collect())
}

/// Message tags of the closed-loop workloads: the pair and whether it is an acknowledgement.
pub fn tag(pair: usize, ack: bool) -> u32 {
    (pair as u32) << 1 | ack as u32
}

pub fn untag(tag: u32) -> (usize, bool) {
    ((tag >> 1) as usize, tag & 1 == 1)
}
