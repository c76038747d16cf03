//! UGAL (Universal Globally-Adaptive Load-balanced routing, Singh 2005; on the dragonfly, Kim
//! et al. 2008): at its source switch each packet chooses between the minimal path and a
//! Valiant path through an intermediate switch drawn at injection, by the congestion the
//! switch can see, and then follows the chosen path (the phases of `valiant`).
//!
//! - `ugal_l` reads only its own switch: the queue behind the first hop of each path (its
//!   output buffer plus the next input buffer as its credits say, so far buffers are seen late
//!   by a link latency; over the whole port or the packet's VCs, `QueueView`), weighted by
//!   the path's hop count. It goes non-minimally when
//!   `q_nonmin * H_nonmin + threshold < q_min * H_min`.
//! - `ugal_g` is the idealized reference no router can build: along both paths it reads, for
//!   every port, its queue and the phits waiting for it in its switch's input buffers (a
//!   saturated link's backlog sits there, spread over the inputs, while its own queue is
//!   bounded by one output and one input buffer), and compares their sums plus the
//!   zero-load time of the path's hops, `sum(q) + H * hop_cycles`, with the same threshold.
//!   Its own switch's ports it reads as they are; the others' as they stood at the end of
//!   the last cycle (router/observer.rs says why).
//!
//! A packet whose drawn intermediate is its source or destination switch has no Valiant path
//! and goes minimally. Its paths are those of `minimal` and `valiant`, so the VC policies that
//! make Valiant deadlock-free make UGAL so (`crate::deadlock_freedom`).

use super::{phase_target, Candidates, Congestion, Hop, MinimalStep, RouteCtx, RouteState, Routing, Rng};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use crate::topology::Topology;
use rand::Rng as _;
use std::sync::Arc;

/// The queue behind a first hop that UGAL-L's choice reads (`routing.ugal_queue`), the
/// variants of Kim et al. (2008). On a dragonfly most sources reach a congested global link
/// through a local link that detoured and transit packets share: which VCs of that link the
/// gateway's backlog fills depends on the VC policy, so which of them to read matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueView {
    /// UGAL-L: every VC of the output port (Singh's UGAL).
    Port,
    /// UGAL-L_VC: only the VCs the packet would use on the hop, so a VC policy that gives
    /// minimal and non-minimal packets different VCs (e.g. `min_last`) separates their queues.
    Vc,
    /// UGAL-L_VC_H: the VCs when both paths leave by the same port (the port's total cannot
    /// tell them apart), the whole port otherwise (the VCs alone miss the transit traffic
    /// that shares the link).
    VcHybrid,
}

impl QueueView {
    pub const ALL: [QueueView; 3] = [QueueView::Port, QueueView::Vc, QueueView::VcHybrid];

    pub fn name(self) -> &'static str {
        match self {
            QueueView::Port => "port",
            QueueView::Vc => "vc",
            QueueView::VcHybrid => "vc_hybrid",
        }
    }
}

/// Where UGAL's non-minimal path goes on a dragonfly (`routing.ugal_intermediate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntermediateKind {
    /// An intermediate group (Kim et al.): the path lands in it and leaves from its gateway to
    /// the destination group, 5 hops at most.
    Group,
    /// Any switch of the intermediate group, drawn uniformly (as Valiant's random switch and
    /// BookSim2's `ugal_dragonflynew` do): 6 hops at most, and the hops inside the
    /// intermediate group go anywhere, so no local link there carries more than its share
    /// whatever the pattern (under ADV+h the gateways' links do).
    Switch,
    /// Any switch of the whole network, drawn uniformly, and the minimal path when it lands in
    /// the source group or the destination is in the source group (BookSim2's
    /// `ugal_dragonflynew`, src/networks/dragonfly.cpp of 28f43299: `f->intm =
    /// RandomInt(_network_size - 1)`, then `if (grp_ID == intm_grp_ID) f->ph = 1`). A draw in
    /// the destination group keeps a detour through that switch.
    Network,
    /// On a HyperX: a switch of the sub-network the source and destination differ in, each
    /// coordinate where they differ drawn uniformly over its dimension (the source's and the
    /// destination's included), the others the source's, so the detour never adds a
    /// dimension the minimal path does not cross (BookSim2's `ugal_flatfly`,
    /// src/networks/flatfly_onchip.cpp of 28f43299, `find_ran_intm`). Elsewhere on a HyperX
    /// the intermediate is any switch.
    DifferingDims,
}

