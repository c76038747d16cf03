//! A converted trace made into each rank's program of sends, matched receives and
//! computation (`motifs::Op`), split into its iterations.
//!
//! Matching follows MPI's rule that messages between two ranks on one communicator and tag
//! are received in the order they were sent: the k-th receive of rank B from rank A on
//! (communicator, tag) takes A's k-th send to B there. A collective becomes its algorithm's
//! steps (`collectives`) among the communicator's members; its messages match within that
//! call (every member calls a communicator's collectives in the same order). Matching runs
//! the programs once without time, sends never blocking and each receive waiting for its
//! message, which also finds receives that can never complete (no matching send, or ranks
//! waiting on each other) before anything is simulated; its memory is the messages sent and
//! not yet received, as in the run itself.

pub mod file;

use super::motifs::collectives::{Collective, SizeFrom};
use super::motifs::Op;
use crate::error::{SpecError, SpecResult};
use file::{Record, TraceFile};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

/// A trace's programs.
pub struct Trace {
    pub ranks: usize,
    /// Per rank: its operations, and where each of its iterations starts.
    ops: Vec<Vec<Op>>,
    starts: Vec<Vec<usize>>,
    /// Per (sender, receiver): messages in one pass through the trace (a job that replays
    /// more iterations than the trace has starts it again, and its receives then wait for
    /// the messages of that pass).
    per_pass: HashMap<(u32, u32), u32>,
    pub unsupported: BTreeMap<String, u64>,
    pub events: u64,
}

/// Which messages a receive may take: a point-to-point (communicator, tag), or the k-th
/// collective on a communicator.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Channel {
    PointToPoint { comm: u32, tag: u32 },
    Collective { comm: u32, call: u32 },
}

/// One collective call as its members recorded it so far: its operation and root, the
/// largest buffers members other than the root received and sent, the largest of any
/// member's sent or received bytes, and how many members made it.
struct Seen {
    op: Collective,
    root: u32,
    non_root_received: u64,
    non_root_sent: u64,
    largest: u64,
    members: usize,
}

/// One collective call as every member recorded it.
struct Call {
    op: Collective,
    root: u32,
    bytes: u64,
}

impl Trace {
    /// The most bytes any one message of the replay carries (0 without messages).
    pub fn largest_message(&self) -> u64 {
        self.ops.iter().flatten().filter_map(|op| if let Op::Send { bytes, .. } | Op::AlltoallSend { bytes, .. } = op { Some(*bytes) } else { None }).max().unwrap_or(0)
    }

    pub fn iterations(&self) -> usize {
        self.starts.first().map_or(1, Vec::len)
    }

    /// Rank `rank`'s operations in iteration `it` (the trace's iteration `it` modulo its
    /// count), appended to `out`.
    pub fn iteration(&self, rank: usize, it: u32, out: &mut Vec<Op>) {
        let starts = &self.starts[rank];
        let n = starts.len();
        let k = it as usize % n;
        let pass = it / n as u32;
        let end = starts.get(k + 1).copied().unwrap_or(self.ops[rank].len());
        let ops = &self.ops[rank][starts[k]..end];
        if pass == 0 {
            out.extend_from_slice(ops);
            return;
        }
        out.extend(ops.iter().map(|&op| match op {
            Op::RecvMatched { from, seq } => Op::RecvMatched { from, seq: seq + pass * self.per_pass.get(&(from, rank as u32)).copied().unwrap_or(0) },
            op => op,
        }));
    }

