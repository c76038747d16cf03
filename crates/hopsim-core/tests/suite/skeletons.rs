//! Application skeletons (docs/skeletons.md): each one's messages and bytes against its
//! formula, its zero-load iteration time against the critical path worked out by hand, and
//! key products too large for a message refused with the key at fault.
//!
//! As in motifs.rs the ranks share one switch, so a message of k packets of 64 bytes, sent
//! from an idle NIC, arrives T + (k - 1)P cycles later (T = 7, P = 4). In every timing case
//! below the ranks run in lock-step and each receiver takes one packet per P cycles from a
//! single sender, so no ejection port holds a packet up.
use crate::common;
use crate::jobs::{job, ONE_SWITCH};
use hopsim_core::stats::jobs::JobResult;
use hopsim_core::{simulate, spec};

const T: u64 = 7;
const P: u64 = 4;

fn run_job(ranks: usize, workload: &str) -> JobResult {
    let r = common::run(&format!("{ONE_SWITCH}{}", job("j", ranks, workload, "")));
    let j = r.jobs.into_iter().next().unwrap();
    assert!(j.complete, "{workload}: job did not finish");
    j
}

/// Messages and bytes of one iteration (the workload runs one).
fn counts(ranks: usize, workload: &str, messages: u64, bytes: u64) {
    let j = run_job(ranks, &format!("{workload}, iterations = 1"));
    assert_eq!((j.messages, j.bytes), (messages, bytes), "messages, bytes of {workload}");
}

/// The first iteration's cycles.
fn cycles(ranks: usize, workload: &str, want: u64) {
    let j = run_job(ranks, &format!("{workload}, iterations = 2"));
    assert_eq!(j.iteration_cycles[0], want, "{workload}: iterations took {:?}", j.iteration_cycles);
}

fn err(ranks: usize, workload: &str) -> hopsim_core::SpecError {
    let toml = format!("{ONE_SWITCH}{}", job("j", ranks, workload, ""));
    match spec::from_toml_str(&toml).and_then(|s| simulate(&s)) {
        Err(e) => e,
        Ok(_) => panic!("accepted: {workload}"),
    }
}

/// Messages and bytes of one halo exchange without wrap-around, summed over the offsets in
/// {-1, 0, 1}^d that move along at most `reach` dimensions: (g_d - |o_d|) ranks along each
/// dimension have a neighbour at offset o, and its message holds `ghost` along each
/// dimension o moves in and the domain along the others.
fn open_halo(grid: &[u64], domain: &[u64], ghost: u64, reach: usize, element_bytes: u64) -> (u64, u64) {
    let d = grid.len();
    let (mut messages, mut bytes) = (0, 0);
    for code in 0..3u64.pow(d as u32) {
        let o: Vec<i64> = (0..d).map(|i| (code / 3u64.pow(i as u32) % 3) as i64 - 1).collect();
        let moves = o.iter().filter(|&&v| v != 0).count();
        if moves == 0 || moves > reach {
            continue;
        }
        let pairs: u64 = (0..d).map(|i| grid[i] - o[i].unsigned_abs()).product();
        let size: u64 = (0..d).map(|i| if o[i] != 0 { ghost } else { domain[i] }).product::<u64>() * element_bytes;
        messages += pairs;
        bytes += pairs * size;
    }
    (messages, bytes)
}

