//! Links as the engine drives them: each channel has its link class's latency and phit time.
//!
//! A cycle is one phit time on the fastest link class: that class moves one phit per cycle,
//! and a class with a fraction b / b_fastest of its bandwidth takes b_fastest / b cycles per
//! phit. The remainder of that fraction is carried from flit to flit (`Channel::frac`), so a
//! slow link keeps its exact long-run rate instead of rounding every flit up.

use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;
use crate::topology::{class_counts, LinkClass, Topology};
use std::collections::BTreeMap;

/// A link class's latency and phit time (`num / den` cycles per phit, >= 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkTiming {
    pub latency: u32,
    pub num: u32,
    pub den: u32,
}

impl LinkTiming {
    /// Cycles a flit of `phits` holds the link, at most (the remainder rounds up once).
    pub fn max_cycles(&self, phits: u64) -> u64 {
        (phits * self.num as u64).div_ceil(self.den as u64)
    }
}

/// The channel a port or a NIC drives, in 8 bytes (a switch port's record has room for no
/// more, router/mod.rs): its latency, its class's phit time as an index into the network's
/// few (`Rates`), and the remainder of that phit time carried from flit to flit.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Channel {
    /// At most 10,000 cycles (`link.latency` and the classes' latencies are validated so).
    pub latency: u16,
    /// Index in `Rates`; 0 is one phit a cycle, which needs no lookup.
    rate: u8,
    frac: u32,
}

impl Channel {
    /// Start sending a flit of `phits`: the cycles the link is busy with it.
    #[inline]
    pub fn send(&mut self, rates: &Rates, phits: u16) -> u64 {
        if self.rate == 0 {
            return phits as u64;
        }
        let (num, den) = rates.0[self.rate as usize];
        let total = phits as u64 * num as u64 + self.frac as u64;
        self.frac = (total % den as u64) as u32;
        total / den as u64
    }
}

/// The distinct phit times (`num / den` cycles per phit) of a network's channels; the first
/// is one phit a cycle.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Rates(Vec<(u32, u32)>);

impl Default for Rates {
    fn default() -> Self {
        Rates(vec![(1, 1)])
    }
}

impl Rates {
    /// The channel of a link of timing `t`, its rate added here if new.
    pub fn channel(&mut self, t: LinkTiming) -> Channel {
        let rate = if t.num == t.den {
            0
        } else {
            self.0.iter().position(|&r| r == (t.num, t.den)).unwrap_or_else(|| {
                self.0.push((t.num, t.den));
                self.0.len() - 1
            })
        };
        Channel {
            latency: u16::try_from(t.latency).expect("link latencies are validated to at most 10000 cycles"),
            rate: u8::try_from(rate).expect("a network has a few link classes"),
            frac: 0,
        }
    }
}

/// The timing of every link class of a network, from `[link]` and `[link.<class>]`.
#[derive(Debug, Clone)]
pub struct ClassTimings {
    classes: BTreeMap<LinkClass, LinkTiming>,
    /// `[link]` alone, for ports of a class no link of the network has (unconnected ports).
    default: LinkTiming,
    /// Bandwidth of the fastest class: one phit per cycle (None without `link.gbytes_per_s`).
    pub fastest_gbytes_per_s: Option<f64>,
    /// The longest latency a link of the network has of its own (`Topology::link_latency`).
    links_max_latency: u32,
}

/// How much slower than the fastest class a link class may be.
pub const MAX_SLOWDOWN: f64 = 15.0;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Bandwidths as whole kB/s, so decimal GB/s values give exact ratios.
fn kbytes_per_s(g: f64) -> u64 {
    (g * 1e6).round().max(1.0) as u64
}

