//! Grids of switches with integer coordinates: the base of tori, meshes (and HyperX later).

use strength_reduce::StrengthReducedU32;

/// Coordinates are mixed-radix with dimension 0 varying fastest.
#[derive(Debug, Clone)]
pub struct Cartesian {
    pub dims: Vec<usize>,
    /// Whether each dimension wraps around (torus) or not (mesh).
    pub wrap: bool,
    strides: Vec<usize>,
    /// The sides and the strides as divisors that divide by a multiplication and shifts:
    /// routing a head on a grid reads its coordinates off the switch number at every hop,
    /// and the processor's division would be a large part of DOR's time
    /// (docs/benchmark-log.md). Made from `dims` here alone.
    sides: Vec<StrengthReducedU32>,
    stride_divisors: Vec<StrengthReducedU32>,
    /// Every switch's coordinates in one word, on grids small enough for the table to stay
    /// in cache (`lowest_differing`); larger ones divide.
    packed: Option<PackedCoords>,
}

impl Cartesian {
    pub fn new(dims: Vec<usize>, wrap: bool) -> Self {
        let mut strides = Vec::with_capacity(dims.len());
        let mut acc = 1;
        for &k in &dims {
            strides.push(acc);
            acc *= k;
        }
        let divisor = |x: usize| StrengthReducedU32::new(u32::try_from(x).expect("grids have fewer than 2^32 switches"));
        let sides = dims.iter().map(|&k| divisor(k)).collect();
        let stride_divisors = strides.iter().map(|&s| divisor(s)).collect();
        let mut grid = Cartesian { dims, wrap, strides, sides, stride_divisors, packed: None };
        grid.packed = PackedCoords::new(&grid);
        grid
    }
    /// The lowest dimension in which switches `a` and `b` differ, with their coordinates
    /// along it (`a`'s, then `b`'s); `None` when `a == b`. Every head's route on a grid
    /// asks this (DOR on tori, meshes and HyperX, and the escape hops of the adaptive
    /// routings): from the table of packed coordinates where the grid has one, else by
    /// peeling the coordinates off the two switch numbers one dimension at a time (one
    /// division gives a coordinate and the rest), never looking at the dimensions above the
    /// one found.
    #[inline(always)]
    pub fn lowest_differing(&self, a: usize, b: usize) -> Option<(usize, u32, u32)> {
        match &self.packed {
            Some(packed) => packed.lowest_differing(a, b),
            None => self.lowest_differing_by_division(a, b),
        }
    }
    #[inline]
    fn lowest_differing_by_division(&self, a: usize, b: usize) -> Option<(usize, u32, u32)> {
        let (mut a, mut b) = (a as u32, b as u32);
        for (dim, &side) in self.sides.iter().enumerate() {
            if a == b {
                return None; // every coordinate from `dim` up is equal
            }
            let ((qa, c), (qb, d)) = (StrengthReducedU32::div_rem(a, side), StrengthReducedU32::div_rem(b, side));
            if c != d {
                return Some((dim, c, d));
            }
            (a, b) = (qa, qb);
        }
        None
    }
    pub fn n(&self) -> usize {
        self.dims.len()
    }
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }
    #[inline]
    pub fn coord(&self, switch: usize, dim: usize) -> usize {
        debug_assert!(switch < self.size());
        ((switch as u32 / self.stride_divisors[dim]) % self.sides[dim]) as usize
    }
    pub fn coords(&self, switch: usize) -> Vec<usize> {
        (0..self.n()).map(|d| self.coord(switch, d)).collect()
    }
    pub fn switch_at(&self, coords: &[usize]) -> usize {
        coords.iter().zip(&self.strides).map(|(c, s)| c * s).sum()
    }
    /// The switch with coordinate `c` along `dim` and the coordinates of `switch` elsewhere.
    #[inline]
    pub fn with_coord(&self, switch: usize, dim: usize, c: usize) -> usize {
        switch - self.coord(switch, dim) * self.strides[dim] + c * self.strides[dim]
    }
    /// The switch one step along `dim` in direction `dir` (+1/-1), if it exists.
    #[inline]
    pub fn step(&self, switch: usize, dim: usize, dir: i8) -> Option<usize> {
        let k = self.dims[dim];
        let c = self.coord(switch, dim);
        let nc = if dir > 0 {
            if c + 1 < k {
                c + 1
            } else if self.wrap {
                0
            } else {
                return None;
            }
        } else if c > 0 {
            c - 1
        } else if self.wrap {
            k - 1
        } else {
            return None;
        };
        Some(switch - c * self.strides[dim] + nc * self.strides[dim])
    }
    /// Minimal signed offset from `a` to `b` along `dim`; on a torus, ties (exactly half-way)
    /// are reported as positive and flagged by `is_tie`.
    #[inline]
    pub fn offset(&self, a: usize, b: usize, dim: usize) -> i64 {
        let k = self.dims[dim] as i64;
        let d = self.coord(b, dim) as i64 - self.coord(a, dim) as i64;
        if !self.wrap {
            return d;
        }
        let fwd = d.rem_euclid(k);
        if fwd * 2 <= k {
            fwd
        } else {
            fwd - k
        }
    }
    #[inline]
    pub fn is_tie(&self, a: usize, b: usize, dim: usize) -> bool {
        let k = self.dims[dim] as i64;
        self.wrap && k % 2 == 0 && self.offset(a, b, dim).abs() * 2 == k
    }
    pub fn distance(&self, a: usize, b: usize) -> usize {
        (0..self.n()).map(|d| self.offset(a, b, d).unsigned_abs() as usize).sum()
    }
    pub fn diameter(&self) -> usize {
        self.dims.iter().map(|&k| if self.wrap { k / 2 } else { k - 1 }).sum()
    }
    /// Whether the step from `switch` along `dim` in `dir` uses the wrap-around link.
    #[inline]
    pub fn wraps(&self, switch: usize, dim: usize, dir: i8) -> bool {
        let c = self.coord(switch, dim);
        self.wrap && ((dir > 0 && c + 1 == self.dims[dim]) || (dir < 0 && c == 0))
    }
    /// Network port used to move along `dim` in `dir`: 2*dim for +, 2*dim+1 for -.
    #[inline]
    pub fn port(dim: usize, dir: i8) -> usize {
        2 * dim + usize::from(dir < 0)
    }
}

