//! MPI-like motifs: the messages and bytes of each against its formula, and the zero-load
//! time of an iteration against its critical path computed by hand.
//!
//! The jobs run on one switch (servers 0..16 of a 2-switch torus), so every message of one
//! 4-phit packet takes the same zero-load latency T = p + 3 = 7 cycles (docs/model.md with
//! 0 hops: link latency 1, pipeline delay 1), and a NIC sends a packet every p = 4 cycles.
use crate::common;
use crate::jobs::{job, ONE_SWITCH};
use hopsim_core::stats::jobs::JobResult;

const T: u64 = 7;
const P: u64 = 4;

fn run_job(ranks: usize, workload: &str) -> JobResult {
    let r = common::run(&format!("{ONE_SWITCH}{}", job("j", ranks, workload, "")));
    let j = r.jobs.into_iter().next().unwrap();
    assert!(j.complete, "job did not finish");
    j
}

/// Messages and bytes of all iterations, and the first iteration's cycles (later ones may
/// overlap the one before: a rank done early starts the next).
fn check(ranks: usize, workload: &str, messages: u64, bytes: u64, cycles: u64) {
    let j = run_job(ranks, workload);
    assert_eq!((j.messages, j.bytes), (messages, bytes), "messages, bytes of {workload}");
    assert_eq!(j.message_latency.len() as u64, messages);
    assert_eq!(j.iteration_cycles[0], cycles, "{workload}: iterations took {:?}, critical path {cycles}", j.iteration_cycles);
}

#[test]
fn a_lone_message_takes_the_zero_load_latency() {
    let j = run_job(2, "motif = \"ping_pong\", iterations = 3, bytes = 64");
    assert!(j.message_latency.iter().all(|&l| l == T), "{:?}", j.message_latency);
    // A round trip: two messages one after the other.
    assert_eq!(j.iteration_cycles, vec![2 * T; 3]);
    // Rank 1 is done when it has sent its last answer, rank 0 when it is back.
    assert_eq!(j.rank_cycles, vec![6 * T, 5 * T]);
}

#[test]
fn ring_allreduce_takes_2_n_minus_1_steps() {
    // n = 8, 512 bytes: chunks of 64 bytes (one packet), 2(n - 1) = 14 steps of one message.
    check(8, "motif = \"allreduce\", iterations = 2, bytes = 512", 2 * 8 * 14, 2 * 8 * 14 * 64, 14 * T);
    // Sizes in elements: 64 elements of 8 bytes.
    check(8, "motif = \"allreduce\", iterations = 1, elements = 64", 8 * 14, 8 * 14 * 64, 14 * T);
    // With computation after each iteration.
    check(4, "motif = \"allreduce\", iterations = 2, bytes = 256, compute = 100", 2 * 4 * 6, 2 * 4 * 6 * 64, 6 * T + 100);
}

#[test]
fn recursive_doubling_takes_log2_n_exchanges() {
    check(8, "motif = \"allreduce\", algorithm = \"recursive_doubling\", iterations = 2, bytes = 64", 2 * 8 * 3, 2 * 8 * 3 * 64, 3 * T);
}

#[test]
fn pairwise_alltoall_takes_n_minus_1_steps() {
    check(8, "motif = \"alltoall\", iterations = 2, bytes = 64", 2 * 8 * 7, 2 * 8 * 7 * 64, 7 * T);
}

#[test]
fn bruck_alltoall_takes_ceil_log2_n_rounds_of_the_blocks_with_the_round_s_bit() {
    // n = 8: 3 rounds, each sending 4 blocks of 16 bytes (one packet).
    check(8, "motif = \"alltoall\", algorithm = \"bruck\", iterations = 2, bytes = 16", 2 * 8 * 3, 2 * 8 * 3 * 64, 3 * T);
    // n = 12: rounds of distance 1, 2, 4, 8 send 6, 6, 4 and 4 blocks (indices below 12 with
    // that bit set): two messages of two packets, then two of one.
    check(12, "motif = \"alltoall\", algorithm = \"bruck\", iterations = 1, bytes = 16", 12 * 4, 12 * (6 + 6 + 4 + 4) * 16, 2 * (T + P) + 2 * T);
}

#[test]
fn scattered_alltoall_sends_to_everyone_at_once() {
    // Every rank's 7 packets leave back to back; rank r waits for r + 1's first, which r + 1
    // sends first: the last arrives 6 packet times after the first.
    check(8, "motif = \"alltoall\", algorithm = \"scattered\", iterations = 1, bytes = 64", 8 * 7, 8 * 7 * 64, 6 * P + T);
}

