//! `[[jobs]]`: several applications at once, each on its own servers. Every rank runs its
//! motif's program (`motifs`), or open-loop traffic among the job's ranks; each message goes
//! with the job's routing mode, or the one application-aware routing picks for it. The run
//! ends when every job but the background has done its iterations; the background stops
//! sending the network's shortest switch-to-switch link latency later (`Workload::stop`), a
//! delay no split of the run over MPI ranks changes, since their windows are no longer.
//!
//! On MPI ranks each rank runs the programs of the servers it holds (`partition`): the
//! ranks share nothing but the run's end, which they learn together after each window, and
//! rank 0 adds the others' results to its own at the end (`rank_part`).

use super::app_aware::AppAware;
use super::motifs::{Motif, Op};
use super::{Ctx, Delivered, Post, Workload};
use crate::error::{SpecError, SpecResult};
use crate::nic::protocol::Protocol;
use crate::nic::Counters;
use crate::routing::{AriesMode, Rng};
use crate::spec::{JobSpec, Spec};
use crate::stats::jobs::{Call, CallKind, JobResult};
use crate::stats::Histogram;
use crate::topology::{ServerMap, Topology};
use rand::{Rng as _, SeedableRng};
use crate::random::geometric::Geometric;
use std::collections::{HashMap, HashSet};

const NO_JOB: (u32, u32) = (u32::MAX, u32::MAX);

/// What `[[jobs]]` keep for each server of the network, at most (the memory estimate): its
/// (job, rank), and for the job rank it may run, its server and group, its end and where its
/// program's state is.
pub(crate) const BYTES_PER_SERVER: u64 = 8 + 8 + 8 + 8;
/// The state of a program rank, kept by the process that runs it (every MPI rank where the
/// workload runs whole on each).
pub(crate) const PROGRAM_BYTES: u64 = std::mem::size_of::<Rank>() as u64;

/// How a job's messages choose their routing mode.
enum Routing {
    /// The run's `routing.mode` (`None`) or the job's.
    Fixed(Option<AriesMode>),
    /// Cray MPI's default: a mode per operation (`spec::CRAY_DEFAULT`).
    CrayDefault,
    AppAware,
}

impl Routing {
    /// The mode of a message by its operation under Cray MPI's default: alltoall goes with
    /// increasingly-minimal bias (De Sensi et al., SC'19, section 2.2), the rest adaptive.
    fn cray_default(alltoall: bool) -> AriesMode {
        if alltoall {
            AriesMode::IncreasinglyMinimal
        } else {
            AriesMode::Adaptive
        }
    }
}

/// A rank running its program.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Rank {
    ops: Vec<Op>,
    pc: usize,
    iteration: u32,
    started: bool,
    /// The cycle its current iteration started at.
    started_at: u64,
    done: bool,
    /// The message it waits for: its sender, and its number among those the sender sends it.
    waiting: Option<(u32, u32)>,
    /// Per peer rank: messages sent to it, and the next message expected from it.
    sent: HashMap<u32, u32>,
    expected: HashMap<u32, u32>,
    /// Messages (peer, sequence number) that arrived before their receive.
    early: HashSet<(u32, u32)>,
    app_aware: Option<AppAware>,
    /// With `jobs[].timeline`: its calls so far.
    timeline: Option<Vec<Call>>,
}

impl Rank {
    fn record(&mut self, call: CallKind, start: u64, end: u64, peer: u32, value: u64) {
        if let Some(t) = &mut self.timeline {
            t.push(Call { call, start, end, peer, value });
        }
    }

    /// The iteration it is in ends at `now`.
    fn iteration_done(&mut self, now: u64) {
        if let Some(c) = self.timeline.as_mut().and_then(|t| t.iter_mut().rev().find(|c| c.call == CallKind::Iteration)) {
            c.end = now;
        }
    }
}

/// What a job runs: a program per rank, or open-loop traffic.
enum Work {
    Program(Box<dyn Motif>),
    /// Gaps between a rank's messages, and their size.
    OpenLoop { gap: Geometric, bytes: u64 },
}

struct Job {
    spec: JobSpec,
    work: Work,
    routing: Routing,
    servers: Vec<u32>,
    groups: Vec<u32>,
    /// Each rank's program, where this process runs it (on an MPI rank running its part,
    /// its own servers' ranks only: `partition`).
    ranks: Vec<Option<Box<Rank>>>,
    iteration_start: Vec<u64>,
    iteration_end: Vec<u64>,
    /// Per iteration: ranks that have not finished it.
    iteration_left: Vec<usize>,
    rank_end: Vec<u64>,
    message_latency: Vec<u64>,
    messages: u64,
    bytes: u64,
    packet_latency: Histogram,
    mode_bytes: [u64; AriesMode::ALL.len() + 1],
    ranks_left: usize,
    /// What results call the mode of a job that names none: the run's `routing.mode` on an
    /// Aries network, as "default" now names Cray MPI's.
    unnamed_mode: &'static str,
}

