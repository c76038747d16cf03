#![allow(dead_code)]
use hopsim_core::{simulate, spec, RunResult};

/// Parse a TOML spec and run it, checking the invariants every run must keep.
pub fn run(toml: &str) -> RunResult {
    let spec = spec::from_toml_str(toml).unwrap_or_else(|e| panic!("bad spec: {e}\n{toml}"));
    let r = simulate(&spec).unwrap_or_else(|e| panic!("bad spec: {e}"));
    assert!(r.metrics.phits_conserved, "phits not conserved: {}", r.metrics.deadlock_where);
    assert!(r.metrics.credits_conserved, "credits not conserved: {}", r.metrics.deadlock_where);
    assert!(r.links.load.iter().all(|&l| l <= 1.0 + 1e-9), "a channel carried more than 1 phit per cycle");
    r
}

/// The error a spec gets, from parsing it or from running it; a spec that runs panics.
pub fn refused(toml: &str) -> hopsim_core::SpecError {
    let spec = match spec::from_toml_str(toml) {
        Ok(s) => s,
        Err(e) => return e,
    };
    match simulate(&spec) {
        Err(e) => e,
        Ok(_) => panic!("accepted:\n{toml}"),
    }
}

/// Everything a run reports except its wall-clock speed: what must be equal between two
/// ways of running the same spec and seed.
pub fn fingerprint(r: &RunResult) -> String {
    let mut r = r.clone();
    r.metrics.wall_seconds = 0.0;
    r.metrics.router_cycles_per_second = 0.0;
    r.metrics.phits_moved_per_second = 0.0;
    serde_json::to_string(&r).unwrap()
}

/// Networks and workloads (specs without `[run]`) that the tests comparing two ways of
/// running a spec share (threads.rs, every_cycle.rs), each reaching a different part of the
/// engine.
pub mod nets {
    /// Saturated: heads meet at every switch each cycle and Valiant draws their
    /// intermediates.
    pub const HYPERX_VALIANT_SATURATED: &str = "[topology]\nkind = \"hyperx\"\ndims = [4, 4]\nservers_per_switch = 4\n[router]\nvcs = 4\n\
         [routing]\nalgorithm = \"valiant\"\nvc_policy = \"ladder\"\n[traffic]\npattern = \"uniform\"\nload = 1.0";

    /// UGAL-L reads its own switch's queues, UGAL-G those of other switches; ties are random.
    pub fn dragonfly_ugal(algorithm: &str) -> String {
        format!(
            "[topology]\nkind = \"dragonfly\"\nswitches_per_group = 4\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
             [router]\nvcs = 6\njsq_tie_break = \"random\"\n[routing]\nalgorithm = \"{algorithm}\"\n\
             [traffic]\npattern = \"uniform\"\nload = 0.6"
        )
    }

    /// Saturated global links: the adaptive choice reads the queues of its own switch.
    pub const ARIES_ADAPTIVE: &str = "[topology]\nkind = \"aries\"\ngroups = 3\nchassis = 2\nblades = 4\ncolumn_links = 3\nglobal_links_per_switch = 2\nservers_per_switch = 2\n\
         [router]\nvcs = 8\n[routing]\nalgorithm = \"aries\"\n[traffic]\npattern = \"uniform\"\nload = 0.7";

    /// Requests answered by the NICs, responses completing messages, acknowledgements opening
    /// the next window.
    pub const GET_BANDWIDTH_WINDOWS: &str = "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[packet]\nphits = 5\n[nic]\nprotocol = \"get\"\n\
         [message]\nbytes = 1000\n[workload]\nkind = \"bandwidth\"\niterations = 3\nwindow = 4\nack_bytes = 100\n\
         [traffic]\nactive_servers = 12";

    /// A ping-pong of 8 KB messages (three round trips) among `active_servers` servers of a
    /// torus of `dims`: a closed loop, whose next message waits for the last to arrive.
    pub fn ping_pong(dims: &str, active_servers: u32) -> String {
        format!(
            "[topology]\nkind = \"torus\"\ndims = {dims}\n[link]\ngbytes_per_s = 2.0\n[packet]\nphits = 16\nbytes = 512\n\
             [message]\nbytes = 8192\n[workload]\nkind = \"ping_pong\"\niterations = 3\n[traffic]\nactive_servers = {active_servers}"
        )
    }

    /// An allreduce job beside background traffic of another job: the workload's calls come
    /// from the deliveries, its timers draw from the servers' streams.
    pub const ALLREDUCE_BESIDE_BACKGROUND: &str = "[topology]\nkind = \"torus\"\ndims = [4, 4]\nservers_per_switch = 2\n[packet]\nphits = 4\nbytes = 64\n\
         [traffic]\n\
         [[jobs]]\nname = \"app\"\nranks = 8\nworkload = { motif = \"allreduce\", iterations = 3, bytes = 256 }\n\
         [[jobs]]\nname = \"noise\"\nranks = 16\nworkload = { motif = \"bernoulli\", load = 0.3, bytes = 64 }\n\
         background = true\nallocation = { policy = \"linear\", offset = 16 }";

    /// A ring without a dateline, which deadlocks under load.
    pub const DEADLOCKING_RING: &str = "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[router]\nvcs = 1\ninput_buffer = 1\noutput_buffer = 1\n\
         [routing]\nvc_policy = \"none\"\n[traffic]\npattern = \"uniform\"\nload = 1.0";
}

pub fn torus(dims: &str, extra: &str) -> String {
    format!("[topology]\nkind = \"torus\"\ndims = {dims}\n{extra}")
}

/// Shortest hops from `src` to every switch by breadth-first search, over paths with at most
/// one global link on topologies with groups (their notion of a minimal path).
pub fn one_global_distances(topo: &dyn hopsim_core::topology::Topology, src: usize) -> Vec<usize> {
    let n = topo.num_switches();
    let grouped = topo.groups() > 0;
    // State: (switch, global links used).
    let mut dist = vec![[usize::MAX; 2]; n];
    dist[src][0] = 0;
    let mut queue = std::collections::VecDeque::from([(src, 0usize)]);
    while let Some((s, g)) = queue.pop_front() {
        for p in 0..topo.network_ports(s) {
            let Some(peer) = topo.neighbour(s, p) else { continue };
            let t = peer.switch as usize;
            let ng = g + usize::from(grouped && topo.group_of(s) != topo.group_of(t));
            if ng <= 1 && dist[t][ng] == usize::MAX {
                dist[t][ng] = dist[s][g] + 1;
                queue.push_back((t, ng));
            }
        }
    }
    dist.iter().map(|d| d[0].min(d[1])).collect()
}
