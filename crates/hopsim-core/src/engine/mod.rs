//! The cycle loop. Each cycle: packets are generated, scheduled events are delivered (phits
//! arriving, credits returning, packets ejected) in the order they were scheduled, then every
//! switch with something to do takes one step, in ascending switch number, then every NIC
//! with something to do, in ascending server number. Steps only schedule work for later
//! cycles (every latency is >= 1), so no step sees another of its cycle; the fixed order
//! makes the order of each later cycle's events, which routing on arrival may depend on (its
//! random draws, the queues it reads), a function of the state alone. On networks far larger
//! than the cache the switches' deliveries and steps go block by block of switches, which
//! changes nothing but where the records are when read (`blocks.rs`). With several threads
//! (`run.threads`) the switches' deliveries and steps are split among them and what they send
//! is put back into the calendar in one thread's order (`parallel.rs`).

mod blocks;
pub mod checkpoint;
mod deadlock;
mod head_routing;
mod invariants;
pub mod memory;
pub mod parallel;
pub mod ranks;
mod report;
pub mod rows;
mod server_side;
mod switch_side;

use crate::error::SpecResult;
use crate::nic::Nics;
use crate::packet::Arena;
use crate::router::{self, Routers};
use server_side::{Net, ServerSide};
use switch_side::{SwitchSide, SwitchWake};
use crate::route::Rng;
use crate::routing::Routing;
use crate::workload::Workload;
use crate::spec::{FlowControl, Spec, Validated};
use crate::stats::{RunResult, Stats};
use crate::topology::{ServerMap, Topology};
use crate::traffic::Traffic;
use crate::vc::VcPolicy;
use crate::calendar::{Calendar, Event};
use crate::params::{HopHook, Params};
use crate::random::seed_for;
use crate::unsafe_parts::SharedMut;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// What may stop the loop at the end of a cycle (`Simulation::may_generate_ahead`).
#[derive(Clone, Copy)]
struct Limits {
    end: u64,
    /// The measured window's end: past it the loop stops as soon as every measured packet is
    /// delivered (`run.drain`).
    window_end: u64,
    watchdog: u64,
    detector_at: u64,
}

/// The pluggable parts of a run, built and cross-checked from the spec; once running, read
/// by both of its sides.
struct Parts {
    topo: Arc<dyn Topology>,
    routing: Arc<dyn Routing>,
    vc_policy: Arc<dyn VcPolicy>,
    servers: ServerMap,
    traffic: Traffic,
    params: Params,
    timings: crate::link::ClassTimings,
    /// The most candidates the routing offers a head (`AlgorithmKind::candidates`).
    candidates: usize,
}

