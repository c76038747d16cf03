//! One run over several processes, MPI ranks on one machine or many (docs/parallel.md).
//!
//! Each rank owns a contiguous range of switch numbers (`parallel::Partition`, as threads
//! do), the servers of those switches, and everything that belongs to them: their buffers,
//! random streams, NICs, workload timers, the packets at them and the statistics of what
//! their servers send and receive. Every link between two ranks' switches takes at least
//! `lookahead` cycles, so a rank can do a window of that many cycles of its own switches and
//! servers alone (`window`); what its switch steps schedule for another rank's switches
//! goes out after the window, in one message to each rank it has anything for (`wire`), with
//! the record of every packet whose head crosses. A window ends with that exchange
//! (`Exchange::sparse`), and every rank then puts what it received into its calendar, cycle
//! by cycle in rank order, its own among them, and its NICs' events last: since ranks own
//! ascending ranges of switches, that is the order one process schedules them in (switch
//! steps in ascending number, then the NICs), so every later tie, random draw and sum is the
//! same. The exchange also sums and maxes every rank's status, from which every rank takes
//! the same decisions a one-process run takes from its whole state: the end of the run, the
//! watchdog, and the next cycle with anything to do; a window ends at the first cycle where
//! one process could take one of them.
//!
//! A workload whose servers share state runs whole on every rank (`server_side::rank`).
//! At the end rank 0 gathers the other ranks' statistics, NIC counters, link loads, samples
//! and conservation counts, and writes the one result.

pub mod local;
mod window;
mod wire;

use super::rows::{Loads, NicSums, Rows};
use super::{invariants, report, Simulation};
use crate::calendar::{Calendar, Event, Schedule};
use crate::engine::server_side::rank::Call;
use crate::error::{SpecError, SpecResult};
use crate::stats::RunResult;
use crate::topology::ServerMap;
use window::Held;
use wire::{Crossing, Status};

/// A rank's part in a run can go no further: another rank died, or the exchange failed.
#[derive(Debug, Clone)]
pub struct RankFailure(pub String);

/// How the ranks of a run reach each other: an MPI communicator (the Python layer's, through
/// mpi4py), or threads in one process (tests).
pub trait Exchange {
    fn rank(&self) -> usize;
    fn ranks(&self) -> usize;
    /// Send `out[r]` to rank `r` for every rank (this one's included) and return what every
    /// rank sent to this one, indexed by sender. A collective: every rank calls it at the
    /// same points of the run (at the end, and wherever the others are not overridden).
    fn all_to_all(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankFailure>;
    /// Every rank's `mine`, indexed by rank. A collective (a shared workload's calls, the
    /// deadlock checks, the start).
    fn all_gather(&mut self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>, RankFailure> {
        let ranks = self.ranks();
        self.all_to_all(vec![mine; ranks])
    }
    /// The exchange after each window of cycles (`window`): send each `(rank, bytes)` of
    /// `out` (another rank, each at most once) to its rank, and return what ranks sent this
    /// one, by ascending sender, with `sums` added up and `maxima` maxed over every rank's.
    /// A collective. Only ranks
    /// with something for another send it a message (the neighbours its switches' links
    /// reach; every rank, for a shared workload or UGAL-G), so a rank cannot count on one
    /// from each.
    /// Here over `all_to_all`, every rank hearing from every other; an MPI exchange sends
    /// only the messages (hopsim.mpi.MpiExchange).
    fn sparse(&mut self, out: Vec<(usize, Vec<u8>)>, sums: Vec<u64>, maxima: Vec<u64>) -> Result<Sparse, RankFailure> {
        sparse_over_all_to_all(self, out, sums, maxima)
    }
    /// The ranks of the run on this machine, this one included: they share its memory.
    fn ranks_here(&self) -> usize {
        1
    }
}

/// `Exchange::sparse` made of one `all_to_all`: each rank sends every other its sums and
/// maxima and, if it has one, its message.
pub fn sparse_over_all_to_all<E: Exchange + ?Sized>(ex: &mut E, out: Vec<(usize, Vec<u8>)>, sums: Vec<u64>, maxima: Vec<u64>) -> Result<Sparse, RankFailure> {
    let ranks = ex.ranks();
    let mut each: Vec<Option<Vec<u8>>> = vec![None; ranks];
    for (r, bytes) in out {
        *each.get_mut(r).ok_or_else(|| RankFailure(format!("a message for rank {r} of {ranks}")))? = Some(bytes);
    }
    let encoded = each.into_iter().map(|payload| bincode::serialize(&(&sums, &maxima, payload)).expect("a window serialises")).collect();
    let mut all = Sparse { received: Vec::new(), sums: vec![0; sums.len()], maxima: vec![0; maxima.len()] };
    for (r, bytes) in ex.all_to_all(encoded)?.into_iter().enumerate() {
        let (s, m, payload): (Vec<u64>, Vec<u64>, Option<Vec<u8>>) = bincode::deserialize(&bytes).map_err(|e| RankFailure(format!("a message from rank {r} is damaged: {e}")))?;
        all.add(&s, &m).map_err(|e| RankFailure(format!("rank {r} sent {e}")))?;
        all.received.extend(payload.map(|p| (r, p)));
    }
    Ok(all)
}

/// What `Exchange::sparse` returns: the messages to this rank, by ascending sender, and the
/// sums and maxima over every rank.
pub struct Sparse {
    pub received: Vec<(usize, Vec<u8>)>,
    pub sums: Vec<u64>,
    pub maxima: Vec<u64>,
}

impl Sparse {
    /// Add one rank's words to the sums and maxima.
    pub fn add(&mut self, sums: &[u64], maxima: &[u64]) -> Result<(), String> {
        if sums.len() != self.sums.len() || maxima.len() != self.maxima.len() {
            return Err(format!("{} sums and {} maxima where the others send {} and {}", sums.len(), maxima.len(), self.sums.len(), self.maxima.len()));
        }
        self.sums.iter_mut().zip(sums).for_each(|(a, b)| *a = a.wrapping_add(*b));
        self.maxima.iter_mut().zip(maxima).for_each(|(a, b)| *a = (*a).max(*b));
        Ok(())
    }
}

/// Why a rank's run gave no result.
#[derive(Debug)]
pub enum RankError {
    Spec(SpecError),
    Rank(RankFailure),
}

impl From<SpecError> for RankError {
    fn from(e: SpecError) -> Self {
        RankError::Spec(e)
    }
}

impl From<RankFailure> for RankError {
    fn from(e: RankFailure) -> Self {
        RankError::Rank(e)
    }
}

/// Who owns which switch and server.
struct Plan {
    part: super::parallel::Partition,
    rank: usize,
    ranks: usize,
}

impl Plan {
    fn owner_of_server(&self, servers: &ServerMap, server: usize) -> usize {
        self.part.owner(servers.switch_of(server))
    }
}

/// A run over `ranks` ranks of a network of `switches` switches: each rank must own one at
/// least.
pub fn check_ranks(ranks: usize, switches: usize) -> SpecResult<()> {
    if ranks > switches {
        return Err(SpecError::new("ranks", ranks, format!("at most one rank per switch, and this network has {switches} switches: launch at most {switches} ranks (mpirun -n {switches})")));
    }
    Ok(())
}

/// Refuse `ranks_here` ranks on one machine whose memory (`available` bytes) cannot hold
/// them all, each needing `run_bytes` (`memory::estimate_on_ranks`).
pub fn check_ranks_fit(run_bytes: u64, ranks_here: usize, available: Option<u64>) -> SpecResult<()> {
    let (Some(avail), true) = (available, ranks_here > 1) else { return Ok(()) };
    let need = run_bytes.saturating_mul(ranks_here as u64);
    if need <= avail {
        return Ok(());
    }
    let human = super::memory::human;
    super::memory::refuse_or_warn(SpecError::new(
        "ranks",
        format!("{ranks_here} on this machine"),
        format!(
            "each rank needs about {} (its share of the switches, and what every rank holds of the whole network), {} in all, more than the {} available: launch at most {} ranks a machine",
            human(run_bytes),
            human(need),
            human(avail),
            avail / run_bytes.max(1)
        ),
    ))
}

/// Where a rank's switch steps schedule: events go to the list of the rank that owns their
/// switch or server, its own included, until the end of the cycle; the step's own next
/// visit goes into the calendar (a step asks only for its own switch).
struct RankSend<'a> {
    cal: &'a mut Calendar,
    out: &'a mut [Vec<(u64, Event)>],
    plan: &'a Plan,
    servers: &'a ServerMap,
    /// A shared workload's ejections and the cycle each was scheduled in (`rank::Shared`).
    eject_sent: Option<&'a mut std::collections::HashMap<u32, u64>>,
}

impl Schedule for RankSend<'_> {
    #[inline]
    fn schedule(&mut self, at: u64, now: u64, ev: Event) {
        if let (Event::Eject { packet, .. }, Some(sent)) = (ev, self.eject_sent.as_deref_mut()) {
            sent.insert(packet, now);
        }
        let owner = match ev {
            Event::FlitArrive { switch, .. } | Event::Credit { switch, .. } => self.plan.part.owner(switch as usize),
            Event::NicCredit { server, .. } | Event::Eject { server, .. } => self.plan.owner_of_server(self.servers, server as usize),
        };
        self.out[owner].push((at, ev));
    }
    #[inline]
    fn wake_router(&mut self, switch: usize, at: u64) {
        self.cal.wake_router(switch, at)
    }
    #[inline]
    fn step_now(&mut self, switch: usize) {
        self.cal.step_now(switch)
    }
}