#[test]
fn halo_counts_follow_the_stencil() {
    // 2D, 3 x 4 ranks, periodic, faces of a 5 x 7 domain: 4 neighbours each, x faces 7 x 8
    // bytes, y faces 5 x 8.
    counts(12, "motif = \"halo\", dims = 2, grid = [3, 4], domain = [5, 7], periodic = true", 12 * 4, 12 * 2 * (56 + 40));
    // With corners: 4 more of ghost^2 = 4 elements (ghost 2).
    counts(12, "motif = \"halo\", dims = 2, stencil = \"corner\", grid = [3, 4], domain = [5, 7], ghost = 2, periodic = true", 12 * 8, 12 * (2 * 2 * (56 + 40) + 4 * 4 * 8));
    // One rank along a periodic dimension is its own neighbour there: a local copy.
    counts(4, "motif = \"halo\", dims = 2, grid = [4, 1], domain = [3, 3], periodic = true", 4 * 2, 4 * 2 * 24);
    // Two along each of 4 periodic dimensions: both offsets reach the same rank, a message
    // each. Faces of a 2 x 3 x 4 x 5 domain: 60, 40, 30 and 24 elements.
    counts(16, "motif = \"halo\", dims = 4, grid = [2, 2, 2, 2], domain = [2, 3, 4, 5], periodic = true", 16 * 8, 16 * 2 * 8 * (60 + 40 + 30 + 24));
    // Without wrap-around, on non-cubic grids and domains, each stencil.
    for (stencil, reach) in [("face", 1), ("edge", 2), ("corner", 3)] {
        let (m, b) = open_halo(&[3, 2, 2], &[4, 5, 6], 1, reach, 4);
        counts(12, &format!("motif = \"halo\", stencil = \"{stencil}\", grid = [3, 2, 2], domain = [4, 5, 6], element_bytes = 4"), m, b);
    }
    let (m, b) = open_halo(&[2, 2, 2, 2], &[3, 3, 2, 4], 2, 2, 8);
    counts(16, "motif = \"halo\", dims = 4, stencil = \"edge\", grid = [2, 2, 2, 2], domain = [3, 3, 2, 4], ghost = 2", m, b);
    // The formula itself, by hand for a 3 x 2 grid with corners: 2 x 2 x-links, 3 y-links,
    // 2 x 2 diagonal pairs each way; faces 7 x 8 and 5 x 8 bytes, corners 8.
    assert_eq!(open_halo(&[3, 2], &[5, 7], 1, 2, 8), (2 * (4 + 3) + 2 * 4, 2 * (4 * 56 + 3 * 40) + 2 * 4 * 8));
}

#[test]
fn halo_takes_one_packet_slot_per_packet_sent() {
    // 4 x 4 ranks, periodic: every rank sends the same messages in the same order, so in
    // each slot of P cycles every rank receives one packet. The iteration is the last
    // packet's departure, (packets - 1)P, plus T, plus the computation.
    cycles(16, "motif = \"halo\", dims = 2, grid = [4, 4], domain = [8, 8], periodic = true, compute = 30", T + 3 * P + 30);
    // y faces of 16 x 8 bytes: two packets each; six packets in all.
    cycles(16, "motif = \"halo\", dims = 2, grid = [4, 4], domain = [16, 8], periodic = true", T + 5 * P);
    // With corners of 8 bytes: 8 one-packet messages.
    cycles(16, "motif = \"halo\", dims = 2, stencil = \"corner\", grid = [4, 4], domain = [8, 8], periodic = true", T + 7 * P);
    // Two ranks along 1 of 3 dimensions: a message each way.
    cycles(2, "motif = \"halo\", grid = [2, 1, 1], domain = [1, 1, 1], compute = 5", T + 5);
}

#[test]
fn cg_counts_its_halo_and_its_dot_products() {
    // 12 ranks: recursive doubling among 8, the other 4 folded in and out (4 + 8 x 3 + 4
    // messages of 8 bytes) per dot product.
    let (m, b) = open_halo(&[3, 2, 2], &[4, 4, 4], 1, 3, 8);
    counts(12, "motif = \"cg\", grid = [3, 2, 2], domain = [4, 4, 4]", m + 3 * 32, b + 3 * 32 * 8);
    let (m, b) = open_halo(&[3, 2, 2], &[4, 5, 6], 1, 1, 8);
    counts(12, "motif = \"cg\", grid = [3, 2, 2], domain = [4, 5, 6], stencil = \"face\", dot_products = 2", m + 2 * 32, b + 2 * 32 * 8);
    // Ring allreduces of 8 bytes among 8: 2 x 7 steps of one-byte chunks.
    counts(8, "motif = \"cg\", grid = [2, 2, 2], domain = [2, 2, 2], periodic = true, stencil = \"face\", allreduce = \"ring\", dot_products = 1", 8 * 6 + 8 * 14, 8 * 6 * 32 + 8 * 14);
}