impl Parts {
    /// The parts of one rank of a run over `ranks` MPI ranks (1: one process).
    fn build(spec: &Validated, ranks: usize) -> SpecResult<Parts> {
        let spec: &Spec = spec;
        crate::workload::check(spec)?;
        let topo = crate::topology::build(spec)?;
        spec.check_network_widths(topo.as_ref())?;
        if ranks > 1 {
            ranks::check_ranks(ranks, topo.num_switches())?;
        }
        memory::check_fits_on_ranks(spec, topo.as_ref(), memory::available()?, ranks)?;
        crate::deadlock_freedom::check_defined(spec, topo.kind())?;
        let routing = crate::routing::build(spec, &topo)?;
        let candidates = crate::routing::checked_candidates(spec, topo.as_ref())?;
        let vc_policy = crate::deadlock_freedom::build_vc_policy(spec, &topo, routing.as_ref())?;
        let servers = ServerMap::new(topo.as_ref());
        let traffic = crate::traffic::build(spec, topo.as_ref(), &servers)?;
        let timings = crate::link::ClassTimings::build(spec, topo.as_ref())?;
        let p = spec.packet.phits;
        let wormhole = spec.flow_control() == FlowControl::Wormhole;
        let protocol = crate::nic::protocol::Protocol::from_spec(spec);
        let (_, shortest) = protocol.packet_range(p as u16);
        let in_cap = spec.input_buffer_phits();
        let out_cap = spec.output_buffer_phits();
        if !wormhole && out_cap < p {
            return Err(crate::error::SpecError::new(
                "router.output_buffer_phits",
                out_cap,
                format!("virtual cut-through needs room for a whole packet: at least packet.phits = {p}"),
            ));
        }
        let routing_reads_queues = crate::routing::algorithm(spec).map_or(true, |a| a.reads_queues());
        let random_jsq_ties = spec.router.jsq_tie_break == "random";
        let params = Params {
            vcs: spec.router.vcs,
            wormhole,
            packet_phits: p as u16,
            min_packet_phits: shortest,
            in_cap: in_cap as u32,
            out_cap: out_cap as u32,
            latency: spec.link.latency,
            injection_link: timings.of(crate::topology::LinkClass::Injection),
            fastest_gbytes_per_s: timings.fastest_gbytes_per_s,
            pipeline_delay: spec.router.pipeline_delay,
            staging: spec.router_staging(),
            speedup: spec.router.speedup as u32,
            vc_allocator: spec.vc_allocator(),
            switch_allocator: spec.switch_allocator(),
            random_jsq_ties,
            injection: crate::nic::InjectionRule::from_name(&spec.routing.injection_vcs).expect("validated routing.injection_vcs"),
            ejection: crate::spec::EjectionVcs::from_name(&spec.routing.ejection_vcs).expect("validated routing.ejection_vcs"),
            queue_reach: crate::route::QueueReach::from_name(&spec.routing.queue_reach).expect("validated routing.queue_reach"),
            window: (spec.run.warmup, spec.run.warmup + spec.run.cycles),
            protocol,
            routing_reads_queues,
            routing_observes_network: crate::routing::algorithm(spec).is_ok_and(|a| a.reads_remote_queues()),
            deliver_when_ready: !routing_reads_queues && !random_jsq_ties,
            policy_vcs: vc_policy.all(),
            selection: routing.selection(),
            hop_hook: HopHook(routing.learns_hops().then(|| routing.clone())),
            measure_at_injection: spec.run.measure == crate::spec::Measure::Injected,
            quiet_after_window: spec.run.drain_quiet,
        };
        Ok(Parts { topo, routing, vc_policy, servers, traffic, params, timings, candidates })
    }
}

/// A run's parts built from its spec, its workload placed on them: everything that can be
/// wrong with a valid spec is found here, and a run builds this once (`Simulation::check`
/// or `Simulation::new`, never both on one `Built`).
pub struct Built {
    spec: Spec,
    parts: Parts,
    workload: Box<dyn Workload>,
    /// The MPI ranks the run goes over (1: one process).
    ranks: usize,
}

impl Built {
    pub fn new(spec: &Validated) -> SpecResult<Built> {
        Self::on_ranks(spec, 1)
    }

    /// The parts a rank of a run over `ranks` MPI ranks builds: checked as `new` checks
    /// them, but the memory a rank needs (`memory::estimate_on_ranks`), and refused if there
    /// are more ranks than switches (`ranks::check_ranks`).
    pub fn on_ranks(spec: &Validated, ranks: usize) -> SpecResult<Built> {
        let parts = Parts::build(spec, ranks)?;
        // Jobs are placed on the network here: an allocation that does not fit is bad input.
        let workload = crate::workload::build(spec, &parts.traffic, parts.topo.as_ref(), &parts.servers)?;
        Ok(Built { spec: Spec::clone(spec), parts, workload, ranks })
    }

    /// The bytes its run will add to the process, or to rank 0's on MPI ranks
    /// (`memory::estimate_on_ranks`).
    pub fn memory_run(&self) -> u64 {
        memory::estimate_on_ranks(&self.spec, self.parts.topo.as_ref(), self.ranks).run()
    }
}