/// How a rank walks its switches, for tests: block by block of `1 << shift` switches
/// however small the network (`Simulation::walk_in_blocks`), and its threads splitting every
/// cycle however little it has (`Simulation::split_every_phase`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Walking {
    pub block_shift: Option<u32>,
    pub split_every_phase: bool,
}

/// Where rank `rank` of `ranks` keeps its checkpoint, beside `path`.
pub fn rank_checkpoint(path: &std::path::Path, rank: usize, ranks: usize) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".rank-{rank}-of-{ranks}"));
    name.into()
}

/// Every rank's calls of a cycle (each in its own order, with the cycle its ejection was
/// scheduled in) in the order one process makes them: a cycle delivers its events in the
/// order they were scheduled, and a cycle schedules its switches' in ascending switch
/// number, so by scheduling cycle, then by rank, then in the rank's order.
fn one_process_order<T>(by_rank: Vec<Vec<(u64, T)>>) -> impl Iterator<Item = T> {
    let mut calls: Vec<(u64, usize, T)> = by_rank.into_iter().enumerate().flat_map(|(r, calls)| calls.into_iter().map(move |(sent, call)| (sent, r, call))).collect();
    // Stable: a rank's calls of one scheduling cycle keep their order.
    calls.sort_by_key(|&(sent, r, _)| (sent, r));
    calls.into_iter().map(|(_, _, call)| call)
}

/// What a rank sends rank 0 at the end of the run.
#[derive(serde::Serialize, serde::Deserialize)]
struct RankEnd {
    /// `Stats`, serialised (it is not `Clone`).
    stats: Vec<u8>,
    nics: NicsEnd,
    /// The phits each port of the rank's switches sent, from its first port on.
    link_phits: Vec<u32>,
    phit_hops: u64,
    accounting: invariants::Accounting,
    samples: Vec<crate::workload::Sample>,
    /// What only this rank knew of a workload run whole (`Workload::rank_part`).
    workload: Vec<u8>,
    /// Switches holding flits, and the first few of them described (a deadlock).
    blocked: (usize, Vec<String>),
}

