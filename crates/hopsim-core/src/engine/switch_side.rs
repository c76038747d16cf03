//! The switches' side of a run: their state (`Routers`), their random streams, how their
//! heads are routed, and the scratch and walk their steps reuse. The rest of the engine
//! reaches the switches through this type: it delivers arrivals and credits to them, steps
//! them, and reads them (the deadlock detector, the conservation check, the report).
//!
//! On several threads each switch's part of this state is reached only by the thread that
//! owns the switch (engine/parallel.rs); the methods a thread calls during a cycle touch
//! only the switch they are given, its random stream and the packets it holds.

use super::blocks::{self, Out, Walk};
use super::head_routing::{HeadRouting, Heading};
use super::Parts;
use crate::calendar::{Event, Schedule};
use crate::packet::{Arena, Flit};
use crate::params::Params;
use crate::route::Rng;
use crate::router::{self, Entry, RouteFront, Routers, Scratch, StepCtx};
use crate::topology::Topology;

pub(super) struct SwitchSide {
    routers: Routers,
    switch_rng: Vec<Rng>,
    /// How heads are routed: the run's routing and VC policy through their traits, or the
    /// commonest pair called directly.
    head_routing: HeadRouting,
    /// The run thread's scratch for the switches' steps when it runs a cycle alone.
    scratch: Scratch,
    /// log2 of the switches per block of a cycle's deliveries and steps (blocks.rs).
    block_shift: u32,
    /// The run thread's walk over the blocks when it runs a cycle alone.
    walk: Walk,
    /// Switches stepped in the last cycle (`Simulation::worth_splitting`).
    stepped_last: usize,
    /// Whether each cycle asks ahead for the heads that become ready in it
    /// (`router::ReadyAhead`): arrivals wait out a pipeline delay before their switch steps,
    /// on a network far larger than the cache.
    ready_ahead: bool,
    /// The switches a cycle touched (`observe`), kept for its room.
    touched: Vec<u32>,
}

/// When the switch an event was delivered to must be stepped for it.
pub(super) enum SwitchWake {
    None,
    /// Now: credits came back that a flit waits for.
    Now(usize),
    /// Once the flit that arrived may be allocated (`Params::ready_from`): it is at the
    /// front of its VC. A flit behind another is reached by that one's grant, which steps
    /// the switch again while its input holds flits (router/step.rs); stepping for its
    /// arrival as well would only add steps with nothing to do. With the flit's input VC
    /// (global) and packet, which the cycle it becomes ready asks for ahead
    /// (`router::ReadyAhead`).
    WhenReady { switch: usize, vc: usize, packet: u32 },
}

impl SwitchSide {
    pub fn new(mut routers: Routers, switch_rng: Vec<Rng>, head_routing: HeadRouting, topo: &dyn Topology, params: &Params) -> Self {
        let far = routers.prefetch == router::Prefetch::Deep;
        let steps_on_arrival = params.ready_from(0) == 0;
        if !steps_on_arrival {
            routers.wait_out_delays();
        }
        if params.routing_observes_network {
            routers.start_observing();
        }
        let block_shift = blocks::block_shift(routers.bytes() / topo.num_switches().max(1), far, steps_on_arrival);
        let ready_ahead = far && !steps_on_arrival;
        SwitchSide { routers, switch_rng, head_routing, scratch: Scratch::default(), block_shift, walk: Walk::default(), stepped_last: 0, ready_ahead, touched: Vec::new() }
    }

    /// After a cycle that delivered `events` and stepped `stepped` (ascending), read again the
    /// backlogs of the switches either touched, where routing reads other switches' ports
    /// (router/observer.rs); each (network port, backlog) that changed is added to `changed`.
    /// Those are the only switches whose ports a cycle changes.
    pub fn observe(&mut self, events: &[Event], stepped: &[u32], reach: crate::route::QueueReach, changed: &mut Vec<(u32, u32)>) {
        if !self.routers.observing() {
            return;
        }
        let touched = &mut self.touched;
        touched.clear();
        touched.extend(events.iter().filter_map(|ev| ev.switch()).map(|s| s as u32));
        touched.extend_from_slice(stepped);
        touched.sort_unstable();
        touched.dedup();
        self.routers.observe(touched, reach, changed);
    }

    /// Read every held switch's backlogs (a run's start, or a resumed one): each (network
    /// port, backlog) that is not zero; none where routing reads no other switch.
    pub fn observe_held(&mut self, reach: crate::route::QueueReach) -> Vec<(u32, u32)> {
        if !self.routers.observing() {
            return Vec::new();
        }
        self.routers.observe_held(reach)
    }

