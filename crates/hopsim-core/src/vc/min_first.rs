//! 2Phases MinFirst: minimally routed packets use the first phase's VCs.

use super::two_phases::TwoPhases;
use crate::route::RouteState;

pub fn build(vcs: usize, dragonfly: bool) -> Option<TwoPhases> {
    TwoPhases::new("min_first", vcs, dragonfly, |_: &RouteState| 0)
}
