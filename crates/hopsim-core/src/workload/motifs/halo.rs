//! Stencil exchange on a grid of ranks in 2, 3 or 4 dimensions, then computation: the
//! skeleton of WRF's 2D halo, HPCG's 27-point 3D stencil and MILC's 4D lattice. One motif
//! with the dimension as a key, not three files: the stencils differ only in the offsets
//! they reach and the message sizes those imply, so one exchange serves all (and `cg`).
//!
//! A rank's neighbours are the ranks at offsets in {-1, 0, 1}^dims: `face` keeps the 2 dims
//! offsets that move along one dimension, `edge` those that move along at most two, `corner`
//! all 3^dims - 1. The message to a neighbour carries `ghost` layers of the subdomain along
//! each dimension the offset moves in and the whole subdomain along the others: a face
//! normal to x of a 3D domain holds ghost x domain_y x domain_z elements, an edge along z
//! ghost^2 x domain_z, a corner ghost^dims.

use super::{Motif, MotifCtx, MotifInfo, Op};
use crate::error::{SpecError, SpecResult};
use serde::{Deserialize, Serialize};

pub const KIND: MotifInfo = MotifInfo {
    name: "halo",
    about: "stencil exchange on a 2D, 3D or 4D grid (faces, edges, corners)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| build(cx).map(drop),
    build: |cx| Ok(Some(Box::new(build(cx)?))),
};

keys! {
    struct Keys {
        /// dimensions of the rank grid and subdomain: 2, 3 or 4
        dims: u32 = 3,
        /// neighbours: face (2 dims), edge (along at most 2 dimensions) or corner (3^dims - 1)
        stencil: Option<Stencil> = "face" => None,
        /// ranks per dimension
        grid: Option<Vec<usize>> = "as square (cubic) as the ranks allow" => None,
        /// elements of each rank's subdomain per dimension (dims numbers)
        domain: Option<Vec<u64>> = "32 per dimension" => None,
        /// bytes per element
        element_bytes: u64 = 8,
        /// ghost layers exchanged (the stencil's reach)
        ghost: u64 = 1,
        /// wrap around at the grid's edges
        periodic: bool = false,
    }
}

/// Which neighbours a rank exchanges with.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Stencil {
    Face,
    Edge,
    Corner,
}

impl Stencil {
    /// The most dimensions an offset of this stencil moves along.
    fn reach(self, dims: usize) -> usize {
        match self {
            Stencil::Face => 1,
            Stencil::Edge => 2,
            Stencil::Corner => dims,
        }
    }
}

fn build(cx: &MotifCtx) -> SpecResult<Halo> {
    let keys: Keys = cx.own_keys()?;
    if !(2..=4).contains(&keys.dims) {
        return Err(SpecError::new(cx.key("workload.dims"), keys.dims, "2, 3 or 4 dimensions"));
    }
    let shape = Shape { dims: keys.dims as usize, stencil: keys.stencil.unwrap_or(Stencil::Face), ghost: keys.ghost, periodic: keys.periodic };
    let exchange = Exchange::new(cx, shape, keys.grid.as_deref(), keys.domain.as_deref(), keys.element_bytes)?;
    Ok(Halo { exchange, compute: cx.compute() })
}

/// The stencil's form, whatever the domain's size.
#[derive(Clone, Copy)]
pub struct Shape {
    pub dims: usize,
    pub stencil: Stencil,
    pub ghost: u64,
    pub periodic: bool,
}

/// One exchange with every neighbour: each rank posts all its sends, then waits for all its
/// receives (MPI_Isend/Irecv and one Waitall).
pub struct Exchange {
    grid: Vec<usize>,
    periodic: bool,
    /// The offsets in a fixed order, with the bytes of the message to the neighbour there.
    offsets: Vec<([i8; 4], u64)>,
}

impl Exchange {
    /// The exchange of job `cx.i`'s ranks on `grid` (or the squarest grid), each with a
    /// subdomain of `domain` elements (or 32 per dimension) of `element_bytes`.
    pub fn new(cx: &MotifCtx, shape: Shape, grid: Option<&[usize]>, domain: Option<&[u64]>, element_bytes: u64) -> SpecResult<Exchange> {
        let dims = shape.dims;
        let grid = super::grid(grid, cx.ranks(), dims, &cx.key("workload.grid"))?;
        let domain = match domain {
            None => vec![32; dims],
            Some(d) if d.len() == dims && !d.contains(&0) => d.to_vec(),
            Some(d) => return Err(SpecError::new(cx.key("workload.domain"), format!("{d:?}"), format!("{dims} positive element counts, one per dimension"))),
        };
        let thinnest = *domain.iter().min().expect("dims >= 2");
        if shape.ghost == 0 || shape.ghost > thinnest {
            return Err(SpecError::new(cx.key("workload.ghost"), shape.ghost, format!("between 1 and the subdomain's thinnest side ({thinnest} elements)")));
        }
        let mut offsets = Vec::new();
        for code in 0..3usize.pow(dims as u32) {
            let mut o = [0i8; 4];
            let mut c = code;
            for v in o.iter_mut().take(dims) {
                *v = (c % 3) as i8 - 1;
                c /= 3;
            }
            let moves = o.iter().filter(|&&v| v != 0).count();
            if moves == 0 || moves > shape.stencil.reach(dims) {
                continue;
            }
            let mut factors: Vec<u64> = (0..dims).map(|d| if o[d] != 0 { shape.ghost } else { domain[d] }).collect();
            factors.push(element_bytes);
            let what = format!("the message to the neighbour at offset {:?}", &o[..dims]);
            let bytes = cx.product_bytes("domain", format!("{domain:?}"), &what, &factors)?;
            offsets.push((o, bytes));
        }
        Ok(Exchange { grid, periodic: shape.periodic, offsets })
    }

    /// The rank at offset `o` (times `sign`) from `rank`, if there is one: off the grid
    /// without wrap-around there is none, and a rank is not its own neighbour (with one rank
    /// along a periodic dimension the copy is local).
    fn at(&self, rank: usize, o: &[i8; 4], sign: i64) -> Option<u32> {
        let (mut left, mut stride, mut to) = (rank, 1usize, 0usize);
        for (d, &g) in self.grid.iter().enumerate() {
            let c = (left % g) as i64 + sign * o[d] as i64;
            left /= g;
            let c = if self.periodic { c.rem_euclid(g as i64) } else if (0..g as i64).contains(&c) { c } else { return None };
            to += c as usize * stride;
            stride *= g;
        }
        (to != rank).then_some(to as u32)
    }

    /// Rank `rank`'s sends to its neighbours, then its receives from them. A neighbour at
    /// several offsets (a periodic dimension of 2 ranks) gets one message per offset; the
    /// receives follow the senders' order, so each pair's messages match in turn.
    pub fn exchange(&self, rank: usize, ops: &mut Vec<Op>) {
        for (o, bytes) in &self.offsets {
            if let Some(to) = self.at(rank, o, 1) {
                ops.push(Op::Send { to, bytes: *bytes });
            }
        }
        for (o, _) in &self.offsets {
            if let Some(from) = self.at(rank, o, -1) {
                ops.push(Op::Recv { from });
            }
        }
    }
}

pub struct Halo {
    exchange: Exchange,
    compute: u64,
}

impl Motif for Halo {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        self.exchange.exchange(rank, ops);
        ops.push(Op::Compute(self.compute));
    }
}
