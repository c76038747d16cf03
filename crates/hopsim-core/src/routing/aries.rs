//! Cray Aries routing (`routing.algorithm = "aries"`), with the routing modes Cray's MPI lets
//! a job choose (`MPICH_GNI_ROUTING_MODE`), per message: the mode travels with the packet
//! (`RouteState::mode`; 0 means the run's `routing.mode`).
//!
//! The adaptive modes decide at the packet's source router, as the paper describes Aries:
//! two minimal and two non-minimal candidate paths are drawn at random (a minimal path: a link
//! of the global bundle to the destination group and the order of the local hops; a
//! non-minimal one: an intermediate group and a link of each bundle on the way, or inside a
//! group an intermediate router), each scored from the router's congestion view as UGAL-L
//! does (the queue behind its first hop, on the VCs the packet would use there, times its
//! hops), a bias added to the non-minimal scores, and the lowest score taken. A router sees
//! far buffers only through credits, as late as a link's latency, so a router may divert
//! packets around congestion that has already cleared: phantom congestion, which is what the
//! bias is for.
//!
//! | mode | Cray name | bias on non-minimal paths |
//! |---|---|---|
//! | `adaptive` | ADAPTIVE_0 | none |
//! | `adaptive_low_bias` | ADAPTIVE_2 | `routing.bias_low` |
//! | `adaptive_high_bias` | ADAPTIVE_3 | `routing.bias_high` |
//! | `increasingly_minimal` | ADAPTIVE_1 | grows from 0 to `bias_high` as the minimal path left shrinks |
//! | `min_hash` | MIN_HASH | always minimal, the path a hash of source, destination and packet number |
//! | `nmin_hash` | NMIN_HASH | always non-minimal, likewise hashed |
//! | `in_order` | IN_ORDER | minimal, one path per (source, destination) and the lowest VC of each hop's class, so packets cannot overtake each other |
//!
//! Biases are phits of queue per hop of the minimal path (`q_nm * H_nm + bias * H_min <
//! q_min * H_min` sends a packet non-minimally). Cray does not publish its values; the
//! defaults tie them to the router's buffers, the most a queue on one VC can hold (input
//! plus output buffer, `B` phits): a high bias of `B / 2`, so a packet leaves the minimal
//! path only when the queue it would join there is more than half full (and fuller than the
//! detour's by that much), and a low bias of `B / 8`. A bias of `B` or more would never
//! let a packet leave the minimal path.
//!
//! Paths are those of `minimal` and `valiant` on Aries (the intermediate switch is the
//! intermediate group's gateway to the destination group), so the hop ladders make it
//! deadlock-free (`crate::deadlock_freedom`).

use super::{phase_target, Candidates, Hop, MinimalStep, RouteCtx, RouteState, Routing, Rng, NO_DIM};
use crate::error::{SpecError, SpecResult};
use crate::spec::AriesMode as Mode;
use crate::spec::Spec;
use crate::topology::{Aries, Topology};
use rand::Rng as _;
use std::sync::Arc;

#[derive(Debug, Clone, Copy)]
pub struct AriesParams {
    pub mode: Mode,
    pub bias_low: u64,
    pub bias_high: u64,
}

keys! {
    /// `aries`'s `[routing]` keys.
    struct AriesKeys {
        /// the routing mode of messages that do not choose their own
        mode: String = "adaptive",
        /// bias of adaptive_low_bias on non-minimal paths, phits of queue per minimal hop
        bias_low: Option<u64> = "an eighth of one VC's buffers" => None,
        /// bias of adaptive_high_bias on non-minimal paths, phits of queue per minimal hop
        bias_high: Option<u64> = "half of one VC's buffers" => None,
    }
}

impl AriesParams {
    pub fn from_spec(spec: &Spec) -> SpecResult<Self> {
        let r: AriesKeys = super::own_keys(spec)?;
        let name = r.mode.as_str();
        let mode = Mode::from_name(name).ok_or_else(|| {
            SpecError::new("routing.mode", format!("{name:?}"), format!("unknown Aries routing mode; allowed: {}", Mode::ALL.map(Mode::name).join(", ")))
        })?;
        let vc_buffers = (spec.input_buffer_phits() + spec.output_buffer_phits()) as u64;
        let bias_high = r.bias_high.unwrap_or(vc_buffers / 2);
        let bias_low = r.bias_low.unwrap_or(vc_buffers / 8);
        for (key, v) in [("routing.bias_low", bias_low), ("routing.bias_high", bias_high)] {
            if v > 1 << 30 {
                return Err(SpecError::new(key, v, "must be between 0 and 2^30 phits"));
            }
        }
        Ok(AriesParams { mode, bias_low, bias_high })
    }
}

