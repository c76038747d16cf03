//! Which VC policies make which routing algorithm deadlock-free on which topologies, and which
//! one `routing.vc_policy = "auto"` picks: the one table that says so. A pair not in it is
//! refused with an error naming `routing.vc_policy`, except `none`, which is deliberately
//! unsafe and always accepted (it exists to show the deadlock a policy prevents), and the
//! peers' rules kept as policies (`UNCHECKED`).
//!
//! The arguments behind each row are in the files of the policies (`vc/`) and routings
//! (`routing/`); `docs/model.md` gathers them.

use crate::error::{SpecError, SpecResult};
use crate::routing::{Algorithm, Routing};
use crate::spec::Spec;
use crate::topology::{aries, dragonfly, dragonfly_plus, fat_tree, graph, hyperx, mesh, slim_fly, torus, Kind, Topology};
use crate::vc::{Policy, VcPolicy};
use std::sync::Arc;

/// One row: an algorithm on some topology kinds (their registry entries), when the
/// experiment's keys make it so, the policy `auto` picks and every policy under which it is
/// deadlock-free there.
pub struct Row {
    pub algorithm: Algorithm,
    pub kinds: &'static [&'static Kind],
    pub when: When,
    pub auto: Policy,
    pub sound: &'static [Policy],
}

impl Row {
    /// Whether the row is about topology kind `kind` (kinds are compared by name).
    pub fn covers(&self, kind: &str) -> bool {
        self.kinds.iter().any(|k| k.name == kind)
    }
}

/// What a row asks of the experiment's keys besides its algorithm and topology kind. A row
/// with a condition comes before the algorithm's plain row for those kinds, and wins when
/// its condition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// Every shortest next hop of the wiring (`routing.valiant_paths` or
    /// `routing.minimal_paths` = "all_shortest"): paths beyond the topology's own.
    AllShortestPaths,
}

impl When {
    fn holds(self, spec: &Spec) -> bool {
        match self {
            When::Always => true,
            When::AllShortestPaths => {
                let all = crate::routing::ValiantPaths::AllShortest;
                crate::routing::ValiantPaths::from_spec(spec) == all || crate::routing::minimal_paths(spec).is_ok_and(|p| p == all)
            }
        }
    }
}

const GRIDS: &[&Kind] = &[&torus::KIND, &mesh::KIND];
const LOW_DIAMETER: &[&Kind] = &[&hyperx::KIND, &dragonfly::KIND, &dragonfly_plus::KIND];

use Algorithm as A;
use Policy as P;
use When as W;

/// VC classes per Valiant phase or per hop: each phase's (or hop's) dependencies are
/// acyclic and classes are entered in increasing order.
const PHASES_OR_HOPS: &[Policy] = &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth];
/// Accepted with any routing, unchecked: `none`, deliberately unsafe, and peers' rules kept
/// so that a peer's result can be reproduced (`global_hops`, SST Merlin's dragonfly VCs;
/// `optical_dateline`, BookSim2's dragonfly UGAL), which are not deadlock-free on every path
/// hopsim's routings take. The watchdog reports a deadlock.
const UNCHECKED: &[Policy] = &[P::None, P::GlobalHops, P::OpticalDateline];
/// Minimal routings whose channel dependencies are acyclic on one VC: any assignment works.
const ACYCLIC: &[Policy] = &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth, P::Dateline];

/// Where `minimal` and Valiant follow a minimal step (`routing::MINIMAL_STEPS`) rather than
/// coordinates, and so may take every shortest next hop (`minimal_paths`, `valiant_paths`):
/// the kinds with a step, Valiant's those it is defined on (not the fat-tree). A test holds
/// them to the step registry.
const VALIANT_STEP_KINDS: &[&Kind] = &[&hyperx::KIND, &dragonfly::KIND, &dragonfly_plus::KIND, &aries::KIND, &slim_fly::KIND, &graph::KIND];
const MINIMAL_STEP_KINDS: &[&Kind] = &[&hyperx::KIND, &dragonfly::KIND, &dragonfly_plus::KIND, &fat_tree::KIND, &aries::KIND, &slim_fly::KIND, &graph::KIND];

