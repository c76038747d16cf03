//! Conjugate-gradient iterations (Nekbone, HPCG): per iteration a 3D halo exchange for the
//! sparse matrix-vector product, its computation, then `dot_products` allreduces of one
//! double each, every one a global synchronisation the next step waits on.

use super::allreduce::{allreduce, Algorithm};
use super::halo::{Exchange, Shape, Stencil};
use super::{Motif, MotifCtx, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};

pub const KIND: MotifInfo = MotifInfo {
    name: "cg",
    about: "conjugate gradient: 3D halo exchange, then allreduces of one double",
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
        /// elements of each rank's subdomain per dimension (3 numbers)
        domain: Option<Vec<u64>> = "32 x 32 x 32" => None,
        /// bytes per element
        element_bytes: u64 = 8,
        /// neighbours: face (6), edge (18) or corner (26, HPCG's 27-point stencil)
        stencil: Option<Stencil> = "corner" => None,
        /// wrap around at the grid's edges
        periodic: bool = false,
        /// allreduces of one double per iteration
        dot_products: u32 = 3,
        /// the small allreduces' algorithm: recursive_doubling or ring
        allreduce: Option<Algorithm> = "recursive_doubling" => None,
    }
}

/// A CG iteration's dot products reduce a single double each.
const DOT_BYTES: u64 = 8;

fn build(cx: &MotifCtx) -> SpecResult<Cg> {
    let keys: Keys = cx.own_keys()?;
    if keys.dot_products > 64 {
        return Err(SpecError::new(cx.key("workload.dot_products"), keys.dot_products, "between 0 and 64 allreduces per iteration"));
    }
    let shape = Shape { dims: 3, stencil: keys.stencil.unwrap_or(Stencil::Corner), ghost: 1, periodic: keys.periodic };
    let halo = Exchange::new(cx, shape, keys.grid.as_deref(), keys.domain.as_deref(), keys.element_bytes)?;
    Ok(Cg { halo, n: cx.ranks(), dot_products: keys.dot_products, algorithm: keys.allreduce.unwrap_or(Algorithm::RecursiveDoubling), compute: cx.compute() })
}

pub struct Cg {
    halo: Exchange,
    n: usize,
    dot_products: u32,
    algorithm: Algorithm,
    compute: u64,
}

impl Motif for Cg {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        self.halo.exchange(rank, ops);
        ops.push(Op::Compute(self.compute));
        for _ in 0..self.dot_products {
            allreduce(self.algorithm, self.n, rank, |i| i as u32, DOT_BYTES, ops);
        }
    }
}