/// One run: the parts built from its spec, the packets and the calendar they share, and the
/// run's two sides, each owning its state: the switches' (`SwitchSide`) and the servers'
/// (`ServerSide`: NICs, workload, messages, statistics). The cycle loop here decides what
/// runs when; the sides do the work.
pub struct Simulation {
    spec: Spec,
    /// The parts built from the spec, read by both sides.
    parts: Parts,
    packets: Arena,
    cal: Calendar,
    server_side: ServerSide,
    switch_side: SwitchSide,
    last_progress: u64,
    phit_hops: u64,
    deadlock: Option<(u64, String)>,
    /// A closed-loop workload finished before `run.cycles`.
    finished_early: bool,
    now: u64,
    /// Where `run` publishes the cycles simulated so far, for a progress bar.
    progress: Option<Arc<AtomicU64>>,
    /// Set by another thread to stop `run` early (Ctrl-C in Python).
    cancel: Option<Arc<AtomicBool>>,
    /// The most threads `run` may use (`limit_threads`).
    max_threads: usize,
    /// Fewest ports of the switches due, or events to deliver, that a cycle splits among
    /// threads.
    min_parallel: (usize, usize),
    /// Where and how often the run writes checkpoints (`checkpoint_to`).
    checkpoint: Option<checkpoint::Schedule>,
    /// The loop's state at the checkpoint the run resumed from (`resume_from`).
    resumed: Option<checkpoint::LoopState>,
    /// What an MPI rank's threads scheduled in a cycle, taken back out of the calendar
    /// (engine/ranks), kept for its allocation.
    scheduled_on_team: Vec<(u64, Event)>,
    /// Packets the arena holds without growing (`Arena::with_capacity`): the run's thread
    /// makes packets while other threads step switches only while that many are not reached,
    /// since growing would move the packets they read.
    packet_room: usize,
}

impl Simulation {
    /// Every check `new` makes, without allocating the network: check a spec completely;
    /// return the bytes its run will add to the process, with which a sweep decides how many
    /// runs fit at once.
    pub fn check(spec: &Validated) -> SpecResult<u64> {
        Self::check_on_ranks(spec, 1)
    }

    /// `check` for a run over `ranks` MPI ranks: the bytes are rank 0's, the largest rank's.
    pub fn check_on_ranks(spec: &Validated, ranks: usize) -> SpecResult<u64> {
        Ok(Built::on_ranks(spec, ranks)?.memory_run())
    }

    pub fn new(spec: &Validated) -> SpecResult<Self> {
        Ok(Self::from_built(Built::new(spec)?))
    }

    /// The run of parts built already (`Built::new`).
    pub fn from_built(built: Built) -> Self {
        let mut sim = Self::unstarted(built);
        sim.with_workload(0, |w, cx| w.start(cx));
        sim
    }

    /// `from_built` before its workload has started.
    fn unstarted(built: Built) -> Self {
        let switches = built.parts.topo.num_switches();
        Self::holding(built, 0..switches)
    }

    /// `unstarted`, holding the state of the switches `held` only (an MPI rank's).
    fn holding(built: Built, held: std::ops::Range<usize>) -> Self {
        let Built { spec: owned, parts, workload, .. } = built;
        let spec = &owned;
        let Parts { topo, routing, vc_policy, servers, params, timings, candidates, .. } = &parts;
        let candidates = *candidates;
        let p = params.packet_phits as usize;
        let (in_cap, out_cap) = (params.in_cap as usize, params.out_cap as usize);
        let (in_slots, out_slots) = crate::params::buffer_slots(spec);
        let mut routers = Routers::new(topo.as_ref(), servers, timings, params.vcs, in_slots, out_slots, in_cap as u32, out_cap as u32, held.clone());
        routers.use_allocators(params.vc_allocator, params.switch_allocator);
        let nics = Nics::new(servers, &routers, params.injection_link, params.vcs, in_cap as u32, servers.of_switches(held.clone()));
        // The furthest anything is scheduled: a credit after a packet's slowest tail, or a
        // flit at the far end of the longest link.
        let horizon = timings.max_latency() as u64 + timings.max_cycles(p as u64) + params.pipeline_delay as u64 + 4;
        let cal = Calendar::holding(horizon, held.clone(), servers.of_switches(held.clone()));
        let mut stats = Stats::new(spec.run.warmup, spec.run.cycles, spec.run.temporal_bin);
        stats.by_receipt = spec.run.measure == crate::spec::Measure::Received;
        let seed = spec.run.seed;
        // A workload whose servers are independent draws only from its own servers' streams.
        let streams = if crate::workload::servers_independent(spec) { servers.of_switches(held.clone()) } else { 0..servers.num_servers() };
        let nic_rng = crate::random::Streams::new(seed, streams);
        let switch_rng = held.map(|s| Rng::seed_from_u64(seed_for(seed, 2, s as u64))).collect();
        let n_servers = servers.num_servers();
        // At most a packet per buffer slot (and one partly in each VC under wormhole); the
        // reservation is address space only, but kept within a quarter of the free memory.
        let most_packets = (in_cap / p + out_cap / p + 1) * routers.vc.len() + 2 * n_servers;
        let room = memory::available().ok().flatten().map_or(usize::MAX, |b| (b / 4) as usize / Arena::bytes_per_packet(candidates));
        let packet_room = most_packets.min(room);
        let head_routing = head_routing::HeadRouting::of(routing.as_ref(), vc_policy.as_ref());
        let server_side = ServerSide::new(nics, nic_rng, workload, stats, spec);
        let switch_side = SwitchSide::new(routers, switch_rng, head_routing, topo.as_ref(), params);
        Simulation {
            spec: owned,
            packets: Arena::with_capacity(packet_room, candidates),
            cal,
            parts,
            server_side,
            switch_side,
            last_progress: 0,
            phit_hops: 0,
            deadlock: None,
            finished_early: false,
            now: 0,
            progress: None,
            cancel: None,
            max_threads: usize::MAX,
            min_parallel: (parallel::MIN_PARALLEL_PORTS, parallel::MIN_PARALLEL_EVENTS),
            checkpoint: None,
            resumed: None,
            scheduled_on_team: Vec::new(),
            packet_room,
        }
    }

