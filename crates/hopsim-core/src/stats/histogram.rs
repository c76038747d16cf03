//! Latency histogram: exact 1-cycle bins up to 65,536 cycles, then power-of-two bins.

const EXACT: usize = 1 << 16;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Histogram {
    exact: Vec<u64>,
    /// Bin k holds latencies in [2^k, 2^(k+1)) for latencies >= EXACT.
    #[serde(with = "coarse_serde")]
    coarse: [u64; 64],
    count: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { exact: Vec::new(), coarse: [0; 64], count: 0, sum: 0, max: 0 }
    }
}

impl Histogram {
    #[inline]
    pub fn add(&mut self, v: u64) {
        self.count += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
        if (v as usize) < EXACT {
            if self.exact.len() <= v as usize {
                self.exact.resize(v as usize + 1, 0);
            }
            self.exact[v as usize] += 1;
        } else {
            self.coarse[63 - v.leading_zeros() as usize] += 1;
        }
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Add what `other` counted, as if its values had been added here (a run on MPI ranks
    /// sums its ranks' histograms).
    pub fn absorb(&mut self, other: &Histogram) {
        if self.exact.len() < other.exact.len() {
            self.exact.resize(other.exact.len(), 0);
        }
        self.exact.iter_mut().zip(&other.exact).for_each(|(a, b)| *a += b);
        self.coarse.iter_mut().zip(&other.coarse).for_each(|(a, b)| *a += b);
        self.count += other.count;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Bins as (lower, upper exclusive, count), non-empty only.
    pub fn bins(&self) -> Vec<(u64, u64, u64)> {
        let mut out: Vec<(u64, u64, u64)> =
            self.exact.iter().enumerate().filter(|(_, &c)| c > 0).map(|(v, &c)| (v as u64, v as u64 + 1, c)).collect();
        for (k, &c) in self.coarse.iter().enumerate() {
            if c > 0 {
                out.push((1u64 << k, (1u64 << k).saturating_mul(2), c));
            }
        }
        out
    }
    /// The smallest latency with at least a fraction `q` of packets at or below it.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let target = ((q * self.count as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (lo, hi, c) in self.bins() {
            acc += c;
            if acc >= target {
                return if hi - lo == 1 { lo as f64 } else { (lo as f64 + hi as f64) / 2.0 };
            }
        }
        self.max as f64
    }
}

/// serde has no impls for arrays longer than 32: the coarse bins go as a sequence.
mod coarse_serde {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bins: &[u64; 64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(bins.iter())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u64; 64], D::Error> {
        let bins = Vec::<u64>::deserialize(d)?;
        bins.try_into().map_err(|v: Vec<u64>| D::Error::invalid_length(v.len(), &"64 bins"))
    }
}
