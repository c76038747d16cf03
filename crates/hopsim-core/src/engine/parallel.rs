//! One run on several threads (`run.threads`, docs/parallel.md).
//!
//! The switches are split into contiguous ranges of switch numbers, one per thread. Every
//! latency is at least one cycle, so within a cycle no switch sees what another does: the
//! switches' steps, and the arrivals and credits delivered to them, are independent, and each
//! thread does those of the switches it owns. Everything that is global to the run (the
//! workload, packet making, NICs, ejection, statistics, the deadlock watchdog) stays on the
//! run's own thread, which does it while the other threads step their switches, and owns
//! fewer switches to make up for it (the split follows the measured balance each cycle).
//!
//! What a switch's step sends elsewhere (events for later cycles, its next visit) goes into
//! its thread's outbox, or for thread 0 straight into the calendar. A cycle steps its
//! switches in ascending number, so one thread's steps are those of thread 0's range, then
//! thread 1's, and so on: once every thread has stepped its switches, thread 1 appends the
//! other threads' outboxes to the calendar one after the other (a list of events per slot
//! at a time), while the run's thread ejects and steps the NICs; after the barrier that
//! ends the cycle the run's thread appends the NICs' events. The calendar then holds
//! exactly what a one-thread run puts there, in the same order, so every later draw of a
//! random number, every tie and every sum is the same: the results depend neither on the
//! number of threads nor on the split.