    /// The cycle the run stands at: 0 before it runs, or the cycle of the checkpoint it was
    /// resumed from.
    pub fn cycle(&self) -> u64 {
        self.now
    }

    /// The switches' state (tests: how it is allocated).
    pub fn routers(&self) -> &Routers {
        self.switch_side.routers()
    }

    /// Publish the number of cycles simulated in `cycles` while running (every few thousand
    /// cycles; the cycle the run stopped at when it ends), so another thread can show progress.
    pub fn report_progress(&mut self, cycles: Arc<AtomicU64>) {
        self.progress = Some(cycles);
    }

    /// Stop `run` at the next cycle once `flag` is set. The result of a stopped run covers
    /// only the cycles simulated, so the caller must discard it.
    pub fn cancel_on(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// Use at most `n` threads, whatever `run.threads` says: the caller runs other runs at
    /// the same time on the other cores. The results do not change.
    pub fn limit_threads(&mut self, n: usize) {
        self.max_threads = n.max(1);
    }

    /// Deliver and step block by block of `1 << shift` switches however small the network is
    /// (tests: the networks they afford are otherwise one block, blocks.rs).
    pub fn walk_in_blocks(&mut self, shift: u32) {
        self.switch_side.set_block_shift(shift);
    }

    /// Split every cycle among the threads however few switches and events it has
    /// (tests: their small networks would otherwise run every phase on one thread).
    pub fn split_every_phase(&mut self) {
        self.min_parallel = (0, 0);
    }

    /// Step every switch and every NIC at every cycle, idle or not, instead of those a
    /// wake-up asked for (tests: the results must not change, or a wake-up is missing).
    pub fn step_everything(&mut self) {
        self.cal.visit_everything();
    }

    /// Route every head through the `Routing` and `VcPolicy` traits, even where the run's pair
    /// is called directly (tests: the two ways must give the same results). Returns whether
    /// the pair was called directly.
    pub fn route_through_traits(&mut self) -> bool {
        self.switch_side.route_through_traits()
    }

    /// Run to the end (or to a detected deadlock) and summarise, on `run.threads` threads.
    pub fn run(self) -> RunResult {
        self.run_into(rows::Rows::in_memory()).expect("rows kept in memory are not written")
    }

    /// `run`, the result's rows per link and per server written to `links.csv` and
    /// `counters.csv` in `dir`, with `topology.json`, rather than held (engine/rows.rs): the
    /// files the Python layer writes from a result, for a fraction of the time and memory.
    pub fn run_writing_rows(self, dir: &std::path::Path) -> Result<RunResult, rows::WriteError> {
        let rows = rows::Rows::to_files(dir)?;
        self.run_into(rows)
    }

    fn run_into(self, rows: rows::Rows) -> Result<RunResult, rows::WriteError> {
        let threads = parallel::threads_for(self.spec.run.threads, self.parts.topo.num_switches(), self.switch_side.routers().ports.len(), self.max_threads);
        if threads <= 1 {
            return self.run_on(None, rows);
        }
        let team = parallel::Team::new(parallel::Partition::new(threads, self.parts.topo.num_switches()));
        std::thread::scope(|scope| {
            for t in 1..team.threads() {
                let team = &team;
                scope.spawn(move || team.serve(t));
            }
            let _stop = team.stop_on_drop();
            self.run_on(Some(&team), rows)
        })
    }

    fn run_on(mut self, team: Option<&parallel::Team>, rows: rows::Rows) -> Result<RunResult, rows::WriteError> {
        let started = std::time::Instant::now();
        let window_end = self.server_side.stats().end;
        // `run.drain`: past the window, on until every packet generated in it is delivered.
        let drain_end = window_end.saturating_add(self.spec.run.drain);
        // Whether the workload's timers of this cycle fired at the end of the one before.
        let (mut end, mut generated_ahead, mut detector) = match self.resumed.take() {
            Some(looped) => looped,
            None => (window_end, false, deadlock::Detector::new(&self)),
        };
        let watchdog = self.spec.run.watchdog;
        let mut visit = Vec::new();
        let mut next_report = 0;
        let reach = self.parts.params.queue_reach;
        // A resumed run's switches are read again: a checkpoint keeps no backlogs.
        self.switch_side.observe_held(reach);
        self.server_side.set_shortest_link(self.switch_side.routers().shortest_switch_link());
        let mut observed = Vec::new();
        loop {
            if self.now >= window_end {
                // Measured at injection: the packets measured are those sent in the window.
                let undelivered = self.server_side.measured_undelivered(&self.parts.params);
                if self.now >= drain_end || !undelivered {
                    break;
                }
                end = drain_end;
            }
            // One relaxed load a cycle: negligible beside stepping the switches.
            if self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                break;
            }
            self.checkpoint_if_due((end, generated_ahead, &detector));
            let now = self.now;
            if now >= next_report {
                if let Some(p) = &self.progress {
                    p.store(now, Ordering::Relaxed);
                }
                // Often enough that a network of a million switches, a few cycles a second,
                // still shows progress; a relaxed store every 64 cycles costs nothing.
                next_report = now + 64;
            }
            if !std::mem::take(&mut generated_ahead) {
                self.generate(now);
            }
            let events = self.cal.take_events(now);
            let measuring = self.server_side.stats().in_window(now);
            let finished = match team.filter(|_| self.worth_splitting(now, events.len())) {
                Some(team) => {
                    let limits = Limits { end, window_end, watchdog, detector_at: detector.next_at };
                    let (finished, ahead) = self.cycle_on_team(team, now, measuring, &events, &mut visit, limits);
                    generated_ahead = ahead;
                    finished
                }
                None => {
                    self.cycle_alone(now, measuring, &events, &mut visit);
                    self.workload_done(now)
                }
            };
            self.switch_side.observe(&events, &visit, reach, &mut observed);
            observed.clear();
            self.cal.return_events(events);

            let in_network = self.server_side.in_network();
            if finished {
                self.now = now + 1;
                self.finished_early = true;
                break;
            }
            if in_network > 0 && now - self.last_progress >= watchdog {
                if !self.cal.is_idle() {
                    // Flits or credits still on their links, or a switch due to step (a flit in
                    // its pipeline): the network is slow, not stopped; the watchdog counts from
                    // when nothing is left on its way.
                    self.last_progress = now;
                } else {
                    let place = match detector.cycle_now(&self, now) {
                        Some(found) => deadlock::describe(&self, &found),
                        None => self.describe_blocked(),
                    };
                    self.deadlock = Some((now, place));
                    self.now = now + 1;
                    break;
                }
            }
            if in_network > 0 && now >= detector.next_at {
                if let Some(found) = detector.check(&self, now) {
                    self.deadlock = Some((found.formed, deadlock::describe(&self, &found)));
                    self.now = now + 1;
                    break;
                }
            }
            // Timers fired ahead were due at `now + 1`, which `next_cycle` would have chosen.
            self.now = if generated_ahead { now + 1 } else { self.next_cycle(now, in_network, watchdog, end) };
        }
        if let Some(p) = &self.progress {
            p.store(self.now, Ordering::Relaxed);
        }
        let wall = started.elapsed().as_secs_f64();
        let conservation = invariants::check(&self);
        self.release_network();
        report::summarise_alone(&self, conservation, wall, rows)
    }

