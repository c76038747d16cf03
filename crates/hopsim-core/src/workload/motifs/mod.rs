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
mod halo3d;
mod ping_pong;
mod sweep3d;

use crate::error::{SpecError, SpecResult};
use crate::routing::AriesMode;
use crate::spec::{JobSpec, JobWorkloadSpec, Key};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Send { to: u32, bytes: u64 },
    Recv { from: u32 },
    Compute(u64),
}

pub trait Motif: Send {
    /// Rank `rank`'s operations in one iteration, appended to `ops`.
    fn iteration(&self, rank: usize, ops: &mut Vec<Op>);
    /// The adaptive mode application-aware routing uses beside high bias: Cray's MPI sends
    /// alltoall with increasingly-minimal bias.
    fn adaptive_mode(&self) -> AriesMode {
        AriesMode::Adaptive
    }
}

/// A motif as the registry knows it, declared in its file: its `jobs[].workload.motif` name,
/// one line on it, the `jobs[].workload` keys it reads besides `motif`, `iterations`,
/// `compute` and `barrier`, its checks that need only the job, and how it is built (`None`
/// for open-loop traffic, which is not a program).
pub struct MotifInfo {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    pub check: fn(&MotifCtx) -> SpecResult<()>,
    pub build: fn(&MotifCtx) -> SpecResult<Option<Box<dyn Motif>>>,
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
        Bernoulli => bernoulli::KIND,
    }
}

const BYTES: Key = Key { name: "bytes", default: "8", meaning: "message size in bytes" };
const ELEMENT_BYTES: Key = Key { name: "element_bytes", default: "8", meaning: "bytes per element" };
const GRID: Key = Key { name: "grid", default: "as square (cubic) as the ranks allow", meaning: "ranks per dimension" };
const DOMAIN: Key = Key { name: "domain", default: "[32, 32, 32]", meaning: "elements of each rank's subdomain per dimension (3 numbers)" };

/// Job `i` of the spec, as its motif sees it.
pub struct MotifCtx<'a> {
    pub job: &'a JobSpec,
    pub i: usize,
}

impl MotifCtx<'_> {
    pub fn workload(&self) -> &JobWorkloadSpec {
        &self.job.workload
    }
    pub fn ranks(&self) -> usize {
        self.job.ranks
    }
    /// Message size, 8 bytes unless given.
    pub fn bytes(&self) -> u64 {
        self.job.workload.bytes.unwrap_or(8)
    }
    pub fn compute(&self) -> u64 {
        self.job.workload.compute
    }
    /// The dotted name of one of the job's keys (`ranks`, `workload.root`).
    pub fn key(&self, k: &str) -> String {
        format!("jobs[{}].{k}", self.i)
    }
}

/// The motif job `i` runs, or an error naming `jobs[i].workload.motif` and what is allowed.
pub fn motif_of(job: &JobSpec, i: usize) -> SpecResult<&'static MotifInfo> {
    let name = &job.workload.motif;
    MotifKind::from_name(name).map(MotifKind::kind).ok_or_else(|| {
        let names: Vec<_> = MOTIFS.iter().map(|m| m.name).collect();
        SpecError::new(format!("jobs[{i}].workload.motif"), format!("{name:?}"), format!("allowed: {}", names.join(", ")))
    })
}

/// The checks of every job's motif that need only the job.
pub fn check(jobs: &[JobSpec]) -> SpecResult<()> {
    for (i, job) in jobs.iter().enumerate() {
        (motif_of(job, i)?.check)(&MotifCtx { job, i })?;
    }
    Ok(())
}

/// The motif job `i` runs (`None` for `bernoulli`, which is not a program).
pub fn build(job: &JobSpec, i: usize) -> SpecResult<Option<Box<dyn Motif>>> {
    let motif = (motif_of(job, i)?.build)(&MotifCtx { job, i })?;
    Ok(match motif {
        Some(m) if job.workload.barrier => Some(Box::new(Synced { inner: m, barrier: barrier::Dissemination { n: job.ranks, bytes: 8, compute: 0 } })),
        m => m,
    })
}

/// A motif whose iterations each end with a barrier.
struct Synced {
    inner: Box<dyn Motif>,
    barrier: barrier::Dissemination,
}

impl Motif for Synced {
    fn iteration(&self, rank: usize, ops: &mut Vec<Op>) {
        self.inner.iteration(rank, ops);
        self.barrier.iteration(rank, ops);
    }
    fn adaptive_mode(&self) -> AriesMode {
        self.inner.adaptive_mode()
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
        let f = (1..=root.max(1)).rev().find(|f| left % f == 0).unwrap_or(1);
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
