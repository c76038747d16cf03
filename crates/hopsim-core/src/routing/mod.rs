//! Routing algorithms: which output ports a packet may take at a switch.
//!
//! A routing algorithm fills a `Candidates` list when a packet's head arrives at a switch,
//! reading the congestion the switch can see if it is adaptive; the VC policy (`crate::vc`)
//! then says which VCs each candidate may use, and the allocator picks among the feasible
//! ones: lowest `priority` first, then the most free space. Which VC policies make which
//! algorithm deadlock-free is said once, in `crate::deadlock_freedom`.

mod aries;
mod aries_minimal;
mod dal;
mod dor;
mod dragonfly_lgl;
mod dragonfly_plus_ugd;
mod fat_tree_updown;
mod all_shortest;
mod graph_minimal;
mod hyperx_dor;
mod min_adaptive;
mod minimal;
mod par;
mod rdr;
mod romm;
mod ugal;
mod valiant;
mod valiant_low_diameter;

pub use crate::spec::AriesMode;
pub use minimal::paths as minimal_paths;
pub use valiant::valiant_options;
pub use valiant_low_diameter::ValiantPaths;
pub use aries::AriesParams;
pub use dor::Dor;
pub use crate::route::{Candidate, CandidateBuf, Candidates, Congestion, Hop, IdleNetwork, RouteCtx, RouteState, Rng, Selection, INLINE_CANDIDATES, NO_DIM};

use crate::error::{SpecError, SpecResult};
use crate::spec::{Key, Spec};
use crate::topology::Topology;
use std::sync::Arc;

impl Algorithm {
    /// Whether routing a head reads the queues of switches other than the one it is at (a
    /// global observer's view): the switches then keep every port's backlog as it stood at
    /// the end of the last cycle (router/observer.rs).
    pub fn reads_remote_queues(self) -> bool {
        self.kind().queues == QueueView::Global
    }

    /// Whether routing a head reads any queue: output space must then be given back in the
    /// very cycle its flit leaves (router/step.rs, `release_needed`).
    pub fn reads_queues(self) -> bool {
        self.kind().queues != QueueView::Blind
    }

    /// Every name, comma-separated, for error messages and `--help`.
    pub fn names() -> String {
        ALGORITHMS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
    }
}