/// A rank's NICs as rank 0 needs them at the end: each held server's counters of the
/// measured window and most requests outstanding (its row), the sums over the whole run, and
/// where jobs read them, each server's whole-run counters.
#[derive(serde::Serialize, serde::Deserialize)]
struct NicsEnd {
    first: u32,
    counters: Vec<crate::nic::Counters>,
    outstanding_max: Vec<u32>,
    sums: NicSums,
    totals: Vec<crate::nic::Counters>,
}

impl Simulation {
    /// This rank's part of the run of `spec` over `exchange.ranks()` ranks, publishing its
    /// cycles in `progress` if given: the run's result on rank 0, `None` on the others.
    /// With `checkpoint`, each rank writes its own checkpoint beside that path
    /// (`rank_checkpoint`), and the ranks go on from theirs if asked and if all of them
    /// have one of the same cycle; otherwise the run starts over, said once on rank 0.
    /// On rank 0 with `rows_to`, the result's rows per link and per server go to files there
    /// (`rows::Rows::to_files`) as the ranks' ends come, rather than into the result.
    pub fn run_on_rank(spec: &crate::spec::Validated, ex: &mut dyn Exchange, progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>, checkpoint: Option<&crate::Checkpointing>, rows_to: Option<&std::path::Path>) -> Result<Option<RunResult>, RankError> {
        Self::run_on_rank_walking(spec, ex, progress, checkpoint, Walking::default(), rows_to)
    }

    /// `run_on_rank`, walking the rank's switches as `walking` says (tests).
    pub fn run_on_rank_walking(spec: &crate::spec::Validated, ex: &mut dyn Exchange, progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>, checkpoint: Option<&crate::Checkpointing>, walking: Walking, rows_to: Option<&std::path::Path>) -> Result<Option<RunResult>, RankError> {
        let built = super::Built::on_ranks(spec, ex.ranks())?;
        let switches = built.parts.topo.num_switches();
        check_ranks(ex.ranks(), switches)?;
        check_ranks_fit(built.memory_run(), ex.ranks_here(), super::memory::available()?)?;
        let plan = Plan { part: super::parallel::Partition::new(ex.ranks(), switches), rank: ex.rank(), ranks: ex.ranks() };
        let fresh = |built: super::Built| {
            let shared = !crate::workload::servers_independent(&built.spec);
            let mut sim = Simulation::holding(built, plan.part.range(plan.rank));
            let servers = sim.parts.servers.clone();
            sim.server_side.on_rank(crate::engine::server_side::rank::RankView::new(plan.rank, plan.part, shared), &servers);
            sim.with_workload(0, |w, cx| w.start(cx));
            sim
        };
        let path = checkpoint.map(|c| rank_checkpoint(&c.path, plan.rank, plan.ranks));
        let mut resumed = None;
        if let (Some(c), Some(path)) = (checkpoint, &path) {
            if c.resume && path.exists() {
                let mut saved: Option<(Status, Crossing, Vec<u8>)> = None;
                let read = |input: &mut dyn std::io::Read| {
                    saved = Some(bincode::deserialize_from(input)?);
                    Ok(())
                };
                match Simulation::resume_with(fresh(super::Built::on_ranks(spec, plan.ranks)?), path, read) {
                    Ok(sim) => resumed = Some((sim, saved.expect("read with the checkpoint"))),
                    Err(e) => eprintln!("hopsim: rank {}: the checkpoint {} is {e}", plan.rank, path.display()),
                }
            }
        }
        let mut start = None;
        if checkpoint.is_some_and(|c| c.resume) {
            // Every rank goes on from the same cycle, or all start over.
            let cycle = resumed.as_ref().map_or(u64::MAX, |(sim, _)| sim.now);
            let all = ex.all_gather(cycle.to_le_bytes().to_vec())?;
            let same = all.iter().all(|b| b.as_slice() == cycle.to_le_bytes());
            match resumed {
                Some((mut sim, (global, crossing, view))) if same => {
                    let view_state = sim.server_side.rank_view().expect("on ranks").restore(&mut view.as_slice());
                    view_state.map_err(|e| RankFailure(format!("rank {}'s checkpoint is damaged: {e}", plan.rank)))?;
                    if plan.rank == 0 {
                        eprintln!("hopsim: going on from the ranks' checkpoints at cycle {cycle}");
                    }
                    start = Some((sim, global, crossing));
                }
                _ if plan.rank == 0 && all.iter().any(|b| b.as_slice() != u64::MAX.to_le_bytes()) => {
                    eprintln!("hopsim: the ranks' checkpoints are not all of one cycle: the run starts from its first cycle");
                }
                _ => {}
            }
        }
        let (mut sim, resumed) = match start {
            Some((sim, global, crossing)) => (sim, Some((global, crossing))),
            None => (fresh(built), None),
        };
        sim.progress = progress;
        if let Some(shift) = walking.block_shift {
            sim.walk_in_blocks(shift);
        }
        if walking.split_every_phase {
            sim.split_every_phase();
        }
        if let Some(path) = path {
            sim.checkpoint_to(path);
        }
        sim.run_rank(ex, plan, resumed, rows_to)
    }

    /// The rank's run, its switches split among `run.threads` threads of its own; if not
    /// given, as one process chooses for the rank's share, within the machine's cores shared
    /// among the ranks on it (their threads wait for each other spinning: more threads than
    /// cores would lose the cores' time to waiting).
    fn run_rank(self, ex: &mut dyn Exchange, plan: Plan, resumed: Option<(Status, Crossing)>, rows_to: Option<&std::path::Path>) -> Result<Option<RunResult>, RankError> {
        let own = plan.part.range(plan.rank);
        let cores = (super::parallel::available_cores() / ex.ranks_here().max(1)).max(1);
        let most = if self.spec.run.threads.is_some() { self.max_threads } else { self.max_threads.min(cores) };
        let threads = super::parallel::threads_for(self.spec.run.threads, own.len(), self.switch_side.routers().ports.len(), most);
        if threads < 2 {
            return self.run_rank_on(ex, plan, resumed, None, rows_to);
        }
        let team = super::parallel::Team::new(super::parallel::Partition::over(threads, own));
        std::thread::scope(|scope| {
            for t in 1..team.threads() {
                let team = &team;
                scope.spawn(move || team.serve(t));
            }
            let _stop = team.stop_on_drop();
            self.run_rank_on(ex, plan, resumed, Some(&team), rows_to)
        })
    }

