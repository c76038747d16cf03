//! Open loop: every active server starts a message with probability load / (phits per
//! message) each cycle (geometric gaps), to a destination drawn from the traffic pattern.
//! With `traffic.burst`, another pattern and load take over for the burst's cycles; gaps
//! are memoryless, so a gap that would cross a phase boundary is drawn again from there.

use super::{Ctx, MessageSize, Workload, WorkloadKind};
use crate::error::{SpecError, SpecResult};
use crate::random::geometric::Geometric;
use crate::routing::Rng;
use crate::spec::MIN_MESSAGE_RATE;
use crate::spec::Spec;
use crate::traffic::{Traffic, TrafficPattern};
use std::sync::Arc;

pub const KIND: WorkloadKind = WorkloadKind {
    name: "bernoulli",
    about: "messages at traffic.load, at Bernoulli-drawn cycles",
    closed_loop: false,
    servers_independent: true,
    tables_per_server: 0,
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    check,
    build: |cx| Ok(Box::new(Bernoulli::new(cx.spec, cx.traffic, cx.message))),
};


fn check(spec: &Spec) -> SpecResult<()> {
    let crate::component::NoKeys {} = super::own_keys(spec)?;
    check_load(spec, "bernoulli")
}

/// An open-loop workload's `traffic.load`: given (unless `[[jobs]]` replace the workload),
/// at a message rate whose gaps can be drawn (below it they cannot in reasonable time, and
/// such a run would generate nothing anyway).
pub(super) fn check_load(spec: &Spec, kind: &str) -> SpecResult<()> {
    let Some(l) = spec.traffic.load else {
        if spec.jobs.is_empty() {
            return Err(SpecError::new("traffic.load", "", format!("missing; the {kind} workload needs an offered load in (0, 1]")));
        }
        return Ok(());
    };
    let per_cycle = l / (spec.packet.phits as f64 * spec.packets_per_message() as f64);
    if per_cycle < MIN_MESSAGE_RATE {
        return Err(SpecError::new(
            "traffic.load",
            l,
            format!("too small: {per_cycle:e} messages per server per cycle (with packet.phits = {} and {} packets per message); at least {MIN_MESSAGE_RATE:e}", spec.packet.phits, spec.packets_per_message()),
        ));
    }
    Ok(())
}

/// A pattern and its injection process.
struct Phase {
    pattern: Arc<dyn TrafficPattern>,
    gap: Geometric,
}

impl Phase {
    fn new(pattern: Arc<dyn TrafficPattern>, load: f64, message: &MessageSize) -> Self {
        let prob = (load / message.data_phits as f64).min(1.0);
        Phase { pattern, gap: Geometric::new(prob).expect("load validated in (0, 1]") }
    }
}

pub struct Bernoulli {
    main: Phase,
    /// The burst's phase and its cycles `[start, end)`.
    burst: Option<(Phase, u64, u64)>,
    active: crate::traffic::Active,
    message: MessageSize,
}

impl Bernoulli {
    pub fn new(spec: &Spec, traffic: &Traffic, message: MessageSize) -> Self {
        let load = spec.traffic.load.expect("validated: open loop needs a load");
        let burst = traffic.burst.as_ref().map(|b| (Phase::new(b.pattern.clone(), b.load, &message), b.start, b.end));
        Bernoulli { main: Phase::new(traffic.pattern.clone(), load, &message), burst, active: traffic.active.clone(), message }
    }

    /// The phase at cycle `t` and the first cycle after it where the phase changes.
    fn phase_at(&self, t: u64) -> (&Phase, u64) {
        match &self.burst {
            Some((b, start, end)) if t >= *start && t < *end => (b, *end),
            Some((_, start, _)) if t < *start => (&self.main, *start),
            _ => (&self.main, u64::MAX),
        }
    }

    /// The first cycle from `t` on at which the server starts a message.
    fn next_send(&self, mut t: u64, rng: &mut Rng) -> u64 {
        loop {
            let (phase, until) = self.phase_at(t);
            let next = t.saturating_add(phase.gap.sample(rng));
            if next < until {
                return next;
            }
            t = until;
        }
    }
}

impl Workload for Bernoulli {
    fn name(&self) -> &'static str {
        "bernoulli"
    }
    fn start(&mut self, cx: &mut Ctx) {
        for s in self.active.iter() {
            // On an MPI rank, only its own servers' (engine/ranks).
            if let Some(rng) = cx.rng.get_mut(s as usize) {
                let first = self.next_send(0, rng);
                cx.timers.push((first, s));
            }
        }
    }
    fn timer(&mut self, server: usize, cx: &mut Ctx) {
        let rng = &mut cx.rng[server];
        let dst = self.phase_at(cx.now).0.pattern.destination(server, rng);
        cx.posts.push(self.message.post(server as u32, dst as u32, 0));
        let next = self.next_send(cx.now + 1, rng);
        cx.timers.push((next, server as u32));
    }
    // Nothing changes as it runs: its draws come from the NICs' random streams.
    fn save(&self) -> Vec<u8> {
        Vec::new()
    }
    fn restore(&mut self, _saved: &[u8]) -> bincode::Result<()> {
        Ok(())
    }
}
