//! Routing algorithms: which output ports a packet may take at a switch.
//!
//! A routing algorithm fills a `Candidates` list when a packet's head arrives at a switch; the
//! VC policy (`crate::vc`) then says which VCs each candidate may use, and the allocator picks
//! among the feasible ones: lowest `priority` first, then the most free space.

mod aries_minimal;
mod dor;
mod dragonfly_lgl;
mod dragonfly_plus_ugd;
mod fat_tree_updown;
mod hyperx_dor;
mod min_adaptive;
mod minimal;
mod rdr;
mod romm;
mod valiant;
mod valiant_low_diameter;

use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use crate::topology::Topology;
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;

pub type Rng = Pcg64Mcg;

/// What travels with a packet for routing and VC decisions.
#[derive(Debug, Clone, Copy, Default)]
pub struct RouteState {
    pub src_switch: u32,
    pub dst_switch: u32,
    /// Switch-to-switch hops taken so far.
    pub hops: u16,
    /// Hops taken over local / global links (topologies with link classes).
    pub local_hops: u8,
    pub global_hops: u8,
    /// 0 on the way to a Valiant intermediate (or minimal), 1 after it.
    pub phase: u8,
    /// Global hops taken before the current phase began (set at the intermediate switch), so
    /// VC policies can tell a phase's local hops before its global hop from those after.
    pub phase_start_global: u8,
    /// Whether the packet was routed through an intermediate switch. Valiant on low-diameter
    /// networks leaves it false for a packet whose drawn intermediate is its source or
    /// destination switch (routed minimally; `intermediate` still says which was drawn).
    pub valiant: bool,
    pub intermediate: u32,
    /// Dimensions whose wrap-around (dateline) link this packet has crossed in this phase.
    pub wrapped: u32,
    /// Random per-packet choice for dimensions exactly half-way round a ring: bit set = go -.
    /// On Aries the same bits pick the packet's link of the global bundle (`aries_minimal`).
    pub tie_dirs: u32,
    /// VC the packet occupies now.
    pub vc: u8,
}

/// One hop a packet may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hop {
    pub port: u16,
    /// Dimension moved along (cartesian topologies), `NO_DIM` otherwise.
    pub dim: u8,
    /// The hop crosses a dateline (the wrap-around link of a ring).
    pub wraps: bool,
    /// The minimal path along this dimension still has a wrap-around link ahead (this hop included).
    pub wrap_ahead: bool,
    /// Link class: 0 local, 1 global.
    pub class: u8,
    /// The hop goes to a server (ejection).
    pub eject: bool,
    /// The hop belongs to the escape sub-network (Duato): the DOR hop, offered on the escape
    /// VCs; other hops of adaptive routings go on the adaptive VCs (`vc::escape`).
    pub escape: bool,
}

pub const NO_DIM: u8 = u8::MAX;

#[derive(Debug, Clone, Copy, Default)]
pub struct Candidate {
    pub hop: Hop,
    /// Allowed VCs at the next buffer, a bit per VC; filled by the VC policy.
    pub vcs: u32,
    /// Lower is preferred; equal priorities are chosen by free space (adaptive choice).
    pub priority: u8,
}

pub const MAX_CANDIDATES: usize = 8;

/// `len` first, so it sits next to the first candidates (see `Packet`).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Candidates {
    pub len: u8,
    pub list: [Candidate; MAX_CANDIDATES],
}

impl Candidates {
    pub fn clear(&mut self) {
        self.len = 0;
    }
    pub fn push(&mut self, hop: Hop, priority: u8) {
        debug_assert!((self.len as usize) < MAX_CANDIDATES);
        self.list[self.len as usize] = Candidate { hop, vcs: 0, priority };
        self.len += 1;
    }
    pub fn as_slice(&self) -> &[Candidate] {
        &self.list[..self.len as usize]
    }
    pub fn as_mut_slice(&mut self) -> &mut [Candidate] {
        &mut self.list[..self.len as usize]
    }
}

pub trait Routing: Send + Sync {
    fn name(&self) -> &'static str;
    /// Called once when a packet enters the network (choose intermediates, tie breaks).
    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.tie_dirs = rand::Rng::gen(rng);
    }
    /// Candidate network hops at `switch` towards `state.dst_switch`; never called at the
    /// destination switch (the engine ejects there).
    fn route(&self, switch: usize, state: &mut RouteState, rng: &mut Rng, out: &mut Candidates);
    /// VC policies under which this routing is deadlock-free on every topology it accepts
    /// (`none`, deliberately unsafe, is always accepted).
    fn sound_policies(&self) -> &'static [&'static str];
}