    /// Free the buffers, VC records, packets and events once the conservation check has
    /// recounted them: nothing after it reads them, and the result tables then reuse their
    /// memory instead of adding to the run's peak (15 MB, 470 bytes a switch, on the
    /// 32x32x32 torus).
    fn release_network(&mut self) {
        self.switch_side.release();
        self.packets = Arena::with_capacity(0, 0);
        self.cal = Calendar::new(0, 0, 0);
    }

    /// Whether a cycle has enough to do to pay for splitting it among threads: its events,
    /// or the switches it will step, judged by those due now and those the cycle before
    /// stepped (some of a cycle's are stepped for arrivals and credits delivered in it).
    fn worth_splitting(&self, now: u64, events: usize) -> bool {
        let (ports, min_events) = self.min_parallel;
        let due = self.cal.routers_due(now).max(self.switch_side.stepped_last());
        let routers = self.switch_side.routers();
        let ports_due = due * routers.ports.len() / routers.held().len().max(1);
        events >= min_events || ports_due >= ports
    }

    /// After cycle `now`, a closed-loop workload has nothing more to send and everything it
    /// sent arrived (`ServerSide::workload_done`).
    fn workload_done(&mut self, now: u64) -> bool {
        self.server_side.workload_done(now)
    }

    /// One cycle on this thread alone: deliver to the switches and step them (block by block
    /// on a network far larger than the cache, blocks.rs), then deliver to the servers and
    /// step the NICs.
    fn cycle_alone(&mut self, now: u64, measuring: bool, events: &[Event], visit: &mut Vec<u32>) {
        if self.switch_side.block_shift() == blocks::ONE_BLOCK {
            self.deliver_first(now, events);
            self.cal.take_routers(now, visit);
            self.step_switches(now, measuring, visit);
            self.switch_side.set_stepped_last(visit.len());
            self.step_nics(now, measuring, false);
            return;
        }
        self.cal.take_routers(now, visit);
        let sim = SharedMut::new(self);
        // One thread; the calendar, scratch and counters lent to the walk are fields the
        // deliveries and steps reach only through it.
        let me = sim.get();
        let (mut walk, scratch) = me.switch_side.lend_walk();
        let out = blocks::Out { cal: &mut me.cal, scratch, last_progress: &mut me.last_progress, phit_hops: &mut me.phit_hops };
        let stepped = blocks::deliver_and_step(sim, now, measuring, events, 0..self.parts.topo.num_switches(), visit, &mut walk, out);
        self.switch_side.put_walk(walk);
        self.switch_side.set_stepped_last(stepped);
        self.servers_and_nics(now, measuring, events, false);
    }

