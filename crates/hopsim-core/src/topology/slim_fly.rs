//! Slim Fly (Besta and Hoefler, SC'14): the McKay-Miller-Širáň graph of a prime q = 4w + δ
//! (δ = ±1), diameter 2 with (3q - δ)/2 network ports per switch, close to the Moore bound.
//!
//! Switches are (0, x, y) and (1, m, c) for x, y, m, c in GF(q), numbered x*q + y and
//! q^2 + m*q + c. With ξ a primitive element of GF(q) and generator sets X (even powers of ξ,
//! adjusted for δ = -1) and X' (the odd ones): (0, x, y) ~ (0, x, y') when y - y' is in X,
//! (1, m, c) ~ (1, m, c') when c - c' is in X', and (0, x, y) ~ (1, m, c) when y = m*x + c.
//! X = -X and X' = -X', so the links inside a subgraph are undirected.
//!
//! Ports: first one per element of X (or X', the same size), to y + X[i]; then q ports to
//! the other subgraph: port k + m of (0, x, y) to (1, m, y - m*x), port k + x of (1, m, c) to
//! (0, x, m*x + c). Inside a subgraph the links are `local` (the switches of one x, or one m,
//! are the Slim Fly's groups), between the subgraphs `global`.
//!
//! Routing: the minimal step and Valiant's phases come from the wiring (`routing::graph_minimal`);
//! paths have at most 2 hops (4 under Valiant), so the hop ladder makes them deadlock-free
//! (`deadlock_freedom`).

use super::{check_size, LinkClass, PortPeer, Topology};
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

pub const KIND: super::Kind = super::Kind {
    name: "slim_fly",
    about: "Slim Fly: the diameter-2 MMS graph of a prime q, (3q - δ)/2 network ports per switch (q = 4w + δ)",
    keys: Keys::KEYS,
    defaults: Keys::defaults,
    servers_per_switch: "ceil(ports / 2)",
    build: |spec| Ok(std::sync::Arc::new(build(spec)?)),
};

keys! {
    /// The keys of a Slim Fly, read from `[topology]`.
    struct Keys {
        /// a prime of at least 3: 2q^2 switches, up to q = 43 (the minimal routing's table)
        q: u64 = required,
    }
}

pub fn build(spec: &Spec) -> SpecResult<SlimFly> {
    let Keys { q } = super::own_keys(spec)?;
    let most = (1..).take_while(|&q: &u64| 2 * q * q <= super::MAX_WIRING_ROUTED_SWITCHES as u64).last().unwrap_or(1);
    if !(3..=most).contains(&q) || !is_prime(q) {
        return Err(SpecError::new("topology.q", q, format!("must be a prime between 3 and {most} (2q^2 switches; the minimal routing keeps a table per pair)")));
    }
    let q = q as usize;
    // (3q - delta) / 2 ports for q = 4w + delta (delta = 1 or -1: q is an odd prime).
    let ports = if q % 4 == 1 { (3 * q - 1) / 2 } else { (3 * q).div_ceil(2) };
    let p = spec.topology.servers_per_switch_or(ports.div_ceil(2));
    check_size("topology.q", q.to_string(), (2 * q * q) as u128, (2 * q * q * p) as u128, (ports + p) as u128)?;
    Ok(SlimFly::new(q, p))
}

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

/// The smallest primitive element of GF(q), q prime: its powers give every non-zero element.
fn primitive_element(q: usize) -> usize {
    (2..q)
        .find(|&g| {
            let mut x = 1;
            (1..q - 1).all(|_| {
                x = x * g % q;
                x != 1
            })
        })
        .expect("every prime field has a primitive element")
}

#[derive(Debug, Clone)]
pub struct SlimFly {
    q: usize,
    servers_per_switch: usize,
    /// X and X' (`sets[0]`, `sets[1]`), in port order.
    sets: [Vec<usize>; 2],
    /// `neg[i]`: the index in the same set of -set[i], the far end's port of a local link.
    neg: [Vec<usize>; 2],
    /// `member[s][d]`: d is in set s.
    member: [Vec<bool>; 2],
}

