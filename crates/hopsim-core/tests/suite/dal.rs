//! DAL on a HyperX: the hops it offers, the state it keeps through `Routing::on_hop`, its
//! paths against the hop ladder, and whole runs under adversarial traffic against UGAL.
use crate::common;

use hopsim_core::routing::{self, CandidateBuf, IdleNetwork, RouteCtx, RouteState, Routing, Rng, Selection};
use hopsim_core::topology::{self, Topology};
use hopsim_core::spec;
use rand::{Rng as _, SeedableRng};
use std::sync::Arc;

const HX3: &str = "[topology]\nkind = \"hyperx\"\ndims = [3, 3, 3]\nservers_per_switch = 3\n";

fn dal(topo: &str) -> (spec::Validated, Arc<dyn Topology>, Arc<dyn Routing>) {
    let s = spec::from_toml_str(&format!("{topo}[router]\nvcs = 6\n[routing]\nalgorithm = \"dal\"\n[traffic]\nload = 0.1\n")).unwrap_or_else(|e| panic!("{e}"));
    let t = topology::build(&s).unwrap();
    let r = routing::build(&s, &t).unwrap_or_else(|e| panic!("{e}"));
    (s, t, r)
}

fn candidates(r: &dyn Routing, switch: usize, st: &mut RouteState) -> CandidateBuf {
    let mut out = CandidateBuf::default();
    let mut rng = Rng::seed_from_u64(1);
    r.route(&mut RouteCtx { switch, rng: &mut rng, congestion: &IdleNetwork }, st, &mut out.out());
    out
}

#[test]
fn it_offers_every_unaligned_dimension_and_deroutes_only_where_it_has_not() {
    let (_, topo, r) = dal(HX3);
    assert_eq!(r.selection(), Selection::Weighted);
    let hx = topology::concrete::<topology::HyperX>(&*topo).unwrap();
    // From (0,0,0) to (1,1,0): dimensions 0 and 1 unaligned, each with its minimal hop
    // (priority 0) and one deroute (priority 1, to coordinate 2).
    let (src, dst) = (hx.grid.switch_at(&[0, 0, 0]), hx.grid.switch_at(&[1, 1, 0]));
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    let offered: Vec<(u8, u8)> = candidates(r.as_ref(), src, &mut st).as_slice().iter().map(|c| (c.hop.dim, c.priority)).collect();
    assert_eq!(offered, [(0, 0), (0, 1), (1, 0), (1, 1)]);
    // Deroute in dimension 0, to (2,0,0): the routing learns it, and offers no second one there.
    let out = candidates(r.as_ref(), src, &mut st);
    let deroute = out.as_slice()[1].hop;
    r.on_hop(&mut st, src, &deroute);
    assert_eq!((st.word, st.hops), (0b1, 1));
    let here = hx.grid.switch_at(&[2, 0, 0]);
    let offered: Vec<(u8, u8)> = candidates(r.as_ref(), here, &mut st).as_slice().iter().map(|c| (c.hop.dim, c.priority)).collect();
    assert_eq!(offered, [(0, 0), (1, 0), (1, 1)]);
    // A minimal hop marks nothing.
    let minimal = candidates(r.as_ref(), here, &mut st).as_slice()[1].hop;
    r.on_hop(&mut st, here, &minimal);
    assert_eq!((st.word, st.hops), (0b1, 2));
}

