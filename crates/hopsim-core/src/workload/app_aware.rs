//! Application-aware routing (De Sensi et al., SC'19, Algorithm 1), one instance per rank.
//!
//! Before each message the rank reads its NIC's counters: what changed since the last read
//! (the traffic of its last message) gives a latency L and a stall ratio s, kept as the last
//! sample of the mode that message used. Messages go with high bias until the bytes sent
//! since the last decision reach `threshold_bytes`; then the rank compares the paper's cost
//! model (its equation 2) for the next message of p requests and f request flits under both
//! modes, T = (p + 512) / 1024 x L + f x (s + 1), and takes the cheaper one. The mode in use
//! has a fresh sample; the other's is its last sample if not older than `forget_after`
//! decisions, else estimated by scaling (L_bs = latency_scale x L_ad, s_bs = stall_scale x
//! s_ad, and dividing the other way). With adaptive in use and s_bs > s_ad, choosing high
//! bias is exactly the paper's equation 4, f < (L_ad - L_bs) / (s_bs - s_ad) x (p + 512) / 1024.

use crate::nic::Counters;
use crate::routing::AriesMode;
use crate::spec::AppAwareSpec;

/// The two modes the algorithm chooses between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Choice {
    Adaptive,
    HighBias,
}

/// What the counters said about one mode: latency L (cycles) and stalls per flit s.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    pub latency: f64,
    pub stalls: f64,
}

impl Sample {
    /// From counters over an interval; none if nothing came back in it. L is the
    /// request-to-response latency under a `nic.protocol` (`requests`), as Aries's NIC
    /// counts it: the NIC sees its requests' responses, not its packets reaching their
    /// destination. Without a protocol it is the packets' latency, which no NIC sees.
    pub fn of(c: &Counters, requests: bool) -> Option<Sample> {
        let latency = if requests {
            if c.responses_received == 0 {
                return None;
            }
            c.request_latency_mean()
        } else if c.packets > 0 {
            c.latency_sum as f64 / c.packets as f64
        } else {
            return None;
        };
        let stalls = if c.request_flits > 0 { c.stalls_per_flit() } else { 0.0 };
        Some(Sample { latency, stalls })
    }

    /// The paper's equation 2 for a message of `p` requests and `f` request flits.
    pub fn cost(&self, p: f64, f: f64) -> f64 {
        (p + 512.0) / 1024.0 * self.latency + f * (self.stalls + 1.0)
    }
}

