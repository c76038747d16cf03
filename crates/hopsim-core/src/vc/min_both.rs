//! 2Phases MinBoth: a minimally routed packet uses the first phase's VCs if its drawn
//! intermediate was its source switch (or the routing is minimal), the second phase's if it
//! was its destination switch.

use super::two_phases::TwoPhases;
use crate::route::RouteState;

pub fn build(vcs: usize, dragonfly: bool) -> Option<TwoPhases> {
    TwoPhases::new("min_both", vcs, dragonfly, |st: &RouteState| usize::from(st.intermediate != st.src_switch))
}

pub const KIND: super::PolicyKind = super::PolicyKind {
    name: "min_both",
    about: "2Phases: VCs by Valiant phase, minimally routed packets on the phase their drawn intermediate says",
    keys: crate::component::NoKeys::KEYS,
    defaults: crate::component::NoKeys::defaults,
    build: |cx| super::two_phases::checked(cx, build),
};
