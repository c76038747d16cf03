//! 2Phases MinLast: minimally routed packets use the second phase's VCs (as suggested for
//! UGAL's minimal traffic on dragonflies; unstable under Valiant, per the paper).

use super::two_phases::TwoPhases;
use crate::route::RouteState;

pub fn build(vcs: usize, dragonfly: bool) -> Option<TwoPhases> {
    TwoPhases::new("min_last", vcs, dragonfly, |_: &RouteState| 1)
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "min_last",
    about: "2Phases: VCs by Valiant phase, minimally routed packets on the second phase's",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| super::two_phases::checked(cx, build),
};
