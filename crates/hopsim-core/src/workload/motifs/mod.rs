//! MPI-like motifs, after SST Ember's: each rank runs a program of sends, receives and
//! computation, one iteration at a time. A send does not block (MPI_Isend); a receive blocks
//! until the next message from that rank has arrived (a run of receives is MPI_Waitall, since
//! all must arrive anyway); messages between two ranks are matched in the order they were
//! sent, whatever order they arrive in. One motif per file, registered with one line in `MOTIFS`.

mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod bernoulli;
pub mod collectives;
mod cg;
mod fft3d;
mod graph500;
mod halo;
mod halo3d;
mod md;
mod ping_pong;
mod sweep3d;
mod trace;

use crate::error::{SpecError, SpecResult};
use crate::routing::AriesMode;
use crate::spec::{JobSpec, Key, Spec};
use serde::{de::DeserializeOwned, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    Send { to: u32, bytes: u64 },
    /// A send of an alltoall (or alltoallv) exchange: Cray's MPI routes these with its own
    /// mode (`jobs[].routing_mode = "default"`), so the operation travels with the message.
    AlltoallSend { to: u32, bytes: u64 },
    /// The next message from `from`, in the order it sent them.
    Recv { from: u32 },
    /// Message `seq` (counted from 0) of those `from` sends this rank: a replayed trace's
    /// receive, matched on its communicator and tag beforehand (`workload::trace`). A
    /// program uses this or `Recv`, not both.
    RecvMatched { from: u32, seq: u32 },
    Compute(u64),
}

pub trait Motif: Send {
    /// Rank `rank`'s operations in iteration `iteration` (from 0), appended to `ops`: most
    /// motifs repeat one iteration, skeletons vary some (a periodic allreduce, a traversal's
    /// levels), a trace replays its segments in turn.
    fn iteration(&self, rank: usize, iteration: u32, ops: &mut Vec<Op>);
    /// The adaptive mode application-aware routing uses beside high bias: Cray's MPI sends
    /// alltoall with increasingly-minimal bias.
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::Adaptive
    }
    /// Events of a replayed trace that could not be run, per kind.
    fn unsupported_events(&self) -> std::collections::BTreeMap<String, u64> {
        Default::default()
    }
}

/// Builds job `cx.i`'s motif (`None`: the job runs the open-loop workload instead).
pub type BuildMotif = fn(&MotifCtx) -> SpecResult<Option<Box<dyn Motif>>>;