    /// Step the switches of `visit` (ascending), every event of the cycle delivered.
    fn step_switches(&mut self, now: u64, measuring: bool, visit: &[u32]) {
        self.switch_side.step_all(visit, now, &mut self.packets, &mut self.cal, &self.parts, measuring, &mut self.last_progress, &mut self.phit_hops);
    }

    /// Deliver every event of the cycle, in calendar order, before any switch steps: a
    /// network that is one block (blocks.rs).
    fn deliver_first(&mut self, now: u64, events: &[Event]) {
        self.switch_side.prefetch_ready(now, 0..self.parts.topo.num_switches(), &self.packets);
        for (i, ev) in events.iter().enumerate() {
            if let Some(ahead) = events.get(i + router::PREFETCH_EVENTS_AHEAD) {
                self.switch_side.prefetch_event(ahead, &self.packets);
            }
            self.deliver(now, *ev);
        }
    }

    /// One cycle split among the team's threads (docs/parallel.md). The other threads deliver
    /// to and step their switches; this thread delivers to and steps its own, and meanwhile
    /// does what one thread does after the switches' steps: the events for servers, the NIC
    /// steps (their events held back until the switches' are in the calendar) and, when the
    /// next cycle is sure to be `now + 1`, that cycle's timers. None of that touches a
    /// switch, its random stream or a packet a switch holds. Returns whether the workload has
    /// finished and whether the next cycle's timers fired.
    #[allow(clippy::too_many_arguments)]
    fn cycle_on_team(&mut self, team: &parallel::Team, now: u64, measuring: bool, events: &[Event], visit: &mut Vec<u32>, limits: Limits) -> (bool, bool) {
        let to_deliver = events;
        // Packets are made meanwhile (answers, refills: fewer than an event or three per
        // server) only if the arena holds them without moving.
        let overlap = self.packets.live() + events.len() + 3 * self.parts.servers.num_servers() <= self.packet_room;
        let (mut finished, mut ahead) = (false, false);
        let sim = SharedMut::new(self);
        team.cycle(sim, now, measuring, to_deliver, |job| {
            // The other threads reach only their switches, the switches' random streams and
            // the packets their switches hold, and, after this thread's own steps, the
            // calendar's events' and switches' wheels (engine/parallel.rs); what follows
            // reaches the calendar (those wheels only before `step_own`), NICs, servers,
            // statistics and workload, and packets no switch holds (the arena does not grow:
            // `overlap`).
            let me = sim.get();
            me.cal.take_routers(now, visit);
            team.publish(job, visit);
            team.step_own(job, visit);
            if overlap {
                me.servers_and_nics(now, measuring, to_deliver, true);
                finished = me.workload_done(now);
                ahead = !finished && me.may_generate_ahead(now, limits);
                if ahead {
                    me.generate(now + 1);
                }
            }
        });
        team.add_counters(self);
        if overlap {
            self.server_side.schedule_deferred(&mut self.cal, now);
        } else {
            self.servers_and_nics(now, measuring, to_deliver, false);
            finished = self.workload_done(now);
        }
        (finished, ahead)
    }