    /// Reads and matches the converted trace at `path`; compute gaps become
    /// `cycles_per_tick` cycles per timer tick. Errors name `key` and the file.
    pub fn load(path: &Path, key: &str, cycles_per_tick: f64) -> SpecResult<Trace> {
        let mut file = TraceFile::open(path, key)?;
        let h = file.header.clone();
        let shown = format!("{:?}", file.shown());
        let bad = |why: String| SpecError::new(key, &shown, why);
        let calls = collective_calls(path, key)?;
        let member_index: Vec<HashMap<u32, u32>> = h.communicators.iter().map(|m| m.iter().enumerate().map(|(i, &r)| (r, i as u32)).collect()).collect();
        let mut ops = Vec::with_capacity(h.ranks);
        let mut channels = Vec::with_capacity(h.ranks);
        let mut starts = Vec::with_capacity(h.ranks);
        let mut events = 0;
        let mut steps = Vec::new();
        for r in 0..h.ranks {
            let records = file.next_rank(key)?;
            events += records.len() as u64;
            let (mut o, mut ch, mut st) = (Vec::with_capacity(records.len()), Vec::new(), vec![0usize]);
            let mut call_no: HashMap<u32, u32> = HashMap::new();
            for rec in records {
                match rec {
                    Record::Compute { ticks } => {
                        let c = (ticks as f64 * cycles_per_tick).round();
                        if c >= (1u64 << 53) as f64 {
                            return Err(bad(format!("rank {r}: a computation of {ticks} ticks is more than 2^53 cycles at this compute_scale")));
                        }
                        if c >= 1.0 {
                            o.push(Op::Compute(c as u64));
                        }
                    }
                    Record::Send { to, comm, tag, bytes } => {
                        o.push(Op::Send { to, bytes });
                        ch.push(Channel::PointToPoint { comm, tag });
                    }
                    Record::Recv { from, comm, tag } => {
                        o.push(Op::RecvMatched { from, seq: 0 });
                        ch.push(Channel::PointToPoint { comm, tag });
                    }
                    Record::Collective { comm, .. } => {
                        let no = call_no.entry(comm).or_insert(0);
                        let call = &calls[&(comm, *no)];
                        let members = &h.communicators[comm as usize];
                        let me = member_index[comm as usize][&(r as u32)] as usize;
                        let root = if call.op.has_root() { member_index[comm as usize].get(&call.root).copied().unwrap_or(0) as usize } else { 0 };
                        steps.clear();
                        call.op.ops(members.len(), me, root, |i| members[i], call.bytes, &mut steps);
                        let channel = Channel::Collective { comm, call: *no };
                        for s in &steps {
                            o.push(match *s {
                                Op::Recv { from } => Op::RecvMatched { from, seq: 0 },
                                op => op,
                            });
                            ch.push(channel);
                        }
                        *no += 1;
                    }
                    Record::Iteration => {
                        if o.len() > *st.last().expect("starts at 0") {
                            st.push(o.len());
                        }
                    }
                }
            }
            if let Some(first) = starts.first().filter(|f: &&Vec<usize>| f.len() != st.len()) {
                return Err(bad(format!("rank 0 has {} iterations and rank {r} has {} (each rank must enter the iteration region as often)", first.len(), st.len())));
            }
            o.shrink_to_fit();
            ops.push(o);
            channels.push(ch);
            starts.push(st);
        }
        let per_pass = match_receives(&mut ops, &channels).map_err(bad)?;
        Ok(Trace { ranks: h.ranks, ops, starts, per_pass, unsupported: h.unsupported, events })
    }
}

/// Every collective call of the trace, by (communicator, call number): its operation, root
/// and per-peer size, checked to agree among its members.
fn collective_calls(path: &Path, key: &str) -> SpecResult<HashMap<(u32, u32), Call>> {
    let mut file = TraceFile::open(path, key)?;
    let h = file.header.clone();
    let shown = format!("{:?}", file.shown());
    let bad = |why: String| SpecError::new(key, &shown, why);
    let is_member: Vec<std::collections::HashSet<u32>> = h.communicators.iter().map(|m| m.iter().copied().collect()).collect();
    let mut seen: HashMap<(u32, u32), Seen> = HashMap::new();
    for r in 0..h.ranks {
        let mut call_no: HashMap<u32, u32> = HashMap::new();
        for rec in file.next_rank(key)? {
            let Record::Collective { op, comm, root, sent, received } = rec else { continue };
            let Some(members) = is_member.get(comm as usize) else {
                return Err(bad(format!("rank {r}: a collective on communicator {comm}, which the trace does not define")));
            };
            if !members.contains(&(r as u32)) {
                return Err(bad(format!("rank {r}: a collective on communicator {comm}, of which it is not a member")));
            }
            let c = Collective::from_code(op).ok_or_else(|| bad(format!("rank {r}: collective of unknown code {op}")))?;
            if c.has_root() && !members.contains(&root) {
                return Err(bad(format!("rank {r}: a {c:?} rooted at rank {root}, not a member of communicator {comm}")));
            }
            let no = call_no.entry(comm).or_insert(0);
            let e = seen.entry((comm, *no)).or_insert(Seen { op: c, root, non_root_received: 0, non_root_sent: 0, largest: 0, members: 0 });
            if e.op != c || (c.has_root() && e.root != root) {
                return Err(bad(format!("collective call {} on communicator {comm}: rank {r} calls {c:?} (root {root}) where an earlier member called {:?} (root {})", *no, e.op, e.root)));
            }
            if r as u32 != root || !c.has_root() {
                e.non_root_received = e.non_root_received.max(received);
                e.non_root_sent = e.non_root_sent.max(sent);
            }
            e.largest = e.largest.max(sent).max(received);
            e.members += 1;
            *no += 1;
        }
    }
    let mut out = HashMap::with_capacity(seen.len());
    for ((comm, no), e) in seen {
        let n = h.communicators[comm as usize].len();
        if e.members != n {
            return Err(bad(format!("collective call {no} on communicator {comm} is made by {} of its {n} members", e.members)));
        }
        let bytes = match e.op.size_from() {
            SizeFrom::Nothing => 0,
            SizeFrom::NonRootReceived => e.non_root_received,
            SizeFrom::NonRootSent => e.non_root_sent,
            SizeFrom::PerMember => e.largest.div_ceil(n as u64),
        };
        out.insert((comm, no), Call { op: e.op, root: e.root, bytes });
    }
    Ok(out)
}

