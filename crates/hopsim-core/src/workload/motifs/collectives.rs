//! The collective algorithms motifs, skeletons and replayed traces share, one owner each:
//! each gives member `me`'s sends and receives among `n` members (`member(i)`: the rank of
//! the i-th), in the order that member issues them. Between two members, the sends of one
//! collective leave in the order the receiver waits for them.
//!
//! They are the textbook ones MPI libraries use for short and medium messages: dissemination
//! barrier, binomial-tree broadcast and reduce, recursive doubling (with MPICH's folding of
//! the members beyond a power of two) and the ring for allreduce, ring allgather and
//! reduce-scatter, all-to-all by pairwise exchange, by Bruck's algorithm and by batches of
//! scattered sends (`Alltoall`), linear gather and scatter, and a linear chain for scan.

use super::Op;
use serde::{Deserialize, Serialize};

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

    /// Member `me`'s operations among `n` members, with `root` (a member index) where the
    /// collective has one and `bytes` the per-peer size `size_from` gives.
    pub fn ops(self, n: usize, me: usize, root: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
        if n <= 1 {
            return;
        }
        match self {
            Collective::Barrier => dissemination(n, me, member, 0, ops),
            Collective::Bcast => binomial_bcast(n, me, root, member, bytes, ops),
            Collective::Reduce => binomial_reduce(n, me, root, member, bytes, ops),
            Collective::Allreduce => recursive_doubling(n, me, member, bytes, ops),
            Collective::Gather => linear_gather(n, me, root, member, bytes, ops),
            Collective::Scatter => linear_scatter(n, me, root, member, bytes, ops),
            Collective::Allgather | Collective::ReduceScatter => ring(n, me, member, n - 1, bytes, ops),
            Collective::Alltoall => pairwise(n, me, member, |_| bytes, ops),
            Collective::Scan => chain(n, me, member, bytes, ops),
        }
    }
}

/// Rounds of ceil(log2 n): send to me + 2^k, receive from me - 2^k.
pub fn dissemination(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    let mut d = 1;
    while d < n {
        ops.push(Op::Send { to: member((me + d) % n), bytes });
        ops.push(Op::Recv { from: member((me + n - d) % n) });
        d <<= 1;
    }
}

/// Receive from the parent (the member whose index relative to the root clears my lowest
/// set bit), then send to the children, farthest first.
pub fn binomial_bcast(n: usize, me: usize, root: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    let rel = (me + n - root) % n;
    let real = |r: usize| member((r + root) % n);
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            ops.push(Op::Recv { from: real(rel - mask) });
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            ops.push(Op::Send { to: real(rel + mask), bytes });
        }
        mask >>= 1;
    }
}

/// The broadcast's tree walked upwards: receive from the children, nearest first, then send
/// to the parent.
pub fn binomial_reduce(n: usize, me: usize, root: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    let rel = (me + n - root) % n;
    let real = |r: usize| member((r + root) % n);
    let mut mask = 1;
    while mask < n {
        if rel & mask != 0 {
            ops.push(Op::Send { to: real(rel - mask), bytes });
            return;
        }
        if rel + mask < n {
            ops.push(Op::Recv { from: real(rel + mask) });
        }
        mask <<= 1;
    }
}

/// `steps` rounds around the ring, each sending `bytes` to the right neighbour and waiting
/// for the left one's: n - 1 for an allgather or a reduce-scatter, 2(n - 1) for a ring
/// allreduce (a reduce-scatter then an allgather).
pub fn ring(n: usize, me: usize, member: impl Fn(usize) -> u32, steps: usize, bytes: u64, ops: &mut Vec<Op>) {
    if n > 1 {
        let (right, left) = (member((me + 1) % n), member((me + n - 1) % n));
        for _ in 0..steps {
            ops.push(Op::Send { to: right, bytes });
            ops.push(Op::Recv { from: left });
        }
    }
}