impl Job {
    /// Job `i` of the spec on the servers `placed` (in `groups`).
    fn new(spec: &Spec, i: usize, placed: Vec<u32>, groups: Vec<u32>, cycle_ns: Option<f64>) -> SpecResult<Job> {
        let js = &spec.jobs[i];
        let routing = match js.routing_mode.as_deref() {
            None => Routing::Fixed(None),
            Some("app_aware") => Routing::AppAware,
            Some(crate::spec::CRAY_DEFAULT) => Routing::CrayDefault,
            Some(m) => Routing::Fixed(Some(AriesMode::from_name(m).expect("validated routing_mode"))),
        };
        if js.routing_mode.is_some() && spec.routing.algorithm != "aries" {
            return Err(SpecError::new(format!("jobs[{i}].routing_mode"), format!("{:?}", js.routing_mode.as_deref().unwrap_or("")), "routing modes need routing.algorithm = \"aries\""));
        }
        let work = match super::motifs::build(spec, i, cycle_ns)? {
            Some(m) => Work::Program(m),
            None => {
                let (load, bytes) = super::motifs::open_loop(spec, i)?;
                let phits = Jobs::message_phits(spec, bytes);
                Work::OpenLoop { gap: Geometric::new((load / phits as f64).min(1.0)).expect("load in (0, 1]"), bytes }
            }
        };
        let adaptive = match &work {
            Work::Program(m) => m.adaptive_mode(),
            Work::OpenLoop { .. } => AriesMode::Adaptive,
        };
        let ranks = (0..js.ranks)
            .map(|_| {
                Some(Box::new(Rank {
                    app_aware: matches!(routing, Routing::AppAware).then(|| AppAware::new(js.app_aware.clone(), adaptive)),
                    timeline: js.timeline.then(Vec::new),
                    ..Default::default()
                }))
            })
            .collect();
        Ok(Job {
            spec: js.clone(),
            work,
            routing,
            groups,
            servers: placed,
            ranks,
            iteration_start: Vec::new(),
            iteration_end: Vec::new(),
            iteration_left: Vec::new(),
            rank_end: vec![0; js.ranks],
            message_latency: Vec::new(),
            messages: 0,
            bytes: 0,
            packet_latency: Histogram::default(),
            mode_bytes: [0; AriesMode::ALL.len() + 1],
            ranks_left: js.ranks,
            unnamed_mode: if spec.routing.algorithm == "aries" { crate::routing::AriesParams::from_spec(spec)?.mode.name() } else { "default" },
        })
    }
}

pub struct Jobs {
    jobs: Vec<Job>,
    /// Per server: (job, rank) running there, or `NO_JOB`.
    owner: Vec<(u32, u32)>,
    protocol: Protocol,
    /// Without a protocol: bytes per packet and phits per packet.
    packet_bytes: f64,
    packet_phits: u64,
    /// Jobs other than the background that have not finished (on an MPI rank running its
    /// part, those with ranks of its own left).
    running: usize,
    /// The cycle `running` reached 0 at.
    finished_at: Option<u64>,
    /// The background sends before this cycle only (`Workload::stop`).
    stop: Option<u64>,
    /// Each MPI rank runs its own servers' programs (`Workload::partition`).
    partitioned: bool,
    /// A job other than the background runs open-loop traffic: the run lasts run.cycles.
    endless: bool,
}

impl Jobs {
    pub fn build(spec: &Spec, topo: &dyn Topology, servers: &ServerMap) -> SpecResult<Self> {
        let n = servers.num_servers();
        let mut machine = super::alloc::Machine {
            group: (0..n).map(|s| topo.group_of(servers.switch_of(s)) as u32).collect(),
            groups: topo.groups(),
            switch: (0..n).map(|s| servers.switch_of(s) as u32).collect(),
            free: vec![true; n],
        };
        let mut jobs = Vec::new();
        let mut owner = vec![NO_JOB; n];
        let cycle_ns = spec.cycle_ns(crate::link::ClassTimings::build(spec, topo)?.fastest_gbytes_per_s);
        for (i, js) in spec.jobs.iter().enumerate() {
            if js.ranks > n {
                // A replayed trace's ranks are the trace's: say which file asks for them.
                let of_trace = match js.workload.motif_keys.get("trace") {
                    Some(serde_json::Value::String(t)) if js.workload.motif == "trace" => {
                        let shown = super::trace::file::TraceFile::open(std::path::Path::new(t), "").map_or(t.clone(), |f| f.shown().to_string());
                        format!(" (the ranks of the trace {shown:?})")
                    }
                    _ => String::new(),
                };
                return Err(SpecError::new(format!("jobs[{i}].ranks"), js.ranks, format!("more ranks than the network's {n} servers{of_trace}")));
            }
            let policy = super::alloc::build(spec, i)?;
            policy.check(js.ranks, &machine).map_err(|e| SpecError::new(format!("jobs[{i}].allocation.{}", e.key), e.value, e.allowed))?;
            let mut rng = Rng::seed_from_u64(crate::random::seed_for(spec.run.seed, 0xa110c, i as u64));
            let placed = policy
                .place(js.ranks, &machine, &mut rng)
                .map_err(|why| SpecError::new(format!("jobs[{i}].allocation.policy"), format!("{:?}", js.allocation.policy), why))?;
            for (r, &s) in placed.iter().enumerate() {
                machine.free[s as usize] = false;
                owner[s as usize] = (i as u32, r as u32);
            }
            let groups = placed.iter().map(|&s| machine.group[s as usize]).collect();
            jobs.push(Job::new(spec, i, placed, groups, cycle_ns)?);
        }
        let running = jobs.iter().filter(|j| !j.spec.background).count();
        let endless = jobs.iter().any(|j| !j.spec.background && matches!(j.work, Work::OpenLoop { .. }));
        Ok(Jobs {
            jobs,
            owner,
            protocol: Protocol::from_spec(spec),
            packet_bytes: spec.packet.bytes.unwrap_or(1.0),
            packet_phits: spec.packet.phits as u64,
            running,
            finished_at: None,
            stop: None,
            partitioned: false,
            endless,
        })
    }

