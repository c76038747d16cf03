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

/// LRU over input VCs (2 ports of 2 VCs, entry = port * 2 + vc): the list is walked from its
/// head, a VC is granted when its input and output are both free, and the winners go to the
/// end, the first winner last.
#[test]
fn lru_grants_in_list_order_and_sends_the_winners_to_the_end() {
    // VC 0 of input 0 -> output 1; VC 1 of input 0 -> output 0; VC 0 of input 1 -> output 1.
    let asks = |e: u16| match e {
        0 => Some((0, 1)),
        1 => Some((0, 0)),
        2 => Some((1, 1)),
        _ => None,
    };
    let (mut inputs, mut outputs, mut winners) = (Vec::new(), Vec::new(), Vec::new());
    let mut list = vec![0, 1, 2, 3];
    lru::allocate(&mut list, asks, &mut inputs, &mut outputs, 2, &mut winners);
    // Entry 0 wins input 0 and output 1; entry 1 finds input 0 taken, entry 2 output 1.
    assert_eq!(winners, [0]);
    assert_eq!(list, [1, 2, 3, 0]);
    lru::allocate(&mut list, asks, &mut inputs, &mut outputs, 2, &mut winners);
    // Now entry 1 (input 0 -> output 0) and entry 2 (input 1 -> output 1) both fit.
    assert_eq!(winners, [1, 2]);
    assert_eq!(list, [3, 0, 2, 1]);
    lru::allocate(&mut list, asks, &mut inputs, &mut outputs, 2, &mut winners);
    // Entry 0 is ahead of 2 and takes output 1 first; 1 finds input 0 taken.
    assert_eq!(winners, [0]);
    assert_eq!(list, [3, 2, 1, 0]);
}

/// Whatever it is asked, LRU grants a matching (each input and each output at most once)
/// that no further request could join, and keeps every entry once in its list.
#[test]
fn lru_grants_a_maximal_matching_and_keeps_its_list_a_permutation() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    let (ports, vcs) = (5usize, 3usize);
    let mut list: Vec<u16> = (0..(ports * vcs) as u16).collect();
    let (mut inputs, mut outputs, mut winners) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..200 {
        let asks: Vec<Option<(u16, u16)>> = (0..ports * vcs).map(|e| rng.gen_bool(0.5).then(|| ((e / vcs) as u16, rng.gen_range(0..ports) as u16))).collect();
        lru::allocate(&mut list, |e| asks[e as usize], &mut inputs, &mut outputs, ports, &mut winners);
        let mut sorted = list.clone();
        sorted.sort();
        assert_eq!(sorted, (0..(ports * vcs) as u16).collect::<Vec<_>>());
        let (mut ins, mut outs) = (vec![false; ports], vec![false; ports]);
        for &w in &winners {
            let (i, o) = asks[w as usize].unwrap();
            assert!(!ins[i as usize] && !outs[o as usize], "input or output granted twice");
            ins[i as usize] = true;
            outs[o as usize] = true;
        }
        for (e, a) in asks.iter().enumerate() {
            if let Some((i, o)) = a {
                assert!(winners.contains(&(e as u16)) || ins[*i as usize] || outs[*o as usize], "request {e} could have been granted");
            }
        }
    }
}