use super::blocks::{self, Walk};
use super::Simulation;
use crate::calendar::{Event, Schedule};
use crate::router::Scratch;
use crate::unsafe_parts::{Shared, SharedMut, TurnCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Ports (network and server) a network has per thread the automatic choice gives it: a
/// barrier costs a few microseconds, as much as stepping a few hundred small switches or a
/// few dozen high-radix ones, so the size that pays for a thread is counted in ports.
const AUTO_PORTS_PER_THREAD: usize = 4096;
/// A cycle whose switches due have fewer ports than this in all, and with fewer events to
/// deliver than `MIN_PARALLEL_EVENTS`, runs on the run's thread alone (the one-thread order,
/// so the results are the same): its barriers would cost more than the other threads save,
/// and a small network, or a large one at low load, is never slower on several threads
/// than on one.
pub const MIN_PARALLEL_PORTS: usize = 2048;
pub const MIN_PARALLEL_EVENTS: usize = 512;

/// Which thread owns which switch: contiguous ranges of switch numbers (neighbours in a
/// torus or a group of a Dragonfly), so a thread's switches and the links between them stay
/// in its core's cache. Thread 0, the run's own thread, owns the switches below `first_end`;
/// the others share the rest evenly. Computed, not stored, so it costs no memory per switch.
#[derive(Debug, Clone, Copy)]
pub struct Partition {
    threads: usize,
    /// The switches split: `start..end` (an MPI rank's range, or the whole network).
    start: usize,
    end: usize,
    first_end: usize,
}

impl Partition {
    /// Equal ranges of the switches of a network of `switches`.
    pub fn new(threads: usize, switches: usize) -> Self {
        Self::over(threads, 0..switches.max(1))
    }
    /// Equal ranges of the switches `switches` (an MPI rank's, split among its threads).
    pub fn over(threads: usize, switches: std::ops::Range<usize>) -> Self {
        let n = switches.len().max(1);
        let threads = threads.clamp(1, n);
        Partition { threads, start: switches.start, end: switches.start + n, first_end: switches.start + n.div_ceil(threads) }
    }
    /// The same threads, thread 0 owning the switches below `end`.
    pub fn with_first_end(self, end: usize) -> Self {
        Partition { first_end: if self.threads == 1 { self.end } else { end.clamp(self.start, self.end) }, ..self }
    }
    #[inline]
    pub fn owner(&self, switch: usize) -> usize {
        if switch < self.first_end {
            0
        } else if self.threads == 2 {
            1
        } else {
            1 + ((switch - self.first_end) as u64 * (self.threads - 1) as u64 / (self.end - self.first_end) as u64) as usize
        }
    }
    pub fn threads(&self) -> usize {
        self.threads
    }
    /// The switches thread `t` owns.
    pub fn range(&self, t: usize) -> std::ops::Range<usize> {
        // The first switch a thread at or after `t` owns (owners ascend with switch numbers).
        let first = |t: usize| {
            let (mut lo, mut hi) = (self.start, self.end);
            while lo < hi {
                let mid = (lo + hi) / 2;
                if self.owner(mid) < t {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        first(t)..first(t + 1)
    }
}

/// The number of threads for a run on `switches` switches with `ports` ports, at most `most`:
/// `run.threads` if given (at most one per switch), otherwise one per `AUTO_PORTS_PER_THREAD`
/// ports, one for a smaller network, and no more than the cores idle now (`free_cores`,
/// watched only when that could leave more than one thread).
pub fn threads_for(asked: Option<usize>, switches: usize, ports: usize, most: usize) -> usize {
    let at_most = threads_at_most(asked, switches, ports).min(most.max(1));
    if asked.is_some() || at_most < 2 {
        return at_most;
    }
    at_most.min(crate::free_cores::free_cores(available_cores()))
}

/// The threads a run may take whatever else runs on the machine: `run.threads`, or the
/// automatic count on a machine with nothing else to do. The memory estimate counts these.
pub fn threads_at_most(asked: Option<usize>, switches: usize, ports: usize) -> usize {
    if let Some(t) = asked {
        return t.clamp(1, switches.max(1));
    }
    let by_size = ports / AUTO_PORTS_PER_THREAD;
    if by_size < 2 {
        return 1;
    }
    by_size.min(available_cores())
}

pub(crate) fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What a thread's switch steps send to the calendar, kept in step order until the barrier.
#[derive(Default)]
pub struct Outbox {
    /// The events, by how many cycles after this one they are due: each list goes into its
    /// slot of the calendar in one copy, not event by event. By cycles ahead rather than by
    /// slot, so that only the few distances that links and credits use keep an allocation.
    events: Vec<Vec<Event>>,
    /// The switches that asked to be stepped again, and how many cycles after this one
    /// (`STEP_NOW`: stepped in this cycle although not due, `Schedule::step_now`): 8 bytes per
    /// step, and per arrival delivered, at most.
    wakes: Vec<(u32, u32)>,
    now: u64,
}

impl Outbox {
    fn clear(&mut self, now: u64) {
        self.events.iter_mut().for_each(Vec::clear);
        self.wakes.clear();
        self.now = now;
    }
}

impl Schedule for Outbox {
    #[inline]
    fn schedule(&mut self, at: u64, _now: u64, ev: Event) {
        let ahead = (at - self.now) as usize;
        if ahead >= self.events.len() {
            self.events.resize_with(ahead + 1, Vec::new);
        }
        self.events[ahead].push(ev);
    }
    /// A step asks once, at its end, for its own switch's next visit.
    #[inline]
    fn wake_router(&mut self, switch: usize, at: u64) {
        self.wakes.push((switch as u32, (at - self.now) as u32));
    }
    #[inline]
    fn step_now(&mut self, switch: usize) {
        self.wakes.push((switch as u32, STEP_NOW));
    }
}

/// An outbox's mark for `Schedule::step_now` in place of a number of cycles ahead (a wake-up
/// is always for a later cycle, within the calendar's horizon).
const STEP_NOW: u32 = u32::MAX;

/// One thread's working state. Aligned to two cache lines (a line and its prefetched
/// pair) so that no line holds two threads' lanes: every step writes its lane's scratch
/// lengths and counters, and a line shared with the next lane would move between the cores
/// at each of them.
#[derive(Default)]
#[repr(align(128))]
struct Lane {
    scratch: Scratch,
    out: Outbox,
    last_progress: u64,
    phit_hops: u64,
    /// Switches it stepped this cycle.
    stepped: usize,
    walk: Walk,
}

/// A value alone on its cache lines: what one thread writes during a cycle (the gate's
/// counters, the published cycle) is not beside what the others read in a loop.
#[repr(align(128))]
struct Alone<T>(T);

impl<T> std::ops::Deref for Alone<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Cycle,
    Stop,
}

/// What the run's thread asks the others to do until the next barrier.
#[derive(Clone, Copy)]
pub struct Job {
    phase: Phase,
    /// Which cycle of the run this is, to match the switches to step with their cycle.
    seq: u64,
    now: u64,
    measuring: bool,
    part: Partition,
    sim: SharedMut<Simulation>,
    /// The arrivals and credits of the cycle to deliver (empty: the run's thread delivered
    /// them before the cycle started).
    events: Shared<[Event]>,
}

/// A barrier that spins for a while (a phase of a large network takes microseconds) and then
/// sleeps, so a thread waiting on a loaded machine gives its core away. How long it spins is
/// a time, adapted to the waits that end asleep: one shorter than the longest spin would have
/// been cheaper spun through (waking a sleeping thread takes tens of microseconds, as long as
/// stepping a hundred switches), so the spin grows; a longer one means the thread waited for
/// had no core, and spinning only took a core from it, so the spin shrinks. (Growing only
/// when a wait ended within a few spins' time, as tried first, kept the spin at its minimum
/// on a saturated HyperX, whose waits last tens of microseconds.)
struct Gate {
    n: usize,
    arrived: AtomicUsize,
    generation: AtomicU64,
    sleeping: AtomicUsize,
    /// How long a waiter spins before it sleeps, in nanoseconds.
    spin_ns: AtomicU64,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Gate {
    const MIN_SPIN_NS: u64 = 2_000;
    const MAX_SPIN_NS: u64 = 250_000;
    /// Spin-loop iterations between looks at the clock.
    const SPINS_PER_LOOK: u32 = 64;

    fn new(n: usize) -> Self {
        Gate {
            n,
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            sleeping: AtomicUsize::new(0),
            spin_ns: AtomicU64::new(20_000),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// Wait for every thread; true for the thread that arrived last.
    fn wait(&self) -> bool {
        let gen = self.generation.load(Ordering::SeqCst);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::SeqCst);
            // A sleeper counts itself before its last look at the generation (both SeqCst),
            // so either it sees the new generation or this sees it; waking it under the lock
            // means it cannot be between that look and its sleep.
            if self.sleeping.load(Ordering::SeqCst) > 0 {
                drop(self.lock.lock().unwrap_or_else(|e| e.into_inner()));
                self.cv.notify_all();
            }
            return true;
        }
        let spin = self.spin_ns.load(Ordering::Relaxed);
        let started = std::time::Instant::now();
        loop {
            for _ in 0..Self::SPINS_PER_LOOK {
                if self.generation.load(Ordering::Acquire) != gen {
                    return false;
                }
                std::hint::spin_loop();
            }
            if started.elapsed().as_nanos() as u64 >= spin {
                break;
            }
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == gen {
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        let waited = started.elapsed().as_nanos() as u64;
        let spin = if waited < Self::MAX_SPIN_NS { spin * 2 } else { spin / 2 };
        self.spin_ns.store(spin.clamp(Self::MIN_SPIN_NS, Self::MAX_SPIN_NS), Ordering::Relaxed);
        false
    }
}

/// The threads of one run and what they share.
pub struct Team {
    part: Partition,
    /// Where thread 0's switches end this cycle (`Partition::with_first_end`).
    first_end: AtomicUsize,
    gate: Alone<Gate>,
    /// The cells' turns: `job` is written only by the run's thread while the others wait at
    /// the gate, and `visit` only by the run's thread before it publishes it (`published`,
    /// release) and after the gate that ends the cycle; lane `t` is touched only by thread
    /// `t` during a cycle and by the run's thread between cycles; the gate's atomics order
    /// those accesses (unsafe_parts.rs, invariant 2).
    job: TurnCell<Job>,
    lanes: Vec<TurnCell<Lane>>,
    /// The switches to step this cycle, ascending, and the `Job::seq` of the cycle they
    /// belong to once they are there.
    visit: TurnCell<Shared<[u32]>>,
    published: Alone<AtomicU64>,
    /// Switch steps finished: each thread adds one per cycle once its switches are stepped,
    /// so cycle `seq` has all of them when this reaches `seq * threads`.
    stepped: Alone<AtomicU64>,
    /// Whether the run's thread was the last to finish stepping its switches this cycle.
    run_thread_stepped_last: AtomicBool,
    failed: AtomicBool,
    stopped: AtomicBool,
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl Team {
    /// A team of `part.threads()` threads, at least two (one thread needs no team).
    pub fn new(part: Partition) -> Self {
        assert!(part.threads() >= 2, "a team has at least two threads");
        let no_events: Shared<[Event]> = Shared::new(&[]);
        let no_visit: Shared<[u32]> = Shared::new(&[]);
        Team {
            part,
            first_end: AtomicUsize::new(part.first_end),
            gate: Alone(Gate::new(part.threads())),
            job: TurnCell::new(Job { phase: Phase::Stop, seq: 0, now: 0, measuring: false, part, sim: SharedMut::none(), events: no_events }),
            lanes: (0..part.threads()).map(|_| TurnCell::new(Lane::default())).collect(),
            visit: TurnCell::new(no_visit),
            published: Alone(AtomicU64::new(0)),
            stepped: Alone(AtomicU64::new(0)),
            run_thread_stepped_last: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            panic: Mutex::new(None),
        }
    }

    pub fn threads(&self) -> usize {
        self.part.threads()
    }

    /// The loop of thread `t >= 1`: do its part of each cycle the run's thread starts, until
    /// told to stop.
    pub fn serve(&self, t: usize) {
        loop {
            self.gate.wait();
            // The run's thread wrote the job before the gate and waits for the next one.
            let job = *self.job.get();
            if job.phase == Phase::Stop {
                return;
            }
            self.guarded(|| {
                let visit = self.wait_for_visit(job.seq);
                // During a cycle lane `t` belongs to thread `t` alone.
                self.step_part(t, &job, self.lanes[t].get_mut(), visit);
            });
            self.stepped.fetch_add(1, Ordering::Release);
            if t == Self::MERGER {
                self.guarded(|| self.merge_steps(&job));
            }
            self.gate.wait();
        }
    }

    /// Stop the other threads (they return from `serve`); once, however often it is called.
    pub fn stop(&self) {
        if self.stopped.swap(true, Ordering::Relaxed) {
            return;
        }
        // The other threads wait at the gate.
        self.job.get_mut().phase = Phase::Stop;
        self.gate.wait();
    }

    /// A guard that stops the other threads when the run's thread leaves the run, also when
    /// it panics outside a cycle: the scope that owns the threads waits for them to end.
    pub fn stop_on_drop(&self) -> impl Drop + '_ {
        struct Stop<'a>(&'a Team);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.stop();
            }
        }
        Stop(self)
    }

    fn guarded(&self, f: impl FnOnce()) {
        if let Err(p) = catch_unwind(AssertUnwindSafe(f)) {
            self.failed.store(true, Ordering::Relaxed);
            *self.panic.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
        }
    }

    /// Run cycle `now` on every thread: the others wait for the switches due (`publish`),
    /// then deliver the cycle's `events` to their switches and step them, while this thread
    /// does `run_thread`, which must call `publish` and `step_own`, in that order, and may do
    /// anything the other threads do not touch (engine/mod.rs says what). When it returns,
    /// what the switches sent is in the calendar (`merge_steps`) and the threads' counters
    /// wait for `add_counters`.
    pub fn cycle(&self, sim: SharedMut<Simulation>, now: u64, measuring: bool, events: &[Event], run_thread: impl FnOnce(&Job)) {
        // The other threads wait at the gate until it opens.
        let job = {
            let j = self.job.get_mut();
            let part = self.part.with_first_end(self.first_end.load(Ordering::Relaxed));
            *j = Job { phase: Phase::Cycle, seq: j.seq + 1, now, measuring, part, sim, events: Shared::new(events) };
            *j
        };
        self.gate.wait();
        self.guarded(|| run_thread(&job));
        if self.published.load(Ordering::Relaxed) != job.seq {
            // `run_thread` failed before it got there: let the others reach the gate.
            self.publish(&job, &[]);
        }
        let last = self.gate.wait();
        self.balance(last || self.run_thread_stepped_last.load(Ordering::Relaxed));
        if self.failed.load(Ordering::Relaxed) {
            // Stop the others first, so the scope that owns them can end.
            self.stop();
            let p = self.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
            resume_unwind(p.unwrap_or_else(|| Box::new("a thread of the run failed")));
        }
    }

    /// Thread 0 has the run's own work besides its switches: when it is on the cycle's
    /// critical path, it gives the next thread a few of its switches, otherwise takes a few.
    /// It is when it reaches the end of the cycle last, and also when it finishes stepping
    /// last: `MERGER` merges every thread's steps only then, so when merging takes longer
    /// than the run thread's own work (a million switches, where the merge's writes miss
    /// the cache) `MERGER` reaches the end last although it waited for thread 0. Judging by
    /// the end alone, thread 0 would then take switches every cycle until it had them all,
    /// and `MERGER` would spend most of the run waiting for it (docs/benchmark-log.md).
    /// The split only decides who does a switch's work, never what it computes.
    fn balance(&self, run_thread_last: bool) {
        let (start, last) = (self.part.start, self.part.end);
        let step = ((last - start) / 256).max(1);
        let end = self.first_end.load(Ordering::Relaxed);
        let end = if run_thread_last { end.saturating_sub(step).max(start) } else { (end + step).min(last) };
        self.first_end.store(end, Ordering::Relaxed);
    }

    /// Deliver to and step thread 0's switches (from `run_thread`, after `publish`); their
    /// steps schedule into the calendar itself. From then on until the cycle ends the run's
    /// thread must not touch the events' or the switches' wheel of the calendar: `MERGER`
    /// fills them meanwhile.
    pub fn step_own(&self, job: &Job, visit: &[u32]) {
        // During a cycle lane 0 belongs to the run's thread alone.
        self.step_part(0, job, self.lanes[0].get_mut(), visit);
        let before = self.stepped.fetch_add(1, Ordering::Release);
        self.run_thread_stepped_last.store(before + 1 == job.seq * self.threads() as u64, Ordering::Relaxed);
    }

    /// Hand the cycle's switches to step, ascending, to the other threads (from
    /// `run_thread`). `visit` must stay untouched until `cycle` returns.
    pub fn publish(&self, job: &Job, visit: &[u32]) {
        // The others read `visit` only after they see `published` at this cycle.
        *self.visit.get_mut() = Shared::new(visit);
        self.published.store(job.seq, Ordering::Release);
    }

    /// Wait (spinning: the run's thread takes the switches due and publishes them first
    /// thing) for the switches due in cycle `seq`.
    fn wait_for_visit(&self, seq: u64) -> &[u32] {
        let mut spins = 0u32;
        while self.published.load(Ordering::Acquire) != seq {
            if spins < 1 << 14 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // Published at this cycle, and unchanged until the cycle's end.
        self.visit.get().get()
    }

    /// Deliver the cycle's events to the switches thread `t` owns and step them (those of
    /// `visit`, ascending, it owns: a contiguous part of it, and those the deliveries need
    /// stepped now), block by block as one thread does with all (engine/blocks.rs).
    fn step_part(&self, t: usize, job: &Job, lane: &mut Lane, visit: &[u32]) {
        lane.out.clear(job.now);
        let range = job.part.range(t);
        let mine = &visit[visit.partition_point(|&s| (s as usize) < range.start)..visit.partition_point(|&s| (s as usize) < range.end)];
        let Lane { scratch, out, last_progress, phit_hops, stepped, walk } = lane;
        // Each thread reaches only the state of the switches it owns (their ports, VCs,
        // buffers, random streams) and the packets those switches hold or receive; what it
        // reaches of the rest is read-only during the cycle. The run's thread touches nothing
        // of that (engine/mod.rs, `cycle_on_team`).
        *stepped = if t == 0 {
            // Thread 0's switches come first in the one-thread order, so its steps write
            // straight into the calendar, which no other thread touches until `MERGER`
            // appends the others' outboxes after these steps (`merge_steps`). Copying thread
            // 0's outbox as well would add its events, a large share of the cycle's, to the
            // copy `MERGER` makes (docs/benchmark-log.md has the timings).
            let out = blocks::Out { cal: &mut job.sim.get().cal, scratch, last_progress, phit_hops };
            blocks::deliver_and_step(job.sim, job.now, job.measuring, job.events.get(), range, mine, walk, out)
        } else {
            let out = blocks::Out { cal: out, scratch, last_progress, phit_hops };
            blocks::deliver_and_step(job.sim, job.now, job.measuring, job.events.get(), range, mine, walk, out)
        };
    }

    /// The thread that, once every thread's switches are stepped, puts what they sent into
    /// the calendar, while the run's thread does its own work of the cycle (ejection, NICs).
    const MERGER: usize = 1;

    /// Put what the switches sent into the calendar in the order one thread steps them: after
    /// thread 0's, which its steps scheduled there themselves, thread 1's, then thread 2's, and
    /// so on (on `MERGER`, once every thread has stepped its switches). Touches only the
    /// events' and the switches' wheels, which the run's thread leaves alone after its own
    /// steps.
    fn merge_steps(&self, job: &Job) {
        let all = job.seq * self.threads() as u64;
        let mut spins = 0u32;
        while self.stepped.load(Ordering::Acquire) < all {
            if self.failed.load(Ordering::Relaxed) {
                return;
            }
            if spins < 1 << 14 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // Every thread has stepped its switches and leaves its outbox until the cycle ends;
        // the calendar's events' and switches' wheels are this thread's until then
        // (`step_own`).
        let cal = &mut job.sim.get().cal;
        let now = job.now;
        for lane in &self.lanes[1..] {
            let out = &lane.get().out;
            for (ahead, events) in out.events.iter().enumerate() {
                if !events.is_empty() {
                    cal.schedule_all(now + ahead as u64, now, events);
                }
            }
            for &(s, wake) in &out.wakes {
                if wake == STEP_NOW {
                    cal.step_now(s as usize);
                } else {
                    cal.wake_router(s as usize, now + wake as u64);
                }
            }
        }
    }

    /// After `cycle`: add up the threads' counters.
    pub fn add_counters(&self, sim: &mut Simulation) {
        let mut stepped = 0;
        for lane in &self.lanes {
            // The cycle is over; the other threads wait at the gate.
            let lane = lane.get_mut();
            sim.phit_hops += std::mem::take(&mut lane.phit_hops);
            stepped += lane.stepped;
            sim.last_progress = sim.last_progress.max(lane.last_progress);
        }
        sim.switch_side.set_stepped_last(stepped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_owns_a_contiguous_nonempty_range() {
        for (threads, switches) in [(2, 64), (3, 1000), (3, 4), (7, 7), (4, 32768)] {
            let p = Partition::new(threads, switches);
            let owners: Vec<usize> = (0..switches).map(|s| p.owner(s)).collect();
            assert_eq!(owners[0], 0);
            assert_eq!(*owners.last().unwrap(), threads - 1);
            assert!(owners.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1), "{threads} threads, {switches} switches");
        }
    }

    #[test]
    fn an_mpi_ranks_switches_split_among_its_threads_cover_its_range_only() {
        for (threads, range) in [(2, 100..164), (3, 7..1007), (4, 0..5), (2, 333..335)] {
            let p = Partition::over(threads, range.clone());
            let ranges: Vec<_> = (0..p.threads()).map(|t| p.range(t)).collect();
            assert_eq!(ranges[0].start, range.start, "{ranges:?}");
            assert_eq!(ranges.last().unwrap().end, range.end, "{ranges:?}");
            assert!(ranges.windows(2).all(|w| w[0].end == w[1].start && !w[0].is_empty()), "{ranges:?}");
            for (t, r) in ranges.iter().enumerate() {
                assert!(r.clone().all(|s| p.owner(s) == t), "{threads} threads over {range:?}");
            }
            let moved = p.with_first_end(0);
            assert_eq!(moved.range(0).start, range.start, "thread 0 keeps the range's start");
        }
    }

    #[test]
    fn any_share_of_the_first_thread_keeps_contiguous_ranges() {
        for (threads, switches) in [(2, 64), (3, 1000), (4, 10)] {
            for end in [0, 1, switches / 3, switches - 1, switches, switches + 5] {
                let p = Partition::new(threads, switches).with_first_end(end);
                let owners: Vec<usize> = (0..switches).map(|s| p.owner(s)).collect();
                assert_eq!(owners.iter().filter(|&&t| t == 0).count(), end.min(switches), "{threads} threads, end {end}");
                assert!(owners.iter().all(|&t| t < threads));
                assert!(owners.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1), "{threads} threads, end {end}");
                for t in 0..threads {
                    assert!(p.range(t).all(|s| owners[s] == t), "{threads} threads, end {end}, thread {t}");
                    assert_eq!(p.range(t).len(), owners.iter().filter(|&&o| o == t).count());
                }
            }
        }
    }

    #[test]
    fn more_threads_than_switches_is_one_per_switch() {
        assert_eq!(Partition::new(8, 3).threads(), 3);
        assert_eq!(threads_for(Some(8), 3, 30, usize::MAX), 3);
        assert_eq!(threads_for(Some(2), 64, 320, usize::MAX), 2);
        assert_eq!(threads_for(Some(2), 64, 320, 1), 1);
        // An 8x8 torus, and a 10x10x10 one (7,000 ports), stay on one thread.
        assert_eq!(threads_for(None, 64, 320, usize::MAX), 1);
        assert_eq!(threads_for(None, 1000, 7000, usize::MAX), 1);
        // A larger network takes one thread per 4,096 ports, no more than the cores, and no
        // more than are idle: at least one, whatever else runs.
        let cores = available_cores();
        assert_eq!(threads_at_most(None, 32_768, 229_376), 56.min(cores));
        let t = threads_for(None, 32_768, 229_376, usize::MAX);
        assert!((1..=56.min(cores)).contains(&t), "{t} threads on {cores} cores");
        assert_eq!(threads_for(None, 32_768, 229_376, 1), 1);
    }

    #[test]
    fn the_gate_holds_every_thread_until_all_arrive() {
        let gate = Gate::new(3);
        let count = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for round in 0..200 {
                        count.fetch_add(1, Ordering::SeqCst);
                        gate.wait();
                        assert!(count.load(Ordering::SeqCst) >= 3 * (round + 1));
                        gate.wait();
                    }
                });
            }
        });
        assert_eq!(count.load(Ordering::SeqCst), 600);
    }
}
