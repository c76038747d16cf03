//! Open loop at fixed intervals: every active server starts a message every
//! `phits per message / load` cycles, all servers in step from cycle 0, to a destination
//! drawn from the traffic pattern (SST Merlin's `offered_load` endpoints:
//! src/sst/elements/merlin/offeredload/offered_load.cc of f782290d0, `next_time +=
//! send_interval`). A fractional interval is kept exactly: message k starts at
//! floor(k x interval). Where the Bernoulli workload's sources draw their gaps, these send
//! in bursts across the network, one message per server per interval.

use super::{Ctx, MessageSize, Workload, WorkloadKind};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use crate::traffic::{Traffic, TrafficPattern};
use std::sync::Arc;

pub const KIND: WorkloadKind = WorkloadKind {
    name: "periodic",
    about: "messages at traffic.load, one per fixed interval, every server in step (SST Merlin's offered_load)",
    closed_loop: false,
    servers_independent: true,
    // The messages each server sent so far.
    tables_per_server: 8,
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    check,
    build: |cx| Ok(Box::new(Periodic::new(cx.spec, cx.traffic, cx.message))),
};


fn check(spec: &Spec) -> SpecResult<()> {
    let crate::component::NoKeys {} = super::own_keys(spec)?;
    if spec.traffic.burst.is_some() {
        return Err(SpecError::new("traffic.burst", "given", "only the bernoulli workload has bursts"));
    }
    super::bernoulli::check_load(spec, "periodic")
}

pub struct Periodic {
    pattern: Arc<dyn TrafficPattern>,
    /// Cycles between a server's messages (at least 1).
    interval: f64,
    /// Messages each server has started.
    sent: Vec<u64>,
    active: crate::traffic::Active,
    message: MessageSize,
}

impl Periodic {
    fn new(spec: &Spec, traffic: &Traffic, message: MessageSize) -> Self {
        let load = spec.traffic.load.expect("checked: a periodic workload has a load");
        let interval = (message.data_phits as f64 / load).max(1.0);
        Periodic { pattern: traffic.pattern.clone(), interval, sent: vec![0; traffic.active.iter().map(|s| s as usize + 1).max().unwrap_or(0)], active: traffic.active.clone(), message }
    }

    fn start_of(&self, k: u64) -> u64 {
        (k as f64 * self.interval).floor() as u64
    }
}

impl Workload for Periodic {
    fn name(&self) -> &'static str {
        "periodic"
    }
    fn start(&mut self, cx: &mut Ctx) {
        for s in self.active.iter() {
            cx.timers.push((0, s));
        }
    }
    fn timer(&mut self, server: usize, cx: &mut Ctx) {
        let dst = self.pattern.destination(server, &mut cx.rng[server]);
        cx.posts.push(self.message.post(server as u32, dst as u32, 0));
        self.sent[server] += 1;
        let next = self.start_of(self.sent[server]).max(cx.now + 1);
        cx.timers.push((next, server as u32));
    }
    fn save(&self) -> Vec<u8> {
        super::save_state(&self.sent)
    }
    fn restore(&mut self, saved: &[u8]) -> bincode::Result<()> {
        self.sent = super::load_state(saved)?;
        Ok(())
    }
}
