//! Which VC policies make which routing algorithm deadlock-free on which topologies, and which
//! one `routing.vc_policy = "auto"` picks: the one table that says so. A pair not in it is
//! refused with an error naming `routing.vc_policy`, except `none`, which is deliberately
//! unsafe and always accepted (it exists to show the deadlock a policy prevents).
//!
//! The arguments behind each row are in the files of the policies (`vc/`) and routings
//! (`routing/`); `docs/model.md` gathers them.

use crate::error::{SpecError, SpecResult};
use crate::routing::{Algorithm, Routing};
use crate::spec::Spec;
use crate::topology::Topology;
use crate::vc::{Policy, VcPolicy};
use std::sync::Arc;

/// One row: an algorithm on some topology kinds, the policy `auto` picks and every policy
/// under which it is deadlock-free there.
pub struct Row {
    pub algorithm: Algorithm,
    pub kinds: &'static [&'static str],
    pub auto: Policy,
    pub sound: &'static [Policy],
}

const GRIDS: &[&str] = &["torus", "mesh"];
const LOW_DIAMETER: &[&str] = &["hyperx", "dragonfly", "dragonfly_plus"];

use Algorithm as A;
use Policy as P;

/// VC classes per Valiant phase or per hop: each phase's (or hop's) dependencies are
/// acyclic and classes are entered in increasing order.
const PHASES_OR_HOPS: &[Policy] = &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth];
/// Minimal routings whose channel dependencies are acyclic on one VC: any assignment works.
const ACYCLIC: &[Policy] = &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth, P::Dateline];