    /// Whether the background has stopped sending by `now`.
    fn stopped(&self, now: u64) -> bool {
        self.stop.is_some_and(|s| now >= s)
    }

    /// Phits of the packets carrying a message of `bytes`.
    pub(crate) fn message_phits(spec: &Spec, bytes: u64) -> u64 {
        let protocol = Protocol::from_spec(spec);
        if protocol.is_on() {
            protocol.data_phits(bytes)
        } else {
            (bytes as f64 / spec.packet.bytes.unwrap_or(1.0)).ceil().max(1.0) as u64 * spec.packet.phits as u64
        }
    }

    /// Requests (packets) and request flits (phits) of a message of `bytes`.
    fn size(&self, bytes: u64) -> (u32, u64) {
        if self.protocol.is_on() {
            (self.protocol.requests(bytes), self.protocol.requests_phits(bytes))
        } else {
            let p = (bytes as f64 / self.packet_bytes).ceil().max(1.0) as u32;
            (p, p as u64 * self.packet_phits)
        }
    }

    /// Post a message of `bytes` from rank `r` of job `j` to its rank `to`.
    fn send(&mut self, j: usize, r: usize, to: u32, bytes: u64, alltoall: bool, cx: &mut Ctx) {
        let (packets, flits) = self.size(bytes);
        let job = &mut self.jobs[j];
        let src = job.servers[r];
        let rank = run_here(&mut job.ranks, r);
        let mode = match job.routing {
            Routing::Fixed(m) => m,
            Routing::CrayDefault => Some(Routing::cray_default(alltoall)),
            // Chosen from the NIC's counters, at the NIC's MPI rank only, which alone sends
            // the message and counts its bytes (`rank_part`).
            Routing::AppAware if !cx.nic_totals.holds(src as usize) => None,
            Routing::AppAware => {
                let a = rank.app_aware.as_mut().expect("app-aware ranks have one");
                let mode = a.choose(bytes, packets as u64, flits, &cx.nic_totals.of(src as usize), self.protocol.is_on());
                job.mode_bytes[mode.code() as usize] += bytes;
                Some(mode)
            }
        };
        if !matches!(job.routing, Routing::AppAware) {
            job.mode_bytes[mode.map_or(0, |m| m.code() as usize)] += bytes;
        }
        let seq = rank.sent.entry(to).or_insert(0);
        let tag = *seq;
        *seq += 1;
        job.messages += 1;
        job.bytes += bytes;
        let droppable = matches!(job.work, Work::OpenLoop { .. });
        cx.posts.push(Post { src, dst: job.servers[to as usize], packets, bytes: if self.protocol.is_on() { bytes } else { 0 }, tag, mode, droppable });
    }

