//! Dimension-order routing: correct dimension 0 first, then 1, ...; minimal in each ring.

use super::{dor_hop, dor_hop_along, Candidates, Hop, RouteCtx, RouteState, Routing};
use crate::topology::{Cartesian, Topology};
use std::sync::Arc;

pub struct Dor {
    topo: Arc<dyn Topology>,
    /// The topology's grid, kept here: every head's route reads it.
    grid: Cartesian,
    /// Every switch's coordinates in one word, on grids small enough for the table to stay
    /// in cache; larger ones divide (`dor_hop`).
    packed: Option<PackedCoords>,
}

impl Dor {
    pub fn new(topo: Arc<dyn Topology>) -> Option<Self> {
        let grid = topo.cartesian()?.clone();
        let packed = PackedCoords::new(&grid);
        Some(Dor { topo, grid, packed })
    }
}

/// Each switch's coordinates packed into a word, a bit field per dimension from the lowest
/// up, so that the lowest dimension left to correct is the lowest bit in which here and the
/// target differ: a head's DOR hop then reads two words instead of dividing the two switch
/// numbers once or twice per dimension (the hop took 3.7 % of the instructions on the 8x8
/// torus, 5 % on the 24x24x24, mostly in taking the switch numbers apart).
struct PackedCoords {
    of_switch: Vec<u32>,
    /// Per dimension: the field's lowest bit and its mask (unshifted).
    shift: Vec<u32>,
    mask: Vec<u32>,
    /// The dimension whose field holds each bit.
    dim_of_bit: [u8; 32],
}

impl PackedCoords {
    /// Only up to this many switches (a table of 16 KB): the table is read at every hop, and
    /// where the network's records crowd it out of the nearest caches a miss on it costs more
    /// than the divisions it spares (with a table of 128 KB the 32x32x32 torus ran 3 %
    /// slower).
    const MAX_SWITCHES: usize = 1 << 12;

    /// `None` when the grid is too large. (Its fields then always fit in 32 bits; the test
    /// stays as a guard.)
    fn new(grid: &Cartesian) -> Option<Self> {
        if grid.size() > Self::MAX_SWITCHES {
            return None;
        }
        let widths: Vec<u32> = grid.dims.iter().map(|&k| u32::BITS - (k as u32 - 1).leading_zeros()).collect();
        if widths.iter().sum::<u32>() > u32::BITS {
            return None;
        }
        let (mut shift, mut mask, mut dim_of_bit, mut at) = (Vec::new(), Vec::new(), [0u8; 32], 0);
        for (dim, &w) in widths.iter().enumerate() {
            shift.push(at);
            mask.push(((1u64 << w) - 1) as u32);
            for bit in at..at + w {
                dim_of_bit[bit as usize] = dim as u8;
            }
            at += w;
        }
        let pack = |s: usize| (0..grid.n()).map(|dim| (grid.coord(s, dim) as u32) << shift[dim]).fold(0, |a, f| a | f);
        Some(PackedCoords { of_switch: (0..grid.size()).map(pack).collect(), shift, mask, dim_of_bit })
    }

    /// `dor_hop` from the table.
    #[inline]
    fn hop(&self, grid: &Cartesian, cur: usize, target: usize, tie_dirs: u32) -> Option<Hop> {
        let (a, b) = (self.of_switch[cur], self.of_switch[target]);
        let differ = a ^ b;
        if differ == 0 {
            return None;
        }
        let dim = self.dim_of_bit[differ.trailing_zeros() as usize] as usize;
        let (c, d) = (a >> self.shift[dim] & self.mask[dim], b >> self.shift[dim] & self.mask[dim]);
        Some(dor_hop_along(grid.wrap, grid.dims[dim] as u32, c, d, dim, tie_dirs))
    }
}

impl Routing for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }

    fn route(&self, cx: &mut RouteCtx, state: &mut RouteState, out: &mut Candidates) {
        let (cur, target) = (cx.switch, state.dst_switch as usize);
        let hop = match &self.packed {
            Some(packed) => packed.hop(&self.grid, cur, target, state.tie_dirs),
            None => dor_hop(&self.grid, cur, target, state.tie_dirs),
        };
        if let Some(hop) = hop {
            out.push(hop, 0);
        }
    }

    fn max_hops(&self) -> usize {
        self.topo.diameter()
    }
}

/// `dor`: on tori and meshes this file's routing; on a HyperX the topology's minimal step
/// (one hop per dimension, lowest first), as `minimal`.
pub const KIND: super::AlgorithmKind = super::AlgorithmKind {
    name: "dor",
    about: "dimension-order routing: lowest dimension first, minimal in each ring",
    keys: &[],
    defaults: crate::spec::defaults_of::<super::NoKeys>,
    queues: super::QueueView::Blind,
    build: |cx| if cx.grid() { Ok(Arc::new(Dor::new(cx.topo.clone()).expect("cartesian"))) } else { super::minimal::build(cx) },
};

#[cfg(test)]
mod tests {
    use super::PackedCoords;
    use crate::topology::Cartesian;

    /// The table gives the hop the divisions give, for every pair of switches and tie bits,
    /// and is made only up to its size limit.
    #[test]
    fn packed_coordinates_give_the_dor_hop() {
        for (dims, wrap) in [(vec![8, 8], true), (vec![5, 4, 3], true), (vec![4, 6], false), (vec![3, 1, 2, 2], true), (vec![7], false), (vec![10, 10, 10], true)] {
            let grid = Cartesian::new(dims, wrap);
            let packed = PackedCoords::new(&grid).expect("small grid");
            for cur in 0..grid.size() {
                for dst in 0..grid.size() {
                    for tie_dirs in [0, 1, 2, 5, u32::MAX] {
                        assert_eq!(packed.hop(&grid, cur, dst, tie_dirs), super::dor_hop(&grid, cur, dst, tie_dirs), "{:?}: {cur} -> {dst}, ties {tie_dirs:b}", grid.dims);
                    }
                }
            }
        }
        assert!(PackedCoords::new(&Cartesian::new(vec![16, 16, 17], true)).is_none(), "more than 2^12 switches");
        assert!(PackedCoords::new(&Cartesian::new(vec![2; 12], true)).is_some(), "12 one-bit fields");
        assert!(PackedCoords::new(&Cartesian::new(vec![3; 7], false)).is_some(), "seven two-bit fields");
    }
}
