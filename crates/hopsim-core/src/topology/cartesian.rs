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
    /// and the processor's division was a third of DOR's time on the 8x8 torus
    /// (docs/benchmark-log.md). Made from `dims` here alone.
    sides: Vec<StrengthReducedU32>,
    stride_divisors: Vec<StrengthReducedU32>,
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
        Cartesian { dims, wrap, strides, sides, stride_divisors }
    }
    /// The sides, `dims`, as divisors (`StrengthReducedU32`).
    #[inline]
    pub fn sides(&self) -> &[StrengthReducedU32] {
        &self.sides
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
