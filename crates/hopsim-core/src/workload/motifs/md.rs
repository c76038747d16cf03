//! Molecular dynamics with a spatial decomposition (LAMMPS, Amber's direct-space part): a
//! periodic 3D grid of ranks, each owning a box of `domain` atoms per dimension. One
//! iteration is one time step. The ghost atoms within `ghost` layers of a box's faces go to
//! the neighbours in stages, x then y then z, each stage waiting for the one before and
//! forwarding the ghosts it brought (so edges and corners arrive without messages of their
//! own): the stage along z carries ghost x (domain_x + 2 ghost) x (domain_y + 2 ghost)
//! atoms. Then the forces are computed and, with Newton's third law across boxes
//! (`newton`), the ghosts' forces go back the same way in the opposite order.
//!
//! Every `rebuild_every`-th step rebuilds the neighbour lists: that step's forward stages
//! send whole ghost records (`border_bytes` per atom) instead of positions. Every
//! `thermo_every`-th step ends with an allreduce of `thermo_values` doubles (energies and
//! pressure for thermodynamic output).

use super::allreduce::{allreduce, Algorithm};
use super::{Motif, MotifCtx, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};

pub const KIND: MotifInfo = MotifInfo {
    name: "md",
    about: "molecular dynamics: staged 3D ghost exchange, periodic allreduce",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| build(cx).map(drop),
    build: |cx| Ok(Some(Box::new(build(cx)?))),
};

keys! {
    struct Keys {
        /// ranks per dimension
        grid: Option<Vec<usize>> = "as square (cubic) as the ranks allow" => None,
        /// atoms of each rank's box per dimension (3 numbers)
        domain: Option<Vec<u64>> = "32 x 32 x 32" => None,
        /// layers of atoms within the cutoff plus skin of a face
        ghost: u64 = 3,
        /// bytes per ghost atom each step (a position; forces back alike)
        atom_bytes: u64 = 24,
        /// bytes per ghost atom when the lists are rebuilt
        border_bytes: u64 = 48,
        /// send the ghosts' forces back after the force computation
        newton: bool = true,
        /// steps between neighbour-list rebuilds (0: never)
        rebuild_every: u32 = 20,
        /// steps between thermodynamic allreduces (0: never)
        thermo_every: u32 = 100,
        /// doubles in that allreduce
        thermo_values: u64 = 8,
        /// the small allreduces' algorithm: recursive_doubling or ring
        allreduce: Option<Algorithm> = "recursive_doubling" => None,
    }
}

fn build(cx: &MotifCtx) -> SpecResult<Md> {
    let keys: Keys = cx.own_keys()?;
    let grid = super::grid(keys.grid.as_deref(), cx.ranks(), 3, &cx.key("workload.grid"))?;
    let domain = match keys.domain.as_deref() {
        None => [32; 3],
        Some(&[x, y, z]) if x > 0 && y > 0 && z > 0 => [x, y, z],
        Some(d) => return Err(SpecError::new(cx.key("workload.domain"), format!("{d:?}"), "3 positive atom counts (x, y, z) per rank")),
    };
    let thinnest = *domain.iter().min().expect("3 sides");
    if keys.ghost == 0 || keys.ghost > thinnest {
        return Err(SpecError::new(cx.key("workload.ghost"), keys.ghost, format!("between 1 and the box's thinnest side ({thinnest} atoms)")));
    }
    // Atoms of the slab sent along each dimension: the dimensions staged before it have
    // grown by their ghosts on both sides. Beyond 2^36 atoms no per-atom size fits a message.
    let mut slab = [0u64; 3];
    for (d, s) in slab.iter_mut().enumerate() {
        let grown = |j: usize| if j < d { keys.ghost.checked_mul(2).and_then(|g| g.checked_add(domain[j])) } else { Some(domain[j]) };
        let atoms = (0..3).filter(|&j| j != d).try_fold(keys.ghost, |a, j| grown(j).and_then(|g| a.checked_mul(g)));
        *s = atoms.filter(|&a| a <= 1 << 36).ok_or_else(|| {
            SpecError::new(cx.key("workload.domain"), format!("{domain:?}"), format!("with ghost = {}, the ghost slab along dimension {d} holds more than 2^36 atoms: a message must be at most 2^36 bytes", keys.ghost))
        })?;
    }
    let bytes = |key: &str, per_atom: u64| -> SpecResult<[u64; 3]> {
        let mut out = [0; 3];
        for d in 0..3 {
            out[d] = cx.product_bytes(key, per_atom, &format!("the ghost message along dimension {d}"), &[slab[d], per_atom])?;
        }
        Ok(out)
    };
    let thermo_bytes = if keys.thermo_every > 0 { cx.product_bytes("thermo_values", keys.thermo_values, "the thermodynamic allreduce", &[keys.thermo_values, 8])? } else { 0 };
    Ok(Md {
        grid: [grid[0], grid[1], grid[2]],
        positions: bytes("atom_bytes", keys.atom_bytes)?,
        borders: bytes("border_bytes", keys.border_bytes)?,
        newton: keys.newton,
        rebuild_every: keys.rebuild_every,
        thermo_every: keys.thermo_every,
        thermo_bytes,
        algorithm: keys.allreduce.unwrap_or(Algorithm::RecursiveDoubling),
        compute: cx.compute(),
    })
}

pub struct Md {
    grid: [usize; 3],
    /// Per dimension: the bytes of a stage's message, positions and whole records.
    positions: [u64; 3],
    borders: [u64; 3],
    newton: bool,
    rebuild_every: u32,
    thermo_every: u32,
    thermo_bytes: u64,
    algorithm: Algorithm,
    compute: u64,
}

impl Md {
    /// The neighbours below and above `rank` along dimension `d` (periodic), or `None` when
    /// the grid has one rank along it: then the ghosts are a local copy.
    fn neighbours(&self, rank: usize, d: usize) -> Option<(u32, u32)> {
        let g = self.grid[d];
        if g == 1 {
            return None;
        }
        let stride: usize = self.grid[..d].iter().product();
        let c = rank / stride % g;
        let at = |c: usize| (rank - (rank / stride % g) * stride + c * stride) as u32;
        Some((at((c + g - 1) % g), at((c + 1) % g)))
    }

    /// One stage: a message each way along dimension `d`, then both receives.
    fn stage(&self, rank: usize, d: usize, bytes: u64, ops: &mut Vec<Op>) {
        if let Some((below, above)) = self.neighbours(rank, d) {
            ops.push(Op::Send { to: below, bytes });
            ops.push(Op::Send { to: above, bytes });
            ops.push(Op::Recv { from: above });
            ops.push(Op::Recv { from: below });
        }
    }
}

/// Whether step `iteration` (from 0) is an `every`-th one: the last of each `every`.
fn every(iteration: u32, every: u32) -> bool {
    every > 0 && (iteration + 1).is_multiple_of(every)
}

impl Motif for Md {
    fn iteration(&self, rank: usize, iteration: u32, ops: &mut Vec<Op>) {
        let forward = if every(iteration, self.rebuild_every) { &self.borders } else { &self.positions };
        for (d, &bytes) in forward.iter().enumerate() {
            self.stage(rank, d, bytes, ops);
        }
        ops.push(Op::Compute(self.compute));
        if self.newton {
            for d in (0..3).rev() {
                self.stage(rank, d, self.positions[d], ops);
            }
        }
        if every(iteration, self.thermo_every) {
            allreduce(self.algorithm, self.grid.iter().product(), rank, |i| i as u32, self.thermo_bytes, ops);
        }
    }
}
