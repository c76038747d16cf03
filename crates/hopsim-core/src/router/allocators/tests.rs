//! Each allocator against its definition on request patterns built by hand, and the
//! properties its definition implies on drawn ones.

use super::*;

#[derive(Default, Clone)]
struct Ptrs {
    grant: Vec<usize>,
    accept: Vec<usize>,
    diagonal: u16,
}

impl Ptrs {
    fn new(n: usize) -> Self {
        Ptrs { grant: vec![0; n], accept: vec![0; n], diagonal: 0 }
    }
}

impl Pointers for Ptrs {
    fn grant(&self, o: usize) -> usize {
        self.grant[o]
    }
    fn set_grant(&mut self, o: usize, i: usize) {
        self.grant[o] = i;
    }
    fn accept(&self, i: usize) -> usize {
        self.accept[i]
    }
    fn set_accept(&mut self, i: usize, o: usize) {
        self.accept[i] = o;
    }
}

fn reqs(pairs: &[(u16, u16)]) -> Vec<PortRequest> {
    pairs.iter().map(|&(input, output)| PortRequest { input, output }).collect()
}

fn all_to_all(n: u16) -> Vec<PortRequest> {
    reqs(&(0..n).flat_map(|i| (0..n).map(move |o| (i, o))).collect::<Vec<_>>())
}

/// The (input, output) pairs matched, sorted.
fn run(a: SwitchAllocator, rq: &[PortRequest], n: usize, p: &mut Ptrs) -> Vec<(u16, u16)> {
    let mut m = Matching::default();
    let mut diagonal = p.diagonal;
    allocate(a, rq, n, p, &mut diagonal, &mut m);
    p.diagonal = diagonal;
    let mut won: Vec<_> = (0..rq.len()).filter(|&i| m.won(rq, i)).map(|i| (rq[i].input, rq[i].output)).collect();
    won.sort();
    won
}

const ISLIP1: SwitchAllocator = SwitchAllocator::Islip { iterations: 1 };

#[test]
fn islip_first_cycle_under_full_load_matches_one_pair_and_moves_only_its_pointers() {
    // Every output's pointer is at input 0, so all grant input 0; input 0 accepts output 0.
    let mut p = Ptrs::new(4);
    assert_eq!(run(ISLIP1, &all_to_all(4), 4, &mut p), vec![(0, 0)]);
    assert_eq!(p.grant, vec![1, 0, 0, 0]);
    assert_eq!(p.accept, vec![1, 0, 0, 0]);
    // Next cycle output 0 grants input 1, the others still input 0, which accepts output 1.
    assert_eq!(run(ISLIP1, &all_to_all(4), 4, &mut p), vec![(0, 1), (1, 0)]);
    assert_eq!(p.grant, vec![2, 1, 0, 0]);
    assert_eq!(p.accept, vec![2, 1, 0, 0]);
}

#[test]
fn islip_pointers_desynchronise_into_a_full_matching_under_full_load() {
    // McKeown 1999: under persistent all-to-all requests the grant pointers end up all
    // different, and every cycle then matches every port.
    let mut p = Ptrs::new(4);
    let sizes: Vec<usize> = (0..8).map(|_| run(ISLIP1, &all_to_all(4), 4, &mut p).len()).collect();
    assert_eq!(sizes, vec![1, 2, 3, 4, 4, 4, 4, 4]);
}