    fn run_rank_on(mut self, ex: &mut dyn Exchange, plan: Plan, resumed: Option<(Status, Crossing)>, team: Option<&super::parallel::Team>, rows_to: Option<&std::path::Path>) -> Result<Option<RunResult>, RankError> {
        let started = std::time::Instant::now();
        let own = plan.part.range(plan.rank);
        let servers = self.parts.servers.clone();
        let shared = self.server_side.shares_workload();
        let window_end = self.server_side.stats().end;
        let drain_end = window_end.saturating_add(self.spec.run.drain);
        let watchdog = self.spec.run.watchdog;
        let mut out = vec![Vec::new(); plan.ranks];
        let mut visit = Vec::new();
        let reach = self.parts.params.queue_reach;
        let mut observed = Vec::new();
        if self.switch_side.routers().observing() {
            // Every rank's backlogs, read again: a checkpoint keeps none.
            self.share_observed(ex, reach)?;
        }
        let lookahead = self.lookahead(ex, &plan, shared)?;
        let mut held = Held::new(plan.ranks);
        let (mut end, mut detector, mut crossing, mut global) = match (self.resumed.take(), resumed) {
            (Some((end, _, detector)), Some((global, crossing))) => (end, detector, crossing, global),
            _ => {
                let mut crossing = Crossing::default();
                self.end_cycle(&plan, &mut out, &mut held, &mut Vec::new(), 0, 1);
                let global = self.exchange(ex, &plan, &mut held, &mut crossing, 0)?;
                (window_end, super::deadlock::Detector::new(&self), crossing, global)
            }
        };
        // The cycle before which the ranks next exchange.
        let mut window_to = 0;
        loop {
            if self.now >= window_end {
                if self.now >= drain_end || !global.measured_undelivered() {
                    break;
                }
                end = drain_end;
            }
            if self.checkpoint.as_ref().is_some_and(|c| self.now >= c.next) {
                self.rank_checkpoint((end, false, &detector), &global, &crossing);
            }
            let now = self.now;
            if now >= window_to {
                window_to = self.window_to(now, lookahead, &global, &detector, window_end, watchdog);
            }
            if let Some(p) = &self.progress {
                p.store(now, std::sync::atomic::Ordering::Relaxed);
            }
            self.generate(now);
            let events = self.cal.take_events(now);
            let measuring = self.server_side.stats().in_window(now);
            match team.filter(|_| self.worth_splitting(now, events.len())) {
                Some(team) => self.rank_switches_on_team(team, now, measuring, &events, &mut visit, &mut out, &plan, &servers),
                None => self.rank_switches(now, measuring, &events, &mut visit, &mut out, &plan, &servers, own.clone()),
            }
            if shared {
                self.share_calls(ex, now)?;
            }
            self.step_nics(now, measuring, true);
            self.switch_side.observe(&events, &visit, reach, &mut observed);
            self.cal.return_events(events);
            self.end_cycle(&plan, &mut out, &mut held, &mut observed, now, window_to);
            if now + 1 < window_to {
                self.now = now + 1;
                continue;
            }
            global = self.exchange(ex, &plan, &mut held, &mut crossing, now)?;

            let in_network = global.in_network();
            if let Some(last) = self.run_end(&global, now) {
                self.now = last + 1;
                self.finished_early = true;
                break;
            }
            let mut last_progress = global.last_progress;
            if in_network > 0 && now - last_progress >= watchdog {
                if global.busy {
                    // As one process: slow, not stopped (`Simulation::run_on`).
                    self.last_progress = now;
                    last_progress = now;
                } else {
                    let parts = self.wait_for_graph(ex, &mut detector, now, own.clone())?;
                    // Without a cycle the place is told from the switches holding flits,
                    // gathered at the end.
                    let place = detector.cycle_now_in_parts(parts, now).map_or_else(String::new, |found| super::deadlock::describe(&self, &found));
                    self.deadlock = Some((now, place));
                    self.now = now + 1;
                    break;
                }
            }
            if in_network > 0 && now >= detector.next_at {
                let parts = self.wait_for_graph(ex, &mut detector, now, own.clone())?;
                if let Some(found) = detector.check_parts(parts, now) {
                    self.deadlock = Some((found.formed, super::deadlock::describe(&self, &found)));
                    self.now = now + 1;
                    break;
                }
            }
            self.now = if global.busy {
                now + 1
            } else {
                let mut next = global.next_timer.map_or(end, |t| t.min(end));
                if in_network > 0 {
                    next = next.min(last_progress.saturating_add(watchdog));
                }
                if let Some(stop) = self.server_side.stop_ahead(now) {
                    next = next.min(stop - 1);
                }
                next.max(now + 1)
            };
        }
        if let Some(p) = &self.progress {
            p.store(self.now, std::sync::atomic::Ordering::Relaxed);
        }
        let wall = started.elapsed().as_secs_f64();
        self.settle_deliveries(ex, &plan)?;
        let jobs_read_totals = !self.spec.jobs.is_empty();
        let nics = self.server_side.nics();
        let mine = RankEnd {
            stats: bincode::serialize(self.server_side.stats()).expect("statistics serialise"),
            nics: NicsEnd {
                first: nics.held().start as u32,
                counters: nics.counters.clone(),
                outstanding_max: nics.nics.iter().map(|n| n.outstanding_max).collect(),
                sums: NicSums::of_totals(nics),
                totals: if jobs_read_totals { nics.totals.clone() } else { Vec::new() },
            },
            link_phits: self.switch_side.routers().ports.iter().map(|p| p.link_phits).collect(),
            phit_hops: self.phit_hops,
            accounting: invariants::account(&self),
            samples: self.server_side.samples().to_vec(),
            workload: self.server_side.workload().rank_part(),
            blocked: self.blocked_switches(own.clone()),
        };
        // Nothing reads the buffers, packets or events from here on: free them before the
        // ends travel.
        self.release_network();
        let mut mine = Some(mine);
        let (mut accounting, mut blocked) = (Vec::with_capacity(plan.ranks), (0, Vec::new()));
        // Rank 0's rows and sums: its own, then each other rank's as it comes.
        let mut ends = None;
        if plan.rank == 0 {
            let mut rows = match rows_to {
                Some(dir) => Rows::to_files(dir).map_err(|e| RankFailure(e.to_string()))?,
                None => Rows::in_memory(),
            };
            let (mut loads, mut sums) = (Loads::default(), NicSums::default());
            report::own_rows(&self, own.clone(), &mut rows, &mut loads, &mut sums);
            let mine = mine.take().expect("rank 0's own");
            let totals = mine.nics.totals;
            accounting.push(mine.accounting);
            blocked = mine.blocked;
            ends = Some((rows, loads, sums, totals));
        }
        // One rank at a time, so that rank 0 holds one other rank's end at once.
        for r in 1..plan.ranks {
            let mut to_first = vec![Vec::new(); plan.ranks];
            if plan.rank == r {
                to_first[0] = bincode::serialize(&mine.take().expect("sent once")).expect("a rank's end serialises");
            }
            let gathered = ex.all_to_all(to_first)?;
            let Some((rows, loads, sums, totals)) = ends.as_mut() else { continue };
            let theirs: RankEnd = bincode::deserialize(&gathered[r]).map_err(|e| RankFailure(format!("rank {r}'s results are damaged: {e}")))?;
            drop(gathered);
            let stats: crate::stats::Stats = bincode::deserialize(&theirs.stats).map_err(|e| RankFailure(format!("rank {r}'s statistics are damaged: {e}")))?;
            self.server_side.absorb(&stats);
            self.absorb_rows(&plan, r, &theirs, rows, loads, sums).map_err(|e| RankFailure(format!("rank {r}'s results do not fit: {e}")))?;
            totals.extend_from_slice(&theirs.nics.totals);
            self.phit_hops += theirs.phit_hops;
            self.server_side.samples_from(&theirs.samples, |s| plan.owner_of_server(&servers, s as usize) == r);
            self.server_side.workload_mut().absorb_rank_part(&theirs.workload).map_err(|e| RankFailure(format!("rank {r}'s workload results are damaged: {e}")))?;
            blocked.0 += theirs.blocked.0;
            blocked.1.extend(theirs.blocked.1);
            accounting.push(theirs.accounting);
        }
        let Some((rows, loads, nics, totals)) = ends else { return Ok(None) };
        if let Some((formed, _)) = self.deadlock.as_ref().filter(|(_, place)| place.is_empty()).cloned() {
            blocked.1.truncate(4);
            self.deadlock = Some((formed, self.describe_blocked_from(blocked.0, &blocked.1)));
        }
        let conservation = invariants::conclude(&self, accounting);
        let (links, counters, written) = rows.finish(self.parts.topo.as_ref()).map_err(|e| RankFailure(e.to_string()))?;
        Ok(Some(report::summarise(&self, conservation, wall, report::Tables { links, counters, written, loads, nics }, &totals)))
    }