#[test]
fn cg_waits_on_each_dot_product() {
    // Two ranks: the halo (T), the computation, three exchanges of one double (T each).
    cycles(2, "motif = \"cg\", grid = [2, 1, 1], domain = [1, 1, 1], stencil = \"face\", compute = 20", T + 20 + 3 * T);
    // A periodic ring of 4: two one-packet faces (T + P), then two ring allreduces of 6
    // steps.
    cycles(4, "motif = \"cg\", grid = [4, 1, 1], domain = [8, 8, 1], periodic = true, stencil = \"face\", allreduce = \"ring\", dot_products = 2, compute = 20", T + P + 20 + 12 * T);
}

#[test]
fn fft3d_transposes_within_rows_then_columns() {
    // 3 x 4 ranks, N = 12 of 16 bytes: 27648 bytes, 768 to each row peer (/ 12 x 3), 576
    // to each column peer (/ 12 x 4).
    counts(12, "motif = \"fft3d\", grid = [3, 4], points = 12", 12 * (2 + 3), 12 * (2 * 768 + 3 * 576));
    // N = 10 does not divide evenly: 16000 / 36 and / 48, rounded up.
    counts(12, "motif = \"fft3d\", grid = [3, 4], points = 10", 12 * (2 + 3), 12 * (2 * 445 + 3 * 334));
    // The default grid of 8 ranks is 4 x 2; complex singles.
    counts(8, "motif = \"fft3d\", points = 8, element_bytes = 8", 8 * (3 + 1), 8 * (3 * 128 + 256));
}

#[test]
fn fft3d_computes_between_its_transposes() {
    // 2 x 2 ranks, N = 4: 128 bytes (2 packets) to the one peer of each transpose.
    cycles(4, "motif = \"fft3d\", grid = [2, 2], points = 4, compute = 10", 3 * 10 + 2 * (T + P));
    // 4 x 2, N = 8: rows in 3 steps of 4 packets, T + 3P each (a NIC has sent a step's
    // packets before the step's receive ends); the column transpose one message of 8.
    cycles(8, "motif = \"fft3d\", grid = [4, 2], points = 8, compute = 10", 3 * 10 + 3 * (T + 3 * P) + T + 7 * P);
}

#[test]
fn graph500_levels_grow_then_shrink() {
    // 6 ranks, scale 8, edge factor 16: 8192 edge ends; 4 levels of 1, 3, 3, 1 eighths;
    // 16-byte records to each of 36 pairs: 456, 1366, 1366, 456 bytes (rounded up). Per
    // level 30 messages and a recursive-doubling allreduce among 6 (2 + 4 x 2 + 2).
    counts(6, "motif = \"graph500\", scale = 8, levels = 4", 4 * (30 + 12), 30 * (456 + 1366 + 1366 + 456) + 4 * 12 * 8);
    // SSSP: two phases per level, 24-byte records split between them: 342, 1024, 1024, 342.
    counts(6, "motif = \"graph500\", kernel = \"sssp\", scale = 8, levels = 4", 8 * (30 + 12), 2 * 30 * (342 + 1024 + 1024 + 342) + 8 * 12 * 8);
}

#[test]
fn graph500_synchronises_every_level() {
    // 2 ranks, scale 1, edge factor 16: 64 ends, half per level, 128 bytes (2 packets) per
    // pair; per level the exchange (T + P), the computation and the allreduce (T).
    cycles(2, "motif = \"graph500\", scale = 1, levels = 2, compute = 9", 2 * (T + P + 9 + T));
    // 4 ranks, 3 levels of 8, 16 and 8 bytes: 3 one-packet steps, then a ring of 6 steps.
    cycles(4, "motif = \"graph500\", scale = 2, edge_factor = 4, levels = 3, allreduce = \"ring\", compute = 9", 3 * (3 * T + 9 + 6 * T));
}

