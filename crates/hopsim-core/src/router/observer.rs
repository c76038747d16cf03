//! What UGAL-G's global observer knows of the switches other than the one deciding: for
//! every port of the network, its backlog (the phits queued behind it, as
//! `Congestion::port_queue` counts them, plus those waiting for it in its switch's input
//! buffers, `Routers::waiting_for`) as it stood at the end of the last cycle.
//!
//! Why a cycle old: a decision is taken while the cycle's arrivals and credits are
//! delivered, and what another switch has received by then depends on how the whole
//! network's deliveries interleave, which only a single thread walking every switch in
//! calendar order knows. The end of a cycle is a state every thread and every MPI rank
//! agrees on: threads deliver and step apart, ranks send the backlogs that changed with the
//! cycle's exchange, and every way of running a spec takes the same decisions. Nothing
//! physical learns of a remote switch sooner than a cycle, so the idealized observer stays an
//! upper bound on what a router could know. The deciding switch reads its own ports as they
//! are (`Congestion::port_queue`, `waiting_for`), as UGAL-L does.
//!
//! A switch's ports change only when it receives an arrival or a credit or when it steps, so
//! after each cycle only the switches that did are read again (`observe`), and of those only
//! the queues marked as changed (`Routers::mark_queue`); the phits waiting in input buffers
//! are summed again for each, reading waiter bits only where a head waits.

use super::Routers;
use crate::route::QueueReach;

impl Routers {
    /// Keep the backlogs of the whole network's ports from now on, all zero (an empty
    /// network; `observe_held` reads a restored one).
    pub fn start_observing(&mut self) {
        self.observed = vec![0; self.network_port_count()];
        self.observed_queue = vec![0; self.ports.len()];
        self.queue_marks = vec![false; self.ports.len()];
    }

    /// Whether the backlogs are kept (routing reads other switches' queues).
    pub fn observing(&self) -> bool {
        !self.observed.is_empty()
    }

    /// The backlog of port `port` of `switch`, any switch of the network, at the end of the
    /// last cycle.
    #[inline]
    pub fn observed(&self, switch: usize, port: usize) -> u32 {
        self.observed[self.network_port(switch, port)]
    }

    /// The backlog of port `port` of `switch` (a held one) as it is now.
    pub fn backlog(&self, switch: usize, port: usize, reach: QueueReach) -> u32 {
        self.queue_on(switch, port, u32::MAX, reach) + self.waiting_for(switch, port)
    }

    /// Read again the network ports of `switches` (held ones, ascending, each once), and add
    /// to `changed` each (network port, backlog) that differs from what was kept.
    pub fn observe(&mut self, switches: &[u32], reach: QueueReach, changed: &mut Vec<(u32, u32)>) {
        // Room kept from cycle to cycle: this runs after every cycle.
        let (mut phits, mut backlogs) = std::mem::take(&mut self.observe_room);
        for &s in switches {
            let s = s as usize;
            self.read_marked_queues(s, reach);
            self.backlogs_of(s, &mut phits, &mut backlogs);
            let first = self.network_port(s, 0);
            for (p, &now) in backlogs.iter().enumerate() {
                if self.observed[first + p] != now {
                    self.observed[first + p] = now;
                    changed.push(((first + p) as u32, now));
                }
            }
        }
        self.observe_room = (phits, backlogs);
    }

    /// Read again the queues of the ports of held switch `s` marked since the last reading
    /// (`mark_queue`), and clear their marks.
    fn read_marked_queues(&mut self, s: usize, reach: QueueReach) {
        let (first, net) = (self.first_port(s), self.network_ports_of(s));
        for gp in self.ports_of(s) {
            if std::mem::take(&mut self.queue_marks[gp]) && gp - first < net {
                self.observed_queue[gp] = self.queue_on(s, gp - first, u32::MAX, reach);
            }
        }
    }

    /// `backlog` of every network port of held switch `s`, into `out`, reading each input
    /// VC's buffer once (`phits` is room for that) where port by port would read it once per
    /// port its head waits for: a cycle reads every switch it touched.
    fn backlogs_of(&self, s: usize, phits: &mut Vec<u32>, out: &mut Vec<u32>) {
        const UNREAD: u32 = u32::MAX;
        let first_vc = self.first_port(s) * self.vcs;
        phits.clear();
        phits.resize(self.num_ports(s) * self.vcs, UNREAD);
        // Only the input VCs whose heads wait or cross are read, most of them once.
        let mut input = |bit: usize| {
            if phits[bit] == UNREAD {
                phits[bit] = self.input_phits(first_vc + bit);
            }
            phits[bit]
        };
        let net = self.network_ports_of(s);
        out.clear();
        let first = self.first_port(s);
        out.extend(&self.observed_queue[first..first + net]);
        self.for_each_routed(s, |gv, to| {
            if to < net {
                out[to] += input(gv - first_vc);
            }
        });
        if self.has_waiting_heads(s) {
            let base = self.first_port(s);
            for (p, backlog) in out.iter_mut().enumerate() {
                self.for_each_waiting(base, base + p, |bit| *backlog += input(bit));
            }
        }
    }

    /// Read every held switch again (a run resumed from a checkpoint, which does not keep
    /// the backlogs): every (network port, backlog) of theirs that is not zero.
    pub fn observe_held(&mut self, reach: QueueReach) -> Vec<(u32, u32)> {
        let held: Vec<u32> = self.held().map(|s| s as u32).collect();
        self.queue_marks.fill(true);
        let mut changed = Vec::new();
        self.observe(&held, reach, &mut changed);
        changed
    }

    /// The first held port whose kept backlog is not its backlog now, if any: between two
    /// cycles none may be (the conservation check asks; `observe` must have read every
    /// switch a cycle touched).
    pub fn observed_stale(&self, reach: QueueReach) -> Option<String> {
        if !self.observing() {
            return None;
        }
        for s in self.held() {
            for p in 0..self.network_ports_of(s) {
                let (kept, now) = (self.observed(s, p), self.backlog(s, p, reach));
                if kept != now {
                    return Some(format!("switch {s} port {p}: the backlog kept for routing is {kept} phits, {now} now"));
                }
            }
        }
        None
    }

    /// Take in backlogs read elsewhere (another rank's switches).
    pub fn set_observed(&mut self, changed: &[(u32, u32)]) -> Result<(), String> {
        let ports = self.observed.len();
        for &(np, backlog) in changed {
            *self.observed.get_mut(np as usize).ok_or_else(|| format!("a backlog of port {np}, beyond the network's {ports} ports"))? = backlog;
        }
        Ok(())
    }
}