    /// On rank 0: the rows of rank `r`'s links and servers from its end, in the order one
    /// process makes them, and its sums.
    fn absorb_rows(&self, plan: &Plan, r: usize, theirs: &RankEnd, rows: &mut Rows, loads: &mut Loads, sums: &mut NicSums) -> Result<(), String> {
        let routers = self.switch_side.routers();
        let range = plan.part.range(r);
        // Every port of its switches, those of servers included, numbered as in the network.
        let first_port = routers.network_port(range.start, 0);
        let end_port = if range.end < self.parts.topo.num_switches() { routers.network_port(range.end, 0) } else { routers.network_port_count() };
        if theirs.link_phits.len() != end_port - first_port {
            return Err(format!("{} link counts for the {} ports of its switches", theirs.link_phits.len(), end_port - first_port));
        }
        rows.links(self.parts.topo.as_ref(), range, |s, p| theirs.link_phits[routers.network_port(s, p) - first_port], report::measured_cycles(self), loads);
        let n = &theirs.nics;
        if n.counters.len() != n.outstanding_max.len() {
            return Err(format!("{} NICs' counters and {} NICs' outstanding requests", n.counters.len(), n.outstanding_max.len()));
        }
        let held = n.first as usize..n.first as usize + n.counters.len();
        for s in self.parts.traffic.active.within(held) {
            let i = s as usize - n.first as usize;
            rows.counter(s, &n.counters[i], n.outstanding_max[i], sums);
        }
        sums.add(&n.sums);
        Ok(())
    }