pub const TABLE: &[Row] = &[
    // Dally & Seitz: DOR with a dateline class per ring (phase_dateline keeps DOR in phase 0).
    Row { algorithm: A::Dor, kinds: GRIDS, auto: P::Dateline, sound: &[P::Dateline, P::DatelinePartition, P::PhaseDateline] },
    // Duato: the DOR + dateline escape sub-network on the escape VCs.
    Row { algorithm: A::Rdr, kinds: GRIDS, auto: P::Escape, sound: &[P::Escape] },
    Row { algorithm: A::MinAdaptive, kinds: GRIDS, auto: P::Escape, sound: &[P::Escape] },
    // Two DOR phases, each with its own dateline classes.
    Row { algorithm: A::Valiant, kinds: GRIDS, auto: P::PhaseDateline, sound: &[P::PhaseDateline] },
    Row { algorithm: A::Romm, kinds: GRIDS, auto: P::PhaseDateline, sound: &[P::PhaseDateline] },
    // DOR over HyperX dimensions: dependencies only go from lower to higher dimensions.
    Row {
        algorithm: A::Dor,
        kinds: &["hyperx"],
        auto: P::None,
        sound: &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth, P::Dateline, P::DatelinePartition, P::PhaseDateline],
    },
    Row {
        algorithm: A::Minimal,
        kinds: &["hyperx"],
        auto: P::None,
        sound: &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth, P::Dateline, P::DatelinePartition, P::PhaseDateline],
    },
    // Local-global-local: a local hop after the global one may wait for a local hop before
    // it in another group, so local VCs need two ordered classes.
    Row { algorithm: A::Minimal, kinds: &["dragonfly"], auto: P::LadderReuse, sound: PHASES_OR_HOPS },
    // Up-global-down and up/down use channels in a fixed order.
    Row { algorithm: A::Minimal, kinds: &["dragonfly_plus", "fat_tree"], auto: P::None, sound: ACYCLIC },
    Row { algorithm: A::Valiant, kinds: LOW_DIAMETER, auto: P::Ladder, sound: PHASES_OR_HOPS },
    // Aries: up to two local hops on each side of a global one, row and column in either
    // order, so local hops close cycles inside a group; only the hop ladders order them.
    Row { algorithm: A::Minimal, kinds: &["aries"], auto: P::LadderReuse, sound: &[P::Ladder, P::LadderReuse] },
    Row { algorithm: A::Valiant, kinds: &["aries"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // The modes' paths are Aries's minimal and Valiant paths (through an intermediate group).
    Row { algorithm: A::Aries, kinds: &["aries"], auto: P::LadderReuse, sound: &[P::Ladder, P::LadderReuse] },
    // Slim Fly: paths of at most 2 hops (4 under Valiant) from the wiring; only the hop
    // ladder orders them.
    Row { algorithm: A::Minimal, kinds: &["slim_fly"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { algorithm: A::Valiant, kinds: &["slim_fly"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // A graph from a file: any paths of bounded length (the wiring's shortest, Valiant's two
    // phases of them, UGAL's choice between the two); only the hop ladder orders them.
    Row { algorithm: A::Minimal, kinds: &["graph"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { algorithm: A::Valiant, kinds: &["graph"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { algorithm: A::UgalL, kinds: &["graph"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // UGAL commits each packet at its source switch to a minimal or a Valiant path: the
    // paths of minimal routing and of Valiant, nothing else. `auto` gives minimal packets VCs
    // of their own (2Phases MinLast): on a hop ladder they share the first hop's VC with the
    // detours, which then wait behind minimal packets stuck at a saturated gateway
    // (docs/studies/adaptive-routing.md: ADV+1 on the 33-group dragonfly, 0.294 -> 0.342).
    Row { algorithm: A::UgalL, kinds: LOW_DIAMETER, auto: P::MinLast, sound: PHASES_OR_HOPS },
    Row { algorithm: A::UgalG, kinds: LOW_DIAMETER, auto: P::MinLast, sound: PHASES_OR_HOPS },
    // PAR may leave the minimal path after a local hop: two local hops in the source group
    // before the first global one, which 2Phases's classes do not order. Only the hop ladder
    // (one step more than Valiant) orders them.
    Row { algorithm: A::Par, kinds: &["dragonfly"], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
];

/// The row of `algorithm` on a topology of kind `kind`, if the algorithm is defined there.
pub fn row(algorithm: Algorithm, kind: &str) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.algorithm == algorithm && r.kinds.contains(&kind))
}

/// The topology kinds `algorithm` is defined on.
pub fn kinds_of(algorithm: Algorithm) -> Vec<&'static str> {
    let mut kinds: Vec<&str> = TABLE.iter().filter(|r| r.algorithm == algorithm).flat_map(|r| r.kinds.iter().copied()).collect();
    kinds.dedup();
    kinds
}

/// Whether `routing.algorithm` is defined on topology kind `kind` (the table has its row);
/// asked before the routing is built, which relies on it.
pub fn check_defined(spec: &Spec, kind: &str) -> SpecResult<()> {
    let algo = crate::routing::algorithm(spec)?;
    if row(algo, kind).is_some() {
        return Ok(());
    }
    Err(SpecError::new(
        "routing.algorithm",
        format!("{:?}", algo.name()),
        format!("not defined on topology.kind = {kind:?}; it needs one of: {}", kinds_of(algo).join(", ")),
    ))
}

/// The VC policy of a run: `auto` resolved by the table, any other checked against it.
pub fn policy(spec: &Spec, algorithm: Algorithm, kind: &str) -> SpecResult<Policy> {
    let r = row(algorithm, kind).expect("the routing was built, so the table has its row");
    // Valiant over every shortest next hop leaves the topology's minimal paths (on a
    // dragonfly, global-local-global through a third group): only the hop ladders, which
    // order any path of bounded length, still hold.
    let all_shortest = crate::routing::ValiantPaths::from_spec(spec) == crate::routing::ValiantPaths::AllShortest
        || crate::routing::minimal_paths(spec) == crate::routing::ValiantPaths::AllShortest;
    let sound: &[Policy] = if all_shortest { &[P::Ladder, P::LadderReuse] } else { r.sound };
    let asked = Policy::from_spec(spec)?;
    let Some(p) = asked else { return Ok(if all_shortest { P::Ladder } else { r.auto }) };
    if p == P::None || sound.contains(&p) {
        return Ok(p);
    }
    Err(SpecError::new(
        "routing.vc_policy",
        format!("{:?}", p.name()),
        format!(
            "routing.algorithm = {:?} is not deadlock-free with it; use one of: {}",
            algorithm.name(),
            sound.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
        ),
    ))
}

/// The VC policy of a run with routing `routing` on `topo`, resolved and checked by the
/// table, then built for the routing's longest path.
pub fn build_vc_policy(spec: &Spec, topo: &Arc<dyn Topology>, routing: &dyn Routing) -> SpecResult<Arc<dyn VcPolicy>> {
    let p = policy(spec, crate::routing::algorithm(spec)?, topo.kind())?;
    crate::vc::build(spec, p, topo, routing.max_hops())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_is_always_sound_and_rows_do_not_overlap() {
        for (i, r) in TABLE.iter().enumerate() {
            assert!(r.auto == P::None || r.sound.contains(&r.auto), "{:?} on {:?}", r.algorithm, r.kinds);
            for other in &TABLE[i + 1..] {
                let overlap = other.algorithm == r.algorithm && other.kinds.iter().any(|k| r.kinds.contains(k));
                assert!(!overlap, "{:?} has two rows for one kind", r.algorithm);
            }
        }
    }
}