#[test]
fn md_stages_its_ghosts_and_reduces_every_thermo_step() {
    // 3 x 2 x 2 ranks, a 4 x 5 x 6 box, one ghost layer: slabs of 5 x 6 = 30, 6 x 6 = 36 and
    // 6 x 7 = 42 atoms (the later stages carry the earlier ghosts); 2 messages per stage,
    // forward and (newton) back. Positions 24 bytes, records 48 on rebuilds (steps 2, 4);
    // after step 3, an allreduce of 64 bytes among 12 (32 messages).
    let j = run_job(12, "motif = \"md\", iterations = 4, grid = [3, 2, 2], domain = [4, 5, 6], ghost = 1, rebuild_every = 2, thermo_every = 3");
    let slabs = 30 + 36 + 42;
    let plain = 2 * slabs * 24 * 2;
    let rebuild = 2 * slabs * 48 + 2 * slabs * 24;
    assert_eq!(j.messages, 12 * 4 * 12 + 32);
    assert_eq!(j.bytes, 12 * (plain + rebuild + plain + rebuild) + 32 * 64);
    // One rank along y and z: ghosts there are local copies.
    counts(4, "motif = \"md\", grid = [4, 1, 1], domain = [3, 3, 3], ghost = 1, newton = false, thermo_every = 0", 4 * 2, 4 * 2 * 9 * 24);
}

#[test]
fn md_stages_wait_on_each_other() {
    // 2 ranks, one atom each: the stage along x sends 2 one-packet messages (T + P), then
    // the forces, then the same back.
    cycles(2, "motif = \"md\", grid = [2, 1, 1], domain = [1, 1, 1], ghost = 1, thermo_every = 0, compute = 20", 2 * (T + P) + 20);
    // 2 x 2 x 2: stages of 1, 3 and 9 atoms (1, 2 and 4 packets per message, 2 messages).
    cycles(8, "motif = \"md\", grid = [2, 2, 2], domain = [1, 1, 1], ghost = 1, newton = false, thermo_every = 0, compute = 20", (T + P) + (T + 3 * P) + (T + 7 * P) + 20);
    // A ring of 4 with thermo every step: forward, forces, back, a ring allreduce of 6 steps.
    cycles(4, "motif = \"md\", grid = [4, 1, 1], domain = [1, 1, 1], ghost = 1, thermo_every = 1, allreduce = \"ring\", compute = 20", 2 * (T + P) + 20 + 6 * T);
}

#[test]
fn oversized_products_of_keys_are_refused() {
    let cases = [
        // 2^40 x 2^40 overflows; 2^30 x 2^30 x 8 fits 64 bits but not the 2^36-byte cap.
        (8, "motif = \"halo\", dims = 3, grid = [2, 2, 2], domain = [1099511627776, 1099511627776, 1]", "jobs[0].workload.domain"),
        (8, "motif = \"halo\", dims = 3, grid = [2, 2, 2], domain = [1073741824, 1073741824, 1073741824]", "jobs[0].workload.domain"),
        (8, "motif = \"halo\", dims = 2, grid = [4, 2], domain = [4, 4], element_bytes = 9223372036854775807", "jobs[0].workload.domain"),
        (8, "motif = \"cg\", grid = [2, 2, 2], domain = [1099511627776, 1099511627776, 1]", "jobs[0].workload.domain"),
        // N^3 overflows at 2^22; at 2^12 a row message is 2^36 x 16 / 8 bytes.
        (4, "motif = \"fft3d\", points = 4194304", "jobs[0].workload.points"),
        (4, "motif = \"fft3d\", points = 4096", "jobs[0].workload.points"),
        (4, "motif = \"fft3d\", points = 64, element_bytes = 9223372036854775807", "jobs[0].workload.points"),
        (2, "motif = \"graph500\", scale = 42, edge_factor = 1048576, levels = 1", "jobs[0].workload.scale"),
        (4, "motif = \"md\", domain = [4294967296, 4294967296, 4]", "jobs[0].workload.domain"),
        (4, "motif = \"md\", domain = [1000, 1000, 1000], atom_bytes = 4294967296", "jobs[0].workload.atom_bytes"),
        (4, "motif = \"md\", thermo_values = 9223372036854775807", "jobs[0].workload.thermo_values"),
        (4, "motif = \"allreduce\", elements = 4611686018427387904", "jobs[0].workload.elements"),
    ];
    for (ranks, workload, key) in cases {
        let e = err(ranks, workload);
        assert_eq!(e.key, key, "{workload}: {e}");
        assert!(e.allowed.contains("2^36"), "{workload}: {e}");
    }
}

