//! The servers' side of a run: the NICs and what waits at them, the workload and its timers,
//! the messages in flight and the statistics. The rest of the engine reaches the servers
//! through this type: it fires the workload's timers, delivers the events for servers (credits
//! back at a NIC, flits ejected into one) and steps the NICs. No switch's step touches it, so
//! on several threads the run's thread does this work while the others step their switches
//! (engine/parallel.rs).
//!
//! What it reads and writes beyond its own state, the packets, the calendar and the run's
//! parts, comes in a `Net` for each call.

mod backlog;
mod delivery;
pub(crate) mod rank;
pub(super) mod timers;

use backlog::Backlog;

/// Bytes of one server's source-queue header (the memory estimate, engine/memory).
pub(crate) const BACKLOG_BYTES: usize = std::mem::size_of::<Backlog>();
use timers::Timers;
use super::Parts;
use crate::calendar::{Calendar, Deferred, Event};
use crate::message::Messages;
use crate::nic::Nics;
use crate::packet::Arena;
use crate::params::Params;
use crate::route::Rng;
use crate::stats::Stats;
use crate::workload::{Ctx, Post, Sample, Workload};

pub(super) struct ServerSide {
    nics: Nics,
    /// Messages queued at each NIC held whose packets are not made yet (`held_index`).
    backlog: Vec<Backlog>,
    /// Packets waiting in each held NIC's reorder buffer.
    reorder_held: Vec<u32>,
    nic_rng: crate::random::Streams,
    /// NICs to step this cycle (the switches' list is in use by other threads meanwhile).
    nic_visit: Vec<u32>,
    /// Events of NIC steps that ran before the switches' events reached the calendar.
    nic_events: Vec<(u64, Event)>,
    workload: Box<dyn Workload>,
    /// Workload timers: (cycle, server).
    timers: Timers,
    posts: Vec<Post>,
    new_timers: Vec<(u64, u32)>,
    samples: Vec<Sample>,
    messages: Messages,
    stats: Stats,
    /// `nic.source_queue_limit`: packets a source queue holds before refusing a message.
    source_queue_limit: u64,
    /// `message.in_order`: packets reach the application in their message's order.
    in_order: bool,
    /// On MPI ranks: which servers are this rank's, the messages between ranks, and what
    /// keeps a shared workload the same on every rank (`rank::RankView`).
    rank: Option<Box<rank::RankView>>,
    /// The network's shortest switch-to-switch link latency: how long what a workload still
    /// sends after it finished goes on (`stop_cycle`).
    shortest_link: u64,
}

/// What the servers' side reads and writes beyond its own state during a call.
pub(super) struct Net<'a> {
    pub packets: &'a mut Arena,
    pub cal: &'a mut Calendar,
    pub parts: &'a Parts,
    /// The last cycle anything moved (the watchdog's).
    pub last_progress: &'a mut u64,
}

impl ServerSide {
    /// The side of the servers whose NICs `nics` holds (all but on an MPI rank); `nic_rng`
    /// has every server's stream where a workload run whole on every rank draws from any.
    pub fn new(nics: Nics, nic_rng: crate::random::Streams, workload: Box<dyn Workload>, stats: Stats, spec: &crate::spec::Spec) -> Self {
        let n = nics.held().len();
        ServerSide {
            nics,
            backlog: vec![Backlog::default(); n],
            reorder_held: vec![0; n],
            nic_rng,
            nic_visit: Vec::new(),
            nic_events: Vec::new(),
            workload,
            timers: Timers::default(),
            posts: Vec::new(),
            new_timers: Vec::new(),
            samples: Vec::new(),
            messages: Messages::default(),
            stats,
            source_queue_limit: spec.nic.source_queue_limit,
            in_order: spec.message.in_order,
            rank: None,
            shortest_link: 1,
        }
    }

