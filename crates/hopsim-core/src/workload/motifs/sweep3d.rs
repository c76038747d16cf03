//! Wavefront sweeps (Ember's sweep3d): ranks as a 2D grid, each with a subdomain of
//! `domain` elements; from each corner in turn, the z planes are swept in blocks of `block`:
//! per block a rank waits for its upstream neighbours' faces (x then y), computes, and sends
//! its faces downstream. A face to an x neighbour holds domain_y x block elements, to a y
//! neighbour domain_x x block.

use super::{Motif, MotifInfo, Op};
use crate::error::SpecError;

pub const KIND: MotifInfo = MotifInfo {
    name: "sweep3d",
    about: "2D wavefront sweeps (Ember's KBA)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| {
        let keys: Keys = cx.own_keys()?;
        faces(cx, &keys).map(drop)
    },
    build: |cx| {
        let keys: Keys = cx.own_keys()?;
        let grid = super::grid(keys.grid.as_deref(), cx.ranks(), 2, &cx.key("workload.grid"))?;
        let (x_face, y_face, blocks) = faces(cx, &keys)?;
        Ok(Some(Box::new(Sweep3d { grid: [grid[0], grid[1]], x_face, y_face, blocks, compute: cx.compute() })))
    },
};

keys! {
    struct Keys {
        /// ranks per dimension
        grid: Option<Vec<usize>> = "as square (cubic) as the ranks allow" => None,
        /// elements of each rank's subdomain per dimension (3 numbers)
        domain: Option<Vec<u64>> = "32 x 32 x 32" => None,
        /// bytes per element
        element_bytes: u64 = 8,
        /// z planes per wavefront step
        block: u64 = 1,
    }
}

/// The bytes of a block's face to an x and to a y neighbour (products of keys, each checked
/// like a message size given directly), and the blocks of a sweep.
fn faces(cx: &super::MotifCtx, keys: &Keys) -> crate::error::SpecResult<(u64, u64, u64)> {
    if keys.block == 0 {
        return Err(SpecError::new(cx.key("workload.block"), 0, "must be at least 1 plane"));
    }
    let domain = cx.domain(keys.domain.as_deref())?;
    let shown = format!("{domain:?}");
    let x_face = cx.product_bytes("domain", &shown, "the face to an x neighbour (domain_y x block x element_bytes)", &[domain[1], keys.block, keys.element_bytes])?;
    let y_face = cx.product_bytes("domain", &shown, "the face to a y neighbour (domain_x x block x element_bytes)", &[domain[0], keys.block, keys.element_bytes])?;
    let blocks = domain[2].div_ceil(keys.block);
    // An iteration's operations are made at once, a few per block and corner.
    if blocks > MAX_BLOCKS {
        return Err(SpecError::new(cx.key("workload.domain"), shown, format!("with block = {}, {blocks} wavefront steps per sweep: at most {MAX_BLOCKS} (domain_z / block)", keys.block)));
    }
    Ok((x_face, y_face, blocks))
}

/// Wavefront steps of one sweep (z planes / `block`).
const MAX_BLOCKS: u64 = 1 << 16;

pub struct Sweep3d {
    pub grid: [usize; 2],
    pub x_face: u64,
    pub y_face: u64,
    /// Wavefront steps per corner: the z planes in blocks.
    pub blocks: u64,
    pub compute: u64,
}

impl Motif for Sweep3d {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        let [gx, gy] = self.grid;
        let (x, y) = ((rank % gx) as i64, (rank / gx) as i64);
        let at = |x: i64, y: i64| (x >= 0 && y >= 0 && x < gx as i64 && y < gy as i64).then(|| (y as usize * gx + x as usize) as u32);
        let (x_face, y_face, blocks) = (self.x_face, self.y_face, self.blocks);
        // Corners in turn: the direction the wave travels in x and in y.
        for (sx, sy) in [(1, 1), (-1, 1), (1, -1), (-1, -1)] {
            for _ in 0..blocks {
                if let Some(up) = at(x - sx, y) {
                    ops.push(Op::Recv { from: up });
                }
                if let Some(up) = at(x, y - sy) {
                    ops.push(Op::Recv { from: up });
                }
                ops.push(Op::Compute(self.compute));
                if let Some(down) = at(x + sx, y) {
                    ops.push(Op::Send { to: down, bytes: x_face });
                }
                if let Some(down) = at(x, y + sy) {
                    ops.push(Op::Send { to: down, bytes: y_face });
                }
            }
        }
    }
}