impl IntermediateKind {
    pub const ALL: [IntermediateKind; 4] = [IntermediateKind::Group, IntermediateKind::Switch, IntermediateKind::Network, IntermediateKind::DifferingDims];

    pub fn name(self) -> &'static str {
        match self {
            IntermediateKind::Group => "group",
            IntermediateKind::Switch => "switch",
            IntermediateKind::Network => "network",
            IntermediateKind::DifferingDims => "differing_dims",
        }
    }
}

/// What UGAL-L weighs each path's queue by (`routing.ugal_weights`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathWeights {
    /// Its hop count (Singh; Kim et al. 2008): `q_nm * H_nm` against `q_min * H_min`.
    Hops,
    /// 2 for the non-minimal path, 1 for the minimal, whatever their lengths (BookSim2's
    /// `ugal_dragonflynew`: `1 * min_queue_size <= 2 * nonmin_queue_size + adaptive_threshold`
    /// routes minimally).
    OneToTwo,
    /// Not queues but room: non-minimal when the room behind its first hop exceeds
    /// `ugal_free_ratio` times the minimal first hop's (SST Merlin's dragonfly `adaptive-local`:
    /// src/sst/elements/merlin/topology/dragonfly.cc of f782290d0, `route_adaptive_local`,
    /// `valiant_route_credits > direct_route_credits * adaptive_threshold`).
    FreeRatio,
}

impl PathWeights {
    pub const ALL: [PathWeights; 3] = [PathWeights::Hops, PathWeights::OneToTwo, PathWeights::FreeRatio];

    pub fn name(self) -> &'static str {
        match self {
            PathWeights::Hops => "hops",
            PathWeights::OneToTwo => "one_to_two",
            PathWeights::FreeRatio => "free_ratio",
        }
    }
}

/// The variant `key` names, or an error listing the allowed names.
pub(super) fn choose<T: Copy>(key: &str, given: Option<&str>, default: T, all: &[T], name: fn(T) -> &'static str) -> SpecResult<T> {
    let Some(given) = given else { return Ok(default) };
    all.iter().copied().find(|&v| name(v) == given).ok_or_else(|| {
        SpecError::new(key, format!("{given:?}"), format!("allowed: {}", all.iter().map(|&v| name(v)).collect::<Vec<_>>().join(", ")))
    })
}

/// Merlin's `adaptive_threshold` default.
const DEFAULT_FREE_RATIO: f64 = 2.0;

/// What the adaptive choices of `ugal_*` and `par` weigh.
#[derive(Debug, Clone, Copy)]
pub struct UgalParams {
    /// Phits a non-minimal path must win by (`routing.ugal_threshold`).
    pub threshold: u64,
    /// Zero-load cycles one hop adds (link latency, routing and crossbar), for `ugal_g`.
    pub hop_cycles: u64,
    pub queue: QueueView,
    pub intermediate: IntermediateKind,
    pub weights: PathWeights,
    /// How many times the minimal first hop's room the non-minimal one's must exceed under
    /// `PathWeights::FreeRatio` (`routing.ugal_free_ratio`).
    pub free_ratio: f64,
    /// Phits added to each queue before it is weighed (`routing.ugal_queue_offset`; CAMINOS's
    /// `LowestSinghWeight` `extra_congestion`), so that at low load the hop counts still
    /// decide.
    pub queue_offset: u64,
}

keys! {
    /// The `[routing]` keys of `ugal_l` and `par`.
    pub(super) struct UgalKeys {
        /// phits by which the non-minimal estimate must beat the minimal one (0 = plain UGAL)
        ugal_threshold: Option<u64> = "packet.phits" => None,
        /// the queue behind a first hop the choice reads: port, vc or vc_hybrid
        ugal_queue: String = "port",
        /// dragonfly: the detour's intermediate, a group (left from its gateway), any switch of it, or any switch of the network, minimal if in the source group (network, BookSim2's); HyperX: differing_dims, a switch drawn only in the dimensions the source and destination differ in (BookSim2's flatfly), else any switch
        ugal_intermediate: String = "group",
        /// each path's queue times its hop count (hops) or times 1 (minimal) and 2 (non-minimal), BookSim2's (one_to_two); or non-minimal when the room behind its first hop exceeds ugal_free_ratio times the minimal one's, SST Merlin's adaptive-local (free_ratio)
        ugal_weights: String = "hops",
        /// with ugal_weights = "free_ratio": how many times the minimal first hop's room the non-minimal one's must exceed
        ugal_free_ratio: Option<f64> = "2 (with free_ratio)" => None,
        /// phits added to each queue before it is weighed, so that hop counts decide at low load (CAMINOS's LowestSinghWeight extra_congestion)
        ugal_queue_offset: u64 = 0,
    }
}