    /// Run rank `r` of job `j` until it blocks (a receive not yet arrived, a computation) or
    /// finishes.
    fn advance(&mut self, j: usize, r: usize, cx: &mut Ctx) {
        loop {
            if self.jobs[j].spec.background && self.stopped(cx.now) {
                return; // the application is done: cross traffic stops
            }
            let job = &mut self.jobs[j];
            let Work::Program(motif) = &job.work else { unreachable!("only programs advance") };
            let n = job.ranks.len();
            let rank = run_here(&mut job.ranks, r);
            if rank.pc == rank.ops.len() {
                if rank.started {
                    let it = rank.iteration as usize;
                    job.iteration_end[it] = job.iteration_end[it].max(cx.now);
                    job.iteration_left[it] -= 1;
                    rank.iteration += 1;
                    rank.iteration_done(cx.now);
                }
                rank.started = true;
                if !job.spec.background && rank.iteration == job.spec.workload.iterations {
                    rank.done = true;
                    job.rank_end[r] = cx.now - job.spec.start;
                    job.ranks_left -= 1;
                    if job.ranks_left == 0 {
                        self.running -= 1;
                        if self.running == 0 {
                            self.finished_at = Some(cx.now);
                        }
                    }
                    return;
                }
                if job.spec.background && rank.started_at == cx.now && rank.iteration > 0 {
                    // A background rank whose whole iteration took no time (a bcast's root,
                    // which never waits) would repeat it without end within this cycle: it
                    // starts the next one at the next cycle.
                    rank.started_at = u64::MAX;
                    // The iteration just ended is counted: the timer's call starts the next.
                    rank.started = false;
                    cx.timers.push((cx.now + 1, job.servers[r]));
                    return;
                }
                rank.started_at = cx.now;
                let it = rank.iteration as usize;
                if job.iteration_start.len() <= it {
                    job.iteration_start.push(cx.now);
                    job.iteration_end.push(0);
                    job.iteration_left.push(n);
                }
                job.iteration_start[it] = job.iteration_start[it].min(cx.now);
                rank.ops.clear();
                rank.pc = 0;
                rank.record(CallKind::Iteration, cx.now, cx.now, 0, it as u64);
                motif.iteration(r, rank.iteration, &mut rank.ops);
                continue;
            }
            let op = rank.ops[rank.pc];
            match op {
                Op::Send { to, bytes } | Op::AlltoallSend { to, bytes } => {
                    rank.pc += 1;
                    rank.record(CallKind::Send, cx.now, cx.now, to, bytes);
                    self.send(j, r, to, bytes, matches!(op, Op::AlltoallSend { .. }), cx);
                }
                Op::Recv { .. } | Op::RecvMatched { .. } => {
                    let (from, seq) = match op {
                        Op::RecvMatched { from, seq } => (from, seq),
                        Op::Recv { from } => {
                            let next = rank.expected.entry(from).or_insert(0);
                            *next += 1;
                            (from, *next - 1)
                        }
                        _ => unreachable!("a receive"),
                    };
                    rank.record(CallKind::Recv, cx.now, cx.now, from, seq as u64);
                    if !rank.early.remove(&(from, seq)) {
                        rank.waiting = Some((from, seq));
                        return;
                    }
                    rank.pc += 1;
                }
                Op::Compute(c) => {
                    rank.pc += 1;
                    if c > 0 {
                        rank.record(CallKind::Compute, cx.now, cx.now + c, 0, 0);
                    }
                    if c > 0 {
                        cx.timers.push((cx.now + c, job.servers[r]));
                        return;
                    }
                }
            }
        }
    }

    /// An open-loop rank's message, and when it sends the next.
    fn open_loop(&mut self, j: usize, r: usize, cx: &mut Ctx) {
        if self.jobs[j].spec.background && self.stopped(cx.now) {
            return;
        }
        let job = &self.jobs[j];
        let Work::OpenLoop { ref gap, bytes } = job.work else { unreachable!("only open-loop jobs send at random") };
        let server = job.servers[r] as usize;
        let n = job.ranks.len() as u32;
        let rng = &mut cx.rng[server];
        let next = (cx.now + 1).saturating_add(gap.sample(rng));
        if n > 1 {
            // Uniform over the job's other ranks.
            let to = (r as u32 + 1 + rng.gen_range(0..n - 1)) % n;
            self.send(j, r, to, bytes, false, cx);
        }
        cx.timers.push((next, server as u32));
    }

    fn result(&self, job: &Job, totals: &[Counters]) -> JobResult {
        let h = &job.packet_latency;
        let of = |f: fn(&Counters) -> u64| job.servers.iter().map(|&s| f(&totals[s as usize])).collect::<Vec<_>>();
        let mode_name = |i: usize| if i == 0 { job.unnamed_mode } else { AriesMode::ALL[i - 1].name() };
        let done = job.iteration_left.iter().take_while(|&&left| left == 0).count();
        // Ranks that finish early start the next iteration while others still work on this
        // one (a bcast's root, a ping-pong's second rank): an iteration counts from its first
        // rank starting it, or from the previous iteration's end if that is later.
        let starts: Vec<u64> = (0..done).map(|i| if i == 0 { job.iteration_start[0] } else { job.iteration_start[i].max(job.iteration_end[i - 1]) }).collect();
        JobResult {
            name: job.spec.name.clone(),
            motif: job.spec.workload.motif.clone(),
            background: job.spec.background,
            routing_mode: job.spec.routing_mode.clone().unwrap_or_else(|| job.unnamed_mode.into()),
            ranks: job.ranks.len() as u32,
            servers: job.servers.clone(),
            groups: job.groups.clone(),
            complete: !job.spec.background && job.ranks_left == 0,
            iteration_start: starts.clone(),
            iteration_cycles: (0..done).map(|i| job.iteration_end[i] - starts[i]).collect(),
            rank_cycles: job.rank_end.clone(),
            // Sorted: on MPI ranks each rank records its own servers' messages.
            message_latency: {
                let mut m = job.message_latency.clone();
                m.sort_unstable();
                m
            },
            messages: job.messages,
            bytes: job.bytes,
            packets: h.count(),
            packet_latency_q1: h.quantile(0.25),
            packet_latency_median: h.quantile(0.5),
            packet_latency_q3: h.quantile(0.75),
            packet_latency_mean: h.mean(),
            timeline: job.ranks.iter().flatten().filter_map(|r| r.timeline.clone()).collect(),
            unsupported_events: match &job.work {
                Work::Program(m) => m.unsupported_events(),
                Work::OpenLoop { .. } => Default::default(),
            },
            mode_bytes: job.mode_bytes.iter().enumerate().filter(|(_, &b)| b > 0).map(|(i, &b)| (mode_name(i).to_string(), b)).collect(),
            request_flits: of(|c| c.request_flits.into()),
            stalled_cycles: of(|c| c.stalled_cycles.into()),
            request_packets: of(|c| c.request_packets.into()),
            responses_received: of(|c| c.responses_received.into()),
            cumulative_request_latency: of(|c| c.request_latency),
        }
    }
}

