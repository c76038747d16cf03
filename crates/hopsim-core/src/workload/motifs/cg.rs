//! Conjugate-gradient iterations (Nekbone, HPCG): per iteration a 3D halo exchange for the
//! sparse matrix-vector product, its computation, then `dot_products` allreduces of one
//! double each, every one a global synchronisation the next step waits on.

use super::allreduce::{allreduce, Algorithm};
use super::halo::{Exchange, Shape, Stencil};
use super::{Motif, MotifCtx, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};
use crate::spec::Key;
use serde::{Deserialize, Serialize};

pub const KIND: MotifInfo = MotifInfo {
    name: "cg",
    about: "conjugate gradient: 3D halo exchange, then allreduces of one double",
    keys: &[super::GRID, super::DOMAIN, super::ELEMENT_BYTES, STENCIL, super::halo::PERIODIC, DOT_PRODUCTS, ALLREDUCE],
    defaults: crate::spec::defaults_of::<Keys>,
    typed: super::typed::<Keys>,
    check: |cx| build(cx).map(drop),
    build: |cx| Ok(Some(Box::new(build(cx)?))),
};

const STENCIL: Key = Key { name: "stencil", default: "corner", meaning: "neighbours: face (6), edge (18) or corner (26, HPCG's 27-point stencil)" };
const DOT_PRODUCTS: Key = Key { name: "dot_products", default: "3", meaning: "allreduces of one double per iteration" };
pub(super) const ALLREDUCE: Key = Key { name: "allreduce", default: "recursive_doubling", meaning: "the small allreduces' algorithm: recursive_doubling or ring" };

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    #[serde(default)]
    grid: Option<Vec<usize>>,
    #[serde(default)]
    domain: Option<Vec<u64>>,
    #[serde(default = "super::eight")]
    element_bytes: u64,
    #[serde(default)]
    stencil: Option<Stencil>,
    #[serde(default)]
    periodic: bool,
    #[serde(default = "three")]
    dot_products: u32,
    #[serde(default)]
    allreduce: Option<Algorithm>,
}

fn three() -> u32 {
    3
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
