//! Open loop: every active server starts a message with probability load / (phits per
//! message) each cycle (geometric gaps), to a destination drawn from the traffic pattern.

use super::{Ctx, MessageSize, Workload};
use crate::spec::Spec;
use crate::traffic::{Traffic, TrafficPattern};
use rand_distr::{Distribution, Geometric};
use std::sync::Arc;

pub struct Bernoulli {
    pattern: Arc<dyn TrafficPattern>,
    active: Vec<u32>,
    gap: Geometric,
    message: MessageSize,
}

impl Bernoulli {
    pub fn new(spec: &Spec, traffic: &Traffic, message: MessageSize) -> Self {
        let load = spec.traffic.load.expect("validated: open loop needs a load");
        let prob = (load / message.data_phits as f64).min(1.0);
        Bernoulli {
            pattern: traffic.pattern.clone(),
            active: traffic.active.clone(),
            gap: Geometric::new(prob).expect("load validated in (0, 1]"),
            message,
        }
    }
}

impl Workload for Bernoulli {
    fn name(&self) -> &'static str {
        "bernoulli"
    }
    fn start(&mut self, cx: &mut Ctx) {
        for &s in &self.active {
            let first = self.gap.sample(&mut cx.rng[s as usize]);
            cx.timers.push((first, s));
        }
    }
    fn timer(&mut self, server: usize, cx: &mut Ctx) {
        let rng = &mut cx.rng[server];
        let dst = self.pattern.destination(server, rng);
        cx.posts.push(self.message.post(server as u32, dst as u32, 0));
        let next = cx.now + 1 + self.gap.sample(rng);
        cx.timers.push((next, server as u32));
    }
}