#[test]
fn mpich_alltoall_chooses_by_size_as_mpich() {
    // Bruck up to 256 bytes a pair (3 rounds of 4 blocks), scattered sends up to 32 KiB and
    // pairwise exchange above: both n - 1 messages a rank, told apart by their timing.
    let bruck = run_job(8, "motif = \"alltoall\", algorithm = \"mpich\", iterations = 1, bytes = 256");
    assert_eq!((bruck.messages, bruck.bytes), (8 * 3, 8 * 3 * 4 * 256));
    let many = |bytes: u64| run_job(8, &format!("motif = \"alltoall\", algorithm = \"mpich\", iterations = 1, bytes = {bytes}"));
    let pairwise = |bytes: u64| run_job(8, &format!("motif = \"alltoall\", iterations = 1, bytes = {bytes}"));
    let scattered = |bytes: u64| run_job(8, &format!("motif = \"alltoall\", algorithm = \"scattered\", iterations = 1, bytes = {bytes}"));
    for (bytes, same_as) in [(257, scattered(257)), (32768, scattered(32768)), (32769, pairwise(32769))] {
        let j = many(bytes);
        assert_eq!((j.messages, j.bytes), (8 * 7, 8 * 7 * bytes));
        assert_eq!(j.iteration_cycles, same_as.iteration_cycles, "{bytes} bytes a pair");
    }
    assert_ne!(scattered(32769).iteration_cycles, pairwise(32769).iteration_cycles);
}

#[test]
fn dissemination_barrier_takes_ceil_log2_n_rounds() {
    check(8, "motif = \"barrier\", iterations = 2", 2 * 8 * 3, 2 * 8 * 3 * 8, 3 * T);
    check(5, "motif = \"barrier\", iterations = 1", 5 * 3, 5 * 3 * 8, 3 * T);
}

#[test]
fn binomial_bcast_reaches_every_rank_once() {
    // n = 8 from root 0: the root sends to 4, 2, 1 (one packet every P cycles); 4 to 6, 5; 2
    // to 3; 6 to 7. Rank 7 is last: three messages in a row, 3T.
    check(8, "motif = \"bcast\", iterations = 2, bytes = 64", 2 * 7, 2 * 7 * 64, 3 * T);
    // n = 3 from root 1: 1 sends to 0 (relative 2) then to 2 (relative 1), P cycles later.
    check(3, "motif = \"bcast\", iterations = 1, bytes = 64, root = 1", 2, 128, T + P);
    // With a barrier after each iteration the root cannot run ahead. The first iteration is
    // the broadcast's 3T, then the barrier: rank 7 (last served) signals rank 0 (4T), which
    // signals rank 2 (5T), which signals rank 6 (6T). The barrier releases the root before
    // the last ranks, so later iterations overlap it by a few cycles, all alike; without
    // the barrier the root runs iterations ahead and the bcasts overlap almost entirely.
    let j = run_job(8, "motif = \"bcast\", iterations = 3, bytes = 64, barrier = true");
    assert_eq!(j.iteration_cycles[0], 6 * T);
    assert!(j.iteration_cycles[1] == j.iteration_cycles[2] && j.iteration_cycles[1] > 4 * T, "{:?}", j.iteration_cycles);
    let free = run_job(8, "motif = \"bcast\", iterations = 3, bytes = 64");
    assert!(free.iteration_cycles[1] < 3 * T, "{:?}", free.iteration_cycles);
    assert_eq!(j.messages, 3 * (7 + 8 * 3));
}

#[test]
fn halo3d_exchanges_every_face() {
    // A 2 x 2 x 2 grid: 12 links between neighbours, a message each way on each. Faces of
    // a 4 x 2 x 1 domain of 8-byte elements: x faces 2 x 1 (16 B), y 4 x 1 (32 B), z 4 x 2
    // (64 B); 4 links in each dimension.
    let bytes = 2 * 4 * (16 + 32 + 64);
    let j = run_job(8, "motif = \"halo3d\", iterations = 2, grid = [2, 2, 2], domain = [4, 2, 1]");
    assert_eq!((j.messages, j.bytes), (2 * 24, 2 * bytes));
    // Two ranks: one message each way, then the computation.
    check(2, "motif = \"halo3d\", iterations = 1, grid = [2, 1, 1], domain = [1, 1, 1], compute = 50", 2, 16, T + 50);
}

#[test]
fn sweep3d_waits_on_its_upstream_neighbours() {
    // A 2 x 2 grid, 4 corners, 2 blocks each: per corner and block one message on each of
    // the 4 links downstream. Faces: x 3 x 2 elements (48 B), y 2 x 2 (32 B).
    let j = run_job(4, "motif = \"sweep3d\", iterations = 1, grid = [2, 2], domain = [2, 3, 4], block = 2");
    assert_eq!((j.messages, j.bytes), (4 * 2 * 4, 4 * 2 * 2 * (48 + 32)));
    // A line of n ranks: each corner's wave crosses it in n computations and n - 1
    // messages, the next corner's starting where this one ended: 4(nC + (n - 1)T).
    for n in [2u64, 3] {
        let c = 40;
        check(n as usize, &format!("motif = \"sweep3d\", iterations = 2, grid = [{n}, 1], domain = [1, 1, 1], compute = {c}"), 2 * 4 * (n - 1), 2 * 4 * (n - 1) * 8, 4 * (n * c + (n - 1) * T));
    }
}