    /// Take in the backlogs other ranks read of their switches.
    pub fn set_observed(&mut self, changed: &[(u32, u32)]) -> Result<(), String> {
        if changed.is_empty() {
            return Ok(());
        }
        if !self.routers.observing() {
            return Err("backlogs of ports, which this run's routing does not read".into());
        }
        self.routers.set_observed(changed)
    }

    /// Whether each cycle asks ahead for the heads that become ready in it.
    pub fn ready_ahead(&self) -> bool {
        self.ready_ahead
    }

    /// Ask for the records of the heads of `switches` that become ready at `now` (the run
    /// thread's walk, when it runs a cycle alone).
    pub fn prefetch_ready(&mut self, now: u64, switches: std::ops::Range<usize>, packets: &Arena) {
        if self.ready_ahead {
            self.walk.ready_ahead.prefetch(now, switches, &self.routers, packets);
        }
    }

    /// A head delivered at `now` becomes ready at `ready` at global input VC `vc`
    /// (`router::ReadyAhead`, the run thread's walk).
    pub fn note_ready(&mut self, now: u64, ready: u64, vc: usize, packet: u32) {
        if self.ready_ahead {
            self.walk.ready_ahead.note(now, ready, vc, packet);
        }
    }

    /// Its state for a checkpoint (engine/checkpoint.rs), between two cycles: the switches and
    /// their random streams; the rest is scratch or built from the spec.
    pub fn save(&self, out: &mut impl std::io::Write) -> bincode::Result<()> {
        bincode::serialize_into(out, &(&self.routers, self.routers.queued_behind(), &self.switch_rng))
    }

    /// Back to the state `save` wrote, on a side built from the same spec.
    pub fn restore(&mut self, input: &mut impl std::io::Read) -> bincode::Result<()> {
        let queued: router::Queued;
        let routers: Routers;
        (routers, queued, self.switch_rng) = bincode::deserialize_from(input)?;
        let fresh = std::mem::replace(&mut self.routers, routers);
        self.routers.hold_as(&fresh);
        if fresh.observing() {
            // Read again from the restored switches (`observe_held`).
            self.routers.start_observing();
        }
        self.routers.put_back_queued(queued);
        Ok(())
    }

    /// The switches' state, to read.
    pub fn routers(&self) -> &Routers {
        &self.routers
    }

    pub fn block_shift(&self) -> u32 {
        self.block_shift
    }

    /// Deliver and step block by block of `1 << shift` switches (tests).
    pub fn set_block_shift(&mut self, shift: u32) {
        self.block_shift = shift;
    }

    pub fn stepped_last(&self) -> usize {
        self.stepped_last
    }

    pub fn set_stepped_last(&mut self, n: usize) {
        self.stepped_last = n;
    }

    /// Route every head through the `Routing` and `VcPolicy` traits (tests). Returns whether
    /// the pair was called directly.
    pub fn route_through_traits(&mut self) -> bool {
        std::mem::replace(&mut self.head_routing, HeadRouting::Traits).direct()
    }

    /// Free the buffers and VC records once nothing reads them.
    pub fn release(&mut self) {
        self.routers.release_buffers();
    }

    /// Start loading what delivering `ev` will touch (`Routers::prefetch_event`).
    #[inline(always)]
    pub fn prefetch_event(&self, ev: &Event, packets: &Arena) {
        self.routers.prefetch_event(ev, packets);
    }

    /// Step the switches of `visit` (ascending) with the run thread's scratch.
    #[allow(clippy::too_many_arguments)]
    pub fn step_all<C: Schedule>(&mut self, visit: &[u32], now: u64, packets: &mut Arena, cal: &mut C, parts: &Parts, measuring: bool, last_progress: &mut u64, phit_hops: &mut u64) {
        let fronts = Fronts { head_routing: &self.head_routing, parts };
        let fronts = parts.params.staging.routes_at_front().then_some(&fronts as &dyn RouteFront);
        let params = &parts.params;
        let mut cx = StepCtx { routers: &mut self.routers, packets, cal, params, scratch: &mut self.scratch, measuring, last_progress, phit_hops, switch_rng: &mut self.switch_rng, fronts };
        router::step_each(visit, now, &mut cx);
    }