/// What an MPI rank running its part of the jobs tells rank 0 of a job (`rank_part`): its
/// iterations' first start and last end and the ranks left in each, each rank's end, the
/// message latencies, messages, bytes, packet latencies, bytes per mode and ranks left, all
/// of its own ranks, and their timelines.
type JobPart = (Vec<u64>, Vec<u64>, Vec<usize>, Vec<u64>, Vec<u64>, u64, u64, Histogram, [u64; AriesMode::ALL.len() + 1], usize, Vec<(u32, Vec<Call>)>);

impl Job {
    /// Add another MPI rank's part of this job (`JobPart`) to this rank's.
    fn absorb(&mut self, part: JobPart) -> Result<(), String> {
        let (starts, ends, left, rank_end, latencies, messages, bytes, packet_latency, mode_bytes, ranks_left, timelines) = part;
        let n = self.ranks.len();
        if starts.len() != ends.len() || starts.len() != left.len() || rank_end.len() != n {
            return Err(format!("a part of job {:?} of {} iterations and {} ranks", self.spec.name, starts.len(), rank_end.len()));
        }
        for (i, ((s, e), l)) in starts.into_iter().zip(ends).zip(left).enumerate() {
            if i == self.iteration_start.len() {
                self.iteration_start.push(s);
                self.iteration_end.push(e);
                self.iteration_left.push(l);
                continue;
            }
            self.iteration_start[i] = self.iteration_start[i].min(s);
            self.iteration_end[i] = self.iteration_end[i].max(e);
            // Each part counts down from all ranks the ones it finished.
            self.iteration_left[i] = (self.iteration_left[i] + l).checked_sub(n).ok_or("more ranks finished an iteration than the job has")?;
        }
        for (mine, theirs) in self.rank_end.iter_mut().zip(rank_end) {
            *mine = (*mine).max(theirs);
        }
        self.message_latency.extend(latencies);
        self.messages += messages;
        self.bytes += bytes;
        self.packet_latency.absorb(&packet_latency);
        for (mine, b) in self.mode_bytes.iter_mut().zip(mode_bytes) {
            *mine += b;
        }
        self.ranks_left += ranks_left;
        for (r, t) in timelines {
            let slot = self.ranks.get_mut(r as usize).ok_or("a timeline of a rank the job does not have")?;
            slot.get_or_insert_with(Default::default).timeline = Some(t);
        }
        Ok(())
    }
}

/// The program of job rank `r`, which this process runs.
fn run_here(ranks: &mut [Option<Box<Rank>>], r: usize) -> &mut Rank {
    ranks[r].as_deref_mut().expect("a job rank's program runs where its server is held")
}

/// A job's programs as a checkpoint keeps them: every rank's, one this process does not run
/// as a rank that never started (the layout of a run whole on one process).
struct SavedRanks<'a>(&'a [Option<Box<Rank>>]);

impl serde::Serialize for SavedRanks<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let none = Rank::default();
        s.collect_seq(self.0.iter().map(|r| r.as_deref().unwrap_or(&none)))
    }
}

/// What changes of a job as it runs (`Workload::save`), in the order of `Job`'s fields.
type JobProgress = (Vec<Rank>, Vec<u64>, Vec<u64>, Vec<usize>, Vec<u64>, Vec<u64>, u64, u64, Histogram, [u64; AriesMode::ALL.len() + 1], usize);