    /// Its state for a checkpoint (engine/checkpoint.rs), between two cycles: everything but
    /// the scratch lists and what was built from the spec.
    pub fn save(&self, out: &mut impl std::io::Write) -> bincode::Result<()> {
        let state = (&self.nics, &self.backlog, &self.reorder_held, &self.nic_rng, &self.nic_events, self.workload.save(), &self.timers, &self.posts, &self.new_timers, &self.samples, &self.messages, &self.stats);
        bincode::serialize_into(out, &state)
    }

    /// Back to the state `save` wrote, on a side built from the same spec.
    pub fn restore(&mut self, input: &mut impl std::io::Read) -> bincode::Result<()> {
        type Saved = (Nics, Vec<Backlog>, Vec<u32>, crate::random::Streams, Vec<(u64, Event)>, Vec<u8>, Timers, Vec<Post>, Vec<(u64, u32)>, Vec<Sample>, Messages, Stats);
        let workload: Vec<u8>;
        let first = self.nics.held().start;
        (self.nics, self.backlog, self.reorder_held, self.nic_rng, self.nic_events, workload, self.timers, self.posts, self.new_timers, self.samples, self.messages, self.stats) = bincode::deserialize_from::<_, Saved>(input)?;
        debug_assert!(first == 0 || self.rank.is_some(), "a rank's NICs start past server 0");
        self.nics.hold_first(first);
        self.workload.restore(&workload)
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn nics(&self) -> &Nics {
        &self.nics
    }

    pub fn workload(&self) -> &dyn Workload {
        self.workload.as_ref()
    }

    pub fn workload_mut(&mut self) -> &mut dyn Workload {
        self.workload.as_mut()
    }

    /// What the workload recorded for its samples (ping-pong round trips).
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    pub fn timers(&self) -> &Timers {
        &self.timers
    }

    /// Packets injected and not delivered yet.
    pub fn in_network(&self) -> u64 {
        self.nics.injected - self.stats.packets_delivered
    }

    /// After cycle `now`: a closed-loop workload has nothing more to send (what still sends
    /// after it finished has stopped, `stop_cycle`) and everything it sent arrived.
    pub fn workload_done(&mut self, now: u64) -> bool {
        if !self.workload.finished() {
            return false;
        }
        let stopped = match self.workload.finished_at() {
            Some(at) => now + 1 >= self.stop_cycle(at),
            None => true,
        };
        stopped && self.stats.packets_generated == self.stats.packets_delivered
    }

    /// The cycle from which what the workload still sends stops, the whole of it having
    /// finished at cycle `finished`: fixed the first time it is asked (`Workload::stop`).
    /// A cycle later unless some of it sends on (a background), which goes on for the
    /// network's shortest link latency: no MPI rank's window is longer, so every rank has
    /// heard of the end before the stop, however the run is split.
    pub fn stop_cycle(&mut self, finished: u64) -> u64 {
        if let Some(at) = self.workload.stopping_at() {
            return at;
        }
        let delay = if self.workload.sends_after_finishing() { self.shortest_link } else { 1 };
        let at = finished.saturating_add(delay);
        self.workload.stop(at);
        at
    }

    /// The stop fixed (`stop_cycle`) if it is later than cycle `now + 1`: the run must not
    /// skip past the cycle before it.
    pub fn stop_ahead(&self, now: u64) -> Option<u64> {
        self.workload.stopping_at().filter(|&at| at > now + 1)
    }

    /// The network's shortest switch-to-switch link latency (`stop_cycle`); `u64::MAX` if
    /// no link joins two switches, where one cycle will do: no rank's window is longer.
    pub fn set_shortest_link(&mut self, cycles: u64) {
        self.shortest_link = if cycles == u64::MAX { 1 } else { cycles.max(1) };
    }

    /// Phits of the packets measured (those sent in the window when measured at injection,
    /// else those generated in it) not all delivered yet.
    pub fn measured_undelivered(&self, params: &Params) -> bool {
        let measured = if params.measure_at_injection { self.nics.injected_measured_phits } else { self.stats.generated_measured_phits };
        self.stats.measured_packet_phits < measured
    }

    /// Call the workload, then send the messages it posted and arm the timers it set.
    pub fn with_workload(&mut self, net: &mut Net, now: u64, f: impl FnOnce(&mut dyn Workload, &mut Ctx)) {
        let mut cx = Ctx { now, rng: &mut self.nic_rng, posts: &mut self.posts, timers: &mut self.new_timers, samples: &mut self.samples, nic_totals: self.nics.totals() };
        f(self.workload.as_mut(), &mut cx);
        // On ranks: a server's messages are sent by its own rank; its timers are kept there
        // only, unless every rank runs the workload whole (`rank::RankView`).
        let servers = &net.parts.servers;
        let view = self.rank.as_deref();
        let keeps_timer = |s: u32| view.is_none_or(|v| v.shared.is_some() || v.owns(servers, s));
        for (t, s) in self.new_timers.drain(..) {
            if keeps_timer(s) {
                self.timers.push(t, s);
            }
        }
        let posts = std::mem::take(&mut self.posts);
        for post in &posts {
            if self.rank.as_ref().is_none_or(|v| v.owns(&net.parts.servers, post.src)) {
                self.send_message(net, now, post);
            }
        }
        self.posts = posts;
        self.posts.clear();
    }

    /// Fire the workload timers due now and send what they post.
    pub fn generate(&mut self, net: &mut Net, now: u64) {
        self.timers.start(now);
        while let Some(s) = self.timers.next() {
            self.with_workload(net, now, |w, cx| w.timer(s as usize, cx));
        }
    }

    /// The part of a cycle after the switches' steps that concerns servers: the cycle's
    /// events for them (`events`: those the switches' part left), then the NIC steps.
    pub fn servers_and_nics(&mut self, net: &mut Net, now: u64, measuring: bool, events: &[Event], defer: bool) {
        for ev in events {
            // Tested here, not in the call: the cycle's events are mostly the switches'
            // (two a packet-hop against two a packet), so a call per event only to return
            // would add its instructions to every hop (docs/benchmark-log.md has the count).
            if ev.switch().is_none() {
                self.deliver_to_server(net, now, *ev);
            }
        }
        self.step_nics(net, now, measuring, defer);
    }

    /// Step the NICs due now and refill their queues; with `defer` their events wait in
    /// `nic_events` (`schedule_deferred`).
    pub fn step_nics(&mut self, net: &mut Net, now: u64, measuring: bool, defer: bool) {
        let mut due = std::mem::take(&mut self.nic_visit);
        net.cal.take_nics(now, &mut due);
        if self.rank.is_some() {
            // Visiting every NIC (`Simulation::step_everything`) names other ranks' too.
            let held = self.nics.held();
            due.retain(|&s| held.contains(&(s as usize)));
        }
        for &s in &due {
            if let Some(view) = &mut self.rank {
                view.drew(s);
            }
            let s = s as usize;
            let (nics, rng) = (&mut self.nics, &mut self.nic_rng[s]);
            if defer {
                nics.step(s, now, &net.parts.params, net.packets, &mut Deferred { cal: net.cal, events: &mut self.nic_events }, net.parts.vc_policy.as_ref(), rng, measuring);
            } else {
                nics.step(s, now, &net.parts.params, net.packets, net.cal, net.parts.vc_policy.as_ref(), rng, measuring);
            }
            self.refill(net, s, now + 1);
        }
        self.nic_visit = due;
    }

    /// Take in another rank's statistics of the same run (engine/ranks).
    pub fn absorb(&mut self, stats: &Stats) {
        self.stats.absorb(stats);
    }

    /// A packet from `src` (a held server) was delivered `latency` cycles after it was made:
    /// its NIC counts it.
    fn count_delivery(&mut self, src: u32, latency: u64, measuring: bool) {
        self.count_deliveries(src, measuring, 1, latency);
    }

    /// `packets` packets from `src`, a held server, delivered with `latencies` cycles in all.
    fn count_deliveries(&mut self, src: u32, measuring: bool, packets: u64, latencies: u64) {
        self.nics.count(src as usize, measuring, |c| {
            c.packets += packets as u32;
            c.latency_sum += latencies;
        });
    }

    /// The packets this rank delivered for each rank's servers, by rank
    /// (`RankView::take_deliveries`); if `when_due`, none (no list at all, as after most
    /// cycles) unless they are due to go now.
    pub fn deliveries_by_rank(&mut self, servers: &crate::topology::ServerMap, ranks: usize, when_due: bool) -> Option<Vec<Vec<(u32, bool, u64, u64)>>> {
        let held = self.nics.held().len();
        match self.rank.as_mut() {
            Some(view) if !when_due || view.deliveries_due(held) => Some(view.take_deliveries(servers, ranks)),
            _ => None,
        }
    }

    /// Packets another rank delivered for this rank's servers: their NICs count them.
    pub fn deliveries_from(&mut self, deliveries: &[(u32, bool, u64, u64)]) -> Result<(), String> {
        for &(src, measuring, packets, latencies) in deliveries {
            if !self.nics.held().contains(&(src as usize)) {
                return Err(format!("a delivery for server {src}, which this rank does not hold"));
            }
            self.count_deliveries(src, measuring, packets, latencies);
        }
        Ok(())
    }

    /// Index of `server`, a held one, in the per-server arrays of this side (`Nics::held`).
    #[inline]
    fn held_index(&self, server: usize) -> usize {
        server - self.nics.held().start
    }

    /// Be one rank of a run over several (engine/ranks); before the workload starts. A rank
    /// running its own servers' part of the workload (`workload::servers_independent`) tells
    /// the workload which servers those are.
    pub fn on_rank(&mut self, view: rank::RankView, servers: &crate::topology::ServerMap) {
        if view.shared.is_none() {
            self.workload.partition(&|s| view.owns(servers, s));
        }
        self.rank = Some(Box::new(view));
    }

    /// This rank's view (`rank::RankView`), on ranks.
    pub fn rank_view(&mut self) -> Option<&mut rank::RankView> {
        self.rank.as_deref_mut()
    }

    /// This rank's view, to read.
    pub fn rank_view_ref(&self) -> Option<&rank::RankView> {
        self.rank.as_deref()
    }

    /// Packet `packet` (`p`) reached this rank from another with a copy of its message's
    /// record (`RankView::arrived_with`).
    pub fn arrived_with(&mut self, servers: &crate::topology::ServerMap, packet: u32, p: &crate::packet::Packet, key: (u32, u32), record: crate::message::Message) {
        let (view, messages) = (self.rank.as_mut().expect("on ranks"), &mut self.messages);
        view.arrived_with(servers, packet, p.dst, key, record, |r| messages.alloc(r));
    }

    /// Where a shared workload's ejections note the cycle they were scheduled in, if it is
    /// one (`rank::Shared`).
    pub fn eject_times(&mut self) -> Option<&mut std::collections::HashMap<u32, u64>> {
        self.rank.as_mut().and_then(|r| r.shared.as_mut()).map(|s| &mut s.eject_sent)
    }

    /// Whether this rank runs a shared workload whole (`rank::Shared`).
    pub fn shares_workload(&self) -> bool {
        self.rank.as_ref().is_some_and(|r| r.shared.is_some())
    }

    /// This cycle's calls of a shared workload from this rank's deliveries.
    pub fn calls_to_share(&mut self) -> Vec<(u64, rank::Call)> {
        self.rank.as_mut().and_then(|r| r.shared.as_mut()).map_or_else(Vec::new, |s| std::mem::take(&mut s.calls))
    }

    /// The random streams of this rank's servers drawn from since the last exchange, if
    /// the workload is shared.
    pub fn streams_to_share(&mut self) -> Vec<(u32, Rng)> {
        self.rank.as_mut().map_or_else(Vec::new, |r| r.drawn_streams(&self.nic_rng))
    }

    /// Take another rank's samples: those of its own senders, where each rank runs its own
    /// servers' part of the workload; else (a shared workload records every sample on every
    /// rank), for each sample, its NIC counters from the rank owning its source (`owns`),
    /// which alone counts that NIC. The result orders them (`report::sample_table`).
    pub fn samples_from(&mut self, theirs: &[Sample], owns: impl Fn(u32) -> bool) {
        if !self.shares_workload() {
            self.samples.extend_from_slice(theirs);
            return;
        }
        for (mine, theirs) in self.samples.iter_mut().zip(theirs) {
            if owns(theirs.src) {
                mine.counters = theirs.counters;
            }
        }
    }

    /// Other ranks' servers' random streams as their ranks left them.
    pub fn set_streams(&mut self, streams: Vec<(u32, Rng)>) {
        for (s, rng) in streams {
            self.nic_rng[s as usize] = rng;
        }
    }

    /// Make every rank's calls of the cycle, in the one-process order (`rank::Shared`).
    pub fn make_calls(&mut self, net: &mut Net, now: u64, calls: impl IntoIterator<Item = rank::Call>) {
        for call in calls {
            match call {
                rank::Call::Packet { src, latency, measuring } => {
                    self.workload.packet_delivered(src, latency);
                    if self.rank.as_ref().is_some_and(|r| r.owns(&net.parts.servers, src)) {
                        self.count_delivery(src, latency, measuring);
                    }
                }
                rank::Call::Response { requester, latency, measuring } => {
                    if self.rank.as_ref().is_some_and(|r| r.owns(&net.parts.servers, requester)) {
                        self.nics.count_response(requester as usize, latency, measuring);
                    }
                }
                rank::Call::Message(done) => self.with_workload(net, now, |w, cx| w.delivered(&done, cx)),
            }
        }
    }

    /// Put the events the NIC steps held back (`step_nics` with `defer`) into the calendar.
    pub fn schedule_deferred(&mut self, cal: &mut Calendar, now: u64) {
        for (at, ev) in self.nic_events.drain(..) {
            cal.schedule(at, now, ev);
        }
    }

    /// The events the NIC steps held back, for a rank to put into the calendar in its
    /// window's order (engine/ranks/window.rs).
    pub fn nic_events_mut(&mut self) -> &mut Vec<(u64, Event)> {
        &mut self.nic_events
    }

    /// Credits back at a NIC, and flits ejected into one: everything but the switches and
    /// their wheel, so it commutes with the deliveries to the switches.
    pub fn deliver_to_server(&mut self, net: &mut Net, now: u64, ev: Event) {
        match ev {
            Event::FlitArrive { .. } | Event::Credit { .. } => {}
            Event::NicCredit { server, vc, phits } => {
                self.nics.credit(server as usize, vc as usize, phits as u32);
                // Most credits come back to a NIC that has sent all it had (below
                // saturation): waking it would only have it find nothing to send.
                if self.nics.next_to_send(server as usize, &net.parts.params).is_some() {
                    self.wake_nic(net, server as usize, now);
                }
            }
            Event::Eject { server, packet, flit: _ } => {
                *net.last_progress = now;
                let p = net.packets.get_mut(packet);
                let (flit_phits, flits) = (net.parts.params.flit_phits(p.phits), net.parts.params.flits(p.phits));
                p.flits_ejected += 1;
                let complete = p.flits_ejected == flits;
                self.stats.on_eject_phits(now, flit_phits as u64);
                if complete {
                    if let Some(shared) = self.rank.as_mut().and_then(|r| r.shared.as_mut()) {
                        shared.delivering_sent = shared.eject_sent.remove(&packet).expect("a shared workload's ejections are noted");
                    }
                    debug_assert_eq!(net.packets.get(packet).dst, server);
                    self.packet_arrived(net, now, packet);
                }
            }
        }
    }
}