/// A candidate path: its first hop, its hops, and what the packet's state becomes on it.
#[derive(Clone, Copy)]
struct Path {
    first: Hop,
    hops: u64,
    state: RouteState,
}

pub struct AriesRouting {
    ar: Aries,
    step: Arc<dyn MinimalStep>,
    params: AriesParams,
}

impl AriesRouting {
    pub fn new(topo: &dyn Topology, step: Arc<dyn MinimalStep>, params: AriesParams) -> Self {
        AriesRouting { ar: crate::topology::concrete::<Aries>(topo).expect("the table lists aries only").clone(), step, params }
    }

    fn mode_of(&self, state: &RouteState) -> Mode {
        Mode::from_code(state.mode).unwrap_or(self.params.mode)
    }

    /// The first hop from router index `i` towards router index `j` of the same group
    /// (`i != j`): row or column first as `column_first` says, column lane `lane`.
    fn local_first(&self, i: usize, j: usize, column_first: bool, lane: usize) -> Hop {
        let (port, _) = self.ar.local_hop(i, j, column_first, lane);
        Hop { port: port as u16, dim: NO_DIM, ..Default::default() }
    }

    /// The first hop from router index `i` of its group to router index `out` (itself: the
    /// global port `port`) and the local hops to get there.
    fn towards(&self, i: usize, out: usize, port: u16, draw: &mut impl FnMut(u32) -> u32) -> (Hop, u64) {
        if i == out {
            return (Hop { port, dim: NO_DIM, class: 1, ..Default::default() }, 0);
        }
        let column_first = draw(2) == 1;
        let lane = draw(self.ar.column_links as u32) as usize;
        (self.local_first(i, out, column_first, lane), self.ar.local_distance(i, out) as u64)
    }

    /// A minimal path from `cur` to the packet's destination, its choices drawn by `draw`
    /// (a random or a hashed stream).
    fn minimal(&self, cur: usize, state: &RouteState, draw: &mut impl FnMut(u32) -> u32) -> Path {
        let a = self.ar.group_size();
        let (gc, i, gt, j) = (cur / a, cur % a, state.dst_switch as usize / a, state.dst_switch as usize % a);
        let mut st = *state;
        st.valiant = false;
        st.intermediate = st.src_switch;
        if gc == gt {
            let (first, hops) = self.towards(i, j, 0, draw);
            return Path { first, hops, state: st };
        }
        let r = draw(self.ar.bundle as u32) as usize;
        let (out, port) = self.ar.gateways(gc, gt)[r];
        let (arrive, _) = self.ar.gateways(gt, gc)[r];
        let (first, local) = self.towards(i, out as usize, port, draw);
        // The bundle link travels in the low half of `tie_dirs` (`aries_minimal`).
        st.tie_dirs = (st.tie_dirs & !0xffff) | r as u32;
        Path { first, hops: local + 1 + self.ar.local_distance(arrive as usize, j) as u64, state: st }
    }

    /// A non-minimal path from `cur`: through an intermediate group (between groups) or an
    /// intermediate router (inside one), its choices drawn by `draw`.
    fn nonminimal(&self, cur: usize, state: &RouteState, draw: &mut impl FnMut(u32) -> u32) -> Option<Path> {
        let a = self.ar.group_size();
        let (gc, i, gt, j) = (cur / a, cur % a, state.dst_switch as usize / a, state.dst_switch as usize % a);
        let mut st = *state;
        st.valiant = true;
        st.phase = 0;
        if gc == gt {
            if a < 3 {
                return None;
            }
            // Any router of the group but the two ends.
            let m = super::skipping(draw(a as u32 - 2) as usize, i, j);
            let (first, _) = self.towards(i, m, 0, draw);
            st.intermediate = (gc * a + m) as u32;
            let hops = (self.ar.local_distance(i, m) + self.ar.local_distance(m, j)) as u64;
            return Some(Path { first, hops, state: st });
        }
        if self.ar.g < 3 {
            return None;
        }
        let g = super::skipping(draw(self.ar.g as u32 - 2) as usize, gc, gt);
        let (r1, r2) = (draw(self.ar.bundle as u32) as usize, draw(self.ar.bundle as u32) as usize);
        let (out, port) = self.ar.gateways(gc, g)[r1];
        let (land, _) = self.ar.gateways(g, gc)[r1];
        let (leave, _) = self.ar.gateways(g, gt)[r2];
        let (arrive, _) = self.ar.gateways(gt, g)[r2];
        let (first, local) = self.towards(i, out as usize, port, draw);
        st.intermediate = (g * a + leave as usize) as u32;
        st.tie_dirs = (r1 as u32) | (r2 as u32) << 16;
        let hops = local + 1 + self.ar.local_distance(land as usize, leave as usize) as u64 + 1 + self.ar.local_distance(arrive as usize, j) as u64;
        Some(Path { first, hops, state: st })
    }