/// The choice for a message of `p` requests and `f` flits, with `current` in use and
/// `measured` its sample, `other` the other mode's (if still fresh); `scale` = (latency,
/// stall) factors from adaptive to high bias.
pub fn decide(current: Choice, measured: Sample, other: Option<Sample>, p: f64, f: f64, scale: (f64, f64)) -> Choice {
    let (ad, bs) = match current {
        Choice::Adaptive => (measured, other.unwrap_or(Sample { latency: measured.latency * scale.0, stalls: measured.stalls * scale.1 })),
        Choice::HighBias => (other.unwrap_or(Sample { latency: measured.latency / scale.0, stalls: measured.stalls / scale.1 }), measured),
    };
    let (c_ad, c_bs) = (ad.cost(p, f), bs.cost(p, f));
    // Ties keep the mode in use.
    if c_bs < c_ad || (c_bs == c_ad && current == Choice::HighBias) {
        Choice::HighBias
    } else {
        Choice::Adaptive
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct AppAware {
    params: AppAwareSpec,
    /// The adaptive mode (increasingly minimal for alltoall).
    adaptive: AriesMode,
    current: Choice,
    /// Bytes sent since the last decision.
    cumulative: u64,
    /// The NIC's counters at the last read.
    read: Counters,
    /// Last sample of each mode (adaptive, high bias) and the decisions since.
    seen: [Option<(Sample, u32)>; 2],
}

impl AppAware {
    pub fn new(params: AppAwareSpec, adaptive: AriesMode) -> Self {
        AppAware { params, adaptive, current: Choice::Adaptive, cumulative: 0, read: Counters::default(), seen: [None; 2] }
    }

    fn slot(c: Choice) -> usize {
        c as usize
    }

    pub fn mode(&self, c: Choice) -> AriesMode {
        match c {
            Choice::Adaptive => self.adaptive,
            Choice::HighBias => AriesMode::AdaptiveHighBias,
        }
    }

    /// The mode of the next message, of `bytes` in `p` requests (under a protocol:
    /// `requests`) of `f` flits, the NIC's counters now being `nic`.
    pub fn choose(&mut self, bytes: u64, p: u64, f: u64, nic: &Counters, requests: bool) -> AriesMode {
        if let Some(s) = Sample::of(&nic.since(&self.read), requests) {
            self.seen[Self::slot(self.current)] = Some((s, 0));
        }
        self.read = *nic;
        self.cumulative += bytes;
        if self.cumulative < self.params.threshold_bytes {
            self.current = Choice::HighBias;
            return self.mode(self.current);
        }
        self.cumulative = 0;
        for s in self.seen.iter_mut() {
            if let Some((_, age)) = s {
                *age += 1;
                if *age > self.params.forget_after {
                    *s = None;
                }
            }
        }
        let other = match self.current {
            Choice::Adaptive => Choice::HighBias,
            Choice::HighBias => Choice::Adaptive,
        };
        // Without any sample of the mode in use there is nothing to decide from.
        if let Some((measured, _)) = self.seen[Self::slot(self.current)] {
            let known = self.seen[Self::slot(other)].map(|(s, _)| s);
            self.current = decide(self.current, measured, known, p as f64, f as f64, (self.params.latency_scale, self.params.stall_scale));
        }
        self.mode(self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equation 4 as the paper writes it (adaptive in use, s_bs > s_ad).
    fn equation_4(ad: Sample, bs: Sample, p: f64, f: f64) -> Choice {
        if f < (ad.latency - bs.latency) / (bs.stalls - ad.stalls) * (p + 512.0) / 1024.0 {
            Choice::HighBias
        } else {
            Choice::Adaptive
        }
    }

    #[test]
    fn the_decision_is_equation_4() {
        // Recorded counter values: (L_ad, s_ad, L_bs, s_bs), messages of p requests.
        let cases = [(2400.0, 0.10, 1800.0, 0.30), (900.0, 0.02, 850.0, 0.9), (5000.0, 0.5, 3000.0, 0.55), (1200.0, 0.0, 1100.0, 0.01)];
        let mut both = [0, 0];
        for (l_ad, s_ad, l_bs, s_bs) in cases {
            let (ad, bs) = (Sample { latency: l_ad, stalls: s_ad }, Sample { latency: l_bs, stalls: s_bs });
            for p in [1.0, 16.0, 64.0, 1024.0, 65536.0] {
                let f = 5.0 * p;
                let want = equation_4(ad, bs, p, f);
                both[want as usize] += 1;
                assert_eq!(decide(Choice::Adaptive, ad, Some(bs), p, f, (1.0, 1.0)), want, "{ad:?} {bs:?} p={p}");
                // The dual decision (high bias in use) agrees on the same samples.
                assert_eq!(decide(Choice::HighBias, bs, Some(ad), p, f, (1.0, 1.0)), want, "dual {ad:?} {bs:?} p={p}");
                // Without a sample of high bias, it is estimated by the scaling factors.
                let scale = (l_bs / l_ad, s_bs / s_ad.max(1e-300));
                if s_ad > 0.0 {
                    assert_eq!(decide(Choice::Adaptive, ad, None, p, f, scale), want, "scaled {ad:?} p={p}");
                }
            }
        }
        assert!(both[0] > 0 && both[1] > 0, "the cases must exercise both choices: {both:?}");
    }

    #[test]
    fn under_a_protocol_only_responses_give_a_sample() {
        // Packets of this NIC delivered at their destinations, no response back yet: the NIC
        // has seen nothing. Without a protocol, the packets' latency is the sample.
        let delivered = Counters { packets: 8, latency_sum: 800, request_flits: 40, stalled_cycles: 20, ..Default::default() };
        assert!(Sample::of(&delivered, true).is_none());
        assert_eq!(Sample::of(&delivered, false), Some(Sample { latency: 100.0, stalls: 0.5 }));
        let answered = Counters { responses_received: 4, request_latency: 1200, ..delivered };
        assert_eq!(Sample::of(&answered, true), Some(Sample { latency: 300.0, stalls: 0.5 }));
    }

    #[test]
    fn small_messages_go_with_high_bias_until_the_threshold() {
        let params = AppAwareSpec { threshold_bytes: 4096, ..Default::default() };
        let mut a = AppAware::new(params, AriesMode::Adaptive);
        let nic = Counters::default();
        for _ in 0..3 {
            assert_eq!(a.choose(1024, 16, 80, &nic, true), AriesMode::AdaptiveHighBias);
        }
        // The fourth KiB reaches the threshold: with no sample yet the mode stays.
        assert_eq!(a.choose(1024, 16, 80, &nic, true), AriesMode::AdaptiveHighBias);
        // A high-bias sample with many stalls: large messages switch to adaptive.
        let mut c = Counters { request_flits: 1000, stalled_cycles: 3000, responses_received: 10, request_latency: 10_000, ..Default::default() };
        assert_eq!(a.choose(1 << 20, 16384, 81920, &c, true), AriesMode::Adaptive);
        // Adaptive's own sample, far slower: back to high bias (compared with the stored one).
        c.request_flits += 1000;
        c.responses_received += 10;
        c.request_latency += 10_000_000;
        assert_eq!(a.choose(1 << 20, 16384, 81920, &c, true), AriesMode::AdaptiveHighBias);
    }
}
