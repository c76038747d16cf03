//! A cycle's deliveries and switch steps, block by block of switches.
//!
//! A cycle delivers its arrivals and credits, then steps its switches in ascending number.
//! Deliveries and steps of different switches touch disjoint state (a delivery reaches its
//! switch's buffers and random stream and the arriving packet; a step, its switch and the
//! packets it holds) and a step schedules nothing for its own cycle, so a cycle may instead
//! run block after block of neighbouring switch numbers: the block's events in calendar
//! order, then the block's steps in ascending order. Every switch sees the same deliveries
//! and steps in the same order as when the whole network's events come first, so nothing
//! changes but where the records are when they are read: a switch's step follows its
//! deliveries closely enough to find their lines still in cache. On a network far larger
//! than the cache (a million switches) that is most of a hop's misses; on one that fits a
//! block is the whole network. Routing that reads other switches' queues (`QueueView::Global`)
//! reads them as they stood at the end of the last cycle (router/observer.rs), which neither
//! deliveries nor steps of other blocks change.
//!
//! With arrivals delivered when they are ready (`Params::deliver_when_ready`) every arrival's
//! switch steps in the cycle it is delivered; its visit was not in the cycle's list of due
//! switches, taken before the deliveries, so it is added here (`Schedule::step_now`).

use super::{to_switch, Simulation, SwitchWake};
use crate::calendar::{Event, Schedule};
use crate::router::{Scratch, PREFETCH_EVENTS_AHEAD};
use crate::unsafe_parts::SharedMut;
use std::ops::Range;

/// Bytes of a switch's port, VC and buffer records a block spans at most. What must stay in
/// cache from a block's deliveries to its steps is only the lines the deliveries load, a few
/// of each switch that receives something: on a large torus at load 0.05 a block of 2 MB
/// (1,024 switches) loads some 100 KB, which a core's L2 cache holds. Blocks much smaller cost
/// time of their own: a switch's step asks for the records of the switches a few steps ahead
/// in its block, so the first steps of each block start cold, and smaller blocks have more
/// such steps. Blocks larger than that gain nothing (docs/benchmark-log.md has the
/// measurements).
const BLOCK_BYTES: usize = 2 << 20;

/// A block shift that makes the whole network one block.
pub const ONE_BLOCK: u32 = 48;

/// log2 of the switches per block of a network whose switches hold `bytes_per_switch` of
/// records each, when its records are far larger than a cache (`far`) and an arrival's switch
/// steps in the cycle the arrival is delivered (`steps_on_arrival`). Otherwise the whole
/// network is one block. A network that fits keeps its records in cache from deliveries to
/// steps anyway, and grouping a cycle's events would only add work, which weighs most on small
/// networks, whose cycles take a few microseconds. An arrival delivered when it lands, ahead
/// of a pipeline delay (routing that reads the queues on arrival), has its switch step for it
/// only that many cycles later: the lines its delivery loaded are gone by then whatever the
/// walk, and blocks would only cut the steps' look-ahead (`Routers::prefetch_visits`, which
/// asks for the switches a few steps ahead in the block) short at every block's start.
pub fn block_shift(bytes_per_switch: usize, far: bool, steps_on_arrival: bool) -> u32 {
    if !far || !steps_on_arrival {
        return ONE_BLOCK;
    }
    (BLOCK_BYTES / bytes_per_switch.max(1)).max(1).ilog2()
}

/// What one thread keeps from cycle to cycle to walk its switches block by block.
#[derive(Default)]
pub struct Walk {
    /// Indices of the cycle's events for this thread's switches, grouped by block (a
    /// counting sort, which keeps calendar order within a block), and where each block's
    /// start in it.
    order: Vec<u32>,
    starts: Vec<u32>,
    /// The cycle's events for this thread's switches, as (index, block), in calendar order.
    mine: Vec<(u32, u32)>,
    /// Switches of the block its deliveries need stepped now, and the block's steps.
    extra: Vec<u32>,
    steps: Vec<u32>,
    bits: StepBits,
    /// The heads this thread's arrivals leave to become ready in the next cycles.
    pub ready_ahead: crate::router::ReadyAhead,
}