    /// Deliver this rank's events and step its switches due, what they schedule going to
    /// `out`, then deliver its servers' events: as one process does (`cycle_alone`), block by
    /// block of switches on a network far larger than the cache.
    #[allow(clippy::too_many_arguments)]
    fn rank_switches(&mut self, now: u64, measuring: bool, events: &[Event], visit: &mut Vec<u32>, out: &mut [Vec<(u64, Event)>], plan: &Plan, servers: &ServerMap, own: std::ops::Range<usize>) {
        if self.switch_side.block_shift() == super::blocks::ONE_BLOCK {
            self.deliver_first(now, events);
            self.cal.take_routers(now, visit);
            let eject_sent = self.server_side.eject_times();
            let mut send = RankSend { cal: &mut self.cal, out, plan, servers, eject_sent };
            self.switch_side.step_all(visit, now, &mut self.packets, &mut send, &self.parts, measuring, &mut self.last_progress, &mut self.phit_hops);
            self.switch_side.set_stepped_last(visit.len());
            return;
        }
        self.cal.take_routers(now, visit);
        let sim = crate::unsafe_parts::SharedMut::new(self);
        // One thread, as in `cycle_alone`; the calendar, scratch, counters and the ejections'
        // cycles lent to the walk are fields the deliveries and steps reach only through it.
        let me = sim.get();
        let (mut walk, scratch) = me.switch_side.lend_walk();
        let mut send = RankSend { cal: &mut me.cal, out, plan, servers, eject_sent: me.server_side.eject_times() };
        let blocks_out = super::blocks::Out { cal: &mut send, scratch, last_progress: &mut me.last_progress, phit_hops: &mut me.phit_hops };
        let stepped = super::blocks::deliver_and_step(sim, now, measuring, events, own, visit, &mut walk, blocks_out);
        self.switch_side.put_walk(walk);
        self.switch_side.set_stepped_last(stepped);
        for ev in events.iter().filter(|ev| ev.switch().is_none()) {
            self.deliver_to_server(now, *ev);
        }
    }

    /// `rank_switches` split among the rank's threads (engine/parallel.rs): they schedule
    /// into the calendar in the one-thread order, and what they scheduled is then taken out
    /// of it, in that order, to the lists of the ranks that own it.
    #[allow(clippy::too_many_arguments)]
    fn rank_switches_on_team(&mut self, team: &super::parallel::Team, now: u64, measuring: bool, events: &[Event], visit: &mut Vec<u32>, out: &mut [Vec<(u64, Event)>], plan: &Plan, servers: &ServerMap) {
        let marks = self.cal.event_marks(now);
        let sim = crate::unsafe_parts::SharedMut::new(self);
        team.cycle(sim, now, measuring, events, |job| {
            // The other threads reach only their switches, their random streams and the
            // packets those hold, and the calendar's wheels only after this thread's steps.
            let me = sim.get();
            me.cal.take_routers(now, visit);
            team.publish(job, visit);
            team.step_own(job, visit);
        });
        team.add_counters(self);
        let mut scheduled = std::mem::take(&mut self.scheduled_on_team);
        self.cal.take_scheduled_since(now, &marks, &mut scheduled);
        let eject_sent = self.server_side.eject_times();
        let mut send = RankSend { cal: &mut self.cal, out, plan, servers, eject_sent };
        for (at, ev) in scheduled.drain(..) {
            send.schedule(at, now, ev);
        }
        self.scheduled_on_team = scheduled;
        for ev in events.iter().filter(|ev| ev.switch().is_none()) {
            self.deliver_to_server(now, *ev);
        }
    }

    /// The ranks' lookahead: the smallest latency of any link between two ranks' switches
    /// (`window::lookahead_of`), or one cycle where every rank must hear from every other
    /// after each cycle (a shared workload's calls, UGAL-G's view). It is no longer than
    /// the network's shortest link where a background sends on after the rest of the
    /// workload finished (`ServerSide::stop_cycle`), which it tells the servers' side.
    fn lookahead(&mut self, ex: &mut dyn Exchange, plan: &Plan, shared: bool) -> Result<u64, RankFailure> {
        let routers = self.switch_side.routers();
        let links = routers.ports.iter().map(|p| (p.peer, p.link.latency));
        let mine = [window::lookahead_of(links, |s| plan.part.owner(s), plan.rank), routers.shortest_switch_link()];
        let (mut across, mut shortest) = (u64::MAX, u64::MAX);
        for (r, bytes) in ex.all_gather(mine.iter().flat_map(|w| w.to_le_bytes()).collect())?.iter().enumerate() {
            let theirs: [u8; 16] = bytes.as_slice().try_into().map_err(|_| RankFailure(format!("rank {r} sent a lookahead of {} bytes", bytes.len())))?;
            let word = |i: usize| u64::from_le_bytes(theirs[8 * i..8 * i + 8].try_into().expect("8 bytes"));
            across = across.min(word(0));
            shortest = shortest.min(word(1));
        }
        self.server_side.set_shortest_link(shortest);
        if shared || self.switch_side.routers().observing() {
            return Ok(1);
        }
        if self.server_side.workload().sends_after_finishing() {
            across = across.min(shortest);
        }
        Ok(across.max(1))
    }

    /// After the window ending with cycle `now`, whether the run's workload is done, and
    /// the last cycle of the run then: the cycle one process ends it after. Ranks learn
    /// only at the window's end that the workload finished and what it sent arrived; after
    /// the later of the cycle before its stop (`ServerSide::stop_cycle`, fixed from the
    /// latest rank's finish) and the run's last delivery, nothing is sent or delivered, so
    /// the cycles stepped since change nothing. A workload that does not tell when it
    /// finished runs whole on every rank, whose window is one cycle.
    fn run_end(&mut self, global: &Status, now: u64) -> Option<u64> {
        if !global.workload_finished {
            return None;
        }
        let side = &mut self.server_side;
        let stop = side.workload().finished_at().map(|_| side.stop_cycle(global.finished_at));
        if global.generated != global.delivered || stop.is_some_and(|at| now + 1 < at) {
            return None;
        }
        Some(stop.map_or(now, |at| (at - 1).max(global.last_delivery)))
    }

    /// The end (exclusive) of the window starting at `now`: `lookahead` cycles, but no
    /// further than the first cycle at which one process could take a decision the ranks
    /// take together: the end of the measured window (the drain that follows goes a cycle
    /// at a time, since it ends when the last measured packet arrives), the deadlock
    /// detector's next check, the watchdog's first possible firing (progress inside the
    /// window only puts it later) and the next checkpoint.
    fn window_to(&self, now: u64, lookahead: u64, global: &Status, detector: &super::deadlock::Detector, measure_end: u64, watchdog: u64) -> u64 {
        if lookahead <= 1 || now >= measure_end || now >= detector.next_at {
            return now + 1;
        }
        let mut to = now.saturating_add(lookahead).min(measure_end).min(detector.next_at + 1).min(global.last_progress.saturating_add(watchdog).saturating_add(1));
        if let Some(c) = self.checkpoint.as_ref().filter(|c| c.next > now) {
            to = to.min(c.next);
        }
        to.max(now + 1)
    }

