//! Which allocators a switch runs each cycle: the VC allocator, which gives waiting heads
//! output VCs (`router.vc_allocator`), and the switch allocator, which matches input ports to
//! output ports (`router.switch_allocator`); `router.islip_iterations` for either that is
//! iSLIP. Below both the spec, which names them, and the router, which runs them
//! (router/step.rs, router/allocators/).

/// `router.switch_allocator`. Every allocator sees the same requests: one per pair of input
/// and output port, from the input's first VC in its round-robin order whose flit asks for
/// that output and fits there; an input port and an output port each move one flit at a
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchAllocator {
    /// Separable, input first: each input port offers one of its VCs, round-robin over the
    /// VCs, and each output port grants one of the inputs offering to it, round-robin over
    /// the inputs (hopsim's default).
    InputFirst,
    /// Separable, output first: each output port grants one of the inputs asking for it,
    /// round-robin over the inputs, and each input accepts one of its grants, round-robin
    /// over the outputs; both pointers move only on an accepted grant (BookSim2's
    /// `separable_output_first`, which is one iteration of iSLIP).
    OutputFirst,
    /// iSLIP (McKeown 1999): request, grant and accept as `OutputFirst`, repeated over the
    /// ports left unmatched; pointers move only on grants accepted in the first iteration
    /// (BookSim2's `islip`, its default for both allocators).
    Islip { iterations: u8 },
    /// Wavefront (Tamir and Chi 1993): the diagonals of the input-by-output request matrix in
    /// turn, from a priority diagonal that moves one step each cycle the switch has requests,
    /// granting every request whose input and output are both still free (BookSim2's
    /// `wavefront`).
    Wavefront,
    /// Least recently used over the switch's input VCs: one priority list of them, walked
    /// from its head each cycle, granting each VC whose input and output ports are both still
    /// free; the winners go to the list's end (SST Merlin's `hr_router` default,
    /// `xbar_arb_lru`). Every VC with a flit that may cross asks, not only one per output.
    Lru,
}

/// `router.vc_allocator`. Every way a head asks only for output VCs that its routing and VC
/// policy allow, that no other packet owns and that have room for its flit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VcAllocator {
    /// Separable, input first: each head asks for one output VC, the best of those it may
    /// take (lowest candidate priority, then the most free space), and each output VC grants
    /// one head, round-robin over the switch's input VCs (hopsim's default).
    InputFirst,
    /// iSLIP over input VCs and output VCs: each head asks for every such output VC of its
    /// best candidate priority, each output VC grants one (round-robin from its pointer), each
    /// head accepts one grant (round-robin from its own pointer); BookSim2's default
    /// (`vc_allocator = islip`).
    Islip { iterations: u8 },
    /// None (SST Merlin's `hr_router`): a head takes the output VC it chooses as input-first
    /// would, without owning it, and asks for the crossbar at once; every head bound for a
    /// VC with room may ask, and switch allocation alone picks which crosses. Whole packets
    /// only (`flow_control = "vct"`): under wormhole two packets' flits would interleave in
    /// the VC.
    Unowned,
}

impl VcAllocator {
    pub const ALLOWED: &'static str = "allowed: \"input_first\" (each head asks for its best output VC; the default), \"islip\" (each head asks for every free output VC it may take, iSLIP matches them), \"none\" (a head takes its VC without owning it and asks for the crossbar, as SST Merlin; vct only)";

    /// Whether a head that wins an output VC holds it until its tail has crossed, keeping
    /// every other head from it.
    #[inline(always)]
    pub fn owns(self) -> bool {
        self != VcAllocator::Unowned
    }

    pub fn from_name(name: &str, iterations: u32) -> Option<Self> {
        match name {
            "input_first" => Some(VcAllocator::InputFirst),
            "islip" => Some(VcAllocator::Islip { iterations: iterations.clamp(1, MAX_ISLIP_ITERATIONS) as u8 }),
            "none" => Some(VcAllocator::Unowned),
            _ => None,
        }
    }
}

/// Most iterations `router.islip_iterations` takes: more than the ports of any switch
/// could not match more.
pub const MAX_ISLIP_ITERATIONS: u32 = 64;

impl SwitchAllocator {
    pub const ALLOWED: &'static str = "allowed: \"input_first\" (separable, inputs choose first; the default), \"output_first\" (separable, outputs grant first), \"islip\" (iSLIP, `router.islip_iterations` rounds), \"wavefront\", \"lru\" (least recently used input VC first, as SST Merlin)";

    /// The allocator `name` and, for iSLIP, `iterations` name; `None` for an unknown name.
    pub fn from_name(name: &str, iterations: u32) -> Option<Self> {
        match name {
            "input_first" => Some(SwitchAllocator::InputFirst),
            "output_first" => Some(SwitchAllocator::OutputFirst),
            "islip" => Some(SwitchAllocator::Islip { iterations: iterations.clamp(1, MAX_ISLIP_ITERATIONS) as u8 }),
            "wavefront" => Some(SwitchAllocator::Wavefront),
            "lru" => Some(SwitchAllocator::Lru),
            _ => None,
        }
    }

    /// Whether an input's requests for every output it has a flit for are gathered, rather
    /// than the one VC it offers (`InputFirst`).
    #[inline(always)]
    pub fn matches_all_requests(self) -> bool {
        self != SwitchAllocator::InputFirst
    }
}