    /// Step the switches of `block` (ascending) for a thread whose scratch, calendar and
    /// counters are `out`.
    pub fn step_block<C: Schedule>(&mut self, block: &[u32], now: u64, packets: &mut Arena, parts: &Parts, measuring: bool, out: &mut Out<C>) {
        let fronts = Fronts { head_routing: &self.head_routing, parts };
        let fronts = parts.params.staging.routes_at_front().then_some(&fronts as &dyn RouteFront);
        let params = &parts.params;
        let mut cx = StepCtx {
            routers: &mut self.routers,
            packets,
            cal: &mut *out.cal,
            params,
            scratch: &mut *out.scratch,
            measuring,
            last_progress: &mut *out.last_progress,
            phit_hops: &mut *out.phit_hops,
            switch_rng: &mut self.switch_rng,
            fronts,
        };
        router::step_each(block, now, &mut cx);
    }

    /// The run thread's walk and scratch, lent to a cycle it runs alone block by block; the
    /// walk is taken and must be given back (`put_walk`).
    pub fn lend_walk(&mut self) -> (Walk, &mut Scratch) {
        (std::mem::take(&mut self.walk), &mut self.scratch)
    }

    pub fn put_walk(&mut self, walk: Walk) {
        self.walk = walk;
    }

    /// Credits for output `port`, VC `vc`, of `switch` are back.
    #[inline(always)]
    pub fn credit(&mut self, switch: usize, port: u16, vc: u8, phits: u16) -> SwitchWake {
        let routers = &mut self.routers;
        let gp = routers.global_port(switch, port as usize);
        let q = &mut routers.vc[gp * routers.vcs + vc as usize];
        let before = q.credits;
        q.credits += phits;
        // Only a flit that waited for these credits needs the switch stepped: every
        // other reason to step a switch has its own wake-up (router/step.rs), and a step
        // with nothing to do changes nothing.
        let waited = q.output.front().is_some_and(|e| before < e.phits && e.phits <= q.credits);
        routers.mark_queue(gp);
        if waited {
            return SwitchWake::Now(switch);
        }
        SwitchWake::None
    }

    /// Whether input `port`, VC `vc`, of switch `sw` holds a flit: one arriving now queues
    /// behind it.
    fn behind_another(&self, sw: usize, port: u16, vc: u8) -> bool {
        let gv = self.routers.global_port(sw, port as usize) * self.routers.vcs + vc as usize;
        !self.routers.vc[gv].input.is_empty()
    }

    /// A flit reaches input `port`, VC `vc`, of switch `sw`: a head is routed (or, behind
    /// another under `NextHeadRouting::AtFront`, left for its front), and the flit is queued
    /// at its input VC.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn arrive(&mut self, parts: &Parts, packets: &mut Arena, now: u64, sw: usize, port: u16, vc: u8, packet: u32, flit: Flit, tail: u16) -> SwitchWake {
        let params = &parts.params;
        let phits = if flit.is_head() {
            let phits = packets.get(packet).phits;
            if params.staging.routes_at_front() && self.behind_another(sw, port, vc) {
                // Routed once it reaches the front (router/step.rs, `ready_heads`); until
                // then it holds no candidates, not even its last switch's.
                packets.routed(packet).candidates.clear();
            } else {
                let at = Heading {
                    routers: &self.routers,
                    routing: parts.routing.as_ref(),
                    vc_policy: parts.vc_policy.as_ref(),
                    policy_vcs: params.policy_vcs,
                    ejection: params.ejection,
                    queue_reach: params.queue_reach,
                    servers: &parts.servers,
                    switch: sw,
                };
                self.head_routing.route(&at, &mut self.switch_rng[sw - self.routers.held().start], packets.routed(packet));
            }
            params.flit_phits(phits)
        } else {
            1 // only wormhole packets have more than one flit
        };
        let ready = params.ready_from(now);
        if self.routers.push_input(sw, port as usize, vc as usize, Entry { packet, ready: ready as u32, flit, phits, tail }) {
            return SwitchWake::WhenReady { switch: sw, vc: self.routers.global_port(sw, port as usize) * self.routers.vcs + vc as usize, packet };
        }
        SwitchWake::None
    }
}

/// The run's routing as the switches' steps call it for heads that reach the front of their
/// input VC unrouted (`NextHeadRouting::AtFront`): the same call as an arrival's.
struct Fronts<'a> {
    head_routing: &'a HeadRouting,
    parts: &'a Parts,
}

impl RouteFront for Fronts<'_> {
    fn route(&self, routers: &Routers, switch: usize, rng: &mut Rng, packets: &mut Arena, packet: u32) {
        let params = &self.parts.params;
        let at = Heading {
            routers,
            routing: self.parts.routing.as_ref(),
            vc_policy: self.parts.vc_policy.as_ref(),
            policy_vcs: params.policy_vcs,
            ejection: params.ejection,
            queue_reach: params.queue_reach,
            servers: &self.parts.servers,
            switch,
        };
        self.head_routing.route(&at, rng, packets.routed(packet));
    }
}