impl Walk {
    /// Group the events for switches of `switches` by block of `1 << shift` switches.
    fn group(&mut self, events: &[Event], switches: &Range<usize>, shift: u32) {
        let first = switches.start >> shift;
        let blocks = if switches.is_empty() { 0 } else { ((switches.end - 1) >> shift) - first + 1 };
        self.starts.clear();
        let block_of = |ev: &Event| ev.switch().filter(|s| switches.contains(s)).map(|s| (s >> shift) - first);
        if blocks == 1 {
            // One block (a network that fits the cache): its events in calendar order, in one
            // pass instead of a count and a placement.
            self.order.clear();
            self.order.extend(events.iter().enumerate().filter(|(_, ev)| block_of(ev).is_some()).map(|(i, _)| i as u32));
            self.starts.extend_from_slice(&[0, self.order.len() as u32]);
            return;
        }
        self.starts.resize(blocks + 1, 0);
        // One pass over the whole cycle's events picks out this thread's, with their blocks;
        // the placement then reads only those. With several threads every thread reads every
        // event of the cycle once instead of twice (docs/parallel.md, "What would limit more
        // threads").
        self.mine.clear();
        for (i, ev) in events.iter().enumerate() {
            if let Some(b) = block_of(ev) {
                self.starts[b + 1] += 1;
                self.mine.push((i as u32, b as u32));
            }
        }
        for b in 0..blocks {
            self.starts[b + 1] += self.starts[b];
        }
        self.order.resize(self.starts[blocks] as usize, 0);
        // `extra` serves as the blocks' cursors here; the walk clears it before using it.
        self.extra.clear();
        self.extra.extend_from_slice(&self.starts[..blocks]);
        for &(i, b) in &self.mine {
            let cursor = &mut self.extra[b as usize];
            self.order[*cursor as usize] = i;
            *cursor += 1;
        }
    }
}

/// Where a thread's steps send what they schedule and count.
pub struct Out<'a, C: Schedule> {
    pub cal: &'a mut C,
    pub scratch: &'a mut Scratch,
    pub last_progress: &'a mut u64,
    pub phit_hops: &'a mut u64,
}

/// Deliver `events` (those of the cycle; the ones for switches of `switches` are taken) and
/// step the switches of `switches` that are due (`visit`: the cycle's due switches among
/// them, ascending) or that the deliveries need stepped now, block by block. Returns the
/// number of switches stepped.
///
/// During the call no other thread touches the state of the switches of `switches`, their
/// random streams or the packets they hold or receive (engine/parallel.rs); `out` and `walk`
/// are not reached through `sim`.
#[allow(clippy::too_many_arguments)]
pub fn deliver_and_step<C: Schedule>(sim: SharedMut<Simulation>, now: u64, measuring: bool, events: &[Event], switches: Range<usize>, visit: &[u32], walk: &mut Walk, mut out: Out<C>) -> usize {
    let shift = sim.get_ref().switch_side.block_shift();
    walk.group(events, &switches, shift);
    let Walk { order, starts, extra, steps, bits, ready_ahead, .. } = walk;
    let ahead = sim.get_ref().switch_side.ready_ahead();
    if ahead {
        let reader = sim.get_ref();
        ready_ahead.prefetch(now, switches.clone(), reader.switch_side.routers(), &reader.packets);
    }
    let first = switches.start >> shift;
    let prefetch = move |order: &[u32], k: usize| {
        if let Some(&i) = order.get(k) {
            // Reads addresses of this thread's switches' records and of the packets arriving
            // at them; the references end before `to_switch` writes.
            let reader = sim.get_ref();
            reader.switch_side.prefetch_event(&events[i as usize], &reader.packets)
        }
    };
    for k in 0..PREFETCH_EVENTS_AHEAD {
        prefetch(order, k);
    }
    let ready = sim.get_ref().parts.params.ready_from(now);
    let (mut v, mut stepped) = (0, 0);
    for b in 0..starts.len() - 1 {
        let block_end = ((first + b + 1) << shift).min(switches.end);
        // A scan, not a binary search: the list is read once in order, while a search's
        // probes would miss the cache on a long list, every block.
        let mut v_end = v;
        while visit.get(v_end).is_some_and(|&s| (s as usize) < block_end) {
            v_end += 1;
        }
        let delivered = starts[b] as usize..starts[b + 1] as usize;
        if delivered.is_empty() && v == v_end {
            continue;
        }
        extra.clear();
        for k in delivered {
            prefetch(order, k + PREFETCH_EVENTS_AHEAD);
            let ev = events[order[k] as usize];
            match to_switch(sim.get(), now, ev) {
                SwitchWake::Now(s) => extra.push(s as u32),
                SwitchWake::WhenReady { switch, .. } if ready == now => extra.push(switch as u32),
                SwitchWake::WhenReady { switch, vc, packet } => {
                    out.cal.wake_router(switch, ready);
                    if ahead {
                        ready_ahead.note(now, ready, vc, packet);
                    }
                }
                SwitchWake::None => {}
            }
            if let Event::FlitArrive { .. } = ev {
                *out.last_progress = now;
            }
        }
        let due = &visit[v..v_end];
        v = v_end;
        let block: &[u32] = if extra.is_empty() {
            due
        } else {
            let block_start = ((first + b) << shift).max(switches.start);
            bits.join(block_start, due, extra, out.cal, steps);
            steps
        };
        let s = sim.get();
        s.switch_side.step_block(block, now, &mut s.packets, &s.parts, measuring, &mut out);
        stepped += block.len();
    }
    stepped
}

/// A bit set over a block's switches, in which its due switches and those its deliveries
/// need stepped are joined: each once, in ascending order, without sorting the latter (a sort
/// and a merge per block every cycle cost more than setting and reading a bit per switch).
#[derive(Default)]
struct StepBits {
    /// All zero between joins (the last walk of a join takes the bits it reads), so a join
    /// neither clears nor zeroes them again; they grow to the widest block seen.
    words: Vec<u64>,
}

