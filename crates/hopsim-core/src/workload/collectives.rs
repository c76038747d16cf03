//! MPI collectives as point-to-point steps among the members of a communicator, for replayed
//! traces: each algorithm gives member `me`'s sends and receives, in member indices (0..n),
//! in the order that member issues them. Between two members, the sends of one collective
//! leave in the order the receiver waits for them, so they can be matched by count.
//!
//! The algorithms are the textbook ones MPI libraries use for short and medium messages:
//! dissemination barrier, binomial-tree broadcast and reduce, recursive-doubling allreduce
//! (reduce then broadcast when the count is not a power of two), ring allgather and
//! reduce-scatter, pairwise-exchange all-to-all, linear gather and scatter, and a linear
//! chain for scan.

use serde::{Deserialize, Serialize};

/// One point-to-point step of a collective, in member indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Send { to: usize, bytes: u64 },
    Recv { from: usize },
}

/// The collectives a replayed trace can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collective {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
    ReduceScatter,
    Scan,
}

/// Which member's buffer sets the per-peer message size of a collective, read from the
/// sizes a trace records for it (sent and received bytes of each member, counted as Score-P
/// counts them: an all-to-all-like collective as if every member sent its buffer to every
/// member).
pub enum SizeFrom {
    /// Nothing is carried (barrier).
    Nothing,
    /// The largest buffer a member other than the root received (one-to-all).
    NonRootReceived,
    /// The largest buffer a member other than the root sent (all-to-one).
    NonRootSent,
    /// The largest of any member's sent or received bytes over the member count.
    PerMember,
}

impl Collective {
    pub const ALL: [Collective; 10] = [
        Collective::Barrier,
        Collective::Bcast,
        Collective::Reduce,
        Collective::Allreduce,
        Collective::Gather,
        Collective::Scatter,
        Collective::Allgather,
        Collective::Alltoall,
        Collective::ReduceScatter,
        Collective::Scan,
    ];

    /// The collective of code `code` in a converted trace file: its index in `ALL`, the list
    /// the Python converter reads (`components_json`).
    pub fn from_code(code: u32) -> Option<Collective> {
        Collective::ALL.get(code as usize).copied()
    }

    pub fn has_root(self) -> bool {
        matches!(self, Collective::Bcast | Collective::Reduce | Collective::Gather | Collective::Scatter)
    }

    pub fn size_from(self) -> SizeFrom {
        match self {
            Collective::Barrier => SizeFrom::Nothing,
            Collective::Bcast | Collective::Scatter => SizeFrom::NonRootReceived,
            Collective::Reduce | Collective::Gather => SizeFrom::NonRootSent,
            _ => SizeFrom::PerMember,
        }
    }

    /// Member `me`'s steps among `n` members, with `root` (a member index) where the
    /// collective has one and `bytes` the per-peer size `size_from` gives.
    pub fn steps(self, n: usize, me: usize, root: usize, bytes: u64, out: &mut Vec<Step>) {
        if n <= 1 {
            return;
        }
        match self {
            Collective::Barrier => dissemination(n, me, 0, out),
            Collective::Bcast => binomial_bcast(n, me, root, bytes, out),
            Collective::Reduce => binomial_reduce(n, me, root, bytes, out),
            Collective::Allreduce if n.is_power_of_two() => recursive_doubling(n, me, bytes, out),
            Collective::Allreduce => {
                binomial_reduce(n, me, 0, bytes, out);
                binomial_bcast(n, me, 0, bytes, out);
            }
            Collective::Gather => linear_gather(n, me, root, bytes, out),
            Collective::Scatter => linear_scatter(n, me, root, bytes, out),
            Collective::Allgather | Collective::ReduceScatter => ring(n, me, bytes, out),
            Collective::Alltoall => pairwise(n, me, bytes, out),
            Collective::Scan => chain(n, me, bytes, out),
        }
    }
}

/// Rounds of ceil(log2 n): send to me + 2^k, receive from me - 2^k.
pub fn dissemination(n: usize, me: usize, bytes: u64, out: &mut Vec<Step>) {
    let mut d = 1;
    while d < n {
        out.push(Step::Send { to: (me + d) % n, bytes });
        out.push(Step::Recv { from: (me + n - d) % n });
        d <<= 1;
    }
}

/// Receive from the parent (the member whose relative index clears my lowest set bit), then
/// send to the children, farthest first.
pub fn binomial_bcast(n: usize, me: usize, root: usize, bytes: u64, out: &mut Vec<Step>) {
    let rel = (me + n - root) % n;
    let real = |r: usize| (r + root) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            out.push(Step::Recv { from: real(rel - mask) });
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            out.push(Step::Send { to: real(rel + mask), bytes });
        }
        mask >>= 1;
    }
}