keys! {
    /// The `[routing]` keys of `ugal_g`, which reads whole paths, not one queue.
    pub(super) struct UgalGKeys {
        /// phits by which the non-minimal estimate must beat the minimal one (0 = plain UGAL)
        ugal_threshold: Option<u64> = "packet.phits" => None,
        /// dragonfly: the detour's intermediate, a group (left from its gateway), any switch of it, or any switch of the network, minimal if in the source group (network, BookSim2's); HyperX: differing_dims, a switch drawn only in the dimensions the source and destination differ in (BookSim2's flatfly), else any switch
        ugal_intermediate: String = "group",
    }
}

impl UgalParams {
    /// The chosen algorithm's keys (`ugal_l`, `ugal_g` or `par`), checked.
    pub fn from_spec(spec: &Spec) -> SpecResult<Self> {
        let UgalKeys { ugal_threshold, ugal_queue, ugal_intermediate, ugal_weights, ugal_free_ratio, ugal_queue_offset } = if super::algorithm(spec)? == super::Algorithm::UgalG {
            let UgalGKeys { ugal_threshold, ugal_intermediate } = super::own_keys(spec)?;
            // The keys ugal_g does not read at ugal_l's defaults, as declared with them.
            let defaults = serde_json::from_value(serde_json::json!({})).expect("ugal_l's keys have defaults");
            UgalKeys { ugal_threshold, ugal_intermediate, ..defaults }
        } else {
            super::own_keys(spec)?
        };
        let threshold = ugal_threshold.unwrap_or(spec.packet.phits as u64);
        if threshold > 1 << 30 {
            return Err(SpecError::new("routing.ugal_threshold", threshold, "must be between 0 and 2^30 phits"));
        }
        let hop_cycles = spec.link.latency as u64 + spec.router.pipeline_delay as u64 + 1;
        let queue = choose("routing.ugal_queue", Some(&ugal_queue), QueueView::Port, &QueueView::ALL, QueueView::name)?;
        let intermediate = choose("routing.ugal_intermediate", Some(&ugal_intermediate), IntermediateKind::Group, &IntermediateKind::ALL, IntermediateKind::name)?;
        let weights = choose("routing.ugal_weights", Some(&ugal_weights), PathWeights::Hops, &PathWeights::ALL, PathWeights::name)?;
        let free_ratio = match (weights, ugal_free_ratio) {
            (PathWeights::FreeRatio, None) => DEFAULT_FREE_RATIO,
            (PathWeights::FreeRatio, Some(r)) if r.is_finite() && (0.0..=1000.0).contains(&r) => r,
            (PathWeights::FreeRatio, Some(r)) => return Err(SpecError::new("routing.ugal_free_ratio", r, "must be a number between 0 and 1000")),
            (_, Some(r)) => {
                return Err(SpecError::new("routing.ugal_free_ratio", r, format!("only ugal_weights = \"free_ratio\" reads it (it is {:?}); leave this key out", weights.name())))
            }
            (_, None) => DEFAULT_FREE_RATIO,
        };
        if ugal_queue_offset > 1 << 30 {
            return Err(SpecError::new("routing.ugal_queue_offset", ugal_queue_offset, "must be between 0 and 2^30 phits"));
        }
        Ok(UgalParams { threshold, hop_cycles, queue, intermediate, weights, free_ratio, queue_offset: ugal_queue_offset })
    }
}

/// Where a packet's Valiant path may go. On a dragonfly an intermediate group other than the
/// source's and the destination's, and in it the gateway to the destination group
/// (`IntermediateKind::Group`) or any switch (`IntermediateKind::Switch`). Elsewhere any switch
/// with servers.
pub(super) enum Intermediates {
    Switches(Vec<u32>),
    Groups(crate::topology::Dragonfly, IntermediateKind),
    DifferingDims(crate::topology::Cartesian),
}