impl Workload for Jobs {
    fn name(&self) -> &'static str {
        "jobs"
    }
    fn save(&self) -> Vec<u8> {
        let jobs: Vec<_> = self
            .jobs
            .iter()
            .map(|j| (SavedRanks(&j.ranks), &j.iteration_start, &j.iteration_end, &j.iteration_left, &j.rank_end, &j.message_latency, j.messages, j.bytes, &j.packet_latency, j.mode_bytes, j.ranks_left))
            .collect();
        super::save_state(&(jobs, self.running, self.finished_at, self.stop))
    }
    fn rank_part(&self) -> Vec<u8> {
        if !self.partitioned {
            // Every rank ran the whole workload: only what App-Aware chose at a NIC's own
            // rank differs.
            let app_aware: Vec<_> = self.jobs.iter().map(|j| matches!(j.routing, Routing::AppAware).then_some(j.mode_bytes)).collect();
            return super::save_state(&app_aware);
        }
        let parts: Vec<JobPart> = self
            .jobs
            .iter()
            .map(|j| {
                let timelines = j.ranks.iter().enumerate().filter_map(|(i, r)| r.as_deref().filter(|r| r.started).and_then(|r| r.timeline.clone()).map(|t| (i as u32, t))).collect();
                (j.iteration_start.clone(), j.iteration_end.clone(), j.iteration_left.clone(), j.rank_end.clone(), j.message_latency.clone(), j.messages, j.bytes, j.packet_latency.clone(), j.mode_bytes, j.ranks_left, timelines)
            })
            .collect();
        super::save_state(&parts)
    }
    fn absorb_rank_part(&mut self, part: &[u8]) -> bincode::Result<()> {
        let count_error = |sent: usize, have: usize| Err(Box::new(bincode::ErrorKind::Custom(format!("{sent} jobs sent, {have} in the spec"))));
        if !self.partitioned {
            let theirs: Vec<Option<[u64; AriesMode::ALL.len() + 1]>> = super::load_state(part)?;
            if theirs.len() != self.jobs.len() {
                return count_error(theirs.len(), self.jobs.len());
            }
            for (job, bytes) in self.jobs.iter_mut().zip(theirs) {
                for (mine, b) in job.mode_bytes.iter_mut().zip(bytes.unwrap_or_default()) {
                    *mine += b;
                }
            }
            return Ok(());
        }
        let theirs: Vec<JobPart> = super::load_state(part)?;
        if theirs.len() != self.jobs.len() {
            return count_error(theirs.len(), self.jobs.len());
        }
        for (job, part) in self.jobs.iter_mut().zip(theirs) {
            job.absorb(part).map_err(|e| Box::new(bincode::ErrorKind::Custom(e)))?;
        }
        Ok(())
    }
    fn restore(&mut self, saved: &[u8]) -> bincode::Result<()> {
        // A checkpoint of a build before the background's stop was kept has neither field.
        let (jobs, running, finished_at, stop): (Vec<JobProgress>, usize, Option<u64>, Option<u64>) = match super::load_state(saved) {
            Ok(state) => state,
            Err(_) => {
                let (jobs, running): (Vec<JobProgress>, usize) = super::load_state(saved)?;
                (jobs, running, None, None)
            }
        };
        if jobs.len() != self.jobs.len() {
            return Err(Box::new(bincode::ErrorKind::Custom(format!("{} jobs saved, {} in the spec", jobs.len(), self.jobs.len()))));
        }
        for (j, p) in self.jobs.iter_mut().zip(jobs) {
            let ranks;
            (ranks, j.iteration_start, j.iteration_end, j.iteration_left, j.rank_end, j.message_latency, j.messages, j.bytes, j.packet_latency, j.mode_bytes, j.ranks_left) = p;
            if ranks.len() != j.ranks.len() {
                return Err(Box::new(bincode::ErrorKind::Custom(format!("{} ranks saved of job {:?}, {} in the spec", ranks.len(), j.spec.name, j.ranks.len()))));
            }
            // The ranks this process does not run (`partition`) stay without a program.
            for (slot, saved) in j.ranks.iter_mut().zip(ranks) {
                if slot.is_some() {
                    *slot = Some(Box::new(saved));
                }
            }
        }
        (self.running, self.finished_at, self.stop) = (running, finished_at, stop);
        Ok(())
    }
    fn start(&mut self, cx: &mut Ctx) {
        for job in &self.jobs {
            for &s in &job.servers {
                cx.timers.push((job.spec.start, s));
            }
        }
    }
    fn timer(&mut self, server: usize, cx: &mut Ctx) {
        let (j, r) = self.owner[server];
        match self.jobs[j as usize].work {
            Work::Program(_) => self.advance(j as usize, r as usize, cx),
            Work::OpenLoop { .. } => self.open_loop(j as usize, r as usize, cx),
        }
    }
    fn wants_delivery(&self) -> bool {
        true
    }
    fn delivered(&mut self, msg: &Delivered, cx: &mut Ctx) {
        let (j, r) = self.owner[msg.dst as usize];
        let (_, from) = self.owner[msg.src as usize];
        let job = &mut self.jobs[j as usize];
        if !job.spec.background {
            job.message_latency.push(cx.now - msg.created);
        }
        if !matches!(job.work, Work::Program(_)) {
            return;
        }
        let rank = run_here(&mut job.ranks, r as usize);
        if rank.waiting == Some((from, msg.tag)) {
            rank.waiting = None;
            if let Some(c) = rank.timeline.as_mut().and_then(|t| t.last_mut()) {
                c.end = cx.now; // the receive it was waiting in
            }
            rank.pc += 1;
            self.advance(j as usize, r as usize, cx);
        } else {
            rank.early.insert((from, msg.tag));
        }
    }
    fn packet_delivered(&mut self, src: u32, latency: u64) {
        let (j, _) = self.owner[src as usize];
        if j != NO_JOB.0 {
            self.jobs[j as usize].packet_latency.add(latency);
        }
    }
    fn finished(&self) -> bool {
        self.running == 0 && !self.endless
    }
    fn finished_at(&self) -> Option<u64> {
        self.finished_at.filter(|_| self.finished())
    }
    fn sends_after_finishing(&self) -> bool {
        self.jobs.iter().any(|j| j.spec.background)
    }
    fn stop(&mut self, at: u64) {
        self.stop = Some(at);
    }
    fn stopping_at(&self) -> Option<u64> {
        self.stop
    }
    fn partition(&mut self, holds: &dyn Fn(u32) -> bool) {
        self.partitioned = true;
        for job in &mut self.jobs {
            job.ranks_left = job.servers.iter().filter(|&&s| holds(s)).count();
            for (slot, &s) in job.ranks.iter_mut().zip(&job.servers) {
                if !holds(s) {
                    *slot = None;
                }
            }
        }
        self.running = self.jobs.iter().filter(|j| !j.spec.background && j.ranks_left > 0).count();
        if self.running == 0 {
            self.finished_at = Some(0);
        }
    }
    fn job_results(&self, totals: &[Counters]) -> Vec<JobResult> {
        self.jobs.iter().map(|j| self.result(j, totals)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;

    /// Run job 0 of `toml` with messages delivered in a random order (any pending message
    /// may complete next, overtaking others between the same ranks), and check that no rank
    /// sends a message before the receives its program puts ahead of it.
    fn dependencies_hold(workload: &str, ranks: usize, seed: u64) {
        let toml = format!(
            "[topology]\nkind = \"torus\"\ndims = [2]\nservers_per_switch = 16\n[packet]\nbytes = 64\n[traffic]\n\
             [[jobs]]\nname = \"j\"\nranks = {ranks}\nworkload = {{ {workload} }}\n"
        );
        let spec = crate::spec::from_toml_str(&toml).unwrap();
        let topo = crate::topology::build(&spec).unwrap();
        let servers = ServerMap::new(topo.as_ref());
        let mut jobs = Jobs::build(&spec, topo.as_ref(), &servers).unwrap();
        let Work::Program(motif) = &jobs.jobs[0].work else { panic!("a motif") };
        // Receives ahead of each send, per rank, over all iterations.
        let iterations = spec.jobs[0].workload.iterations;
        let need: Vec<Vec<u32>> = (0..ranks)
            .map(|r| {
                let mut ops = Vec::new();
                for it in 0..iterations {
                    motif.iteration(r, it, &mut ops);
                }
                let mut recvs = 0;
                ops.iter()
                    .filter_map(|op| match op {
                        Op::Recv { .. } | Op::RecvMatched { .. } => {
                            recvs += 1;
                            None
                        }
                        Op::Send { .. } | Op::AlltoallSend { .. } => Some(recvs),
                        Op::Compute(_) => None,
                    })
                    .collect()
            })
            .collect();
        let mut rng = Rng::seed_from_u64(seed);
        let mut rngs = crate::random::Streams::new(0, 0..servers.num_servers());
        let totals = vec![Counters::default(); servers.num_servers()];
        let (mut posts, mut timers, mut samples) = (Vec::new(), Vec::new(), Vec::new());
        let mut pending: Vec<Post> = Vec::new();
        let (mut sent, mut received) = (vec![0usize; ranks], vec![0u32; ranks]);
        let mut now = 0;
        let mut cx_call = |jobs: &mut Jobs, now: u64, pending: &mut Vec<Post>, received: &[u32], f: &mut dyn FnMut(&mut Jobs, &mut Ctx)| {
            let mut cx = Ctx { now, rng: &mut rngs, posts: &mut posts, timers: &mut timers, samples: &mut samples, nic_totals: crate::nic::NicTotals::all(&totals) };
            f(jobs, &mut cx);
            for p in posts.drain(..) {
                let r = p.src as usize;
                assert!(received[r] >= need[r][sent[r]], "{workload}: rank {r}'s send {} left after {} of the {} receives ahead of it", sent[r], received[r], need[r][sent[r]]);
                sent[r] += 1;
                pending.push(p);
            }
            std::mem::take(&mut timers)
        };
        let mut due: Vec<(u64, u32)> = cx_call(&mut jobs, now, &mut pending, &received, &mut |j, cx| j.start(cx));
        loop {
            now += 1;
            // Timers due by now fire first, then one message, picked at random, completes.
            due.sort_unstable();
            while let Some(&(t, s)) = due.first() {
                if t > now {
                    break;
                }
                due.remove(0);
                due.extend(cx_call(&mut jobs, now, &mut pending, &received, &mut |j, cx| j.timer(s as usize, cx)));
            }
            if pending.is_empty() {
                if due.is_empty() {
                    break;
                }
                continue;
            }
            pending.shuffle(&mut rng);
            let p = pending.pop().unwrap();
            received[p.dst as usize] += 1;
            let msg = Delivered { src: p.src, dst: p.dst, tag: p.tag, created: now - 1 };
            due.extend(cx_call(&mut jobs, now, &mut pending, &received, &mut |j, cx| j.delivered(&msg, cx)));
        }
        assert!(jobs.finished(), "{workload}: the job did not finish");
        assert_eq!(sent.iter().sum::<usize>(), need.iter().map(Vec::len).sum::<usize>(), "{workload}: sends");
    }

    #[test]
    fn a_rank_of_a_partitioned_run_keeps_only_its_own_servers_programs() {
        let toml = "[topology]\nkind = \"torus\"\ndims = [4]\nservers_per_switch = 4\n[packet]\nbytes = 64\n[traffic]\n\
                    [[jobs]]\nname = \"app\"\nranks = 8\nworkload = { motif = \"allreduce\", iterations = 2 }\n\
                    [[jobs]]\nname = \"noise\"\nranks = 8\nworkload = { motif = \"barrier\" }\nbackground = true\nallocation = { policy = \"linear\", offset = 8 }\n";
        let spec = crate::spec::from_toml_str(toml).unwrap();
        let topo = crate::topology::build(&spec).unwrap();
        let servers = ServerMap::new(topo.as_ref());
        let mut jobs = Jobs::build(&spec, topo.as_ref(), &servers).unwrap();
        let saved = jobs.save();
        // This rank holds servers 4-11: ranks 4-7 of the application, 0-3 of the background.
        jobs.partition(&|s| (4..12).contains(&s));
        let held: Vec<Vec<bool>> = jobs.jobs.iter().map(|j| j.ranks.iter().map(Option::is_some).collect()).collect();
        assert_eq!(held[0], [false, false, false, false, true, true, true, true]);
        assert_eq!(held[1], [true, true, true, true, false, false, false, false]);
        assert_eq!((jobs.jobs[0].ranks_left, jobs.running), (4, 1));
        assert!(!jobs.finished() && jobs.sends_after_finishing());
        // A checkpoint of the whole run restores this rank's programs only.
        jobs.restore(&saved).unwrap();
        assert_eq!(jobs.jobs[0].ranks.iter().filter(|r| r.is_some()).count(), 4);
        // A rank holding no application rank has finished its part from the start.
        let mut other = Jobs::build(&spec, topo.as_ref(), &servers).unwrap();
        other.partition(&|s| s >= 12);
        assert_eq!(other.finished_at(), Some(0));
    }

    #[test]
    fn no_rank_sends_before_the_receives_it_waits_on() {
        for seed in 0..4 {
            dependencies_hold("motif = \"ping_pong\", iterations = 3", 4, seed);
            dependencies_hold("motif = \"allreduce\", iterations = 3, bytes = 512", 8, seed);
            dependencies_hold("motif = \"allreduce\", algorithm = \"recursive_doubling\", iterations = 3", 8, seed);
            dependencies_hold("motif = \"alltoall\", iterations = 2", 6, seed);
            dependencies_hold("motif = \"barrier\", iterations = 3", 7, seed);
            dependencies_hold("motif = \"bcast\", iterations = 3, root = 2", 9, seed);
            dependencies_hold("motif = \"halo3d\", iterations = 2, grid = [3, 2, 2], compute = 5", 12, seed);
            dependencies_hold("motif = \"sweep3d\", iterations = 2, grid = [3, 2], domain = [2, 2, 4], block = 2, compute = 3", 6, seed);
            dependencies_hold("motif = \"halo\", iterations = 2, dims = 2, stencil = \"corner\", grid = [3, 2], domain = [4, 3], periodic = true", 6, seed);
            dependencies_hold("motif = \"halo\", iterations = 2, dims = 4, stencil = \"edge\", grid = [2, 2, 2, 2], domain = [2, 2, 2, 2], compute = 2", 16, seed);
            dependencies_hold("motif = \"cg\", iterations = 2, grid = [3, 2, 2], domain = [4, 4, 4], periodic = true", 12, seed);
            dependencies_hold("motif = \"cg\", iterations = 2, grid = [3, 2, 1], domain = [4, 4, 4], allreduce = \"ring\", dot_products = 2", 6, seed);
            dependencies_hold("motif = \"fft3d\", iterations = 2, grid = [3, 4], points = 12, compute = 2", 12, seed);
            dependencies_hold("motif = \"graph500\", iterations = 2, kernel = \"sssp\", scale = 8, levels = 4", 6, seed);
            dependencies_hold("motif = \"md\", iterations = 4, grid = [2, 3, 2], domain = [3, 3, 3], rebuild_every = 2, thermo_every = 3", 12, seed);
        }
    }
}
