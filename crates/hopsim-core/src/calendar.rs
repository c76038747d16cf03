//! Time wheel for everything that happens a few cycles ahead: phits arriving, credits coming
//! back, routers and NICs that must look again at their queues. Work per cycle is proportional
//! to what is scheduled, so idle switches cost nothing.

use crate::packet::Flit;

/// Something that happens at a cycle.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
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

impl Event {
    /// The switch the event is delivered to, `None` for a server's (NIC credits, ejections):
    /// the two kinds share nothing, so each part of a cycle takes its own.
    #[inline(always)]
    pub fn switch(&self) -> Option<usize> {
        match *self {
            Event::FlitArrive { switch, .. } | Event::Credit { switch, .. } => Some(switch as usize),
            Event::NicCredit { .. } | Event::Eject { .. } => None,
        }
    }
}

pub const NEVER: u64 = u64::MAX;
/// No visit scheduled (`router_at`, `nic_at`): beyond every cycle a run reaches.
const UNSET: u32 = u32::MAX;

/// What a switch's deliveries and step may do to the future: schedule an event, ask for the
/// switch to be stepped again, and step it in the current cycle although its visit was not
/// due then. The calendar does these at once; a thread's outbox (engine/parallel.rs) records
/// them so they reach the calendar in the order one thread would have made them.
pub trait Schedule {
    fn schedule(&mut self, at: u64, now: u64, ev: Event);
    fn wake_router(&mut self, switch: usize, at: u64);
    /// `switch` steps in the current cycle, whose visits were already taken (an arrival or a
    /// credit delivered in that cycle needs it): a later visit it was due drops, as if it had
    /// been moved to the current cycle, since the step asks again for what it still needs.
    fn step_now(&mut self, switch: usize);
}