#[test]
fn later_islip_rounds_fill_free_ports_without_moving_pointers() {
    let mut p = Ptrs::new(4);
    // Round 1: (0,0). Round 2: outputs 1-3 grant input 1 (first free after 0), which accepts
    // output 1. Round 3: (2,2). Round 4: (3,3).
    assert_eq!(run(SwitchAllocator::Islip { iterations: 4 }, &all_to_all(4), 4, &mut p), vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
    assert_eq!(p.grant, vec![1, 0, 0, 0]);
    assert_eq!(p.accept, vec![1, 0, 0, 0]);
    let mut p = Ptrs::new(4);
    assert_eq!(run(SwitchAllocator::Islip { iterations: 2 }, &all_to_all(4), 4, &mut p), vec![(0, 0), (1, 1)]);
}

#[test]
fn islip_arbiters_start_at_their_pointers() {
    // Inputs 0 and 2 ask for output 1, whose pointer at 2 favours input 2 over input 0.
    // Input 2 is also granted output 3, and its accept pointer at 2 favours output 3 over 1:
    // output 1's grant goes unaccepted and input 0, which it did not grant, stays unmatched
    // in this round. Only the accepted pair moves pointers.
    let mut p = Ptrs::new(4);
    p.grant[1] = 2;
    p.accept[2] = 2;
    let rq = reqs(&[(0, 1), (2, 1), (2, 3)]);
    assert_eq!(run(ISLIP1, &rq, 4, &mut p), vec![(2, 3)]);
    assert_eq!((p.grant[1], p.grant[3], p.accept[2]), (2, 3, 0));
    // A second round gives output 1 to input 0.
    let mut p = Ptrs::new(4);
    p.grant[1] = 2;
    p.accept[2] = 2;
    assert_eq!(run(SwitchAllocator::Islip { iterations: 2 }, &rq, 4, &mut p), vec![(0, 1), (2, 3)]);
}

#[test]
fn output_first_is_one_round_of_islip() {
    let mut a = Ptrs::new(5);
    let mut b = Ptrs::new(5);
    let mut rng = <crate::random::Rng as rand::SeedableRng>::seed_from_u64(7);
    for _ in 0..200 {
        let rq = drawn(&mut rng, 5);
        assert_eq!(run(SwitchAllocator::OutputFirst, &rq, 5, &mut a), run(ISLIP1, &rq, 5, &mut b));
        assert_eq!((&a.grant, &a.accept), (&b.grant, &b.accept));
    }
}

#[test]
fn wavefront_serves_diagonals_from_the_priority_one() {
    // n = 4, priority diagonal 1: (0,1), (3,2) and (2,3) lie on it and are all granted.
    // (1,1) and (2,0) lie on diagonal 2, served next: output 1 and input 2 are taken.
    let mut p = Ptrs::new(4);
    p.diagonal = 1;
    let rq = reqs(&[(1, 1), (2, 0), (0, 1), (3, 2), (2, 3)]);
    assert_eq!(run(SwitchAllocator::Wavefront, &rq, 4, &mut p), vec![(0, 1), (2, 3), (3, 2)]);
    assert_eq!(p.diagonal, 2);
    // From diagonal 2, (1,1) and (2,0) come first.
    assert_eq!(run(SwitchAllocator::Wavefront, &rq, 4, &mut p), vec![(1, 1), (2, 0), (3, 2)]);
    assert_eq!(p.diagonal, 3);
    // No requests: the diagonal stays.
    assert_eq!(run(SwitchAllocator::Wavefront, &[], 4, &mut p), vec![]);
    assert_eq!(p.diagonal, 3);
}

/// Each pair requested with probability 1/2.
fn drawn(rng: &mut crate::route::Rng, n: u16) -> Vec<PortRequest> {
    all_to_all(n).into_iter().filter(|_| rand::Rng::gen_range(rng, 0..2) == 0).collect()
}

#[test]
fn every_allocator_matches_each_port_at_most_once_and_wavefront_and_full_islip_are_maximal() {
    let n = 6u16;
    let mut rng = <crate::random::Rng as rand::SeedableRng>::seed_from_u64(11);
    for (a, maximal) in [(SwitchAllocator::OutputFirst, false), (SwitchAllocator::Islip { iterations: 6 }, true), (SwitchAllocator::Wavefront, true)] {
        let mut p = Ptrs::new(n as usize);
        for _ in 0..300 {
            let rq = drawn(&mut rng, n);
            let won = run(a, &rq, n as usize, &mut p);
            let (mut ins, mut outs) = (vec![false; n as usize], vec![false; n as usize]);
            for &(i, o) in &won {
                assert!(!ins[i as usize] && !outs[o as usize], "{a:?}: a port matched twice in {won:?}");
                ins[i as usize] = true;
                outs[o as usize] = true;
            }
            assert!(!rq.is_empty() == !won.is_empty(), "{a:?}: requests {rq:?} but no match");
            if maximal {
                let left = rq.iter().find(|r| !ins[r.input as usize] && !outs[r.output as usize]);
                assert!(left.is_none(), "{a:?}: {left:?} could still be matched in {won:?}");
            }
        }
    }
}