pub const TABLE: &[Row] = &[
    // Every shortest next hop leaves the topology's own paths (on a dragonfly,
    // global-local-global through a third group): only the hop ladders, which order any
    // path of bounded length, still hold.
    Row { when: W::AllShortestPaths, algorithm: A::Minimal, kinds: MINIMAL_STEP_KINDS, auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { when: W::AllShortestPaths, algorithm: A::Valiant, kinds: VALIANT_STEP_KINDS, auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // Dally & Seitz: DOR with a dateline class per ring (phase_dateline keeps DOR in phase 0).
    Row { when: W::Always, algorithm: A::Dor, kinds: GRIDS, auto: P::Dateline, sound: &[P::Dateline, P::DatelinePartition, P::PhaseDateline] },
    // Duato: the DOR + dateline escape sub-network on the escape VCs.
    Row { when: W::Always, algorithm: A::Rdr, kinds: GRIDS, auto: P::Escape, sound: &[P::Escape] },
    Row { when: W::Always, algorithm: A::MinAdaptive, kinds: GRIDS, auto: P::Escape, sound: &[P::Escape] },
    // Two DOR phases, each with its own dateline classes.
    Row { when: W::Always, algorithm: A::Valiant, kinds: GRIDS, auto: P::PhaseDateline, sound: &[P::PhaseDateline] },
    Row { when: W::Always, algorithm: A::Romm, kinds: GRIDS, auto: P::PhaseDateline, sound: &[P::PhaseDateline] },
    // DOR over HyperX dimensions: dependencies only go from lower to higher dimensions.
    Row {
        when: W::Always,
        algorithm: A::Dor,
        kinds: &[&hyperx::KIND],
        auto: P::None,
        sound: &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth, P::Dateline, P::DatelinePartition, P::PhaseDateline],
    },
    Row {
        when: W::Always,
        algorithm: A::Minimal,
        kinds: &[&hyperx::KIND],
        auto: P::None,
        sound: &[P::Ladder, P::LadderReuse, P::MinFirst, P::MinLast, P::MinBoth, P::Dateline, P::DatelinePartition, P::PhaseDateline],
    },
    // Local-global-local: a local hop after the global one may wait for a local hop before
    // it in another group, so local VCs need two ordered classes.
    Row { when: W::Always, algorithm: A::Minimal, kinds: &[&dragonfly::KIND], auto: P::LadderReuse, sound: PHASES_OR_HOPS },
    // Up-global-down and up/down use channels in a fixed order.
    Row { when: W::Always, algorithm: A::Minimal, kinds: &[&dragonfly_plus::KIND, &fat_tree::KIND], auto: P::None, sound: ACYCLIC },
    Row { when: W::Always, algorithm: A::Valiant, kinds: LOW_DIAMETER, auto: P::Ladder, sound: PHASES_OR_HOPS },
    // Aries: up to two local hops on each side of a global one, row and column in either
    // order, so local hops close cycles inside a group; only the hop ladders order them.
    Row { when: W::Always, algorithm: A::Minimal, kinds: &[&aries::KIND], auto: P::LadderReuse, sound: &[P::Ladder, P::LadderReuse] },
    Row { when: W::Always, algorithm: A::Valiant, kinds: &[&aries::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // The modes' paths are Aries's minimal and Valiant paths (through an intermediate group).
    Row { when: W::Always, algorithm: A::Aries, kinds: &[&aries::KIND], auto: P::LadderReuse, sound: &[P::Ladder, P::LadderReuse] },
    // Slim Fly: paths of at most 2 hops (4 under Valiant) from the wiring; only the hop
    // ladder orders them.
    Row { when: W::Always, algorithm: A::Minimal, kinds: &[&slim_fly::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { when: W::Always, algorithm: A::Valiant, kinds: &[&slim_fly::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // A graph from a file: any paths of bounded length (the wiring's shortest, Valiant's two
    // phases of them, UGAL's choice between the two); only the hop ladder orders them.
    Row { when: W::Always, algorithm: A::Minimal, kinds: &[&graph::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { when: W::Always, algorithm: A::Valiant, kinds: &[&graph::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    Row { when: W::Always, algorithm: A::UgalL, kinds: &[&graph::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // UGAL commits each packet at its source switch to a minimal or a Valiant path: the
    // paths of minimal routing and of Valiant, nothing else. `auto` gives minimal packets VCs
    // of their own (2Phases MinLast): on a hop ladder they share the first hop's VC with the
    // detours, which then wait behind minimal packets stuck at a saturated gateway
    // (docs/studies/adaptive-routing.md: ADV+1 on the 33-group dragonfly, 0.294 -> 0.342).
    Row { when: W::Always, algorithm: A::UgalL, kinds: LOW_DIAMETER, auto: P::MinLast, sound: PHASES_OR_HOPS },
    Row { when: W::Always, algorithm: A::UgalG, kinds: LOW_DIAMETER, auto: P::MinLast, sound: PHASES_OR_HOPS },
    // DAL: at most a deroute and a correction per HyperX dimension, in any order of the
    // dimensions; the hop ladder's class rises along every such path.
    Row { when: W::Always, algorithm: A::Dal, kinds: &[&hyperx::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
    // PAR may leave the minimal path after a local hop: two local hops in the source group
    // before the first global one, which 2Phases's classes do not order. Only the hop ladder
    // (one step more than Valiant) orders them.
    Row { when: W::Always, algorithm: A::Par, kinds: &[&dragonfly::KIND], auto: P::Ladder, sound: &[P::Ladder, P::LadderReuse] },
];

/// The plain row of `algorithm` on a topology of kind `kind`, if the algorithm is defined there.
pub fn row(algorithm: Algorithm, kind: &str) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.when == When::Always && r.algorithm == algorithm && r.covers(kind))
}

/// The row that holds for `spec`'s keys: the first whose condition holds.
fn row_for(spec: &Spec, algorithm: Algorithm, kind: &str) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.algorithm == algorithm && r.covers(kind) && r.when.holds(spec))
}

/// The kinds where `algorithm` has a row with condition `when`, comma-separated (for the
/// messages of the keys that bring the condition).
pub fn kinds_where(algorithm: Algorithm, when: When) -> String {
    let mut kinds: Vec<&str> = TABLE.iter().filter(|r| r.algorithm == algorithm && r.when == when).flat_map(|r| r.kinds.iter().map(|k| k.name)).collect();
    kinds.dedup();
    kinds.join(", ")
}

/// The topology kinds `algorithm` is defined on.
pub fn kinds_of(algorithm: Algorithm) -> Vec<&'static str> {
    let mut kinds: Vec<&str> = TABLE.iter().filter(|r| r.algorithm == algorithm).flat_map(|r| r.kinds.iter().map(|k| k.name)).collect();
    kinds.dedup();
    kinds
}

/// Whether `routing.algorithm` is defined on topology kind `kind` (the table has its row);
/// asked before the routing is built, which relies on it.
pub fn check_defined(spec: &Spec, kind: &str) -> SpecResult<()> {
    let algo = crate::routing::algorithm(spec)?;
    if row(algo, kind).is_some() {
        return check_valiant_keys(spec, algo, kind);
    }
    Err(SpecError::new(
        "routing.algorithm",
        format!("{:?}", algo.name()),
        format!("not defined on topology.kind = {kind:?}; it needs one of: {}", kinds_of(algo).join(", ")),
    ))
}

/// Valiant's own keys change only Valiant that follows a minimal step (the kinds of its
/// shortest-path rows): refused elsewhere, naming those kinds.
fn check_valiant_keys(spec: &Spec, algo: Algorithm, kind: &str) -> SpecResult<()> {
    let (redraw, paths) = crate::routing::valiant_options(spec)?;
    let used = algo == A::Valiant && TABLE.iter().any(|r| r.algorithm == A::Valiant && r.when == W::AllShortestPaths && r.covers(kind));
    let only = || format!("only used by routing.algorithm = \"valiant\" on {}", kinds_where(A::Valiant, W::AllShortestPaths));
    if redraw && !used {
        return Err(SpecError::new("routing.valiant_redraw", "true", only()));
    }
    if paths != crate::routing::ValiantPaths::Topology && !used {
        return Err(SpecError::new("routing.valiant_paths", format!("{:?}", paths.name()), only()));
    }
    Ok(())
}

/// The VC policy of a run: `auto` resolved by the table, any other checked against it.
pub fn policy(spec: &Spec, algorithm: Algorithm, kind: &str) -> SpecResult<Policy> {
    let r = row_for(spec, algorithm, kind).expect("the routing was built, so the table has its row");
    let sound = r.sound;
    let asked = Policy::from_spec(spec)?;
    let Some(p) = asked else { return Ok(r.auto) };
    if UNCHECKED.contains(&p) || sound.contains(&p) {
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
            assert!(r.auto == P::None || r.sound.contains(&r.auto), "{:?} on {:?}", r.algorithm, r.kinds.iter().map(|k| k.name).collect::<Vec<_>>());
            for other in &TABLE[i + 1..] {
                let overlap = other.algorithm == r.algorithm && other.when == r.when && other.kinds.iter().any(|k| r.covers(k.name));
                assert!(!overlap, "{:?} has two rows for one kind", r.algorithm);
            }
            // A conditional row only narrows a plain one: it comes first, and where it holds
            // the algorithm is defined anyway.
            if r.when != When::Always {
                for k in r.kinds.iter().map(|k| k.name) {
                    let plain = TABLE.iter().position(|o| o.when == When::Always && o.algorithm == r.algorithm && o.covers(k));
                    assert!(plain.is_some_and(|j| j > i), "{:?} on {k}: a {:?} row needs a plain row after it", r.algorithm, r.when);
                }
            }
        }
    }

    /// The table names kinds and algorithms only through their registries: a kind's entry
    /// is the one `topology::KINDS` lists under its name.
    #[test]
    fn every_row_names_registered_kinds_and_every_algorithm_has_a_row() {
        for r in TABLE {
            for k in r.kinds {
                let listed = crate::topology::kind(k.name).is_some_and(|e| e.about == k.about);
                assert!(listed, "{:?}: {:?} is not in topology::KINDS ({})", r.algorithm, k.name, crate::topology::kind_names());
            }
        }
        for a in crate::routing::Algorithm::ALL {
            assert!(TABLE.iter().any(|r| r.algorithm == *a), "{a:?} has no row");
        }
    }

    /// The shortest-path rows of `minimal` and Valiant are on exactly the kinds with a
    /// registered minimal step (Valiant's on those of them it is defined on): a kind that
    /// gains or loses a step fails here until its rows follow.
    #[test]
    fn the_shortest_path_rows_are_the_kinds_with_a_minimal_step() {
        use std::collections::BTreeSet;
        let stepped: BTreeSet<&str> = crate::routing::MINIMAL_STEPS.iter().map(|s| s.topology.name).collect();
        let rows = |algorithm: Algorithm| -> BTreeSet<&str> {
            TABLE.iter().filter(|r| r.algorithm == algorithm && r.when == W::AllShortestPaths).flat_map(|r| r.kinds.iter().map(|k| k.name)).collect()
        };
        assert_eq!(rows(A::Minimal), stepped, "minimal's all_shortest rows");
        let valiant: BTreeSet<&str> = stepped.iter().copied().filter(|k| row(A::Valiant, k).is_some()).collect();
        assert_eq!(rows(A::Valiant), valiant, "valiant's all_shortest rows");
    }
}