/// Each switch's coordinates packed into a word, a bit field per dimension from the lowest
/// up, so that the lowest dimension left to correct is the lowest bit in which here and the
/// target differ: a head's route then reads two words instead of dividing the two switch
/// numbers once or twice per dimension, which would be most of a DOR hop's work
/// (docs/benchmark-log.md).
#[derive(Debug, Clone)]
struct PackedCoords {
    of_switch: Vec<u32>,
    /// The field holding each bit: one lookup from the lowest differing bit gives the
    /// dimension and where its coordinates sit, instead of a chain of three dependent ones.
    field_of_bit: [Field; 32],
}

/// A dimension's bit field in a packed word.
#[derive(Debug, Clone, Copy, Default)]
struct Field {
    dim: u8,
    /// The field's lowest bit, and its mask (unshifted).
    shift: u8,
    mask: u32,
}

impl PackedCoords {
    /// Only up to this many switches (a table of 16 KB): the table is read at every hop, and
    /// where the network's records crowd it out of the nearest caches a miss on it costs more
    /// than the divisions it spares (docs/benchmark-log.md has the measurements).
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
        let (mut shift, mut field_of_bit, mut at) = (Vec::new(), [Field::default(); 32], 0);
        for (dim, &w) in widths.iter().enumerate() {
            shift.push(at);
            let field = Field { dim: dim as u8, shift: at as u8, mask: ((1u64 << w) - 1) as u32 };
            for bit in at..at + w {
                field_of_bit[bit as usize] = field;
            }
            at += w;
        }
        let pack = |s: usize| (0..grid.n()).map(|dim| (grid.coord(s, dim) as u32) << shift[dim]).fold(0, |a, f| a | f);
        Some(PackedCoords { of_switch: (0..grid.size()).map(pack).collect(), field_of_bit })
    }

    /// `Cartesian::lowest_differing` from the table.
    #[inline]
    fn lowest_differing(&self, a: usize, b: usize) -> Option<(usize, u32, u32)> {
        let (a, b) = (self.of_switch[a], self.of_switch[b]);
        let differ = a ^ b;
        if differ == 0 {
            return None;
        }
        let f = self.field_of_bit[differ.trailing_zeros() as usize];
        Some((f.dim as usize, a >> f.shift & f.mask, b >> f.shift & f.mask))
    }
}

#[cfg(test)]
mod tests {
    use super::{Cartesian, PackedCoords};

    /// The table gives what the divisions give, for every pair of switches, and is made only
    /// up to its size limit.
    #[test]
    fn packed_coordinates_give_the_lowest_differing_dimension() {
        for (dims, wrap) in [(vec![8, 8], true), (vec![5, 4, 3], true), (vec![4, 6], false), (vec![3, 1, 2, 2], true), (vec![7], false), (vec![10, 10, 10], true)] {
            let grid = Cartesian::new(dims, wrap);
            let packed = PackedCoords::new(&grid).expect("small grid");
            for a in 0..grid.size() {
                for b in 0..grid.size() {
                    assert_eq!(packed.lowest_differing(a, b), grid.lowest_differing_by_division(a, b), "{:?}: {a} -> {b}", grid.dims);
                }
            }
        }
        assert!(PackedCoords::new(&Cartesian::new(vec![16, 16, 17], true)).is_none(), "more than 2^12 switches");
        assert!(PackedCoords::new(&Cartesian::new(vec![2; 12], true)).is_some(), "12 one-bit fields");
        assert!(PackedCoords::new(&Cartesian::new(vec![3; 7], false)).is_some(), "seven two-bit fields");
    }
}
