//! How a switch stages allocation (`router.vc_allocation`, `router.next_head_routing`):
//! whether a head wins its output VC and the crossbar in one cycle or in two stages, and
//! whether the next packet of an input VC is routed while the packet ahead of it is still
//! leaving (docs/model.md, "Allocation stages"). Below both the spec and the router, which
//! read it.

/// `router.vc_allocation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VcAllocation {
    /// VC and switch allocation in the same cycle: a head that wins an output VC may cross the
    /// crossbar in that cycle.
    WithSwitch,
    /// VC allocation is a pipeline stage of its own: a head that wins an output VC at cycle `t`
    /// asks for the crossbar from `t + 1` (a router without speculative switch allocation).
    BeforeSwitch,
}

impl VcAllocation {
    pub const ALLOWED: &'static str =
        "allowed: \"with_switch\" (VC and switch allocation in one cycle), \"before_switch\" (VC allocation is its own stage, the switch is asked from the next cycle)";

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "with_switch" => Some(VcAllocation::WithSwitch),
            "before_switch" => Some(VcAllocation::BeforeSwitch),
            _ => None,
        }
    }
}

/// `router.next_head_routing`: when the head of the next packet in an input VC starts its
/// route computation (the `pipeline_delay` cycles before it may ask for an output VC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextHeadRouting {
    /// When it arrives, while the packet ahead of it may still be leaving (look-ahead
    /// routing, or per-packet route state a router keeps for every buffered packet).
    OnArrival,
    /// Only in the cycle after the tail ahead of it has won the crossbar: the input VC holds
    /// the route state of one packet at a time.
    AfterTail,
    /// Timed as `OnArrival`, but its route, and any adaptive choice, is taken only when it
    /// reaches the front of its input VC, from the queues as they are then (SST Merlin's
    /// routers route the packet at a VC's front). A head that arrives at the front is routed
    /// as it arrives.
    AtFront,
}

impl NextHeadRouting {
    pub const ALLOWED: &'static str =
        "allowed: \"on_arrival\" (routed while the packet ahead still leaves), \"after_tail\" (routed once the tail ahead has crossed the crossbar), \"at_front\" (timed as on_arrival, its route taken once it reaches the front of its VC, as SST Merlin)";

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "on_arrival" => Some(NextHeadRouting::OnArrival),
            "after_tail" => Some(NextHeadRouting::AfterTail),
            "at_front" => Some(NextHeadRouting::AtFront),
            _ => None,
        }
    }
}

/// The allocation staging of every switch of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Staging {
    pub vc_allocation: VcAllocation,
    pub next_head: NextHeadRouting,
}

impl Staging {
    /// What an input VC's front packet waits for after it has won an output VC at `now`:
    /// the first cycle it may ask for the crossbar.
    #[inline(always)]
    pub fn switch_from(&self, now: u64) -> u64 {
        match self.vc_allocation {
            VcAllocation::WithSwitch => now,
            VcAllocation::BeforeSwitch => now + 1,
        }
    }

    /// Whether a head behind another in its input VC is routed only once it reaches the
    /// front (`NextHeadRouting::AtFront`).
    #[inline(always)]
    pub fn routes_at_front(&self) -> bool {
        self.next_head == NextHeadRouting::AtFront
    }

    /// Cycles a switch adds at zero load beyond `pipeline_delay` and the crossbar's one.
    pub fn zero_load_extra(&self) -> u32 {
        match self.vc_allocation {
            VcAllocation::WithSwitch => 0,
            VcAllocation::BeforeSwitch => 1,
        }
    }

    /// The first cycle the next head of an input VC whose tail crossed the crossbar at `now`
    /// may ask for an output VC, given `pipeline_delay` cycles of route computation; 0 when it
    /// is bound only by its own arrival.
    #[inline(always)]
    pub fn next_head_from(&self, now: u64, pipeline_delay: u32) -> u64 {
        match self.next_head {
            NextHeadRouting::OnArrival | NextHeadRouting::AtFront => 0,
            NextHeadRouting::AfterTail => now + 1 + pipeline_delay as u64,
        }
    }
}
