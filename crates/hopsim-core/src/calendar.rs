//! Time wheel for everything that happens a few cycles ahead: phits arriving, credits coming
//! back, routers and NICs that must look again at their queues. Work per cycle is proportional
//! to what is scheduled, so idle switches cost nothing.

use crate::packet::Flit;

/// Something that happens at a cycle.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// The head phit of a flit reaches an input buffer; its tail `tail` cycles later than at
    /// one phit per cycle (slow link classes).
    FlitArrive { switch: u32, port: u16, vc: u8, packet: u32, flit: Flit, tail: u16 },
    /// Credits (phits of buffer space) come back to a switch output.
    Credit { switch: u32, port: u16, vc: u8, phits: u16 },
    /// Credits come back to a NIC's injection channel.
    NicCredit { server: u32, vc: u8, phits: u16 },
    /// The last phit of a flit reaches its destination NIC.
    Eject { server: u32, packet: u32, flit: Flit },
}

pub const NEVER: u64 = u64::MAX;
/// No visit scheduled (`router_at`, `nic_at`): beyond every cycle a run reaches.
const UNSET: u32 = u32::MAX;

/// What a switch's step may do to the future: schedule an event, and ask to be stepped again.
/// The calendar does both at once; a thread's outbox (engine/parallel.rs) records them so they
/// reach the calendar in the order one thread would have made them.
pub trait Schedule {
    fn schedule(&mut self, at: u64, now: u64, ev: Event);
    fn wake_router(&mut self, switch: usize, at: u64);
}

impl Schedule for Calendar {
    #[inline]
    fn schedule(&mut self, at: u64, now: u64, ev: Event) {
        Calendar::schedule(self, at, now, ev)
    }
    #[inline]
    fn wake_router(&mut self, switch: usize, at: u64) {
        Calendar::wake_router(self, switch, at)
    }
}

/// What a NIC's step may do to the future: schedule an event (its flit reaching the switch),
/// and ask to be stepped again.
pub trait NicSchedule {
    fn schedule(&mut self, at: u64, now: u64, ev: Event);
    fn wake_nic(&mut self, server: usize, at: u64);
}

impl NicSchedule for Calendar {
    #[inline]
    fn schedule(&mut self, at: u64, now: u64, ev: Event) {
        Calendar::schedule(self, at, now, ev)
    }
    #[inline]
    fn wake_nic(&mut self, server: usize, at: u64) {
        Calendar::wake_nic(self, server, at)
    }
}

/// NIC steps that run while other threads still step switches (engine/parallel.rs): their
/// wake-ups go to the calendar at once (the NICs' wheel is the run thread's alone), their
/// events wait in `events` until the switches' events are in, since one thread would have
/// scheduled those first.
pub struct Deferred<'a> {
    pub cal: &'a mut Calendar,
    pub events: &'a mut Vec<(u64, Event)>,
}

impl NicSchedule for Deferred<'_> {
    #[inline]
    fn schedule(&mut self, at: u64, _now: u64, ev: Event) {
        self.events.push((at, ev));
    }
    #[inline]
    fn wake_nic(&mut self, server: usize, at: u64) {
        self.cal.wake_nic(server, at)
    }
}

pub struct Calendar {
    mask: u64,
    events: Vec<Vec<Event>>,
    routers: Vec<Vec<u32>>,
    nics: Vec<Vec<u32>>,
    /// Earliest scheduled visit of each switch / NIC (`UNSET` when none). Cycles stay below
    /// 2^31 (spec::validate::MAX_CYCLES) and visits a horizon ahead of them, so 32 bits hold
    /// them: 4 bytes per switch and per server less to keep.
    router_at: Vec<u32>,
    nic_at: Vec<u32>,
    /// Entries in the events' and switches' wheels, and in the NICs' wheel: counted apart
    /// because a partitioned run fills the first two on one thread while another steps the
    /// NICs (engine/parallel.rs), so no field is written by both.
    pending: usize,
    pending_nics: usize,
}

impl Calendar {
    pub fn new(horizon: u64, switches: usize, servers: usize) -> Self {
        let size = (horizon + 2).next_power_of_two().max(64) as usize;
        Calendar {
            mask: size as u64 - 1,
            events: (0..size).map(|_| Vec::new()).collect(),
            routers: (0..size).map(|_| Vec::new()).collect(),
            nics: (0..size).map(|_| Vec::new()).collect(),
            router_at: vec![UNSET; switches],
            nic_at: vec![UNSET; servers],
            pending: 0,
            pending_nics: 0,
        }
    }

    pub fn horizon(&self) -> u64 {
        self.mask
    }

    #[inline]
    pub fn schedule(&mut self, at: u64, now: u64, ev: Event) {
        debug_assert!(at > now && at - now <= self.mask, "event at {at} from {now} beyond horizon {}", self.mask);
        self.events[(at & self.mask) as usize].push(ev);
        self.pending += 1;
    }

    #[inline]
    pub fn wake_router(&mut self, switch: usize, at: u64) {
        self.pending += wake(&mut self.router_at, &mut self.routers, self.mask, switch, at);
    }

    #[inline]
    pub fn wake_nic(&mut self, server: usize, at: u64) {
        self.pending_nics += wake(&mut self.nic_at, &mut self.nics, self.mask, server, at);
    }

    /// Events of cycle `now`; the caller hands the vector back with `return_events`.
    pub fn take_events(&mut self, now: u64) -> Vec<Event> {
        let v = std::mem::take(&mut self.events[(now & self.mask) as usize]);
        self.pending -= v.len();
        v
    }

    pub fn return_events(&mut self, now: u64, mut v: Vec<Event>) {
        v.clear();
        let slot = &mut self.events[(now & self.mask) as usize];
        if slot.is_empty() {
            *slot = v;
        }
    }

    /// Entries in the switches' wheel for `now` (stale ones included): about how many
    /// switches the cycle will step, before its credits wake more.
    pub fn routers_due(&self, now: u64) -> usize {
        self.routers[(now & self.mask) as usize].len()
    }

    /// Switches to visit at `now`, stale entries removed; each is marked as visited.
    pub fn take_routers(&mut self, now: u64, out: &mut Vec<u32>) {
        let slot = &mut self.routers[(now & self.mask) as usize];
        self.pending -= slot.len();
        out.clear();
        for s in slot.drain(..) {
            if self.router_at[s as usize] as u64 == now {
                self.router_at[s as usize] = UNSET;
                out.push(s);
            }
        }
    }

    pub fn take_nics(&mut self, now: u64, out: &mut Vec<u32>) {
        let slot = &mut self.nics[(now & self.mask) as usize];
        self.pending_nics -= slot.len();
        out.clear();
        for s in slot.drain(..) {
            if self.nic_at[s as usize] as u64 == now {
                self.nic_at[s as usize] = UNSET;
                out.push(s);
            }
        }
    }

    /// Nothing is scheduled: the network is idle until the next packet is generated.
    pub fn is_idle(&self) -> bool {
        self.pending == 0 && self.pending_nics == 0
    }

    /// All events still waiting, for the conservation checks at the end of a run.
    pub fn pending_events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().flatten()
    }
}

/// Visit `id` at `at` unless it is already due earlier: one entry per item in the wheel
/// (`visit_at` holds each item's earliest visit). Returns the entries added (0 or 1).
#[inline(always)]
fn wake(visit_at: &mut [u32], wheel: &mut [Vec<u32>], mask: u64, id: usize, at: u64) -> usize {
    if at < visit_at[id] as u64 {
        visit_at[id] = at as u32;
        wheel[(at & mask) as usize].push(id as u32);
        1
    } else {
        0
    }
}