impl Intermediates {
    pub(super) fn new(topo: &dyn Topology, kind: IntermediateKind) -> SpecResult<Self> {
        if kind == IntermediateKind::DifferingDims {
            let grid = topo.cartesian().ok_or_else(|| {
                let here: Vec<&str> = IntermediateKind::ALL.iter().filter(|&&k| k != kind).map(|k| k.name()).collect();
                SpecError::new("routing.ugal_intermediate", format!("{:?}", kind.name()), format!("needs a HyperX, whose switches have coordinates; allowed here: {}", here.join(", ")))
            })?;
            return Ok(Intermediates::DifferingDims(grid.clone()));
        }
        Ok(match crate::topology::concrete::<crate::topology::Dragonfly>(topo) {
            Some(df) if df.g > 2 => Intermediates::Groups(df.clone(), kind),
            _ => Intermediates::Switches((0..topo.num_switches()).filter(|&s| topo.servers_at(s) > 0).map(|s| s as u32).collect()),
        })
    }

    /// Draw the packet's intermediate; whether it goes through it is decided at its source.
    pub(super) fn draw(&self, state: &mut RouteState, rng: &mut Rng) {
        state.intermediate = match self {
            Intermediates::Switches(pool) => pool[rng.gen_range(0..pool.len())],
            Intermediates::DifferingDims(grid) => {
                let (src, dst) = (state.src_switch as usize, state.dst_switch as usize);
                let mut mid = src;
                for dim in 0..grid.n() {
                    if grid.coord(src, dim) != grid.coord(dst, dim) {
                        mid = grid.with_coord(mid, dim, rng.gen_range(0..grid.dims[dim]));
                    }
                }
                mid as u32
            }
            Intermediates::Groups(df, IntermediateKind::Network) => {
                let (gs, gd) = (state.src_switch as usize / df.a, state.dst_switch as usize / df.a);
                let switch = rng.gen_range(0..df.g * df.a);
                // Through the source switch is the minimal path (`Choice`).
                if gs == gd || switch / df.a == gs { state.src_switch } else { switch as u32 }
            }
            Intermediates::Groups(df, kind) => {
                let (gs, gd) = (state.src_switch as usize / df.a, state.dst_switch as usize / df.a);
                // Uniform over the groups other than the source's and the destination's: a
                // switch of either would put the path on the minimal global link.
                let g = super::skipping(rng.gen_range(0..df.g - 1 - usize::from(gs != gd)), gs, gd);
                let switch = match kind {
                    IntermediateKind::Group => df.gateway(g, gd).0,
                    IntermediateKind::Switch | IntermediateKind::Network => rng.gen_range(0..df.a),
                    IntermediateKind::DifferingDims => unreachable!("a dragonfly has no coordinates: `new` refuses it"),
                };
                (g * df.a + switch) as u32
            }
        };
        state.valiant = false;
        state.phase = 0;
    }
}

/// Commit the packet to the Valiant path through its intermediate (`nonminimal`) or to the
/// minimal path, as `valiant` routes them.
pub(super) fn commit(state: &mut RouteState, nonminimal: bool) {
    state.valiant = nonminimal;
    if !nonminimal {
        // As `minimal`: 2Phases policies see traffic drawn at its source.
        state.intermediate = state.src_switch;
    }
}

/// The two paths a UGAL decision weighs from switch `cur`: the packet's state committed to
/// each (the VCs of a first hop, hence the queue it would join, depend on which) and their
/// first hops. No Valiant path when the intermediate is this switch or the destination.
struct Choice {
    min: RouteState,
    nm: RouteState,
    min_hop: Hop,
    nm_hop: Option<Hop>,
}

impl Choice {
    fn new(step: &dyn MinimalStep, cx: &mut RouteCtx, state: &RouteState) -> Self {
        let (cur, dst, mid) = (cx.switch, state.dst_switch as usize, state.intermediate as usize);
        let (mut min, mut nm) = (*state, *state);
        commit(&mut min, false);
        commit(&mut nm, true);
        let min_hop = step.hop(cur, dst, &min, cx.rng);
        let nm_hop = (mid != cur && mid != dst).then(|| step.hop(cur, mid, &nm, cx.rng));
        Choice { min, nm, min_hop, nm_hop }
    }
}