    /// The servers' side and what it reaches of the rest of the run.
    fn server_side(&mut self) -> (&mut ServerSide, Net<'_>) {
        let net = Net { packets: &mut self.packets, cal: &mut self.cal, parts: &self.parts, last_progress: &mut self.last_progress };
        (&mut self.server_side, net)
    }

    /// The part of a cycle after the switches' steps that concerns servers
    /// (`ServerSide::servers_and_nics`).
    fn servers_and_nics(&mut self, now: u64, measuring: bool, events: &[Event], defer: bool) {
        let (side, mut net) = self.server_side();
        side.servers_and_nics(&mut net, now, measuring, events, defer);
    }

    fn step_nics(&mut self, now: u64, measuring: bool, defer: bool) {
        let (side, mut net) = self.server_side();
        side.step_nics(&mut net, now, measuring, defer);
    }

    /// Call the workload, then send what it posted (`ServerSide::with_workload`).
    fn with_workload(&mut self, now: u64, f: impl FnOnce(&mut dyn Workload, &mut crate::workload::Ctx)) {
        let (side, mut net) = self.server_side();
        side.with_workload(&mut net, now, f);
    }

    /// Whether the loop is sure to go on to cycle `now + 1` (so its timers may fire now):
    /// they are due then, and neither the end, a drain whose measured packets are all
    /// delivered, the watchdog nor the deadlock check (whose progress the switches' steps can
    /// only move later) stops it.
    fn may_generate_ahead(&self, now: u64, limits: Limits) -> bool {
        let in_network = self.server_side.in_network();
        let checks = in_network > 0 && (now - self.last_progress >= limits.watchdog || now >= limits.detector_at);
        let drained = now + 1 >= limits.window_end && !self.server_side.measured_undelivered(&self.parts.params);
        now + 1 < limits.end && !checks && !drained && self.server_side.timers().due_at(now + 1)
    }

    /// The next cycle with anything to do: skip idle stretches at low load.
    fn next_cycle(&self, now: u64, in_network: u64, watchdog: u64, end: u64) -> u64 {
        if !self.cal.is_idle() || self.cal.visits_everything() {
            return now + 1;
        }
        let mut next = self.server_side.timers().next_at().map_or(end, |t| t.min(end));
        if in_network > 0 {
            next = next.min(self.last_progress.saturating_add(watchdog));
        }
        if let Some(stop) = self.server_side.stop_ahead(now) {
            // The run ends no sooner than the cycle before the background's stop.
            next = next.min(stop - 1);
        }
        next.max(now + 1)
    }

    /// Fire the workload timers due now and send what they post.
    fn generate(&mut self, now: u64) {
        let (side, mut net) = self.server_side();
        side.generate(&mut net, now);
    }