    /// The adaptive choice among two minimal and two non-minimal paths.
    fn adaptive(&self, cx: &mut RouteCtx, state: &RouteState, bias: u64) -> Path {
        let mut draw = |n: u32| cx.rng.gen_range(0..n.max(1));
        let mins = [self.minimal(cx.switch, state, &mut draw), self.minimal(cx.switch, state, &mut draw)];
        let nonmins = [self.nonminimal(cx.switch, state, &mut draw), self.nonminimal(cx.switch, state, &mut draw)];
        let score = |p: &Path| cx.congestion.hop_queue(cx.switch, &p.state, &p.first) as u64 * p.hops;
        // The first of equally good candidates wins: minimal paths before non-minimal ones.
        let (mut best_score, mut best) = mins.iter().map(|p| (score(p), *p)).min_by_key(|&(s, _)| s).expect("two candidates");
        let h_min = best.hops;
        for p in nonmins.iter().flatten() {
            let s = score(p) + bias * h_min;
            if s < best_score {
                (best_score, best) = (s, *p);
            }
        }
        best
    }

    /// The bias of `mode` for a packet at `switch` going to `dst`.
    fn bias(&self, mode: Mode, switch: usize, dst: usize) -> u64 {
        match mode {
            Mode::AdaptiveLowBias => self.params.bias_low,
            Mode::AdaptiveHighBias => self.params.bias_high,
            // Full bias one hop from the destination, none at the diameter's distance. (Only
            // this mode needs the distance, a search over the bundle's links.)
            Mode::IncreasinglyMinimal => {
                let (d, h_min) = (Topology::diameter(&self.ar) as u64, self.ar.distance(switch, dst) as u64);
                self.params.bias_high * d.saturating_sub(h_min) / d.saturating_sub(1).max(1)
            }
            _ => 0,
        }
    }

    /// A stream of choices hashed from the packet's header: its source and destination
    /// routers and (unless `per_pair`) its number in its message.
    fn hashed(state: &RouteState, per_pair: bool) -> impl FnMut(u32) -> u32 {
        let header = ((state.src_switch as u64) << 32 | state.dst_switch as u64) ^ if per_pair { 0 } else { (state.header as u64) << 20 };
        let mut k = 0u64;
        move |n: u32| {
            k += 1;
            (crate::random::seed_for(header, 0xa1e5, k) % n.max(1) as u64) as u32
        }
    }
}

impl Routing for AriesRouting {
    fn name(&self) -> &'static str {
        "aries"
    }

    fn on_inject(&self, state: &mut RouteState, rng: &mut Rng) {
        state.intermediate = state.src_switch;
        state.valiant = false;
        // Packets record the mode they went by, for the per-mode counts of the results.
        state.mode = self.mode_of(state).code();
        state.in_order = state.mode == Mode::InOrder.code();
        self.step.on_inject(state, rng);
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        if state.hops == 0 {
            let mode = self.mode_of(state);
            let path = match mode {
                Mode::MinHash => self.minimal(cx.switch, state, &mut Self::hashed(state, false)),
                Mode::InOrder => self.minimal(cx.switch, state, &mut Self::hashed(state, true)),
                Mode::NminHash => {
                    let mut draw = Self::hashed(state, false);
                    self.nonminimal(cx.switch, state, &mut draw).unwrap_or_else(|| self.minimal(cx.switch, state, &mut draw))
                }
                _ => self.adaptive(cx, state, self.bias(mode, cx.switch, state.dst_switch as usize)),
            };
            *state = path.state;
            out.push(path.first, 0);
            return;
        }
        let target = phase_target(cx.switch, state);
        out.push(self.step.hop(cx.switch, target, state, cx.rng), 0);
    }

    /// Non-minimal: up to two local hops to the bundle, the global hop, two local hops in the
    /// intermediate group, the second global hop and two local hops: 8 (or 4 inside a group).
    fn max_hops(&self) -> usize {
        let l = self.ar.local_diameter();
        3 * l + 2
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "aries",
    about: "the Cray Aries routing modes (adaptive with biases, hashed, in order), per message",
    keys: AriesKeys::KEYS,
    defaults: AriesKeys::defaults,
    candidates: super::few_candidates,
    queues: super::QueueView::OwnSwitch,
    build: |cx| Ok(Arc::new(AriesRouting::new(cx.topo.as_ref(), cx.step(), AriesParams::from_spec(cx.spec)?))),
};