/// UGAL-L's choice at switch `cur`: the first hops of the minimal path to the destination and
/// of the Valiant path through `state.intermediate`, and whether the latter wins.
pub(super) fn local_choice(
    topo: &dyn Topology,
    step: &dyn MinimalStep,
    cx: &mut RouteCtx,
    state: &RouteState,
    params: &UgalParams,
) -> (Hop, Option<Hop>) {
    let (cur, dst, mid) = (cx.switch, state.dst_switch as usize, state.intermediate as usize);
    let c = Choice::new(step, cx, state);
    let Some(nm_hop) = c.nm_hop else { return (c.min_hop, None) };
    let per_vc = match params.queue {
        QueueView::Port => false,
        QueueView::Vc => true,
        QueueView::VcHybrid => c.min_hop.port == nm_hop.port,
    };
    let queue = |st: &RouteState, hop: &Hop| {
        let q = if per_vc { cx.congestion.hop_queue(cur, st, hop) } else { cx.congestion.port_queue(cur, hop.port as usize) };
        q as u64 + params.queue_offset
    };
    let (w_min, w_nm) = match params.weights {
        PathWeights::Hops => (topo.distance(cur, dst) as u64, (topo.distance(cur, mid) + topo.distance(mid, dst)) as u64),
        PathWeights::OneToTwo => (1, 2),
        PathWeights::FreeRatio => {
            let free = |st: &RouteState, hop: &Hop| {
                let f = if per_vc { cx.congestion.hop_free(cur, st, hop) } else { cx.congestion.port_free(cur, hop.port as usize) };
                f as f64
            };
            let (f_min, f_nm) = (free(&c.min, &c.min_hop), free(&c.nm, &nm_hop));
            return (c.min_hop, (f_nm > params.free_ratio * f_min).then_some(nm_hop));
        }
    };
    let q_min = queue(&c.min, &c.min_hop) * w_min;
    let q_nm = queue(&c.nm, &nm_hop) * w_nm;
    (c.min_hop, (q_nm + params.threshold < q_min).then_some(nm_hop))
}

/// The queues along the minimal path from `from` to `to` (first hop `first`) and the phits
/// waiting for each of its ports, plus `hop_cycles` per hop: the path's delay if every queued
/// phit costs a cycle. The deciding switch `decider` reads its own ports as they are, the
/// others as a global observer saw them at the end of the last cycle
/// (`Congestion::observed_backlog`).
#[allow(clippy::too_many_arguments)]
fn path_delay(topo: &dyn Topology, step: &dyn MinimalStep, view: &dyn Congestion, state: &RouteState, rng: &mut Rng, decider: usize, from: usize, to: usize, first: Hop, hop_cycles: u64) -> u64 {
    let (mut hop, mut cur, mut delay) = (first, from, 0);
    loop {
        let port = hop.port as usize;
        let backlog = if cur == decider { view.port_queue(cur, port) + view.waiting_for(cur, port) } else { view.observed_backlog(cur, port) };
        delay += backlog as u64 + hop_cycles;
        cur = topo.neighbour(cur, port).expect("a minimal hop leads to a switch").switch as usize;
        if cur == to {
            return delay;
        }
        hop = step.hop(cur, to, state, rng);
    }
}

pub struct Ugal {
    topo: Arc<dyn Topology>,
    step: Arc<dyn MinimalStep>,
    global: bool,
    intermediates: Intermediates,
    params: UgalParams,
}

impl Ugal {
    pub fn new(topo: Arc<dyn Topology>, step: Arc<dyn MinimalStep>, global: bool, params: UgalParams) -> SpecResult<Self> {
        let intermediates = Intermediates::new(topo.as_ref(), params.intermediate)?;
        Ok(Ugal { topo, step, global, intermediates, params })
    }

    /// UGAL-G's choice at the source switch.
    fn global_choice(&self, cx: &mut RouteCtx, state: &RouteState) -> (Hop, Option<Hop>) {
        let (src, dst, mid) = (cx.switch, state.dst_switch as usize, state.intermediate as usize);
        let (topo, step) = (self.topo.as_ref(), self.step.as_ref());
        let c = Choice::new(step, cx, state);
        let Some(nm_hop) = c.nm_hop else { return (c.min_hop, None) };
        let mut second_phase = c.nm;
        second_phase.phase = 1;
        let (view, hc) = (cx.congestion, self.params.hop_cycles);
        let d_min = path_delay(topo, step, view, &c.min, cx.rng, src, src, dst, c.min_hop, hc);
        let first_on = step.hop(mid, dst, &second_phase, cx.rng);
        let d_nm = path_delay(topo, step, view, &c.nm, cx.rng, src, src, mid, nm_hop, hc)
            + path_delay(topo, step, view, &second_phase, cx.rng, src, mid, dst, first_on, hc);
        (c.min_hop, (d_nm + self.params.threshold < d_min).then_some(nm_hop))
    }
}