/// Gives every receive the sequence number of its message among those its sender sends it
/// (`Op::RecvMatched::seq`), running the programs without time; returns the messages per
/// (sender, receiver), or what blocks the programs.
fn match_receives(ops: &mut [Vec<Op>], channels: &[Vec<Channel>]) -> Result<HashMap<(u32, u32), u32>, String> {
    let n = ops.len();
    let mut pc = vec![0usize; n];
    let mut chan_at = vec![0usize; n];
    let mut sent: HashMap<(u32, u32), u32> = HashMap::new();
    // Messages sent and not yet received: (sender, receiver, channel) -> their seqs, in order.
    let mut queued: HashMap<(u32, u32, Channel), VecDeque<u32>> = HashMap::new();
    let mut blocked: HashMap<(u32, u32, Channel), u32> = HashMap::new();
    let mut ready: Vec<u32> = (0..n as u32).rev().collect();
    while let Some(r) = ready.pop() {
        let r_us = r as usize;
        while pc[r_us] < ops[r_us].len() {
            match ops[r_us][pc[r_us]] {
                Op::Send { to, .. } | Op::AlltoallSend { to, .. } => {
                    let ch = channels[r_us][chan_at[r_us]];
                    let seq = sent.entry((r, to)).or_insert(0);
                    queued.entry((r, to, ch)).or_default().push_back(*seq);
                    *seq += 1;
                    if let Some(w) = blocked.remove(&(r, to, ch)) {
                        ready.push(w);
                    }
                }
                Op::RecvMatched { from, .. } => {
                    let ch = channels[r_us][chan_at[r_us]];
                    let k = (from, r, ch);
                    let Some(q) = queued.get_mut(&k) else {
                        blocked.insert(k, r);
                        break;
                    };
                    let seq = q.pop_front().expect("queues are removed when empty");
                    if q.is_empty() {
                        queued.remove(&k);
                    }
                    ops[r_us][pc[r_us]] = Op::RecvMatched { from, seq };
                }
                _ => {
                    pc[r_us] += 1;
                    continue;
                }
            }
            chan_at[r_us] += 1;
            pc[r_us] += 1;
        }
    }
    let mut stuck: Vec<_> = blocked.into_iter().collect();
    if stuck.is_empty() {
        return Ok(sent);
    }
    stuck.sort_by_key(|&(k, r)| (r, k.0));
    let what = |ch: Channel| match ch {
        Channel::PointToPoint { comm, tag } => format!("communicator {comm}, tag {tag}"),
        Channel::Collective { comm, call } => format!("collective call {call} on communicator {comm}"),
    };
    let shown: Vec<String> = stuck
        .iter()
        .take(3)
        .map(|&((from, _, ch), r)| {
            let sender = if pc[from as usize] == ops[from as usize].len() { "which has finished without sending it".to_string() } else { "which is itself waiting".to_string() };
            format!("rank {r} waits for a message from rank {from} ({}), {sender}", what(ch))
        })
        .collect();
    Err(format!(
        "the trace's communication cannot complete ({} rank(s) wait forever; not a network deadlock): {}",
        stuck.len(),
        shown.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(programs: Vec<Vec<(Op, Channel)>>) -> Result<Vec<Vec<Op>>, String> {
        let (mut ops, chans): (Vec<Vec<Op>>, Vec<Vec<Channel>>) = programs
            .into_iter()
            .map(|p| {
                let ch = p.iter().filter(|(o, _)| !matches!(o, Op::Compute(_))).map(|&(_, c)| c).collect();
                (p.into_iter().map(|(o, _)| o).collect(), ch)
            })
            .unzip();
        match_receives(&mut ops, &chans).map(|_| ops)
    }

    const P0: Channel = Channel::PointToPoint { comm: 0, tag: 0 };
    const P1: Channel = Channel::PointToPoint { comm: 0, tag: 1 };

    #[test]
    fn receives_take_their_tags_message_whatever_the_order_sent() {
        // Rank 0 sends tag 0 then tag 1; rank 1 receives tag 1 first.
        let ops = run(vec![
            vec![(Op::Send { to: 1, bytes: 8 }, P0), (Op::Send { to: 1, bytes: 8 }, P1)],
            vec![(Op::RecvMatched { from: 0, seq: 0 }, P1), (Op::RecvMatched { from: 0, seq: 0 }, P0)],
        ])
        .unwrap();
        assert_eq!(ops[1], vec![Op::RecvMatched { from: 0, seq: 1 }, Op::RecvMatched { from: 0, seq: 0 }]);
    }

    #[test]
    fn a_receive_without_a_send_and_a_cycle_of_waits_are_reported() {
        let e = run(vec![vec![], vec![(Op::RecvMatched { from: 0, seq: 0 }, P0)]]).unwrap_err();
        assert!(e.contains("rank 1 waits for a message from rank 0") && e.contains("finished without sending"), "{e}");
        let e = run(vec![
            vec![(Op::RecvMatched { from: 1, seq: 0 }, P0), (Op::Send { to: 1, bytes: 1 }, P0)],
            vec![(Op::RecvMatched { from: 0, seq: 0 }, P0), (Op::Send { to: 0, bytes: 1 }, P0)],
        ])
        .unwrap_err();
        assert!(e.contains("2 rank(s)") && e.contains("itself waiting") && e.contains("not a network deadlock"), "{e}");
    }
}