#[test]
fn bad_skeleton_keys_are_refused_with_their_key() {
    let cases = [
        (8, "motif = \"halo\", dims = 5", "jobs[0].workload.dims"),
        (8, "motif = \"halo\", stencil = \"star\"", "jobs[0].workload.stencil"),
        (8, "motif = \"halo\", dims = 4, domain = [4, 4, 4]", "jobs[0].workload.domain"),
        (8, "motif = \"halo\", dims = 2, grid = [2, 2, 2]", "jobs[0].workload.grid"),
        (8, "motif = \"halo\", domain = [4, 4, 2], ghost = 3", "jobs[0].workload.ghost"),
        (8, "motif = \"halo\", ghost = 0", "jobs[0].workload.ghost"),
        (8, "motif = \"cg\", dot_products = 65", "jobs[0].workload.dot_products"),
        (8, "motif = \"cg\", allreduce = \"tree\"", "jobs[0].workload.allreduce"),
        (8, "motif = \"fft3d\", grid = [4, 2], points = 3", "jobs[0].workload.points"),
        (8, "motif = \"fft3d\", grid = [3, 3]", "jobs[0].workload.grid"),
        (8, "motif = \"graph500\", kernel = \"dfs\"", "jobs[0].workload.kernel"),
        (8, "motif = \"graph500\", levels = 0", "jobs[0].workload.levels"),
        (8, "motif = \"graph500\", scale = 43", "jobs[0].workload.scale"),
        (8, "motif = \"graph500\", edge_factor = 0", "jobs[0].workload.edge_factor"),
        (8, "motif = \"md\", domain = [2, 2, 2], ghost = 3", "jobs[0].workload.ghost"),
        (8, "motif = \"md\", domain = [2, 2]", "jobs[0].workload.domain"),
        (8, "motif = \"md\", points = 8", "jobs[0].workload.points"),
    ];
    for (ranks, workload, key) in cases {
        let e = err(ranks, workload);
        assert_eq!(e.key, key, "{workload}: {e}");
    }
    // Without packet.bytes (or a protocol) bytes cannot become packets.
    let toml = ONE_SWITCH.replace("bytes = 64\n", "") + &job("j", 8, "motif = \"halo\"", "");
    let e = spec::from_toml_str(&toml).and_then(|s| simulate(&s)).unwrap_err();
    assert_eq!(e.key, "jobs[0].workload.domain", "{e}");
}

#[test]
fn the_normalised_spec_of_a_skeleton_is_valid_input_again() {
    // Each skeleton's keys as its key type reads them (defaults filled in), the other
    // motifs' keys null: valid input, normalised to itself.
    let jobs = job("a", 4, "motif = \"halo\", dims = 2, stencil = \"corner\"", "")
        + &job("b", 4, "motif = \"md\", thermo_every = 0", "")
        + &job("c", 4, "motif = \"graph500\", kernel = \"sssp\"", "")
        + &job("d", 2, "motif = \"fft3d\"", "")
        + &job("e", 2, "motif = \"cg\"", "");
    let spec = spec::from_toml_str(&format!("{ONE_SWITCH}{jobs}")).unwrap();
    let text = hopsim_core::validate_json(&serde_json::to_string(&spec).unwrap()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let w = |i: usize| v["jobs"][i]["workload"].clone();
    assert_eq!((w(0)["dims"].clone(), w(0)["stencil"].clone(), w(0)["ghost"].clone()), (2.into(), "corner".into(), 1.into()));
    assert_eq!((w(1)["ghost"].clone(), w(1)["newton"].clone(), w(1)["points"].clone()), (3.into(), true.into(), serde_json::Value::Null));
    assert_eq!((w(2)["kernel"].clone(), w(2)["scale"].clone()), ("sssp".into(), 20.into()));
    assert_eq!(w(3)["element_bytes"], 16);
    assert_eq!(w(4)["dot_products"], 3);
    assert_eq!(hopsim_core::validate_json(&text).unwrap(), text);
}