    /// End cycle `now` of the window ending before `to`: append what this rank's steps
    /// scheduled for each other rank to its message (with, at the window's last cycle, the
    /// streams drawn, the deliveries due and the backlogs that changed, `observed`,
    /// emptied), and put the rank's own events and its NICs' due inside the window into the
    /// calendar, holding the rest (`Held`).
    fn end_cycle(&mut self, plan: &Plan, out: &mut [Vec<(u64, Event)>], held: &mut Held, observed: &mut Vec<(u32, u32)>, now: u64, to: u64) {
        let last = now + 1 == to;
        let streams = if last { self.server_side.streams_to_share() } else { Vec::new() };
        let deliveries = if last { self.server_side.deliveries_by_rank(&self.parts.servers, plan.ranks, true) } else { None };
        let observed_now: &[(u32, u32)] = if last { observed } else { &[] };
        for (r, events) in out.iter_mut().enumerate() {
            if r == plan.rank {
                continue;
            }
            let deliveries = deliveries.as_ref().map_or(&[][..], |d| &d[r]);
            if !wire::is_empty(events, &streams, deliveries, observed_now) {
                // Every event is due after the cycle it was made in: only a longer window
                // can have one due inside it.
                assert!(to == now + 1 || events.iter().all(|&(at, _)| at >= to), "an event for rank {r} due inside the window ending before {to}: the lookahead is too long");
                held.events_out |= !events.is_empty();
                let view = self.server_side.rank_view().expect("on ranks");
                wire::encode(&mut held.parts[r], now, events, &mut self.packets, &mut |packet, head, tail| view.carries(packet, head, tail), &streams, deliveries, observed_now);
                events.clear();
            }
        }
        if last {
            observed.clear();
        }
        held.hold(&mut self.cal, now, to, &mut out[plan.rank], self.server_side.nic_events_mut());
    }

    /// End a window at its last cycle `now`: send every other rank this rank has anything
    /// for its message (`end_cycle`), with this rank's status; put what every rank sent
    /// and what this rank held into the calendar in the one-process order
    /// (`Held::release`). Returns the run's state summed over ranks.
    fn exchange(&mut self, ex: &mut dyn Exchange, plan: &Plan, held: &mut Held, crossing: &mut Crossing, now: u64) -> Result<Status, RankFailure> {
        let (sums, maxima) = self.rank_status(held).reductions();
        let msgs = held.parts.iter_mut().enumerate().filter(|(_, m)| !m.is_empty()).map(|(r, m)| (r, std::mem::take(m))).collect();
        let exchanged = ex.sparse(msgs, sums, maxima)?;
        let global = Status::from_reductions(&exchanged.sums, &exchanged.maxima).map_err(RankFailure)?;
        let mut received: Vec<(usize, std::collections::VecDeque<(u64, wire::Window)>)> = Vec::with_capacity(exchanged.received.len());
        for (r, bytes) in &exchanged.received {
            let r = *r;
            if r >= plan.ranks || r == plan.rank || received.last().is_some_and(|&(last, _)| last >= r) {
                return Err(RankFailure(format!("the exchange returned a message from rank {r} out of order, or from this rank ({}) of {}", plan.rank, plan.ranks)));
            }
            let mut parts = wire::decode(bytes).map_err(|e| RankFailure(format!("a message from rank {r} is damaged: {e}")))?;
            for (_, window) in &mut parts {
                if window.carried.len() != window.packets.len() {
                    return Err(RankFailure(format!("a message from rank {r} has {} packets and {} records for them", window.packets.len(), window.carried.len())));
                }
                self.server_side.deliveries_from(&window.deliveries).map_err(|e| RankFailure(format!("rank {r} sent {e}")))?;
                self.server_side.set_streams(std::mem::take(&mut window.streams));
                self.switch_side.set_observed(&window.observed).map_err(|e| RankFailure(format!("rank {r} sent {e}")))?;
            }
            received.push((r, parts));
        }
        let (servers, side, packets) = (&self.parts.servers, &mut self.server_side, &mut self.packets);
        let mut arrived = |packet: u32, p: &crate::packet::Packet, (key, record): wire::Carried| side.arrived_with(servers, packet, p, key, record);
        held.release(&mut self.cal, now, plan.rank, &mut received, |cal, r, window| {
            for (at, ev) in crossing.take_in(r, window, packets, &mut arrived) {
                cal.schedule(at, now, ev);
            }
        })
        .map_err(RankFailure)?;
        Ok(global)
    }

    /// Write this rank's checkpoint of cycle `self.now`: the run's state as one process
    /// writes it, then the rank's own (the run's state summed over ranks, the packets whose
    /// heads crossed and tails have not, the messages between ranks).
    #[cold]
    fn rank_checkpoint(&mut self, looped: (u64, bool, &super::deadlock::Detector), global: &Status, crossing: &Crossing) {
        let Some(schedule) = &self.checkpoint else { return };
        let path = schedule.path.clone();
        let mut view = Vec::new();
        let saved = self.server_side.rank_view().expect("on ranks").save(&mut view);
        let extra = |out: &mut dyn std::io::Write| {
            saved?;
            bincode::serialize_into(out, &(global, crossing, &view))
        };
        match self.save_with(&path, looped, extra) {
            Ok(()) => {
                if let Some(s) = &mut self.checkpoint {
                    s.next = self.now + s.every;
                }
            }
            Err(e) => {
                // The other ranks write theirs: a run resumed from them starts over, since
                // this rank's is of an earlier cycle or missing.
                eprintln!("hopsim: warning: the checkpoint of cycle {} could not be written to {}: {e}; this rank goes on without checkpoints", self.now, path.display());
                self.checkpoint = None;
            }
        }
    }