/// A routing algorithm as the registry knows it, declared in its file: its
/// `routing.algorithm` name, one line on it, the `[routing]` keys it reads besides
/// `algorithm` and `vc_policy` (`hopsim list` prints them; docs/experiment-file.md is checked
/// against them) and how it is built. Which VC policies make it deadlock-free where is said
/// in `crate::deadlock_freedom`.
pub struct AlgorithmKind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`), which a test
    /// compares with `keys`.
    pub defaults: fn() -> serde_json::Value,
    /// What of the network's queues routing a head reads when it arrives.
    pub queues: QueueView,
    /// The most candidates it offers a head on the network a spec describes: the room the
    /// packets keep for them (`packet::Arena`), which the memory estimate counts.
    /// `few_candidates` for the algorithms that never offer more than a packet holds.
    pub candidates: fn(&Spec, &dyn Topology) -> usize,
    pub build: fn(&BuildCtx) -> SpecResult<Arc<dyn Routing>>,
}

/// The bound of the algorithms that never offer a head more candidates than a packet holds.
pub fn few_candidates(_: &Spec, _: &dyn Topology) -> usize {
    INLINE_CANDIDATES
}

/// One candidate per network port of the switch with the most: the bound of routings that
/// may offer every port (every shortest next hop on a graph).
pub(crate) fn every_port(topo: &dyn Topology) -> usize {
    (0..topo.num_switches()).map(|s| topo.network_ports(s)).max().unwrap_or(0).max(INLINE_CANDIDATES)
}

/// The bound of a routing that follows `paths`: every port under `all_shortest`.
pub(crate) fn candidates_on(paths: ValiantPaths, topo: &dyn Topology) -> usize {
    match paths {
        ValiantPaths::AllShortest => every_port(topo),
        ValiantPaths::Topology => INLINE_CANDIDATES,
    }
}

/// The most candidates the spec's routing offers a head on `topo`, checked: they are counted
/// in a byte, so a routing that may offer more (every shortest next hop on a graph of
/// switches with more than 255 ports) is refused.
pub fn checked_candidates(spec: &Spec, topo: &dyn Topology) -> SpecResult<usize> {
    let most = max_candidates(spec, topo);
    if most > u8::MAX as usize {
        return Err(SpecError::new(
            "routing.algorithm",
            format!("{:?}", spec.routing.algorithm),
            format!("may offer a head {most} candidate hops on this network (one per port of its busiest switch); at most {}", u8::MAX),
        ));
    }
    Ok(most)
}

/// The most candidates the spec's routing offers a head on `topo` (`AlgorithmKind::candidates`).
pub fn max_candidates(spec: &Spec, topo: &dyn Topology) -> usize {
    algorithm(spec).map_or(INLINE_CANDIDATES, |a| (a.kind().candidates)(spec, topo))
}

/// What routing a head reads of the network's queues when it arrives at a switch
/// (`route::Congestion`). A test walks every `Blind` algorithm with a view that fails if read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueView {
    /// None: the candidates depend on the packet and the switch's random stream alone.
    Blind,
    /// The queues of the switch it is at (its output buffers and the credits it holds).
    OwnSwitch,
    /// Other switches' queues too, as they stood at the end of the last cycle: a global
    /// observer's view (`ugal_g`).
    Global,
}

registry! {
    /// The routing algorithms, as `routing.algorithm` names them: one line each, its variant
    /// (the closed set the deadlock-freedom table names) and its entry, declared in its file.
    enum Algorithm;
    /// Every routing algorithm, in the order `hopsim list` and error messages give them.
    const ALGORITHMS: [AlgorithmKind] = {
        Dor => dor::KIND,
        Minimal => minimal::KIND,
        MinAdaptive => min_adaptive::KIND,
        Rdr => rdr::KIND,
        Romm => romm::KIND,
        Valiant => valiant::KIND,
        UgalL => ugal::UGAL_L,
        UgalG => ugal::UGAL_G,
        Par => par::KIND,
        Aries => aries::KIND,
        Dal => dal::KIND,
    }
}

pub use crate::spec::ROUTING_TABLE_KEYS as TABLE_KEYS;

/// What an algorithm is built from.
pub struct BuildCtx<'a> {
    pub spec: &'a Spec,
    pub topo: &'a Arc<dyn Topology>,
    pub algorithm: Algorithm,
    /// The topology's minimal step; `None` on tori and meshes (grids route by coordinates).
    pub low_diameter: Option<Arc<dyn MinimalStep>>,
}

impl BuildCtx<'_> {
    /// A torus or mesh.
    pub fn grid(&self) -> bool {
        self.low_diameter.is_none()
    }
    /// The minimal step of a low-diameter topology.
    pub fn step(&self) -> Arc<dyn MinimalStep> {
        self.low_diameter.clone().expect("check_defined: the table lists only low-diameter kinds here")
    }
}

/// `Any` lets the engine call its commonest routing directly (engine/head_routing.rs).
pub trait Routing: std::any::Any + Send + Sync {
    fn name(&self) -> &'static str;
    /// Called once when a packet enters the network (choose intermediates, tie breaks).
    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.tie_dirs = rand::Rng::gen(rng);
    }
    /// Candidate network hops at `cx.switch` towards `state.dst_switch`; never called at the
    /// destination switch (the engine ejects there).
    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates);
    /// The packet's head at `switch` has just won an output VC for `hop`, one of the
    /// candidates `route` gave: what the routing learns of the hop taken. An override keeps
    /// the counting (`RouteState::count_hop`), which the VC policies and the deadlock detector
    /// read, and adds its own state (`RouteState::word`), and says so in `learns_hops`.
    fn on_hop(&self, state: &mut RouteState, _switch: usize, hop: &Hop) {
        state.count_hop(hop);
    }
    /// Whether `on_hop` does more than count: the engine calls it only then, and counts the
    /// hops of every other routing itself, without a dynamic call per hop. A test walks every
    /// algorithm that says no and checks its `on_hop` only counts.
    fn learns_hops(&self) -> bool {
        false
    }
    /// How a head chooses among the free VCs of its candidates.
    fn selection(&self) -> Selection {
        Selection::Emptiest
    }
    /// Switch-to-switch hops of the longest path the routing may take: the number of steps a
    /// hop-indexed VC ladder needs.
    fn max_hops(&self) -> usize;
}

/// The minimal next hop on a low-diameter topology, registered by topology kind in
/// `MINIMAL_STEPS`: shared by the `minimal` routing, by each phase of `valiant` there, and by
/// the adaptive routings that choose between the two.
pub trait MinimalStep: Send + Sync {
    /// Draw the packet's own choices, if the step keeps any in its route state (so that
    /// every hop of one packet follows the same minimal path, e.g. the global link on Aries).
    fn on_inject(&self, _state: &mut RouteState, _rng: &mut Rng) {}
    /// The next hop from `cur` towards `target` (`cur != target`) along a minimal path.
    fn hop(&self, cur: usize, target: usize, state: &RouteState, rng: &mut Rng) -> Hop;
}

/// A minimal step as the registry knows it, declared in its file: the topology kind whose
/// networks it routes (its registry entry) and how it is built on one of them.
pub struct MinimalStepKind {
    pub topology: &'static crate::topology::Kind,
    pub build: fn(&Arc<dyn Topology>) -> Arc<dyn MinimalStep>,
}

/// The minimal step of each low-diameter topology kind, one line each: the kind's own, or
/// the wiring's (`graph_minimal::on`) for a kind without structure of its own to route by.
/// Tori and meshes have none: they route by their coordinates (DOR and the routings built
/// on it).
pub const MINIMAL_STEPS: &[MinimalStepKind] = &[
    hyperx_dor::STEP,
    dragonfly_lgl::STEP,
    dragonfly_plus_ugd::STEP,
    fat_tree_updown::STEP,
    aries_minimal::STEP,
    graph_minimal::on(&crate::topology::slim_fly::KIND),
    graph_minimal::on(&crate::topology::graph::KIND),
];

/// The minimal step of a low-diameter topology, if it is one.
pub fn minimal_step(topo: &Arc<dyn Topology>) -> Option<Arc<dyn MinimalStep>> {
    let step = MINIMAL_STEPS.iter().find(|s| s.topology.name == topo.kind());
    // Routings on a network without a grid follow its step; a kind without one of its own
    // takes the wiring's, registered like the others.
    assert!(step.is_some() || topo.cartesian().is_some(), "topology.kind = {:?} has neither a grid nor a minimal step in routing::MINIMAL_STEPS", topo.kind());
    step.map(|s| (s.build)(topo))
}

/// The concrete topology a minimal step is built on (`MinimalStepKind::build`).
fn served<T: Topology>(topo: &Arc<dyn Topology>) -> &T {
    crate::topology::concrete(&**topo).expect("a minimal step is built on the kind it is registered for")
}

/// The `k`-th of `0, 1, 2, ...` once `a` and `b` (which may be equal) are left out: turns a
/// draw from `0..n - |{a, b}|` into a uniform draw among the others (intermediate groups or
/// routers other than the source's and the destination's).
#[inline]
pub(crate) fn skipping(k: usize, a: usize, b: usize) -> usize {
    let (lo, hi) = (a.min(b), a.max(b));
    let mut x = k + usize::from(k >= lo);
    if hi != lo && x >= hi {
        x += 1;
    }
    x
}

/// The algorithm `routing.algorithm` names.
pub fn algorithm(spec: &Spec) -> SpecResult<Algorithm> {
    let name = spec.routing.algorithm.as_str();
    Algorithm::from_name(name).ok_or_else(|| {
        SpecError::new("routing.algorithm", format!("{name:?}"), format!("unknown routing algorithm; allowed: {}", Algorithm::names()))
    })
}

/// The chosen algorithm's own `[routing]` keys, read into its key type `T` (the keys of
/// other algorithms are refused, unless the experiment sweeps `routing.algorithm`).
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec) -> SpecResult<T> {
    let algo = algorithm(spec)?;
    let chosen = format!("routing.algorithm = {:?}", algo.name());
    let mut others = spec.keys_left_to_others("routing.algorithm", ALGORITHMS.iter().flat_map(|a| a.keys.iter()).map(|k| k.name));
    // The VC policies read theirs from the same table (`vc::own_keys`).
    others.extend(crate::vc::POLICIES.iter().flat_map(|p| p.keys.iter()).map(|k| k.name));
    crate::spec::read_own_keys("routing", &chosen, &spec.routing.algorithm_keys, TABLE_KEYS, algo.kind().keys, &others)
}

/// `spec` with its `[routing]` table as the normalised spec writes it (`spec::list_keys`):
/// the chosen algorithm's keys with their defaults, the other algorithms' keys null (the VC
/// policies' keys: `vc::with_own_keys`).
pub fn with_defaults(mut spec: Spec) -> Spec {
    let own = algorithm(&spec).map_or(serde_json::Value::Null, |a| (a.kind().defaults)());
    crate::spec::list_keys(&mut spec.routing.algorithm_keys, own, ALGORITHMS.iter().flat_map(|a| a.keys.iter()).map(|k| k.name));
    spec
}

/// The routing `spec` names on `topo`, which must be a topology the algorithm is defined on
/// (`deadlock_freedom::check_defined`, asked first where a run is composed).
pub fn build(spec: &Spec, topo: &Arc<dyn Topology>) -> SpecResult<Arc<dyn Routing>> {
    let algo = algorithm(spec)?;
    // Unknown keys and wrong types, for every algorithm (those without keys read none).
    own_keys::<serde_json::Value>(spec)?;
    // HyperX has a grid too, but its minimal step, not the torus's DOR.
    let cx = BuildCtx { spec, topo, algorithm: algo, low_diameter: minimal_step(topo) };
    (algo.kind().build)(&cx)
}

/// The DOR hop from `cur` towards `target` (lowest dimension not yet corrected), if any.
#[inline(always)]
pub fn dor_hop(grid: &crate::topology::Cartesian, cur: usize, target: usize, tie_dirs: u32) -> Option<Hop> {
    let (dim, c, d) = grid.lowest_differing(cur, target)?;
    let k = grid.dims[dim] as u32;
    Some(ring_hop(grid.wrap, k, c, d, dim, ring_direction(grid.wrap, k, c, d, dim, tie_dirs)))
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
    let (c, d) = (grid.coord(cur, dim) as u32, grid.coord(dst, dim) as u32);
    ring_direction(grid.wrap, grid.dims[dim] as u32, c, d, dim, tie_dirs)
}

/// The hop one step along `dim` in `dir` on a grid.
#[inline]
pub fn grid_hop(grid: &crate::topology::Cartesian, cur: usize, dst: usize, dim: usize, dir: i8) -> Hop {
    let (c, d) = (grid.coord(cur, dim) as u32, grid.coord(dst, dim) as u32);
    ring_hop(grid.wrap, grid.dims[dim] as u32, c, d, dim, dir)
}

/// `grid_direction` from coordinates `c` (here) and `d` (the target) along a dimension of `k`
/// switches: the shorter way round a ring (the positive one when `d` is ahead by at most
/// half of it), the tie bit's way when exactly half-way, the only way on a mesh; -1 when
/// there is nothing to correct (`c == d`), as the signed offset's sign says.
///
/// Without branches: the direction of a uniformly drawn destination is a coin toss, which a
/// branch predictor loses half the time, at every hop.
#[inline(always)]
fn ring_direction(wrap: bool, k: u32, c: u32, d: u32, dim: usize, tie_dirs: u32) -> i8 {
    let positive = if wrap {
        let ahead = if d >= c { d - c } else { d + k - c };
        let tie_negative = tie_dirs >> (dim % 32) & 1 == 1;
        ((ahead != 0) & (ahead * 2 < k)) | ((ahead * 2 == k) & !tie_negative)
    } else {
        d > c
    };
    1 - 2 * i8::from(!positive)
}

/// `grid_hop` from coordinates `c` (here) and `d` (the target) along a dimension of `k`.
#[inline(always)]
fn ring_hop(wrap: bool, k: u32, c: u32, d: u32, dim: usize, dir: i8) -> Hop {
    let up = dir > 0;
    Hop {
        port: crate::topology::Cartesian::port(dim, dir) as u16,
        dim: dim as u8,
        wraps: wrap & ((up & (c + 1 == k)) | (!up & (c == 0))),
        wrap_ahead: wrap & ((up & (c > d)) | (!up & (c < d))),
        class: 0,
        eject: false,
        escape: false,
    }
}

#[cfg(test)]
mod tests {
    use crate::topology::Cartesian;

    /// The DOR hop as `Cartesian` defines it, dimension by dimension from full coordinates.
    fn dor_hop_by_definition(grid: &Cartesian, cur: usize, dst: usize, tie_dirs: u32) -> Option<super::Hop> {
        let dim = (0..grid.n()).find(|&dim| grid.coord(cur, dim) != grid.coord(dst, dim))?;
        let off = grid.offset(cur, dst, dim);
        let dir = if grid.is_tie(cur, dst, dim) {
            if tie_dirs >> dim & 1 == 1 {
                -1
            } else {
                1
            }
        } else if off > 0 {
            1
        } else {
            -1
        };
        let (c, d) = (grid.coord(cur, dim), grid.coord(dst, dim));
        Some(super::Hop {
            port: Cartesian::port(dim, dir) as u16,
            dim: dim as u8,
            wraps: grid.wraps(cur, dim, dir),
            wrap_ahead: grid.wrap && ((dir > 0 && c > d) || (dir < 0 && c < d)),
            ..Default::default()
        })
    }

    #[test]
    fn dor_hop_matches_the_grid_definition() {
        for (dims, wrap) in [(vec![8, 8], true), (vec![5, 4, 3], true), (vec![4, 6], false), (vec![3, 1, 2, 2], true), (vec![7], false)] {
            let grid = Cartesian::new(dims, wrap);
            for cur in 0..grid.size() {
                for dst in 0..grid.size() {
                    for tie_dirs in [0, 1, 2, 5, u32::MAX] {
                        let fast = super::dor_hop(&grid, cur, dst, tie_dirs);
                        let slow = dor_hop_by_definition(&grid, cur, dst, tie_dirs);
                        assert_eq!(fast.map(|h| (h.port, h.dim, h.wraps, h.wrap_ahead)), slow.map(|h| (h.port, h.dim, h.wraps, h.wrap_ahead)), "{:?} wrap {wrap}: {cur} -> {dst}, ties {tie_dirs:b}", grid.dims);
                        for dim in 0..grid.n() {
                            let off = grid.offset(cur, dst, dim);
                            let want = if grid.is_tie(cur, dst, dim) { if tie_dirs >> dim & 1 == 1 { -1 } else { 1 } } else if off > 0 { 1 } else { -1 };
                            assert_eq!(super::grid_direction(&grid, cur, dst, dim, tie_dirs), want);
                            for dir in [1, -1] {
                                let g = super::grid_hop(&grid, cur, dst, dim, dir);
                                let (c, d) = (grid.coord(cur, dim), grid.coord(dst, dim));
                                assert_eq!((g.wraps, g.wrap_ahead), (grid.wraps(cur, dim, dir), grid.wrap && ((dir > 0 && c > d) || (dir < 0 && c < d))));
                            }
                        }
                        if let Some(h) = fast {
                            let dir = if h.port % 2 == 0 { 1 } else { -1 };
                            assert_eq!(super::grid_direction(&grid, cur, dst, h.dim as usize, tie_dirs), dir);
                            let g = super::grid_hop(&grid, cur, dst, h.dim as usize, dir);
                            assert_eq!((g.port, g.wraps, g.wrap_ahead), (h.port, h.wraps, h.wrap_ahead));
                        }
                    }
                }
            }
        }
    }

    /// A minimal step serves one registered topology kind, and a kind has at most one.
    #[test]
    fn every_minimal_step_serves_its_own_registered_kind() {
        for (i, s) in super::MINIMAL_STEPS.iter().enumerate() {
            let name = s.topology.name;
            assert!(crate::topology::kind(name).is_some(), "{name:?} is not a topology kind ({})", crate::topology::kind_names());
            assert!(super::MINIMAL_STEPS[i + 1..].iter().all(|o| o.topology.name != name), "{name:?} has two minimal steps");
        }
    }

    #[test]
    fn skipping_leaves_out_exactly_the_two_values() {
        for (n, a, b) in [(6, 1, 4), (6, 4, 1), (6, 0, 5), (6, 2, 2), (6, 0, 0), (6, 5, 5)] {
            let left = n - if a == b { 1 } else { 2 };
            let got: Vec<usize> = (0..left).map(|k| super::skipping(k, a, b)).collect();
            let want: Vec<usize> = (0..n).filter(|&x| x != a && x != b).collect();
            assert_eq!(got, want, "n {n}, a {a}, b {b}");
        }
    }
}