/// Recursive doubling: log2 n rounds, each exchanging the whole vector with the member
/// differing in that round's bit. When `n` is not a power of two, as in MPICH, each member
/// from the largest power of two p on first hands its vector to member i - p and gets the
/// result back at the end, so that p members double.
pub fn recursive_doubling(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    let p = if n.is_power_of_two() { n } else { n.next_power_of_two() / 2 };
    if me >= p {
        let partner = member(me - p);
        ops.push(Op::Send { to: partner, bytes });
        ops.push(Op::Recv { from: partner });
        return;
    }
    let extra = (me + p < n).then(|| member(me + p));
    if let Some(e) = extra {
        ops.push(Op::Recv { from: e });
    }
    let mut mask = 1;
    while mask < p {
        let peer = member(me ^ mask);
        ops.push(Op::Send { to: peer, bytes });
        ops.push(Op::Recv { from: peer });
        mask <<= 1;
    }
    if let Some(e) = extra {
        ops.push(Op::Send { to: e, bytes });
    }
}

/// Pairwise exchange: n - 1 rounds, in round k sending `bytes(j)` to member j = me + k and
/// waiting for member me - k's message: the alltoall and, with sizes per peer, the
/// alltoallv.
pub fn pairwise(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: impl Fn(usize) -> u64, ops: &mut Vec<Op>) {
    for k in 1..n {
        let to = (me + k) % n;
        ops.push(Op::AlltoallSend { to: member(to), bytes: bytes(to) });
        ops.push(Op::Recv { from: member((me + n - k) % n) });
    }
}

fn linear_gather(n: usize, me: usize, root: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    if me == root {
        ops.extend((1..n).map(|k| Op::Recv { from: member((root + k) % n) }));
    } else {
        ops.push(Op::Send { to: member(root), bytes });
    }
}

fn linear_scatter(n: usize, me: usize, root: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    if me == root {
        ops.extend((1..n).map(|k| Op::Send { to: member((root + k) % n), bytes }));
    } else {
        ops.push(Op::Recv { from: member(root) });
    }
}