pub const ALGORITHMS: &str = "dor, minimal, min_adaptive, rdr, romm, valiant";

/// The minimal next hop on a low-diameter topology: one implementation per topology
/// (`hyperx_dor`, `dragonfly_lgl`, `dragonfly_plus_ugd`, `fat_tree_updown`), shared by the
/// `minimal` routing and by each phase of `valiant` there.
pub trait MinimalStep: Send + Sync {
    /// Draw the packet's own choices, if the step keeps any in its route state (so that
    /// every hop of one packet follows the same minimal path, e.g. the global link on Aries).
    fn on_inject(&self, _state: &mut RouteState, _rng: &mut Rng) {}
    /// The next hop from `cur` towards `target` (`cur != target`) along a minimal path.
    fn hop(&self, cur: usize, target: usize, state: &RouteState, rng: &mut Rng) -> Hop;
    /// VC policies under which minimal routing (`valiant` = false) or Valiant with this step in
    /// each phase (`valiant` = true) is deadlock-free.
    fn sound_policies(&self, valiant: bool) -> &'static [&'static str];
}

/// The policies for Valiant on low-diameter networks: VC classes per phase or per hop.
pub const LOW_DIAMETER_POLICIES: &[&str] = &["ladder", "ladder_reuse", "min_first", "min_last", "min_both"];

/// The minimal step of a low-diameter topology, if it is one.
pub fn minimal_step(topo: &dyn Topology) -> Option<Arc<dyn MinimalStep>> {
    if let Some(t) = topo.hyperx() {
        return Some(Arc::new(hyperx_dor::HyperXDor::new(t.clone())));
    }
    if let Some(t) = topo.dragonfly() {
        return Some(Arc::new(dragonfly_lgl::DragonflyLgl::new(t.clone())));
    }
    if let Some(t) = topo.dragonfly_plus() {
        return Some(Arc::new(dragonfly_plus_ugd::DragonflyPlusUgd::new(t.clone())));
    }
    if let Some(t) = topo.fat_tree() {
        return Some(Arc::new(fat_tree_updown::FatTreeUpDown::new(t.clone())));
    }
    if let Some(t) = topo.aries() {
        return Some(Arc::new(aries_minimal::AriesMinimal::new(t.clone())));
    }
    None
}

pub fn build(spec: &Spec, topo: &Arc<dyn Topology>) -> SpecResult<Arc<dyn Routing>> {
    let name = spec.routing.algorithm.as_str();
    let unknown = || SpecError::new("routing.algorithm", format!("{name:?}"), format!("unknown routing algorithm; allowed: {ALGORITHMS}"));
    if spec.routing.valiant_redraw && !(name == "valiant" && minimal_step(topo.as_ref()).is_some()) {
        return Err(SpecError::new(
            "routing.valiant_redraw",
            "true",
            "only used by routing.algorithm = \"valiant\" on hyperx, dragonfly, dragonfly_plus and aries",
        ));
    }
    if let Some(step) = minimal_step(topo.as_ref()) {
        let ld = "hyperx, dragonfly, dragonfly_plus, fat_tree, aries";
        return match name {
            "minimal" => Ok(Arc::new(minimal::Minimal::new("minimal", step))),
            "dor" if topo.hyperx().is_some() => Ok(Arc::new(minimal::Minimal::new("dor", step))),
            "valiant" if topo.fat_tree().is_none() => {
                Ok(Arc::new(valiant_low_diameter::LowDiameterValiant::new(topo.as_ref(), step, spec.routing.valiant_redraw)))
            }
            "valiant" => Err(not_for(name, topo.as_ref(), "torus, mesh, hyperx, dragonfly, dragonfly_plus, aries")),
            "dor" => Err(not_for(name, topo.as_ref(), "torus, mesh, hyperx")),
            "rdr" | "romm" | "min_adaptive" => Err(not_for(name, topo.as_ref(), "torus, mesh")),
            _ if ALGORITHMS.split(", ").any(|a| a == name) => Err(not_for(name, topo.as_ref(), ld)),
            _ => Err(unknown()),
        };
    }
    match name {
        "minimal" => Err(not_for(name, topo.as_ref(), "hyperx, dragonfly, dragonfly_plus, fat_tree, aries")),
        "dor" => Ok(Arc::new(dor::Dor::new(topo.clone()).ok_or_else(|| not_for(name, topo.as_ref(), "torus, mesh"))?)),
        "rdr" => Ok(Arc::new(rdr::Rdr::new(topo.clone()).ok_or_else(|| not_for(name, topo.as_ref(), "torus, mesh"))?)),
        "valiant" => Ok(Arc::new(valiant::Valiant::new(topo.clone()).ok_or_else(|| not_for(name, topo.as_ref(), "torus, mesh"))?)),
        "romm" => Ok(Arc::new(romm::Romm::new(topo.clone()).ok_or_else(|| not_for(name, topo.as_ref(), "torus, mesh"))?)),
        "min_adaptive" => {
            Ok(Arc::new(min_adaptive::MinAdaptive::new(topo.clone()).ok_or_else(|| not_for(name, topo.as_ref(), "torus, mesh"))?))
        }
        _ => Err(unknown()),
    }
}