/// A motif as the registry knows it, declared in its file: its `jobs[].workload.motif` name,
/// one line on it, the `jobs[].workload` keys it reads besides `motif`, `iterations`,
/// `compute` and `barrier` (its key type's fields, read with `MotifCtx::own_keys`), its
/// checks that need no network, and how it is built (`None` for open-loop traffic, which is
/// not a program).
pub struct MotifInfo {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`), which a test
    /// compares with `keys`.
    pub defaults: fn() -> serde_json::Value,
    /// Its key type as read from job `cx.i`'s table by the motif given (`typed::<T>`): the
    /// values the normalised spec lists.
    pub typed: fn(&MotifCtx, &MotifInfo) -> SpecResult<serde_json::Value>,
    pub check: fn(&MotifCtx) -> SpecResult<()>,
    pub build: BuildMotif,
}

registry! {
    /// The motifs and the open-loop workload a job may run: one line each, its variant and
    /// its entry, declared in its file.
    enum MotifKind;
    /// Every motif, in the order `hopsim list` and error messages give them.
    const MOTIFS: [MotifInfo] = {
        PingPong => ping_pong::KIND,
        Allreduce => allreduce::KIND,
        Alltoall => alltoall::KIND,
        Barrier => barrier::KIND,
        Bcast => bcast::KIND,
        Halo3d => halo3d::KIND,
        Sweep3d => sweep3d::KIND,
        Halo => halo::KIND,
        Cg => cg::KIND,
        Fft3d => fft3d::KIND,
        Graph500 => graph500::KIND,
        Md => md::KIND,
        Trace => trace::KIND,
        Bernoulli => bernoulli::KIND,
    }
}

/// Job `i` of the spec, as its motif sees it.
pub struct MotifCtx<'a> {
    pub spec: &'a Spec,
    pub i: usize,
    /// Nanoseconds a cycle lasts, when the network has physical units; known only when the
    /// motif is built for a network.
    pub cycle_ns: Option<f64>,
}

impl MotifCtx<'_> {
    pub fn job(&self) -> &JobSpec {
        &self.spec.jobs[self.i]
    }
    pub fn ranks(&self) -> usize {
        self.job().ranks
    }
    pub fn compute(&self) -> u64 {
        self.job().workload.compute
    }
    /// Whether the job is open-loop traffic, whose messages a full source queue drops (a
    /// program's never are: its receivers wait for them).
    fn open_loop(&self) -> bool {
        crate::workload::is_open_loop_motif(&self.job().workload.motif)
    }

    /// The dotted name of one of the job's keys (`ranks`, `workload.root`).
    pub fn key(&self, k: &str) -> String {
        format!("jobs[{}].{k}", self.i)
    }

    /// The job's motif's own keys, read into its key type `T`.
    pub fn own_keys<T: DeserializeOwned>(&self) -> SpecResult<T> {
        self.keys_of(motif_of(self.job(), self.i)?)
    }

    /// `motif`'s keys in the job's table, read into its key type `T`; another motif's keys
    /// are refused, unless the experiment sweeps the job's motif.
    fn keys_of<T: DeserializeOwned>(&self, motif: &MotifInfo) -> SpecResult<T> {
        let chosen = format!("{} = {:?}", self.key("workload.motif"), motif.name);
        let others = self.spec.keys_left_to_others(&self.key("workload.motif"), MOTIFS.iter().flat_map(|m| m.keys.iter()).map(|k| k.name));
        crate::spec::read_own_keys(&self.key("workload"), &chosen, &self.job().workload.motif_keys, crate::spec::JOB_WORKLOAD_KEYS, motif.keys, &others)
    }

    /// The message size of a motif whose only key is `bytes` (its key type `BytesKeys`).
    pub fn own_message_bytes(&self) -> SpecResult<u64> {
        self.message_bytes(self.own_keys::<BytesKeys>()?.bytes)
    }

    /// The size of the job's messages: `bytes` if given (between 1 and 2^36, and cut into
    /// packets of `packet.bytes` or a protocol's requests), else 8.
    pub fn message_bytes(&self, bytes: Option<u64>) -> SpecResult<u64> {
        let Some(b) = bytes else { return Ok(8) };
        if b == 0 || b > 1 << 36 {
            return Err(SpecError::new(self.key("workload.bytes"), b, "must be between 1 and 2^36 bytes"));
        }
        if self.spec.bytes_per_phit().is_none() {
            return Err(SpecError::new(self.key("workload.bytes"), b, "needs packet.bytes to cut messages into packets (or a nic.protocol)"));
        }
        self.spec.check_message_fits(&self.key("workload.bytes"), b, b, "a message", self.open_loop())?;
        Ok(b)
    }

    /// A message size that is a product of keys (a face's elements x `element_bytes`, a
    /// grid's points x element size / ranks): computed without wrapping and refused, naming
    /// `jobs[i].workload.<key>` and its `value`, when it overflows or is not between 1 byte
    /// and the 2^36-byte cap of `message_bytes`. `what` says which message it is.
    pub fn product_bytes(&self, key: &str, value: impl std::fmt::Display, what: &str, factors: &[u64]) -> SpecResult<u64> {
        let too_big = || SpecError::new(self.key(&format!("workload.{key}")), &value, format!("{what} would be {} bytes: must be between 1 and 2^36 bytes", factors.iter().map(u64::to_string).collect::<Vec<_>>().join(" x ")));
        let bytes = factors.iter().try_fold(1u64, |p, &f| p.checked_mul(f)).ok_or_else(too_big)?;
        if bytes == 0 || bytes > 1 << 36 {
            return Err(too_big());
        }
        if self.spec.bytes_per_phit().is_none() {
            return Err(SpecError::new(self.key(&format!("workload.{key}")), &value, "needs packet.bytes to cut messages into packets (or a nic.protocol)"));
        }
        self.spec.check_message_fits(&self.key(&format!("workload.{key}")), &value, bytes, what, self.open_loop())?;
        Ok(bytes)
    }

    /// Each rank's subdomain: `domain` if given (3 positive element counts), else 32^3.
    fn domain(&self, domain: Option<&[u64]>) -> SpecResult<[u64; 3]> {
        match domain {
            None => Ok([32; 3]),
            Some(&[x, y, z]) if x > 0 && y > 0 && z > 0 => Ok([x, y, z]),
            Some(d) => Err(SpecError::new(self.key("workload.domain"), format!("{d:?}"), "3 positive element counts (x, y, z) per rank")),
        }
    }
}

/// A motif's key type `T` as `motif` reads it from job `cx.i`'s table (the keys of other
/// motifs skipped), as JSON: what the normalised spec lists.
fn typed<T: DeserializeOwned + Serialize>(cx: &MotifCtx, motif: &MotifInfo) -> SpecResult<serde_json::Value> {
    let chosen = format!("{} = {:?}", cx.key("workload.motif"), motif.name);
    let keys: T = crate::spec::read_listed_keys(&cx.key("workload"), &chosen, &cx.job().workload.motif_keys, motif.keys)?;
    Ok(serde_json::to_value(keys).expect("motif keys serialise"))
}

/// The motif job `i` runs, or an error naming `jobs[i].workload.motif` and what is allowed.
pub fn motif_of(job: &JobSpec, i: usize) -> SpecResult<&'static MotifInfo> {
    let name = &job.workload.motif;
    MotifKind::from_name(name).map(MotifKind::kind).ok_or_else(|| {
        let names: Vec<_> = MOTIFS.iter().map(|m| m.name).collect();
        SpecError::new(format!("jobs[{i}].workload.motif"), format!("{name:?}"), format!("allowed: {}", names.join(", ")))
    })
}

/// The checks of every job's motif that need no network: its keys, and what it needs of
/// the job and of `[packet]` and `[nic]`.
pub fn check(spec: &Spec) -> SpecResult<()> {
    for i in 0..spec.jobs.len() {
        let cx = MotifCtx { spec, i, cycle_ns: None };
        (motif_of(cx.job(), i)?.check)(&cx)?;
    }
    Ok(())
}

/// The motif job `i` runs (`None` for `bernoulli`, which is not a program).
pub fn build(spec: &Spec, i: usize, cycle_ns: Option<f64>) -> SpecResult<Option<Box<dyn Motif>>> {
    let cx = MotifCtx { spec, i, cycle_ns };
    let job = cx.job();
    let motif = (motif_of(job, i)?.build)(&cx)?;
    Ok(match motif {
        Some(m) if job.workload.barrier => Some(Box::new(Synced { inner: m, barrier: barrier::Dissemination { n: job.ranks, bytes: 8, compute: 0 } })),
        m => m,
    })
}

pub use bernoulli::open_loop;

/// `spec` with each job's motif keys as the normalised spec writes them: the keys of the
/// motif it runs as that motif's key type reads them (defaults filled in), the other
/// motifs' keys null (`spec::list_keys`).
pub fn with_defaults(spec: &mut Spec) {
    for i in 0..spec.jobs.len() {
        let cx = MotifCtx { spec, i, cycle_ns: None };
        let own = motif_of(cx.job(), i).ok().and_then(|m| (m.typed)(&cx, m).ok()).unwrap_or(serde_json::Value::Null);
        let keys = &mut spec.jobs[i].workload.motif_keys;
        // As the motif reads them: a value given in another form is shown in its own.
        if let serde_json::Value::Object(read) = &own {
            keys.extend(read.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())));
        }
        crate::spec::list_keys(keys, own, MOTIFS.iter().flat_map(|m| m.keys.iter()).map(|k| k.name));
    }
}

/// A motif whose iterations each end with a barrier.
struct Synced {
    inner: Box<dyn Motif>,
    barrier: barrier::Dissemination,
}

impl Motif for Synced {
    fn iteration(&self, rank: usize, iteration: u32, ops: &mut Vec<Op>) {
        self.inner.iteration(rank, iteration, ops);
        self.barrier.iteration(rank, iteration, ops);
    }
    fn adaptive_mode(&self) -> AriesMode {
        self.inner.adaptive_mode()
    }
    fn unsupported_events(&self) -> std::collections::BTreeMap<String, u64> {
        self.inner.unsupported_events()
    }
}

/// The ranks' grid: as given (its product must be the rank count), or the most nearly
/// square (cubic) factorisation of `n` into `dims` factors, largest first.
fn grid(given: Option<&[usize]>, n: usize, dims: usize, key: &str) -> SpecResult<Vec<usize>> {
    if let Some(g) = given {
        if g.len() != dims || g.iter().product::<usize>() != n || g.contains(&0) {
            return Err(SpecError::new(key, format!("{g:?}"), format!("{dims} ranks per dimension whose product is the job's {n} ranks")));
        }
        return Ok(g.to_vec());
    }
    let mut out = Vec::with_capacity(dims);
    let mut left = n;
    for d in (1..=dims).rev() {
        // The largest factor of `left` not above its d-th root, its cofactor first.
        let root = (left as f64).powf(1.0 / d as f64).round() as usize;
        let f = (1..=root.max(1)).rev().find(|f| left.is_multiple_of(*f)).unwrap_or(1);
        let f = if d == 1 { left } else { f };
        out.push(f);
        left /= f;
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::grid;

    #[test]
    fn default_grids_are_as_square_as_the_rank_count_allows() {
        assert_eq!(grid(None, 1024, 3, "k").unwrap(), vec![16, 8, 8]);
        assert_eq!(grid(None, 64, 3, "k").unwrap(), vec![4, 4, 4]);
        assert_eq!(grid(None, 64, 2, "k").unwrap(), vec![8, 8]);
        assert_eq!(grid(None, 12, 2, "k").unwrap(), vec![4, 3]);
        assert_eq!(grid(None, 7, 3, "k").unwrap(), vec![7, 1, 1]);
        assert!(grid(Some(&[4, 4, 3]), 64, 3, "k").is_err());
    }
}

keys! {
    /// The key type of the motifs whose only key is the message size (ping_pong and
    /// barrier): one type, so both read and declare `bytes` alike.
    pub struct BytesKeys {
        /// message size in bytes (given, it needs packet.bytes or a nic.protocol)
        pub bytes: Option<u64> = "8 bytes" => None,
    }
}