/// Member k waits for k - 1's partial result, then passes its own on to k + 1.
fn chain(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    if me > 0 {
        ops.push(Op::Recv { from: member(me - 1) });
    }
    if me + 1 < n {
        ops.push(Op::Send { to: member(me + 1), bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every collective, over several member counts and roots, with members that are not
    /// numbered as ranks: each send meets one receive, in order, between every two members,
    /// the run completes, and the message count is the algorithm's.
    #[test]
    fn every_send_meets_its_receive_and_every_collective_completes() {
        let member = |i: usize| (3 * i + 1) as u32;
        let index = |r: u32| (r as usize - 1) / 3;
        for c in Collective::ALL {
            for n in 1usize..=13 {
                for root in [0, n / 2, n.saturating_sub(1)] {
                    let progs: Vec<Vec<Op>> = (0..n)
                        .map(|me| {
                            let mut v = Vec::new();
                            c.ops(n, me, root, member, 8, &mut v);
                            v
                        })
                        .collect();
                    // Sends never block; a receive waits for the next message from its peer.
                    let mut pc = vec![0; n];
                    let mut sent = vec![vec![0usize; n]; n];
                    let mut got = vec![vec![0usize; n]; n];
                    loop {
                        let mut moved = false;
                        for me in 0..n {
                            while let Some(&s) = progs[me].get(pc[me]) {
                                match s {
                                    Op::Send { to, .. } | Op::AlltoallSend { to, .. } => sent[me][index(to)] += 1,
                                    Op::Recv { from } if got[me][index(from)] < sent[index(from)][me] => got[me][index(from)] += 1,
                                    _ => break,
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
                    let total: usize = progs.iter().map(|p| p.iter().filter(|s| matches!(s, Op::Send { .. } | Op::AlltoallSend { .. })).count()).sum();
                    let p = if n.is_power_of_two() { n } else { n.next_power_of_two() / 2 };
                    let expected = match c {
                        _ if n == 1 => 0,
                        Collective::Barrier => n * (usize::BITS - (n - 1).leading_zeros()) as usize,
                        Collective::Bcast | Collective::Reduce | Collective::Gather | Collective::Scatter | Collective::Scan => n - 1,
                        Collective::Allreduce => p * p.trailing_zeros() as usize + 2 * (n - p),
                        Collective::Allgather | Collective::ReduceScatter | Collective::Alltoall => n * (n - 1),
                    };
                    assert_eq!(total, expected, "{c:?} n={n}: messages");
                }
            }
        }
    }
}

/// MPICH's all-to-all algorithms, and its choice among them by message size.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Alltoall {
    /// `pairwise`.
    Pairwise,
    /// `bruck`.
    Bruck,
    /// `scattered`.
    Scattered,
    /// MPICH's choice: Bruck for at most `BRUCK_MAX_BYTES` a pair on 8 members or more,
    /// scattered sends up to `SCATTERED_MAX_BYTES`, pairwise exchange above (MPICH's
    /// `MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE` and `MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE` defaults).
    Mpich,
}

/// MPICH's default bounds of its short and medium all-to-all messages, bytes per pair.
pub const BRUCK_MAX_BYTES: u64 = 256;
pub const SCATTERED_MAX_BYTES: u64 = 32768;
/// Sends and receives a member has outstanding at once in `scattered`
/// (`MPIR_CVAR_ALLTOALL_THROTTLE`'s default).
pub const SCATTERED_BATCH: usize = 32;

impl Alltoall {
    /// The algorithm that runs for `n` members and `bytes` a pair.
    pub fn resolve(self, n: usize, bytes: u64) -> Alltoall {
        match self {
            Alltoall::Mpich if bytes <= BRUCK_MAX_BYTES && n >= 8 => Alltoall::Bruck,
            Alltoall::Mpich if bytes <= SCATTERED_MAX_BYTES => Alltoall::Scattered,
            Alltoall::Mpich => Alltoall::Pairwise,
            other => other,
        }
    }

    /// Member `me`'s operations among `n`, `bytes` a pair.
    pub fn ops(self, n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
        match self.resolve(n, bytes) {
            Alltoall::Bruck => bruck(n, me, member, bytes, ops),
            Alltoall::Scattered => scattered(n, me, member, bytes, ops),
            _ => pairwise(n, me, member, |_| bytes, ops),
        }
    }
}

/// Blocks a member of `n` sends in the Bruck round of distance `k` (a power of two): those
/// whose index has bit `k` set.
pub fn bruck_blocks(n: usize, k: usize) -> u64 {
    ((n / (2 * k)) * k + (n % (2 * k)).saturating_sub(k)) as u64
}

/// Bruck's all-to-all: ceil(log2 n) rounds; in the round of distance k each member sends the
/// blocks whose (rotated) index has bit k set to member me + k, in one message, and waits
/// for member me - k's. The local rotations before and after cost no network.
pub fn bruck(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    let mut k = 1;
    while k < n {
        ops.push(Op::AlltoallSend { to: member((me + k) % n), bytes: bruck_blocks(n, k) * bytes });
        ops.push(Op::Recv { from: member((me + n - k) % n) });
        k <<= 1;
    }
}

/// All-to-all by scattered sends, as MPICH does for medium messages: in batches of
/// `SCATTERED_BATCH` peers, post the batch's sends (to me - i) and receives (from me + i),
/// then wait for all of them.
pub fn scattered(n: usize, me: usize, member: impl Fn(usize) -> u32, bytes: u64, ops: &mut Vec<Op>) {
    for first in (0..n).step_by(SCATTERED_BATCH) {
        let batch = first..(first + SCATTERED_BATCH).min(n);
        for i in batch.clone().filter(|&i| i != 0) {
            ops.push(Op::AlltoallSend { to: member((me + n - i) % n), bytes });
        }
        for i in batch.filter(|&i| i != 0) {
            ops.push(Op::Recv { from: member((me + i) % n) });
        }
    }
}