impl StepBits {
    /// Sets the bit of switch `s` of the block from `first`; returns one past its word.
    #[inline]
    fn set(&mut self, first: usize, s: u32) -> usize {
        debug_assert!(s as usize >= first, "switch {s} before the block from {first}");
        let i = s as usize - first;
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        self.words[i / 64] |= 1 << (i % 64);
        i / 64 + 1
    }

    /// The switches of the block from `first` to step (`due`, ascending, and `extra`, in any
    /// order and possibly repeated) into `steps`, ascending, each once; the switches of
    /// `extra` are stepped now (`Schedule::step_now`), in ascending order.
    fn join<C: Schedule>(&mut self, first: usize, due: &[u32], extra: &[u32], cal: &mut C, steps: &mut Vec<u32>) {
        // One past the highest word set: the walks read no further.
        let mut top = 0;
        for &s in extra {
            top = top.max(self.set(first, s));
        }
        for (w, &word) in self.words[..top].iter().enumerate() {
            let mut m = word;
            while m != 0 {
                cal.step_now(first + w * 64 + m.trailing_zeros() as usize);
                m &= m - 1;
            }
        }
        for &s in due {
            top = top.max(self.set(first, s));
        }
        steps.clear();
        for (w, word) in self.words[..top].iter_mut().enumerate() {
            let mut m = std::mem::take(word);
            while m != 0 {
                steps.push((first + w * 64 + m.trailing_zeros() as usize) as u32);
                m &= m - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Flit;

    /// A block's steps are its due switches and those its deliveries need, each once, in
    /// ascending order, and the latter are stepped now once each, in ascending order: on a
    /// block of 128 switches, on a block of several thousand (a network that fits the cache is
    /// one block) and on one whose bits are used again after a larger block.
    #[test]
    fn steps_are_the_union_of_due_and_delivered_switches_in_order() {
        struct Record(Vec<usize>);
        impl Schedule for Record {
            fn schedule(&mut self, _: u64, _: u64, _: Event) {}
            fn wake_router(&mut self, _: usize, _: u64) {}
            fn step_now(&mut self, switch: usize) {
                self.0.push(switch);
            }
        }
        let mut bits = StepBits::default();
        let cases: [(usize, &[u32], &[u32]); 3] = [
            (5000, &[5000, 5063, 5064, 9000, 12999], &[12999, 5001, 5001, 9000, 5000, 7777]),
            (256, &[256, 300, 383], &[383, 260, 260, 301, 256, 290]),
            (0, &[], &[3]),
        ];
        for (first, due, extra) in cases {
            let (mut now, mut steps) = (Record(Vec::new()), Vec::new());
            bits.join(first, due, extra, &mut now, &mut steps);
            let delivered: std::collections::BTreeSet<u32> = extra.iter().copied().collect();
            let union: std::collections::BTreeSet<u32> = delivered.iter().chain(due).copied().collect();
            assert_eq!(steps, union.into_iter().collect::<Vec<_>>(), "block from {first}");
            assert_eq!(now.0, delivered.into_iter().map(|s| s as usize).collect::<Vec<_>>(), "block from {first}");
        }
    }

    /// Events are grouped by block of the thread's switches, in calendar order within a
    /// block; events for other threads' switches and for servers are left out.
    #[test]
    fn events_are_grouped_by_block_in_calendar_order() {
        let arrive = |switch| Event::FlitArrive { switch, port: 0, vc: 0, packet: 0, flit: Flit::new(0, 1), tail: 0 };
        let credit = |switch| Event::Credit { switch, port: 0, vc: 0, phits: 1 };
        let events = [arrive(9), credit(4), arrive(5), Event::NicCredit { server: 0, vc: 0, phits: 1 }, credit(8), arrive(15), arrive(4), arrive(3)];
        let mut walk = Walk::default();
        // Switches 4..15 in blocks of 4: [4, 8), [8, 12), [12, 15).
        walk.group(&events, &(4..15), 2);
        assert_eq!(walk.starts, [0, 3, 5, 5]);
        assert_eq!(walk.order, [1, 2, 6, 0, 4]);
    }

    #[test]
    fn a_block_spans_two_megabytes_of_switch_records() {
        assert_eq!(block_shift(2048, true, true), 10);
        assert_eq!(block_shift(1 << 20, true, true), 1);
        assert_eq!(block_shift(4 << 20, true, true), 0);
        assert_eq!(block_shift(0, true, true), 21);
        assert_eq!(block_shift(2048, false, true), ONE_BLOCK);
        assert_eq!(block_shift(2048, true, false), ONE_BLOCK);
        let mut walk = Walk::default();
        walk.group(&[Event::Credit { switch: 999_999, port: 0, vc: 0, phits: 1 }], &(0..1_000_000), ONE_BLOCK);
        assert_eq!(walk.starts, [0, 1]);
    }
}