impl ClassTimings {
    pub fn build(spec: &Spec, topo: &dyn Topology) -> SpecResult<Self> {
        let link = &spec.link;
        let overrides: BTreeMap<LinkClass, crate::spec::LinkClassSpec> = link.class_specs()?.into_iter().collect();
        let present: Vec<LinkClass> = class_counts(topo).into_iter().map(|(c, _)| c).collect();
        if let Some(c) = overrides.keys().find(|c| !present.contains(c)) {
            let names: Vec<&str> = present.iter().map(|c| c.name()).collect();
            return Err(SpecError::new(
                format!("link.{}", c.name()),
                "",
                format!("not a link class of topology.kind = {:?}; its classes are: {}", topo.kind(), names.join(", ")),
            ));
        }
        let bandwidth = |c: &LinkClass| overrides.get(c).and_then(|o| o.gbytes_per_s).or(link.gbytes_per_s);
        if !overrides.values().any(|o| o.gbytes_per_s.is_some()) {
            // One bandwidth for every class: one phit per cycle everywhere, as before classes.
            let classes = present.iter().map(|&c| (c, LinkTiming { latency: overrides.get(&c).and_then(|o| o.latency).unwrap_or(link.latency), num: 1, den: 1 })).collect();
            let default = LinkTiming { latency: link.latency, num: 1, den: 1 };
            return Ok(ClassTimings { classes, default, fastest_gbytes_per_s: link.gbytes_per_s, links_max_latency: topo.max_link_latency().unwrap_or(0) });
        }
        if let Some(g) = link.gbytes_per_s {
            crate::spec::link_check_bandwidth("link.gbytes_per_s", g)?;
        }
        let fastest = present.iter().filter_map(bandwidth).fold(0.0, f64::max);
        let fast = kbytes_per_s(fastest);
        let timing = |latency: u32, g: f64| {
            let own = kbytes_per_s(g);
            let d = gcd(fast, own);
            // A class faster than all present ones cannot exist (fastest is their maximum);
            // the default may be, on ports of no present class: never faster than a phit per cycle.
            let (num, den) = ((fast / d).max(own / d), own / d);
            LinkTiming { latency, num: num as u32, den: den as u32 }
        };
        let default_bandwidth = link.gbytes_per_s.expect("class bandwidths need link.gbytes_per_s");
        // A flit's extra tail time is kept in 16 bits (packets of up to 4096 phits), and the
        // event calendar spans the slowest flit.
        if let Some(c) = present.iter().find(|c| bandwidth(c).unwrap_or(default_bandwidth) * MAX_SLOWDOWN < fastest) {
            let key = if overrides.get(c).and_then(|o| o.gbytes_per_s).is_some() { format!("link.{}.gbytes_per_s", c.name()) } else { "link.gbytes_per_s".into() };
            return Err(SpecError::new(
                key,
                bandwidth(c).unwrap_or(default_bandwidth),
                format!("the {} links would be more than {MAX_SLOWDOWN} times slower than the fastest class ({fastest} GB/s)", c.name()),
            ));
        }
        let classes = present
            .iter()
            .map(|c| (*c, timing(overrides.get(c).and_then(|o| o.latency).unwrap_or(link.latency), bandwidth(c).unwrap_or(default_bandwidth))))
            .collect();
        Ok(ClassTimings { classes, default: timing(link.latency, default_bandwidth), fastest_gbytes_per_s: Some(fastest), links_max_latency: topo.max_link_latency().unwrap_or(0) })
    }

    /// The timing of a class of this network.
    pub fn of(&self, class: LinkClass) -> LinkTiming {
        self.classes.get(&class).copied().unwrap_or(self.default)
    }

    pub fn max_latency(&self) -> u32 {
        self.classes.values().map(|t| t.latency).max().unwrap_or(1).max(self.links_max_latency)
    }

    /// The timing of network port `port` of `switch`: its class's, with the link's own
    /// latency if it has one.
    pub fn of_port(&self, topo: &dyn Topology, switch: usize, port: usize) -> LinkTiming {
        let mut t = self.of(topo.link_class(switch, port));
        if let Some(latency) = topo.link_latency(switch, port) {
            t.latency = latency;
        }
        t
    }

    /// Most cycles a flit of `phits` may hold any link.
    pub fn max_cycles(&self, phits: u64) -> u64 {
        self.classes.values().map(|t| t.max_cycles(phits)).max().unwrap_or(phits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_channel_keeps_its_exact_long_run_rate() {
        // 5.25 / 4.7 GB/s = 105 / 94 cycles per phit: 94 flits of 16 phits take 16 x 105 cycles.
        let mut rates = Rates::default();
        let mut c = rates.channel(LinkTiming { latency: 1, num: 105, den: 94 });
        let busy: Vec<u64> = (0..94).map(|_| c.send(&rates, 16)).collect();
        assert_eq!(busy.iter().sum::<u64>(), 16 * 105);
        assert!(busy.iter().all(|&b| b == 17 || b == 18), "{busy:?}");
        // The fastest class: one phit per cycle, no remainder.
        let mut f = rates.channel(LinkTiming { latency: 1, num: 1, den: 1 });
        assert_eq!((0..10).map(|_| f.send(&rates, 16)).sum::<u64>(), 160);
        assert_eq!(LinkTiming { latency: 1, num: 105, den: 94 }.max_cycles(16), 18);
    }

    /// Channels of the same rate share its index, and the fastest rate needs none.
    #[test]
    fn channels_of_one_rate_share_its_index() {
        let (slow, other) = (LinkTiming { latency: 100, num: 105, den: 94 }, LinkTiming { latency: 10, num: 3, den: 2 });
        let mut rates = Rates::default();
        let ports = [rates.channel(slow), rates.channel(other), rates.channel(slow), rates.channel(LinkTiming { latency: 20, num: 1, den: 1 })];
        assert_eq!(rates.0, [(1, 1), (105, 94), (3, 2)]);
        assert_eq!(ports.map(|p| (p.latency, p.rate)), [(100, 1), (10, 2), (100, 1), (20, 0)]);
    }
}
