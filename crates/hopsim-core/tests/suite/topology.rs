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
