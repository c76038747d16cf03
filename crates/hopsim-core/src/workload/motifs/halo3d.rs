//! Halo exchange on a 3D grid of ranks (Ember's halo3d): each rank holds a subdomain of
//! `domain` elements and exchanges each face with the neighbour beyond it (no wrap-around:
//! ranks on the grid's surface have fewer neighbours), then computes. A face normal to x
//! holds domain_y x domain_z elements, and so on.

use super::{Motif, MotifInfo, Op};

pub const KIND: MotifInfo = MotifInfo {
    name: "halo3d",
    about: "3D halo exchange with the 6 neighbours",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    typed: super::typed::<Keys>,
    check: |cx| faces(cx, &cx.own_keys()?).map(drop),
    build: |cx| {
        let keys: Keys = cx.own_keys()?;
        let grid = super::grid(keys.grid.as_deref(), cx.ranks(), 3, &cx.key("workload.grid"))?;
        let face = faces(cx, &keys)?;
        Ok(Some(Box::new(Halo3d { grid: [grid[0], grid[1], grid[2]], face, compute: cx.compute() })))
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
    }
}

/// The bytes of the faces normal to x, y and z: products of the domain's sides and
/// `element_bytes`, each checked like a message size given directly.
fn faces(cx: &super::MotifCtx, keys: &Keys) -> crate::error::SpecResult<[u64; 3]> {
    let [dx, dy, dz] = cx.domain(keys.domain.as_deref())?;
    let mut face = [0; 3];
    for (d, (a, b)) in [(dy, dz), (dx, dz), (dx, dy)].into_iter().enumerate() {
        let what = format!("the face normal to {} (domain x domain x element_bytes)", ["x", "y", "z"][d]);
        face[d] = cx.product_bytes("domain", format!("{:?}", [dx, dy, dz]), &what, &[a, b, keys.element_bytes])?;
    }
    Ok(face)
}

pub struct Halo3d {
    pub grid: [usize; 3],
    /// Bytes of the faces normal to x, y and z.
    pub face: [u64; 3],
    pub compute: u64,
}

impl Halo3d {
    /// The neighbours of `rank` and the bytes of the face between them.
    fn neighbours(&self, rank: usize) -> Vec<(u32, u64)> {
        let [gx, gy, _] = self.grid;
        let c = [rank % gx, rank / gx % gy, rank / (gx * gy)];
        let stride = [1, gx, gx * gy];
        let face = self.face;
        let mut out = Vec::with_capacity(6);
        for d in 0..3 {
            if c[d] > 0 {
                out.push(((rank - stride[d]) as u32, face[d]));
            }
            if c[d] + 1 < self.grid[d] {
                out.push(((rank + stride[d]) as u32, face[d]));
            }
        }
        out
    }
}

impl Motif for Halo3d {
    fn iteration(&self, rank: usize, _iteration: u32, ops: &mut Vec<Op>) {
        let nb = self.neighbours(rank);
        ops.extend(nb.iter().map(|&(to, bytes)| Op::Send { to, bytes }));
        ops.extend(nb.iter().map(|&(from, _)| Op::Recv { from }));
        ops.push(Op::Compute(self.compute));
    }
}
