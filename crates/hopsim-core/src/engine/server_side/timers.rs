//! The workload's timers (a server's next message, a job's next phase): each fires at its
//! cycle, the servers of one cycle in ascending number. A binary heap of all of them costs
//! twenty levels of a 16 MB array per timer on the million-node torus, most of them cache
//! misses; here a timer goes into the list of its cycle on a wheel and is ordered among
//! only its cycle's few thousand when that cycle fires.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles the wheel spans: a Bernoulli source at load 0.05 and 16-phit packets waits 320
/// cycles on average, and 1,024 holds all but 4 % of its gaps.
const SLOTS: usize = 1024;

const END: u32 = u32::MAX;

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Timers {
    /// The first timer of each cycle of `[base, base + SLOTS)`, in slot `cycle % SLOTS`, each
    /// list linked through `nodes`: a timer set touches a word of this 4 KB array and a node
    /// of a pool as large as the timers set, where a vector per slot would touch a 24 KB array
    /// of vectors and a buffer of its own: more lines at every message a server makes.
    heads: Vec<u32>,
    /// (server, next node of its list); unused nodes are linked from `free`.
    nodes: Vec<(u32, u32)>,
    free: u32,
    base: u64,
    /// Timers in the wheel.
    in_wheel: usize,
    /// Timers beyond the wheel's span.
    far: BinaryHeap<Reverse<(u64, u32)>>,
    /// The cycle firing now and its servers still due, highest number first so that the next
    /// is the last: a cycle fires a few timers, which a sort orders with fewer branches that
    /// follow the servers' numbers than a heap's pushes and pops (docs/benchmark-log.md).
    firing: Vec<u32>,
    /// Timers set for the cycle firing while it fires: they join its servers in order.
    joined: BinaryHeap<Reverse<u32>>,
    firing_at: Option<u64>,
}

impl Default for Timers {
    fn default() -> Self {
        Timers { heads: vec![END; SLOTS], nodes: Vec::new(), free: END, base: 0, in_wheel: 0, far: BinaryHeap::new(), firing: Vec::new(), joined: BinaryHeap::new(), firing_at: None }
    }
}

impl Timers {
    /// Fire `server`'s timer at cycle `at`: not before the cycle firing now, if any.
    #[inline]
    pub fn push(&mut self, at: u64, server: u32) {
        debug_assert!(at >= self.base, "timer at {at} set after cycle {} fired", self.base);
        if self.firing_at == Some(at) {
            self.joined.push(Reverse(server));
        } else if at < self.base + SLOTS as u64 {
            let head = &mut self.heads[at as usize % SLOTS];
            let node = (server, *head);
            *head = if self.free == END {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            } else {
                let n = self.free;
                self.free = self.nodes[n as usize].1;
                self.nodes[n as usize] = node;
                n
            };
            self.in_wheel += 1;
        } else {
            self.far.push(Reverse((at, server)));
        }
    }

    /// Start firing cycle `now`: no timer is due before it.
    #[inline]
    pub fn start(&mut self, now: u64) {
        debug_assert!(self.firing.is_empty() && self.joined.is_empty() && now >= self.base);
        self.base = now;
        while let Some(&Reverse((at, server))) = self.far.peek() {
            if at >= now + SLOTS as u64 {
                break;
            }
            self.far.pop();
            self.push(at, server);
        }
        let mut n = std::mem::replace(&mut self.heads[now as usize % SLOTS], END);
        while n != END {
            let (server, next) = self.nodes[n as usize];
            self.firing.push(server);
            self.nodes[n as usize].1 = self.free;
            self.free = n;
            self.in_wheel -= 1;
            n = next;
        }
        self.firing.sort_unstable_by(|a, b| b.cmp(a));
        self.firing_at = Some(now);
    }

    /// The next server whose timer fires in the cycle started, lowest number first; `None`
    /// once they have all fired.
    pub fn next(&mut self) -> Option<u32> {
        let from_joined = self.joined.peek().is_some_and(|&Reverse(j)| self.firing.last().is_none_or(|&f| j < f));
        let next = if from_joined { self.joined.pop().map(|Reverse(s)| s) } else { self.firing.pop() };
        if next.is_none() {
            self.firing_at = None;
        }
        next
    }

    /// Whether a timer fires at cycle `at` (after the cycle firing now).
    pub fn due_at(&self, at: u64) -> bool {
        if at < self.base + SLOTS as u64 {
            self.heads[at as usize % SLOTS] != END
        } else {
            self.far.peek().is_some_and(|r| r.0 .0 == at)
        }
    }

    /// The earliest cycle a timer fires at, if any is set.
    pub fn next_at(&self) -> Option<u64> {
        if self.in_wheel > 0 {
            let first = (self.base..self.base + SLOTS as u64).find(|&t| self.heads[t as usize % SLOTS] != END);
            debug_assert!(first.is_some());
            return first;
        }
        self.far.peek().map(|r| r.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the `k`-th timer to fire, at `now` for `server`, is set again: a fifth of the
    /// time in the same cycle, else up to twice the wheel's span later (a hash, so the wheel
    /// and the heap it is compared with make the same choices from what they fire).
    fn again(k: usize, now: u64, server: u32) -> (u64, u32) {
        let mut z = now.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (server as u64).wrapping_mul(0xD1B5_4A32_D192_ED03) ^ (k as u64).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 29;
        z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z ^= z >> 32;
        let later = if z.is_multiple_of(5) { 0 } else { 1 + (z >> 8) % (2 * SLOTS as u64) };
        (now + later, (server * 7 + 3) % 500)
    }

    /// Against a binary heap of (cycle, server), the order the engine had before: the same
    /// servers fire at the same cycles in the same order, including timers set for the cycle
    /// firing while it fires and timers beyond the wheel's span.
    #[test]
    fn fires_in_the_order_of_a_heap_of_cycle_and_server() {
        let (mut wheel, mut heap) = (Timers::default(), BinaryHeap::new());
        for s in 0..500u32 {
            let at = (s as u64 * 7919) % (3 * SLOTS as u64);
            wheel.push(at, s);
            heap.push(Reverse((at, s)));
        }
        let (mut by_wheel, mut by_heap) = (Vec::new(), Vec::new());
        while by_wheel.len() < 20_000 {
            let at = wheel.next_at().expect("timers are always set again");
            assert_eq!(Some(at), heap.peek().map(|r: &Reverse<(u64, u32)>| r.0 .0));
            assert!(wheel.due_at(at));
            wheel.start(at);
            while let Some(s) = wheel.next() {
                let (t, next) = again(by_wheel.len(), at, s);
                by_wheel.push((at, s));
                wheel.push(t, next);
            }
            while let Some(&Reverse((t, s))) = heap.peek() {
                if t != at {
                    break;
                }
                heap.pop();
                let (t, next) = again(by_heap.len(), at, s);
                by_heap.push((at, s));
                heap.push(Reverse((t, next)));
            }
            assert!(!wheel.due_at(at + 1) || heap.peek().is_some_and(|r| r.0 .0 == at + 1));
        }
        assert_eq!(by_wheel, by_heap);
        // Same-cycle timers and far ones both happened.
        assert!(by_wheel.windows(2).any(|w| w[0].0 == w[1].0 && w[0].1 > w[1].1));
        assert!(by_wheel.windows(2).any(|w| w[1].0 - w[0].0 > 0) && by_wheel.last().unwrap().0 > 4 * SLOTS as u64);
    }
}