/// Every pair, candidates drawn at random, each hop learned as the engine does: the
/// destination is reached in at most two hops per dimension, never two deroutes in one, and
/// the ladder's VC class is the hop's index, so it rises along every path.
#[test]
fn its_paths_take_at_most_a_deroute_and_a_correction_per_dimension_up_the_ladder() {
    for t in [HX3, "[topology]\nkind = \"hyperx\"\ndims = [4, 5]\n"] {
        let (s, topo, r) = dal(t);
        let v = hopsim_core::deadlock_freedom::build_vc_policy(&s, &topo, r.as_ref()).unwrap();
        assert_eq!(v.name(), "ladder");
        let hx = topology::concrete::<topology::HyperX>(&*topo).unwrap();
        let n = hx.grid.n();
        let mut rng = Rng::seed_from_u64(9);
        let mut deroutes = 0;
        for src in 0..topo.num_switches() {
            for dst in 0..topo.num_switches() {
                let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
                r.on_inject(&mut st, &mut rng);
                let (mut cur, mut per_dim, mut last_class) = (src, vec![0; n], None);
                while cur != dst {
                    let out = candidates(r.as_ref(), cur, &mut st);
                    let c = out.as_slice()[rng.gen_range(0..out.len())];
                    let class = (v.allowed(&st, &c.hop) & v.all()).trailing_zeros();
                    assert!(last_class.map_or(true, |l| class > l), "the ladder class fell: {last_class:?} -> {class}");
                    last_class = Some(class);
                    r.on_hop(&mut st, cur, &c.hop);
                    per_dim[c.hop.dim as usize] += 1;
                    cur = topo.neighbour(cur, c.hop.port as usize).unwrap().switch as usize;
                    assert!(per_dim.iter().all(|&h| h <= 2), "{src} -> {dst}: {per_dim:?}");
                }
                assert!(st.hops as usize <= r.max_hops() && r.max_hops() == 2 * n);
                let twice: u32 = (0..n).filter(|&d| per_dim[d] == 2).map(|d| 1 << d).sum();
                assert_eq!(st.word, twice, "{src} -> {dst}: the word marks the dimensions derouted in");
                deroutes += twice.count_ones();
            }
        }
        assert!(deroutes > 0);
    }
}

/// A 4-D HyperX of side 8 offers up to 28 candidates at a switch, more than a packet holds:
/// they live beside the packets, every one of them reachable.
#[test]
fn a_hyperx_with_more_ports_than_a_packet_holds_routes_with_every_candidate() {
    let t = "[topology]\nkind = \"hyperx\"\ndims = [8, 8, 8, 8]\n";
    let (s, topo, r) = dal(t);
    assert_eq!(routing::max_candidates(&s, topo.as_ref()), 28);
    let hx = topology::concrete::<topology::HyperX>(&*topo).unwrap();
    let (src, dst) = (hx.grid.switch_at(&[0, 0, 0, 0]), hx.grid.switch_at(&[1, 1, 1, 1]));
    let mut st = RouteState { src_switch: src as u32, dst_switch: dst as u32, ..Default::default() };
    assert_eq!(candidates(r.as_ref(), src, &mut st).len(), 28);
    let m = common::run(&format!("{t}servers_per_switch = 1\n[router]\nvcs = 8\n[routing]\nalgorithm = \"dal\"\n[traffic]\npattern = \"shift\"\nshift = [1, 1, 1, 1]\nload = 0.9\n[run]\nwarmup = 300\ncycles = 600\n")).metrics;
    assert!(!m.deadlock && m.hops_max <= 8 && m.hops_mean > 4.0, "{} {} {}", m.deadlock, m.hops_max, m.hops_mean);
}

/// Under shift [1, 1, 1] every minimal path of a 3-D HyperX is loaded alike: DAL's
/// per-hop deroutes carry at least what UGAL's source-chosen detours do, without deadlock on
/// the ladder, and the engine tells DAL its hops (else deroutes would repeat past 2 per
/// dimension).
#[test]
fn under_adversarial_shift_it_carries_at_least_what_ugal_does_deadlock_free() {
    let run = |algo: &str| {
        common::run(&format!(
            "{HX3}[router]\nvcs = 6\n[routing]\nalgorithm = \"{algo}\"\n[traffic]\npattern = \"shift\"\nshift = [1, 1, 1]\nload = 0.9\n[run]\nwarmup = 3000\ncycles = 6000\nseed = 2\n"
        ))
        .metrics
    };
    let (dal, ugal, min) = (run("dal"), run("ugal_l"), run("minimal"));
    for m in [&dal, &ugal, &min] {
        assert!(!m.deadlock, "{}", m.deadlock_where);
    }
    assert!(dal.hops_max <= 6, "{}", dal.hops_max);
    assert!(dal.accepted_load >= ugal.accepted_load && ugal.accepted_load > min.accepted_load * 1.05, "dal {} ugal {} min {}", dal.accepted_load, ugal.accepted_load, min.accepted_load);
}
