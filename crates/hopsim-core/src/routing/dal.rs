//! DAL, dimensionally-adaptive load-balanced routing on a HyperX (Ahn et al., SC 2009). At
//! each switch a packet may correct any dimension whose coordinate still differs from its
//! destination's, in one hop, or deroute in such a dimension to any other switch of it (any
//! coordinate but its own and the destination's), at most once per dimension. So a path has
//! at most two hops per dimension, and the packet still corrects every dimension it derouted
//! in.
//!
//! The minimal hops are candidates of priority 0, the deroutes of priority 1, and the head
//! takes the free VC of least weight (`Selection::Weighted`: the queue behind a minimal hop
//! against twice a deroute's plus one, as SST Merlin's `VDAL` weighs them, hyperx.cc
//! `routeVDAL`). It learns the hop it took (`on_hop`): a deroute marks its dimension in the
//! route state's word, which keeps that dimension's deroutes out of later candidates.
//!
//! Merlin's VDAL forbids two deroutes in a row in one dimension only; Ahn et al.'s DAL allows
//! one per dimension, which this follows: it bounds the path, and so the hop ladder.
//! With one VC class per hop (`ladder`, 2 x dimensions steps) the VC class rises along every
//! path, so DAL is deadlock-free there (`deadlock_freedom`).

use super::{Candidates, Hop, RouteCtx, RouteState, Routing, Selection};
use crate::topology::HyperX;
use std::sync::Arc;

pub struct Dal {
    hx: HyperX,
}

impl Dal {
    pub fn new(hx: HyperX) -> Self {
        Dal { hx }
    }

    fn derouted(state: &RouteState, dim: usize) -> bool {
        state.word >> dim & 1 == 1
    }
}

impl Routing for Dal {
    fn name(&self) -> &'static str {
        "dal"
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        let (grid, here, dst) = (&self.hx.grid, cx.switch, state.dst_switch as usize);
        for dim in 0..grid.n() {
            let (own, target) = (grid.coord(here, dim), grid.coord(dst, dim));
            if own == target {
                continue;
            }
            let hop = |c: usize| Hop { port: self.hx.port_to(here, dim, c) as u16, dim: dim as u8, ..Hop::default() };
            out.push(hop(target), 0);
            if !Self::derouted(state, dim) {
                for c in (0..grid.dims[dim]).filter(|&c| c != own && c != target) {
                    out.push(hop(c), 1);
                }
            }
        }
    }

    /// A hop that leaves its dimension unaligned was a deroute there.
    fn on_hop(&self, state: &mut RouteState, switch: usize, hop: &Hop) {
        state.count_hop(hop);
        if hop.eject {
            return;
        }
        let dim = hop.dim as usize;
        if self.hx.coord_through(switch, hop.port as usize) != self.hx.grid.coord(state.dst_switch as usize, dim) {
            state.word |= 1 << dim;
        }
    }

    fn learns_hops(&self) -> bool {
        true
    }

    fn selection(&self) -> Selection {
        Selection::Weighted
    }

    /// A deroute and a correction per dimension.
    fn max_hops(&self) -> usize {
        2 * self.hx.grid.n()
    }
}

pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "dal",
    about: "DAL on a HyperX: any unaligned dimension, minimally or by one deroute per dimension, the least weighted queue taken",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    // At most one per network port: a switch's hops in every dimension.
    candidates: |_, topo| super::every_port(topo),
    queues: super::QueueView::Blind,
    build: |cx| Ok(Arc::new(Dal::new(crate::topology::concrete::<crate::topology::HyperX>(&**cx.topo).expect("check_defined: the table lists dal on hyperx only").clone()))),
};