/// The broadcast's tree walked upwards: receive from the children, nearest first, then send
/// to the parent.
pub fn binomial_reduce(n: usize, me: usize, root: usize, bytes: u64, out: &mut Vec<Step>) {
    let rel = (me + n - root) % n;
    let real = |r: usize| (r + root) % n;
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            out.push(Step::Send { to: real(rel - mask), bytes });
            return;
        }
        if rel + mask < n {
            out.push(Step::Recv { from: real(rel + mask) });
        }
        mask <<= 1;
    }
}

/// log2 n rounds, each exchanging the whole vector with the member differing in that bit.
pub fn recursive_doubling(n: usize, me: usize, bytes: u64, out: &mut Vec<Step>) {
    let mut mask = 1;
    while mask < n {
        let peer = me ^ mask;
        out.push(Step::Send { to: peer, bytes });
        out.push(Step::Recv { from: peer });
        mask <<= 1;
    }
}

/// n - 1 rounds around the ring, each passing one member's block to the right.
pub fn ring(n: usize, me: usize, bytes: u64, out: &mut Vec<Step>) {
    for _ in 1..n {
        out.push(Step::Send { to: (me + 1) % n, bytes });
        out.push(Step::Recv { from: (me + n - 1) % n });
    }
}

/// n - 1 rounds: send to me + k, receive from me - k.
pub fn pairwise(n: usize, me: usize, bytes: u64, out: &mut Vec<Step>) {
    for k in 1..n {
        out.push(Step::Send { to: (me + k) % n, bytes });
        out.push(Step::Recv { from: (me + n - k) % n });
    }
}

fn linear_gather(n: usize, me: usize, root: usize, bytes: u64, out: &mut Vec<Step>) {
    if me == root {
        out.extend((1..n).map(|k| Step::Recv { from: (root + k) % n }));
    } else {
        out.push(Step::Send { to: root, bytes });
    }
}

fn linear_scatter(n: usize, me: usize, root: usize, bytes: u64, out: &mut Vec<Step>) {
    if me == root {
        out.extend((1..n).map(|k| Step::Send { to: (root + k) % n, bytes }));
    } else {
        out.push(Step::Recv { from: root });
    }
}

/// Member k waits for k - 1's partial result, then passes its own on to k + 1.
fn chain(n: usize, me: usize, bytes: u64, out: &mut Vec<Step>) {
    if me > 0 {
        out.push(Step::Recv { from: me - 1 });
    }
    if me + 1 < n {
        out.push(Step::Send { to: me + 1, bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every collective, over several member counts and roots, pairs each send with one
    /// receive, in order, between every two members, and completes when run.
    #[test]
    fn every_send_meets_its_receive_and_every_collective_completes() {
        for c in Collective::ALL {
            for n in 1usize..=13 {
                for root in [0, n / 2, n.saturating_sub(1)] {
                    let progs: Vec<Vec<Step>> = (0..n)
                        .map(|me| {
                            let mut v = Vec::new();
                            c.steps(n, me, root, 8, &mut v);
                            v
                        })
                        .collect();
                    // Symbolic run: sends never block, a receive waits for the next message
                    // from its peer.
                    let mut pc = vec![0; n];
                    let mut sent = vec![vec![0usize; n]; n];
                    let mut got = vec![vec![0usize; n]; n];
                    loop {
                        let mut moved = false;
                        for me in 0..n {
                            while let Some(&s) = progs[me].get(pc[me]) {
                                match s {
                                    Step::Send { to, .. } => sent[me][to] += 1,
                                    Step::Recv { from } if got[me][from] < sent[from][me] => got[me][from] += 1,
                                    Step::Recv { .. } => break,
                                }
                                pc[me] += 1;
                                moved = true;
                            }
                        }
                        if !moved {
                            break;
                        }
                    }
                    for me in 0..n {
                        assert_eq!(pc[me], progs[me].len(), "{c:?} n={n} root={root}: member {me} blocked");
                        for from in 0..n {
                            assert_eq!(got[me][from], sent[from][me], "{c:?} n={n}: messages {from} -> {me} left unreceived");
                        }
                    }
                    if n > 1 && c != Collective::Scan && c != Collective::Gather && c != Collective::Scatter {
                        let total: usize = progs.iter().map(|p| p.iter().filter(|s| matches!(s, Step::Send { .. })).count()).sum();
                        let expected = match c {
                            Collective::Barrier => n * (usize::BITS - (n - 1).leading_zeros()) as usize,
                            Collective::Bcast | Collective::Reduce => n - 1,
                            Collective::Allreduce if n.is_power_of_two() => n * n.trailing_zeros() as usize,
                            Collective::Allreduce => 2 * (n - 1),
                            _ => n * (n - 1),
                        };
                        assert_eq!(total, expected, "{c:?} n={n}: messages");
                    }
                }
            }
        }
    }
}
