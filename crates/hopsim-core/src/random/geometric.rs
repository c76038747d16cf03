//! Geometric gaps between messages, drawn exactly as `rand_distr::Geometric` draws them
//! (the same numbers from the same stream, so results do not change), with the rejection
//! probabilities `(1 - p)^m` looked up in a table instead of computed by `powi` at every
//! draw: each power is a chain of dependent multiplications, paid at every message a server
//! makes, where the table is one load (docs/benchmark-log.md has the measurements).
//!
//! The algorithm (Bringmann and Friedrich, ICALP 2013, as rand_distr 0.4 implements it):
//! below p = 2/3 a draw is `d * 2^k + m`, with `d` counted in Bernoulli trials of
//! probability `(1 - p)^(2^k) <= 1/2` and `m` uniform in `[0, 2^k)`, accepted with
//! probability `(1 - p)^m`. A test compares every draw with rand_distr's.

use rand::Rng as _;
use rand_distr::Distribution;

/// Most entries of the table (32 KB): 2^k exceeds this only below about 2e-4 messages per
/// server per cycle, where drawing gaps costs nothing next to the run; such rates draw
/// with rand_distr's own sampler.
const MAX_TABLE: usize = 4096;

#[derive(Debug, Clone)]
pub struct Geometric {
    inner: rand_distr::Geometric,
    /// `accept[m] = (1 - p)^m`, the probability that a draw of `m` stands, for every
    /// `m < 2^k`, computed as rand_distr computes it; empty when rand_distr's sampler is used.
    accept: Vec<f64>,
    /// `(1 - p)^(2^k)`, and `2^k - 1`.
    pi: f64,
    mask: u64,
    k: u32,
}

impl Geometric {
    /// The number of failures before the first success of Bernoulli trials of probability
    /// `p`; `None` unless `p` is in [0, 1].
    pub fn new(p: f64) -> Option<Self> {
        let inner = rand_distr::Geometric::new(p).ok()?;
        let mut g = Geometric { inner, accept: Vec::new(), pi: 0.0, mask: 0, k: 0 };
        if p == 0.0 || p >= 2.0 / 3.0 {
            return Some(g);
        }
        // The smallest k with (1 - p)^(2^k) <= 1/2, squared the way rand_distr does.
        let (mut k, mut pi) = (1u32, (1.0 - p).powi(2));
        while pi > 0.5 {
            k += 1;
            pi = pi * pi;
        }
        if (1usize << k.min(63)) > MAX_TABLE {
            return Some(g);
        }
        g.accept = (0..1i32 << k).map(|m| (1.0 - p).powi(std::hint::black_box(m))).collect();
        (g.pi, g.mask, g.k) = (pi, (1u64 << k) - 1, k);
        Some(g)
    }

    #[inline]
    pub fn sample(&self, rng: &mut crate::random::Rng) -> u64 {
        if self.accept.is_empty() {
            return self.inner.sample(rng);
        }
        let mut d = 0u64;
        while rng.gen::<f64>() < self.pi {
            d += 1;
        }
        loop {
            let m = rng.gen::<u64>() & self.mask;
            if rng.gen::<f64>() < self.accept[m as usize] {
                return (d << self.k) + m;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Geometric;
    use crate::random::Rng;
    use rand::SeedableRng;
    use rand_distr::Distribution;

    /// Every draw, and the stream left behind, as rand_distr's sampler: at the rates of
    /// open-loop sources (with and without a table) and the trivial ones.
    #[test]
    fn draws_what_rand_distr_draws() {
        for p in [0.0, 1e-6, 3.0e-4, 0.003125, 0.0125, 0.025, 0.0625, 0.1, 0.3, 0.5, 0.66, 2.0 / 3.0, 0.9, 1.0] {
            let ours = Geometric::new(p).expect("valid p");
            let theirs = rand_distr::Geometric::new(p).expect("valid p");
            for seed in 0..20u64 {
                let (mut a, mut b) = (Rng::seed_from_u64(seed), Rng::seed_from_u64(seed));
                for _ in 0..2_000 {
                    assert_eq!(ours.sample(&mut a), theirs.sample(&mut b), "p {p}, seed {seed}");
                }
                assert_eq!(a, b, "the streams moved differently at p {p}");
            }
        }
        assert!(Geometric::new(0.025).is_some_and(|g| g.accept.len() == 32), "0.025 takes a table of 2^5");
        assert!(Geometric::new(1e-6).is_some_and(|g| g.accept.is_empty()), "tiny rates draw with rand_distr's sampler");
        assert!(Geometric::new(1.5).is_none() && Geometric::new(f64::NAN).is_none());
    }
}