fn not_for(algorithm: &str, topo: &dyn Topology, allowed: &str) -> SpecError {
    SpecError::new(
        "routing.algorithm",
        format!("{algorithm:?}"),
        format!("not defined on topology.kind = {:?}; it needs one of: {allowed}", topo.kind()),
    )
}

/// Reject a VC policy under which `routing` could deadlock.
pub fn check_policy(spec: &Spec, routing: &dyn Routing) -> SpecResult<()> {
    let policy = crate::vc::resolve(spec);
    let sound = routing.sound_policies();
    if policy == "none" || sound.contains(&policy) {
        return Ok(());
    }
    Err(SpecError::new(
        "routing.vc_policy",
        format!("{policy:?}"),
        format!("routing.algorithm = {:?} is not deadlock-free with it; use one of: {}", routing.name(), sound.join(", ")),
    ))
}

/// The DOR hop from `cur` towards `target` (lowest dimension not yet corrected), if any.
#[inline]
pub fn dor_hop(grid: &crate::topology::Cartesian, cur: usize, target: usize, tie_dirs: u32) -> Option<Hop> {
    (0..grid.n()).find(|&dim| grid.coord(cur, dim) != grid.coord(target, dim)).map(|dim| {
        let dir = grid_direction(grid, cur, target, dim, tie_dirs);
        grid_hop(grid, cur, target, dim, dir)
    })
}

/// Move to the second phase when a packet reaches its intermediate switch: a fresh set of
/// dateline bits, and the destination becomes the target. Returns the switch to route to.
#[inline]
pub fn phase_target(switch: usize, state: &mut RouteState) -> usize {
    if state.phase == 0 && state.valiant && state.intermediate as usize == switch {
        state.phase = 1;
        state.wrapped = 0;
        state.phase_start_global = state.global_hops;
    }
    if state.phase == 0 && state.valiant {
        state.intermediate as usize
    } else {
        state.dst_switch as usize
    }
}

/// Send a packet of a two-phase routing on a torus or mesh (Valiant, ROMM) through
/// `intermediate`: phase 0 leads there, unless it is the source switch already.
#[inline]
pub fn start_two_phase(state: &mut RouteState, intermediate: usize) {
    state.intermediate = intermediate as u32;
    state.valiant = true;
    state.phase = u8::from(state.intermediate == state.src_switch);
}

/// The hop of a two-phase routing on a torus or mesh: DOR to the intermediate switch, then
/// DOR to the destination.
#[inline]
pub fn two_phase_dor(grid: &crate::topology::Cartesian, switch: usize, state: &mut RouteState, out: &mut Candidates) {
    let target = phase_target(switch, state);
    if let Some(hop) = dor_hop(grid, switch, target, state.tie_dirs) {
        out.push(hop, 0);
    }
}

/// The minimal direction to move along `dim` from `cur` to `dst` on a grid, honouring the
/// packet's tie choice when the destination is exactly half-way round a ring.
#[inline]
pub fn grid_direction(grid: &crate::topology::Cartesian, cur: usize, dst: usize, dim: usize, tie_dirs: u32) -> i8 {
    let off = grid.offset(cur, dst, dim);
    if grid.is_tie(cur, dst, dim) {
        if tie_dirs >> (dim % 32) & 1 == 1 {
            -1
        } else {
            1
        }
    } else if off > 0 {
        1
    } else {
        -1
    }
}

/// The hop one step along `dim` in `dir` on a grid.
#[inline]
pub fn grid_hop(grid: &crate::topology::Cartesian, cur: usize, dst: usize, dim: usize, dir: i8) -> Hop {
    let (c, d) = (grid.coord(cur, dim), grid.coord(dst, dim));
    Hop {
        port: crate::topology::Cartesian::port(dim, dir) as u16,
        dim: dim as u8,
        wraps: grid.wraps(cur, dim, dir),
        wrap_ahead: grid.wrap && ((dir > 0 && c > d) || (dir < 0 && c < d)),
        class: 0,
        eject: false,
        escape: false,
    }
}
