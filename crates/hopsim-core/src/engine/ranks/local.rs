//! Ranks as threads of one process, each with its own `Simulation`, exchanging through
//! channels what MPI ranks exchange through their communicator: the same partition and the
//! same messages without an MPI library, to check a run's partition (tests, and a quick
//! look at what a run would exchange before taking it to a cluster).

use super::{Exchange, RankError, RankFailure};
use crate::stats::RunResult;
use std::sync::mpsc::{channel, Receiver, Sender};

/// One rank's ends of the channels: to every rank, and from every rank.
pub struct LocalExchange {
    rank: usize,
    to: Vec<Sender<Vec<u8>>>,
    from: Vec<Receiver<Vec<u8>>>,
    /// Bytes this rank sent to other ranks, and messages after cycles (`sparse`): what an
    /// MPI exchange sends, not counting the sums and maxima of the statuses.
    pub bytes_sent: u64,
    pub messages_sent: u64,
    /// Those messages by receiving rank.
    pub messages_to: Vec<u64>,
    /// Exchanges after cycles (`sparse` calls).
    pub exchanges: u64,
}

/// What one rank sent over a run (`LocalExchange`'s counts).
#[derive(Debug, Clone)]
pub struct Sent {
    pub bytes: u64,
    pub messages: u64,
    pub messages_to: Vec<u64>,
    pub exchanges: u64,
}

impl LocalExchange {
    /// The exchanges of `ranks` ranks, connected to each other.
    pub fn connected(ranks: usize) -> Vec<LocalExchange> {
        let mut to: Vec<Vec<Sender<Vec<u8>>>> = (0..ranks).map(|_| Vec::new()).collect();
        let mut from: Vec<Vec<Receiver<Vec<u8>>>> = (0..ranks).map(|_| Vec::new()).collect();
        for dst_from in from.iter_mut() {
            for src_to in to.iter_mut() {
                let (tx, rx) = channel();
                src_to.push(tx);
                dst_from.push(rx);
            }
        }
        to.into_iter().zip(from).enumerate().map(|(rank, (to, from))| LocalExchange { rank, to, from, bytes_sent: 0, messages_sent: 0, messages_to: vec![0; ranks], exchanges: 0 }).collect()
    }
}

impl Exchange for LocalExchange {
    fn rank(&self) -> usize {
        self.rank
    }
    fn ranks(&self) -> usize {
        self.to.len()
    }
    fn ranks_here(&self) -> usize {
        self.to.len()
    }
    fn all_to_all(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, RankFailure> {
        for (r, msg) in out.into_iter().enumerate() {
            if r != self.rank {
                self.bytes_sent += msg.len() as u64;
            }
            self.to[r].send(msg).map_err(|_| RankFailure(format!("rank {r} has stopped")))?;
        }
        self.from.iter().enumerate().map(|(r, rx)| rx.recv().map_err(|_| RankFailure(format!("rank {r} has stopped")))).collect()
    }
    fn sparse(&mut self, out: Vec<(usize, Vec<u8>)>, sums: Vec<u64>, maxima: Vec<u64>) -> Result<super::Sparse, RankFailure> {
        let before = self.bytes_sent;
        let payload: u64 = out.iter().map(|(_, bytes)| bytes.len() as u64).sum();
        self.messages_sent += out.len() as u64;
        for (r, _) in &out {
            if let Some(n) = self.messages_to.get_mut(*r) {
                *n += 1;
            }
        }
        self.exchanges += 1;
        let all = super::sparse_over_all_to_all(self, out, sums, maxima);
        self.bytes_sent = before + payload;
        all
    }
}

/// The run of `spec` over `ranks` ranks, each a thread of this process: rank 0's result.
pub fn run(spec: &crate::spec::Validated, ranks: usize) -> Result<RunResult, RankError> {
    run_checkpointed(spec, ranks, None)
}

/// `run`, and what each rank sent, by rank.
pub fn run_counting(spec: &crate::spec::Validated, ranks: usize) -> Result<(RunResult, Vec<Sent>), RankError> {
    run_counted(spec, ranks, None, super::Walking::default(), None)
}

/// `run`, rank 0 writing the result's rows per link and per server to files in `dir`.
pub fn run_writing_rows(spec: &crate::spec::Validated, ranks: usize, dir: &std::path::Path) -> Result<RunResult, RankError> {
    run_counted(spec, ranks, None, super::Walking::default(), Some(dir)).map(|(result, _)| result)
}

/// `run`, with each rank's checkpoints beside `checkpoint` (`Simulation::run_on_rank`).
pub fn run_checkpointed(spec: &crate::spec::Validated, ranks: usize, checkpoint: Option<&crate::Checkpointing>) -> Result<RunResult, RankError> {
    run_with(spec, ranks, checkpoint, super::Walking::default())
}

/// `run`, each rank delivering and stepping block by block of `1 << shift` switches
/// (`super::Walking`).
pub fn run_in_blocks(spec: &crate::spec::Validated, ranks: usize, shift: u32) -> Result<RunResult, RankError> {
    run_with(spec, ranks, None, super::Walking { block_shift: Some(shift), split_every_phase: false })
}

/// `run`, each rank's threads (`run.threads`) splitting every cycle however little it has.
pub fn run_split(spec: &crate::spec::Validated, ranks: usize) -> Result<RunResult, RankError> {
    run_with(spec, ranks, None, super::Walking { block_shift: None, split_every_phase: true })
}

fn run_with(spec: &crate::spec::Validated, ranks: usize, checkpoint: Option<&crate::Checkpointing>, walking: super::Walking) -> Result<RunResult, RankError> {
    run_counted(spec, ranks, checkpoint, walking, None).map(|(result, _)| result)
}

fn run_counted(spec: &crate::spec::Validated, ranks: usize, checkpoint: Option<&crate::Checkpointing>, walking: super::Walking, rows_to: Option<&std::path::Path>) -> Result<(RunResult, Vec<Sent>), RankError> {
    let exchanges = LocalExchange::connected(ranks);
    let results: Vec<Result<(Option<RunResult>, Sent), RankError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = exchanges
            .into_iter()
            .map(|mut ex| {
                scope.spawn(move || {
                    let result = crate::engine::Simulation::run_on_rank_walking(spec, &mut ex, None, checkpoint, walking, rows_to)?;
                    Ok((result, Sent { bytes: ex.bytes_sent, messages: ex.messages_sent, messages_to: ex.messages_to.clone(), exchanges: ex.exchanges }))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(RankError::Rank(RankFailure("a rank panicked".into()))))).collect()
    });
    let mut first = None;
    let mut sent = Vec::with_capacity(ranks);
    for r in results {
        let (result, counts) = r?;
        if let Some(result) = result {
            first = Some(result);
        }
        sent.push(counts);
    }
    Ok((first.expect("rank 0 gives the result"), sent))
}