impl SlimFly {
    pub fn new(q: usize, servers_per_switch: usize) -> Self {
        let xi = primitive_element(q);
        let power = |e: usize| (0..e).fold(1, |x, _| x * xi % q);
        let (even, odd): (Vec<usize>, Vec<usize>) = if q % 4 == 1 {
            ((0..q - 1).step_by(2).collect(), (1..q - 1).step_by(2).collect())
        } else {
            let w = (q + 1) / 4;
            let x = (0..2 * w - 1).step_by(2).chain((2 * w - 1..4 * w - 2).step_by(2)).collect();
            let x_prime = (1..2 * w).step_by(2).chain((2 * w..4 * w - 1).step_by(2)).collect();
            (x, x_prime)
        };
        let sets = [even.into_iter().map(power).collect::<Vec<_>>(), odd.into_iter().map(power).collect::<Vec<_>>()];
        let member = sets.clone().map(|set| (0..q).map(|d| set.contains(&d)).collect::<Vec<_>>());
        let neg = sets.clone().map(|set| set.iter().map(|&d| set.iter().position(|&e| (d + e) % q == 0).expect("X = -X")).collect());
        SlimFly { q, servers_per_switch, sets, neg, member }
    }

    /// (subgraph, x or m, y or c) of a switch.
    fn coords(&self, switch: usize) -> (usize, usize, usize) {
        let q = self.q;
        (switch / (q * q), switch / q % q, switch % q)
    }

    fn local_ports(&self) -> usize {
        self.sets[0].len()
    }

    fn adjacent(&self, a: usize, b: usize) -> bool {
        let q = self.q;
        let ((sa, xa, ya), (sb, xb, yb)) = (self.coords(a), self.coords(b));
        match (sa, sb) {
            _ if sa == sb => xa == xb && self.member[sa][(ya + q - yb) % q],
            (0, _) => ya == (xb * xa + yb) % q,
            _ => yb == (xa * xb + ya) % q,
        }
    }
}

impl Topology for SlimFly {
    fn kind(&self) -> &'static str {
        "slim_fly"
    }
    fn num_switches(&self) -> usize {
        2 * self.q * self.q
    }
    fn network_ports(&self, _switch: usize) -> usize {
        self.local_ports() + self.q
    }
    fn servers_at(&self, _switch: usize) -> usize {
        self.servers_per_switch
    }
    fn neighbour(&self, switch: usize, port: usize) -> Option<PortPeer> {
        let (q, k) = (self.q, self.local_ports());
        let (s, x, y) = self.coords(switch);
        let (to, back) = if port < k {
            (s * q * q + x * q + (y + self.sets[s][port]) % q, self.neg[s][port])
        } else if port < k + q {
            let other = port - k;
            if s == 0 {
                // To (1, m, c) with y = m*x + c.
                (q * q + other * q + (y + q * q - other * x % q) % q, k + x)
            } else {
                // To (0, x', m*x' + c).
                (other * q + (x * other + y) % q, k + x)
            }
        } else {
            return None;
        };
        Some(PortPeer { switch: to as u32, port: back as u16 })
    }
    fn distance(&self, a: usize, b: usize) -> usize {
        if a == b {
            0
        } else if self.adjacent(a, b) {
            1
        } else {
            2
        }
    }
    fn diameter(&self) -> usize {
        2
    }
    fn link_class(&self, _switch: usize, port: usize) -> LinkClass {
        if port < self.local_ports() {
            LinkClass::Local
        } else {
            LinkClass::Global
        }
    }
    fn description(&self) -> String {
        let q = self.q;
        format!(
            "Slim Fly, MMS graph of q = {q}: {} switches in two subgraphs of {q} groups of {q}, {} network ports each ({} local, {q} to the other subgraph), {} servers per switch, diameter 2",
            2 * q * q,
            self.local_ports() + q,
            self.local_ports(),
            self.servers_per_switch
        )
    }
}