impl Schedule for Calendar {
    #[inline]
    fn schedule(&mut self, at: u64, now: u64, ev: Event) {
        Calendar::schedule(self, at, now, ev)
    }
    // Forced inline: left to the inliner the step called it out of line, three times in four
    // packet-hops, for 42 instructions (docs/benchmark-log.md).
    #[inline(always)]
    fn wake_router(&mut self, switch: usize, at: u64) {
        Calendar::wake_router(self, switch, at)
    }
    #[inline]
    fn step_now(&mut self, switch: usize) {
        Calendar::step_now(self, switch)
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

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Calendar {
    mask: u64,
    events: Vec<Vec<Event>>,
    /// Emptied event lists, handed to the next slot that gets an event: only the slots with
    /// events pending hold a list, so the wheel's lists take the memory of the few cycles
    /// ahead that have events, not of all its slots (on the 32x32x32 torus the 64 slots'
    /// lists had grown to 16,384 events each, 16 MB; 16 or 17 slots have events at once).
    spare: Vec<Vec<Event>>,
    /// Switches and NICs to visit, cycle by cycle: each cycle visits them in ascending number
    /// (`Due`), whatever order their wake-ups came in.
    routers: Due,
    nics: Due,
    /// Entries in the events' and switches' wheels, and in the NICs' wheel: counted apart
    /// because a partitioned run fills the first two on one thread while another steps the
    /// NICs (engine/parallel.rs), so no field is written by both.
    pending: usize,
    pending_nics: usize,
    /// Every switch and NIC is visited at every cycle, due or not (`visit_everything`).
    visit_all: bool,
}

impl Calendar {
    pub fn new(horizon: u64, switches: usize, servers: usize) -> Self {
        Self::holding(horizon, 0..switches, 0..servers)
    }

    /// A calendar that visits only the switches `switches` and the NICs of the servers
    /// `servers` (an MPI rank's): its wheels take memory for those alone.
    pub fn holding(horizon: u64, switches: std::ops::Range<usize>, servers: std::ops::Range<usize>) -> Self {
        let size = (horizon + 2).next_power_of_two().max(64) as usize;
        Calendar {
            mask: size as u64 - 1,
            events: (0..size).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            routers: Due::new(size, switches),
            nics: Due::new(size, servers),
            pending: 0,
            pending_nics: 0,
            visit_all: false,
        }
    }

    /// From now on, visit every switch and every NIC at every cycle, whether a wake-up asked
    /// for it or not (tests: a switch or NIC that nothing woke must have nothing to do).
    pub fn visit_everything(&mut self) {
        self.visit_all = true;
    }

    pub fn visits_everything(&self) -> bool {
        self.visit_all
    }

    /// Bytes one slot of the wheel takes to hold which of `items` switches or NICs are due
    /// (the memory estimate, engine/memory.rs).
    pub fn due_bytes_per_slot(items: usize) -> u64 {
        let (words, summary_words) = Due::words(items);
        (8 * (words + summary_words) + std::mem::size_of::<u32>()) as u64
    }

    pub fn horizon(&self) -> u64 {
        self.mask
    }

    #[inline]
    pub fn schedule(&mut self, at: u64, now: u64, ev: Event) {
        self.slot(at, now).push(ev);
        self.pending += 1;
    }

    /// `events`, in their order, after those already due at `at`.
    pub fn schedule_all(&mut self, at: u64, now: u64, events: &[Event]) {
        self.slot(at, now).extend_from_slice(events);
        self.pending += events.len();
    }

    /// The list of the events due at `at`, given a spare allocation if it has none.
    #[inline(always)]
    fn slot(&mut self, at: u64, now: u64) -> &mut Vec<Event> {
        debug_assert!(at > now && at - now <= self.mask, "event at {at} from {now} beyond horizon {}", self.mask);
        let slot = &mut self.events[(at & self.mask) as usize];
        if slot.capacity() == 0 {
            if let Some(list) = self.spare.pop() {
                *slot = list;
            }
        }
        slot
    }

    #[inline(always)]
    pub fn wake_router(&mut self, switch: usize, at: u64) {
        self.pending += self.routers.wake(self.mask, switch, at);
    }

    /// See `Schedule::step_now`. The dropped visit's entry stays in its slot, stale, and is
    /// counted off when that slot is taken.
    #[inline]
    pub fn step_now(&mut self, switch: usize) {
        self.routers.at[switch - self.routers.first] = UNSET;
    }

    #[inline]
    pub fn wake_nic(&mut self, server: usize, at: u64) {
        self.pending_nics += self.nics.wake(self.mask, server, at);
    }

    /// Events of cycle `now`; the caller hands the vector back with `return_events`.
    pub fn take_events(&mut self, now: u64) -> Vec<Event> {
        let v = std::mem::take(&mut self.events[(now & self.mask) as usize]);
        self.pending -= v.len();
        v
    }

    pub fn return_events(&mut self, mut v: Vec<Event>) {
        v.clear();
        if v.capacity() > 0 {
            self.spare.push(v);
        }
    }

    /// Entries in the switches' wheel for `now` (stale ones included): about how many
    /// switches the cycle will step, before its credits wake more.
    pub fn routers_due(&self, now: u64) -> usize {
        self.routers.count[(now & self.mask) as usize] as usize
    }

    /// Switches to visit at `now`, in ascending number, stale entries removed; each is
    /// marked as visited.
    pub fn take_routers(&mut self, now: u64, out: &mut Vec<u32>) {
        self.pending -= self.routers.take(now, self.mask, out);
        if self.visit_all {
            self.routers.all(out);
        }
    }

    /// NICs (by server) to visit at `now`, in ascending number.
    pub fn take_nics(&mut self, now: u64, out: &mut Vec<u32>) {
        self.pending_nics -= self.nics.take(now, self.mask, out);
        if self.visit_all {
            self.nics.all(out);
        }
    }

    /// Nothing is scheduled: the network is idle until the next packet is generated.
    pub fn is_idle(&self) -> bool {
        self.pending == 0 && self.pending_nics == 0
    }

    /// How many events each cycle after `now` holds, to take later those scheduled since
    /// (`take_scheduled_since`).
    pub fn event_marks(&self, now: u64) -> Vec<usize> {
        (1..=self.mask).map(|k| self.events[((now + k) & self.mask) as usize].len()).collect()
    }

    /// Move the events scheduled for the cycles after `now` since `marks` was taken into
    /// `out`, with their cycles: cycle by cycle, each cycle's in the order they were
    /// scheduled (an MPI rank's steps on several threads, engine/ranks).
    pub fn take_scheduled_since(&mut self, now: u64, marks: &[usize], out: &mut Vec<(u64, Event)>) {
        for (k, &mark) in (1..=self.mask).zip(marks) {
            let slot = &mut self.events[((now + k) & self.mask) as usize];
            if slot.len() > mark {
                self.pending -= slot.len() - mark;
                out.extend(slot.drain(mark..).map(|ev| (now + k, ev)));
                if slot.is_empty() {
                    self.spare.push(std::mem::take(slot));
                }
            }
        }
    }

    /// All events still waiting, for the conservation checks at the end of a run.
    pub fn pending_events(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().flatten()
    }
}

/// The items (switches or NICs) to visit at each cycle of the wheel, one bit set per cycle,
/// so that a cycle visits them in ascending number: that order is the model's (docs/model.md),
/// it does not depend on how the wake-ups were made nor on how many threads made them, and
/// the steps of a large network then walk its records in the order they sit in memory (on
/// the million-node torus that nearly doubles the cycles per second, docs/benchmark-log.md).
#[derive(serde::Serialize, serde::Deserialize)]
struct Due {
    /// The first item held: bits and `at` are of items `first..first + at.len()`.
    first: usize,
    /// Words of bits per slot, and the slots' bits one after the other.
    words: usize,
    bits: Vec<u64>,
    /// Per slot, bit `w` set when word `w` of its bits may be non-zero: a cycle with few
    /// visits on a large network reads a few words, not all of them.
    summary_words: usize,
    summary: Vec<u64>,
    /// Bits set per slot (stale ones included).
    count: Vec<u32>,
    /// Earliest scheduled visit of each item (`UNSET` when none). Cycles stay below 2^31
    /// (spec::validate::MAX_CYCLES) and visits a horizon ahead of them, so 32 bits hold them.
    at: Vec<u32>,
}

impl Due {
    /// Words of bits, and of summary bits, per slot for `items` items.
    fn words(items: usize) -> (usize, usize) {
        let words = items.div_ceil(64).max(1);
        (words, words.div_ceil(64))
    }

    fn new(slots: usize, held: std::ops::Range<usize>) -> Self {
        let (words, summary_words) = Self::words(held.len());
        Due { first: held.start, words, bits: vec![0; slots * words], summary_words, summary: vec![0; slots * summary_words], count: vec![0; slots], at: vec![UNSET; held.len()] }
    }

    /// Visit `id` at `at` unless it is already due earlier. Returns the entries added (0 or
    /// 1): an item due again at a cycle whose bit it still holds from an earlier wake-up
    /// adds none.
    #[inline(always)]
    fn wake(&mut self, mask: u64, id: usize, at: u64) -> usize {
        let id = id - self.first;
        if at >= self.at[id] as u64 {
            return 0;
        }
        self.at[id] = at as u32;
        let slot = (at & mask) as usize;
        let (w, bit) = (id / 64, 1u64 << (id % 64));
        let word = &mut self.bits[slot * self.words + w];
        if *word & bit != 0 {
            return 0;
        }
        *word |= bit;
        self.summary[slot * self.summary_words + w / 64] |= 1 << (w % 64);
        self.count[slot] += 1;
        1
    }

    /// The items due at `now`, ascending, into `out`; returns the entries the slot held.
    fn take(&mut self, now: u64, mask: u64, out: &mut Vec<u32>) -> usize {
        let slot = (now & mask) as usize;
        out.clear();
        let bits = &mut self.bits[slot * self.words..(slot + 1) * self.words];
        for (k, summary) in self.summary[slot * self.summary_words..(slot + 1) * self.summary_words].iter_mut().enumerate() {
            let mut words = std::mem::take(summary);
            while words != 0 {
                let w = k * 64 + words.trailing_zeros() as usize;
                words &= words - 1;
                let mut set = std::mem::take(&mut bits[w]);
                while set != 0 {
                    let id = w * 64 + set.trailing_zeros() as usize;
                    set &= set - 1;
                    if self.at[id] as u64 == now {
                        self.at[id] = UNSET;
                        out.push((self.first + id) as u32);
                    }
                }
            }
        }
        std::mem::take(&mut self.count[slot]) as usize
    }

    /// Every item, ascending, into `out` (`Calendar::visit_everything`); visits due later stay.
    fn all(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.first as u32..(self.first + self.at.len()) as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_visits_its_switches_in_ascending_number() {
        let mut cal = Calendar::new(10, 200, 3);
        for s in [150, 3, 64, 199, 0, 63, 65, 3] {
            cal.wake_router(s, 5);
        }
        assert_eq!(cal.routers_due(5), 7);
        let mut out = Vec::new();
        cal.take_routers(5, &mut out);
        assert_eq!(out, [0, 3, 63, 64, 65, 150, 199]);
        assert!(cal.is_idle());
    }

    #[test]
    fn a_visit_moved_earlier_leaves_a_stale_entry_that_is_skipped() {
        let mut cal = Calendar::new(10, 100, 1);
        let mut out = Vec::new();
        cal.wake_router(70, 9);
        cal.wake_router(70, 7); // earlier: the cycle-9 entry is stale
        cal.wake_router(70, 8); // later than the pending visit: nothing added
        cal.wake_router(2, 9);
        cal.take_routers(7, &mut out);
        assert_eq!(out, [70]);
        cal.take_routers(8, &mut out);
        assert!(out.is_empty());
        cal.take_routers(9, &mut out);
        assert_eq!(out, [2]);
        assert!(cal.is_idle());
        // Due again at 9 + 64 (the same slot of the wheel) after its visit at 9.
        cal.wake_router(2, 9 + 64);
        cal.take_routers(9 + 64, &mut out);
        assert_eq!(out, [2]);
    }

    #[test]
    fn a_list_of_events_goes_after_those_already_due_in_its_order() {
        let mut cal = Calendar::new(10, 8, 1);
        let credit = |phits| Event::Credit { switch: 1, port: 0, vc: 0, phits };
        cal.schedule(4, 1, credit(1));
        cal.schedule_all(4, 1, &[credit(2), credit(3)]);
        cal.schedule_all(5, 1, &[]);
        cal.schedule(4, 1, credit(4));
        let due: Vec<u16> = cal.take_events(4).iter().map(|e| if let Event::Credit { phits, .. } = *e { phits } else { 0 }).collect();
        assert_eq!(due, [1, 2, 3, 4]);
        assert!(cal.is_idle());
    }

    #[test]
    fn a_calendar_holding_a_range_visits_its_items_by_their_numbers() {
        let mut cal = Calendar::holding(10, 100..300, 50..60);
        for s in [299, 100, 164, 163] {
            cal.wake_router(s, 4);
        }
        cal.wake_router(164, 3);
        cal.step_now(164);
        cal.wake_nic(59, 4);
        cal.wake_nic(50, 4);
        let mut out = Vec::new();
        cal.take_routers(3, &mut out);
        assert!(out.is_empty(), "its visit at 3 dropped: {out:?}");
        cal.take_routers(4, &mut out);
        assert_eq!(out, [100, 163, 299]);
        cal.take_nics(4, &mut out);
        assert_eq!(out, [50, 59]);
        assert!(cal.is_idle());
        cal.visit_everything();
        cal.take_nics(5, &mut out);
        assert_eq!(out, (50..60).collect::<Vec<u32>>());
    }

    #[test]
    fn nics_are_visited_in_ascending_number_too() {
        let mut cal = Calendar::new(4, 1, 300);
        for s in [299, 7, 128, 6] {
            cal.wake_nic(s, 1);
        }
        let mut out = Vec::new();
        cal.take_nics(1, &mut out);
        assert_eq!(out, [6, 7, 128, 299]);
        assert!(cal.is_idle());
    }
}
