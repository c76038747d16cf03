//! 2Phases MinFirst: minimally routed packets use the first phase's VCs.

use super::two_phases::TwoPhases;
use crate::route::RouteState;

pub fn build(vcs: usize, dragonfly: bool) -> Option<TwoPhases> {
    TwoPhases::new("min_first", vcs, dragonfly, |_: &RouteState| 0)
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "min_first",
    about: "2Phases: VCs by Valiant phase, minimally routed packets on the first phase's",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| super::two_phases::checked(cx, build),
};