impl Routing for Ugal {
    fn name(&self) -> &'static str {
        if self.global {
            "ugal_g"
        } else {
            "ugal_l"
        }
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        self.intermediates.draw(state, rng);
        self.step.on_inject(state, rng);
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        if state.hops == 0 {
            // The source switch: the one decision of the packet.
            let (min_hop, nonmin) = if self.global {
                self.global_choice(cx, state)
            } else {
                local_choice(self.topo.as_ref(), self.step.as_ref(), cx, state, &self.params)
            };
            commit(state, nonmin.is_some());
            out.push(nonmin.unwrap_or(min_hop), 0);
            return;
        }
        let target = phase_target(cx.switch, state);
        out.push(self.step.hop(cx.switch, target, state, cx.rng), 0);
    }

    fn max_hops(&self) -> usize {
        2 * self.topo.diameter()
    }
}


fn build(cx: &super::BuildCtx) -> SpecResult<Arc<dyn Routing>> {
    Ok(Arc::new(Ugal::new(cx.topo.clone(), cx.step(), cx.algorithm == super::Algorithm::UgalG, UgalParams::from_spec(cx.spec)?)?))
}

pub const UGAL_L: super::AlgorithmKind = super::AlgorithmKind {
    name: "ugal_l",
    about: "UGAL with local information: minimal or Valiant at the source switch, by its own queues",
    keys: UgalKeys::KEYS,
    defaults: UgalKeys::defaults,
    candidates: super::few_candidates,
    queues: super::QueueView::OwnSwitch,
    build,
};

pub const UGAL_G: super::AlgorithmKind = super::AlgorithmKind {
    name: "ugal_g",
    about: "UGAL with global information: minimal or Valiant by the queues along both paths",
    keys: UgalGKeys::KEYS,
    defaults: UgalGKeys::defaults,
    candidates: super::few_candidates,
    // A global observer's view: such runs deliver arrivals on one thread, in order.
    queues: super::QueueView::Global,
    build,
};


#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn differing_dims_draws_only_where_source_and_destination_differ_and_everywhere_there() {
        // 4x4x4 HyperX: (1,2,3) -> (1,0,3) differ in dimension 1 only, so the intermediate
        // is (1,c,3) for each c in 0..4; (1,2,3) -> (0,0,3) spans 16 switches.
        let grid = crate::topology::Cartesian::new(vec![4, 4, 4], false);
        let draws = Intermediates::DifferingDims(grid.clone());
        let mut rng = Rng::seed_from_u64(3);
        let (src, one, two) = (grid.switch_at(&[1, 2, 3]), grid.switch_at(&[1, 0, 3]), grid.switch_at(&[0, 0, 3]));
        for (dst, want) in [(one, (0..4).map(|c| grid.switch_at(&[1, c, 3])).collect::<Vec<_>>()),
                            (two, (0..16).map(|i| grid.switch_at(&[i % 4, i / 4, 3])).collect())] {
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..400 {
                let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
                draws.draw(&mut st, &mut rng);
                seen.insert(st.intermediate as usize);
            }
            let mut want = want;
            want.sort();
            assert_eq!(seen.into_iter().collect::<Vec<_>>(), want, "{src} -> {dst}");
        }
    }

    #[test]
    fn intermediate_groups_are_neither_the_source_nor_the_destination_group() {
        // a = 2, h = 1: 3 groups. Between groups one group is left; inside a group, two.
        let df = crate::topology::Dragonfly { a: 2, h: 1, p: 1, g: 3, arrangement: crate::topology::Arrangement::Palmtree };
        let draws = Intermediates::Groups(df, IntermediateKind::Group);
        let mut rng = Rng::seed_from_u64(1);
        for (src, dst, allowed) in [(0usize, 2usize, vec![2usize]), (0, 1, vec![1, 2])] {
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..200 {
                let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
                draws.draw(&mut st, &mut rng);
                seen.insert(st.intermediate as usize / 2);
            }
            assert_eq!(seen.into_iter().collect::<Vec<_>>(), allowed, "{src} -> {dst}");
        }
    }
}