    /// An event for a switch (`to_switch`, then its wake-up) or for a server: the two kinds
    /// share nothing, so a switch's event never enters the servers' part.
    fn deliver(&mut self, now: u64, ev: Event) {
        if ev.switch().is_some() {
            match to_switch(self, now, ev) {
                SwitchWake::Now(s) => self.cal.wake_router(s, now),
                SwitchWake::WhenReady { switch, vc, packet } => {
                    let ready = self.parts.params.ready_from(now);
                    self.cal.wake_router(switch, ready);
                    self.switch_side.note_ready(now, ready, vc, packet);
                }
                SwitchWake::None => {}
            }
            if let Event::FlitArrive { .. } = ev {
                self.last_progress = now;
            }
        } else {
            self.deliver_to_server(now, ev);
        }
    }

    fn deliver_to_server(&mut self, now: u64, ev: Event) {
        let (side, mut net) = self.server_side();
        side.deliver_to_server(&mut net, now, ev);
    }

    /// Where a deadlock sits: switches whose input buffers hold flits that cannot move.
    fn describe_blocked(&self) -> String {
        let (count, blocked) = self.blocked_switches(0..self.parts.topo.num_switches());
        self.describe_blocked_from(count, &blocked)
    }

    /// Among `switches`, how many hold flits, and the first four of them described.
    fn blocked_switches(&self, switches: std::ops::Range<usize>) -> (usize, Vec<String>) {
        let vcs = self.parts.params.vcs;
        let routers = self.switch_side.routers();
        let mut blocked = Vec::new();
        let mut count = 0;
        for s in switches {
            let base = routers.first_port(s);
            let held: u32 = routers.ports_of(s).map(|gp| routers.ports[gp].in_flits).sum();
            if held == 0 {
                continue;
            }
            count += 1;
            if blocked.len() < 4 {
                let coords = self.parts.topo.coordinates(s);
                let mut vcs_full = Vec::new();
                for gp in routers.ports_of(s) {
                    for v in 0..vcs {
                        let q = &routers.vc[gp * vcs + v];
                        if !q.input.is_empty() {
                            vcs_full.push(format!("port {} vc {v}: {} flit(s)", gp - base, q.input.len()));
                        }
                    }
                }
                blocked.push(format!("switch {s} {coords:?} [{}]", vcs_full.join(", ")));
            }
        }
        (count, blocked)
    }

    /// The deadlock's place from the switches holding flits (`blocked_switches`).
    fn describe_blocked_from(&self, count: usize, blocked: &[String]) -> String {
        if count == 0 {
            // Nothing is scheduled and no switch holds a flit: the packets sit where no
            // switch can move them (a NIC), which is not a deadlock of the network.
            let in_network = self.server_side.in_network();
            return format!("{in_network} packet(s) injected but not delivered, none in a switch and nothing on its way (flits held outside the switches)");
        }
        format!("{count} switch(es) hold flits that cannot move, e.g. {}", blocked.join("; "))
    }
}

/// The part of delivering an arrival or a credit that touches only its switch: the arriving
/// head is routed and queued at its input VC; a credit adds to its output VC's count. Says
/// when the switch must be stepped for it. A credit, a few instructions, is handled where
/// this is inlined; an arrival, which routes, in a call of its own (`arrive`), so that
/// credits do not pay for the registers an arrival saves.
///
/// On several threads, `sim` is lent to each (`SharedMut`), and no other thread touches this
/// switch's state, its random stream or the arriving packet during the call
/// (engine/parallel.rs: each switch has one owning thread).
#[inline(always)]
fn to_switch(sim: &mut Simulation, now: u64, ev: Event) -> SwitchWake {
    match ev {
        Event::FlitArrive { switch, port, vc, packet, flit, tail } => arrive(sim, now, switch as usize, port, vc, packet, flit, tail),
        Event::Credit { switch, port, vc, phits } => sim.switch_side.credit(switch as usize, port, vc, phits),
        _ => SwitchWake::None,
    }
}

/// A flit reaches input `port`, VC `vc`, of switch `sw` (`to_switch`, `SwitchSide::arrive`).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn arrive(sim: &mut Simulation, now: u64, sw: usize, port: u16, vc: u8, packet: u32, flit: crate::packet::Flit, tail: u16) -> SwitchWake {
    sim.switch_side.arrive(&sim.parts, &mut sim.packets, now, sw, port, vc, packet, flit, tail)
}