    /// A shared workload's calls of the cycle (`server_side::rank::Shared`): every rank's
    /// to every rank, made by all in the one-process order: by the cycle their ejection was
    /// scheduled in, then by rank (ranks own ascending ranges of switches), then in the
    /// order the rank made them.
    fn share_calls(&mut self, ex: &mut dyn Exchange, now: u64) -> Result<(), RankFailure> {
        let mine = bincode::serialize(&self.server_side.calls_to_share()).expect("calls serialise");
        let all = ex.all_gather(mine)?;
        let mut by_rank = Vec::with_capacity(all.len());
        for (r, bytes) in all.iter().enumerate() {
            let theirs: Vec<(u64, Call)> = bincode::deserialize(bytes).map_err(|e| RankFailure(format!("rank {r}'s workload calls are damaged: {e}")))?;
            by_rank.push(theirs);
        }
        let (side, mut net) = self.server_side();
        side.make_calls(&mut net, now, one_process_order(by_rank));
        Ok(())
    }

    /// The packets each rank delivered for other ranks' servers and kept until the end, to
    /// the NICs of their sources, in one exchange (`RankView::delivered_for`).
    fn settle_deliveries(&mut self, ex: &mut dyn Exchange, plan: &Plan) -> Result<(), RankFailure> {
        let out = self.server_side.deliveries_by_rank(&self.parts.servers, plan.ranks, false).unwrap_or_else(|| vec![Vec::new(); plan.ranks]).iter().map(|d| bincode::serialize(d).expect("deliveries serialise")).collect();
        for (r, bytes) in ex.all_to_all(out)?.iter().enumerate() {
            let theirs: Vec<(u32, bool, u64, u64)> = bincode::deserialize(bytes).map_err(|e| RankFailure(format!("rank {r}'s deliveries are damaged: {e}")))?;
            self.server_side.deliveries_from(&theirs).map_err(|e| RankFailure(format!("rank {r} sent {e}")))?;
        }
        Ok(())
    }

    /// Every rank's backlogs of its ports as they are (`SwitchSide::observe_held`), to every
    /// rank: where routing reads other switches' ports, at a rank's start.
    fn share_observed(&mut self, ex: &mut dyn Exchange, reach: crate::route::QueueReach) -> Result<(), RankFailure> {
        let mine = bincode::serialize(&self.switch_side.observe_held(reach)).expect("backlogs serialise");
        let all = ex.all_gather(mine)?;
        for (r, bytes) in all.iter().enumerate() {
            let theirs: Vec<(u32, u32)> = bincode::deserialize(bytes).map_err(|e| RankFailure(format!("rank {r}'s backlogs are damaged: {e}")))?;
            self.switch_side.set_observed(&theirs).map_err(|e| RankFailure(format!("rank {r} sent {e}")))?;
        }
        Ok(())
    }

    /// The run's wait-for graph: every rank's part (`Detector::part`) of its own switches,
    /// sent to every rank, in rank order.
    fn wait_for_graph(&self, ex: &mut dyn Exchange, detector: &mut super::deadlock::Detector, now: u64, own: std::ops::Range<usize>) -> Result<Vec<super::deadlock::Graph>, RankFailure> {
        let mine = detector.part(self, now, own).encode();
        let parts = ex.all_gather(mine)?;
        parts.iter().enumerate().map(|(r, bytes)| super::deadlock::Graph::decode(bytes).map_err(|e| RankFailure(format!("rank {r}'s wait-for graph is damaged: {e}")))).collect()
    }

    /// This rank's state at the end of a window, its events not sent yet (`held`).
    fn rank_status(&self, held: &Held) -> Status {
        let side = &self.server_side;
        let st = side.stats();
        let measured_phits = if self.parts.params.measure_at_injection { side.nics().injected_measured_phits } else { st.generated_measured_phits };
        Status {
            injected: side.nics().injected,
            delivered: st.packets_delivered,
            generated: st.packets_generated,
            last_progress: self.last_progress,
            busy: !self.cal.is_idle() || self.cal.visits_everything() || held.holds_events(),
            next_timer: side.timers().next_at(),
            workload_finished: side.workload().finished(),
            finished_at: side.workload().finished_at().unwrap_or(0),
            last_delivery: side.rank_view_ref().map_or(0, |v| v.last_delivery),
            measured_phits,
            measured_delivered_phits: st.measured_packet_phits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::one_process_order;

    #[test]
    fn ranks_sharing_a_machine_must_fit_its_memory_together() {
        use super::check_ranks_fit;
        let gib = 1u64 << 30;
        assert!(check_ranks_fit(3 * gib, 2, Some(8 * gib)).is_ok());
        assert!(check_ranks_fit(3 * gib, 1, Some(2 * gib)).is_ok(), "one rank: the run's own check says it");
        assert!(check_ranks_fit(3 * gib, 4, None).is_ok(), "memory unknown");
        let e = check_ranks_fit(3 * gib, 4, Some(8 * gib)).unwrap_err();
        assert_eq!(e.key, "ranks");
        assert!(e.value.contains("4 on this machine") && e.allowed.contains("at most 2 ranks a machine"), "{e}");
    }

    #[test]
    fn calls_go_by_the_cycle_their_ejection_was_scheduled_in_then_by_rank() {
        // Rank 1's first call was scheduled a cycle before rank 0's (a shorter packet's
        // last flit ejects sooner after its step): it comes first; then rank 0's calls of
        // cycle 11 before rank 1's, each rank's in its own order.
        let by_rank = vec![vec![(11, "r0 a"), (11, "r0 b"), (12, "r0 c")], vec![(10, "r1 a"), (11, "r1 b"), (12, "r1 c")]];
        let order: Vec<_> = one_process_order(by_rank).collect();
        assert_eq!(order, ["r1 a", "r0 a", "r0 b", "r1 b", "r0 c", "r1 c"]);
    }
}
