//! Wiring and distances of tori and meshes from 1 to 6 dimensions.
use hopsim_core::topology::{self, Topology};
use std::collections::VecDeque;

fn build(kind: &str, dims: &str) -> std::sync::Arc<dyn Topology> {
    let s = hopsim_core::spec::from_toml_str(&format!("[topology]\nkind = \"{kind}\"\ndims = {dims}\n[traffic]\nload = 0.1\n")).unwrap();
    topology::build(&s).unwrap()
}

fn bfs(t: &dyn Topology, src: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; t.num_switches()];
    dist[src] = 0;
    let mut q = VecDeque::from([src]);
    while let Some(s) = q.pop_front() {
        for p in 0..t.network_ports(s) {
            if let Some(n) = t.neighbour(s, p) {
                if dist[n.switch as usize] == usize::MAX {
                    dist[n.switch as usize] = dist[s] + 1;
                    q.push_back(n.switch as usize);
                }
            }
        }
    }
    dist
}

#[test]
fn wiring_links_and_distances() {
    for (kind, dims, switches, links, diameter) in [
        ("torus", "[8]", 8, 8, 4),
        ("torus", "[8, 8]", 64, 128, 8),
        ("torus", "[10, 10, 10]", 1000, 3000, 15),
        ("torus", "[4, 4, 4, 4, 2]", 512, 2560, 9), // k = 2: the + and - links are two links
        ("torus", "[3, 3, 3, 3, 3, 3]", 729, 4374, 6),
        ("mesh", "[4, 5]", 20, 31, 7),
        ("mesh", "[3, 3, 3]", 27, 54, 6),
    ] {
        let t = build(kind, dims);
        assert_eq!(t.num_switches(), switches, "{kind} {dims}");
        assert_eq!(topology::check_wiring(t.as_ref()).unwrap(), links, "{kind} {dims} links");
        assert_eq!(t.diameter(), diameter, "{kind} {dims}");
        for src in [0, switches / 3, switches - 1] {
            let d = bfs(t.as_ref(), src);
            for (dst, &dd) in d.iter().enumerate() {
                assert_eq!(t.distance(src, dst), dd, "{kind} {dims} {src}->{dst}");
                assert!(dd <= diameter);
            }
        }
    }
}

/// Each switch's group and tier, as the link maps read them: a dragonfly+ group is its
/// leaves then its spines, a fat-tree is numbered level by level, a torus has one tier.
#[test]
fn switch_roles_give_groups_and_tiers() {
    let roles = |topo: &str| -> serde_json::Value {
        let spec = hopsim_core::spec::from_toml_str(&format!("[topology]\n{topo}\n[traffic]\nload = 0.1\n")).unwrap();
        serde_json::from_str(&hopsim_core::switch_roles_json(&serde_json::to_string(&spec).unwrap(), None).unwrap()).unwrap()
    };
    let as_vec = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect::<Vec<_>>();
    let dfp = roles("kind = \"dragonfly_plus\"\nleaves_per_group = 2\nspines_per_group = 3\nglobal_links_per_switch = 1");
    assert_eq!(as_vec(&dfp["group"]), (0..4).flat_map(|g| [g; 5]).collect::<Vec<u64>>());
    assert_eq!(as_vec(&dfp["tier"]), [0, 0, 1, 1, 1].repeat(4));
    let ft = roles("kind = \"fat_tree\"\nk = 2\nlevels = 3");
    assert_eq!(as_vec(&ft["tier"]), (0..3).flat_map(|l| [l; 4]).collect::<Vec<u64>>());
    let torus = roles("kind = \"torus\"\ndims = [3, 3]");
    assert_eq!((as_vec(&torus["tier"]), as_vec(&torus["group"])), (vec![0; 9], vec![0; 9]));
}
