//! MPI-like motifs, after SST Ember's: each rank runs a program of sends, receives and
//! computation, one iteration at a time. A send does not block (MPI_Isend); a receive blocks
//! until the next message from that rank has arrived (a run of receives is MPI_Waitall, since
//! all must arrive anyway); messages between two ranks are matched in the order they were
//! sent, whatever order they arrive in. One motif per file, registered in `build`.

mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod halo3d;
mod ping_pong;
mod sweep3d;

use crate::error::{SpecError, SpecResult};
use crate::routing::AriesMode;
use crate::spec::{JobSpec, MotifKind};

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

/// The motif job `i` runs (`None` for `bernoulli`, which is not a program).
pub fn build(job: &JobSpec, i: usize) -> SpecResult<Option<Box<dyn Motif>>> {
    let (w, n) = (&job.workload, job.ranks);
    let motif = motif(job, i)?;
    Ok(match motif {
        Some(m) if w.barrier => Some(Box::new(Synced { inner: m, barrier: barrier::Dissemination { n, bytes: 8, compute: 0 } })),
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

fn motif(job: &JobSpec, i: usize) -> SpecResult<Option<Box<dyn Motif>>> {
    let w = &job.workload;
    let n = job.ranks;
    let key = |k: &str| format!("jobs[{i}].workload.{k}");
    let bytes = w.bytes.unwrap_or(8);
    let compute = w.compute;
    Ok(Some(match job.motif() {
        MotifKind::Bernoulli => return Ok(None),
        MotifKind::PingPong => Box::new(ping_pong::PingPong { half: n / 2, bytes, compute }),
        MotifKind::Allreduce => {
            let total = w.elements.map_or(bytes, |e| e * w.element_bytes);
            let algorithm = w.algorithm.as_deref().unwrap_or("ring");
            match algorithm {
                "ring" => Box::new(allreduce::Ring { n, chunk: total.div_ceil(n as u64).max(1), compute }),
                "recursive_doubling" if n.is_power_of_two() => Box::new(allreduce::RecursiveDoubling { n, bytes: total, compute }),
                "recursive_doubling" => {
                    return Err(SpecError::new(format!("jobs[{i}].ranks"), n, "recursive_doubling needs a power-of-two number of ranks"))
                }
                other => return Err(SpecError::new(key("algorithm"), format!("{other:?}"), "allowed: ring, recursive_doubling")),
            }
        }
        MotifKind::Alltoall => Box::new(alltoall::Pairwise { n, bytes, compute }),
        MotifKind::Barrier => Box::new(barrier::Dissemination { n, bytes, compute }),
        MotifKind::Bcast => {
            if w.root >= n {
                return Err(SpecError::new(key("root"), w.root, format!("must be a rank of the job, below {n}")));
            }
            Box::new(bcast::Binomial { n, root: w.root, bytes, compute })
        }
        MotifKind::Halo3d => {
            let grid = grid(w.grid.as_deref(), n, 3, &key("grid"))?;
            let d = w.domain.clone().unwrap_or(vec![32, 32, 32]);
            Box::new(halo3d::Halo3d { grid: [grid[0], grid[1], grid[2]], domain: [d[0], d[1], d[2]], element_bytes: w.element_bytes, compute })
        }
        MotifKind::Sweep3d => {
            let grid = grid(w.grid.as_deref(), n, 2, &key("grid"))?;
            let d = w.domain.clone().unwrap_or(vec![32, 32, 32]);
            Box::new(sweep3d::Sweep3d { grid: [grid[0], grid[1]], domain: [d[0], d[1], d[2]], block: w.block, element_bytes: w.element_bytes, compute })
        }
    }))
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
