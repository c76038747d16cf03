//! Widths that depend on the network built, checked once the topology exists (the spec's own
//! checks, `spec::validate`, cannot see the network and sit below the topologies).

use super::Topology;
use crate::error::{SpecError, SpecResult};
use crate::spec::Spec;

impl Spec {
    /// Widths that depend on the network built: a switch's input VCs (ports x VCs) are
    /// numbered in 16 bits by the VC allocator's round-robin pointers, and a packet's hops
    /// are counted in 16 bits (twice the diameter for two-phase routings).
    pub fn check_network_widths(&self, topo: &dyn Topology) -> SpecResult<()> {
        let vcs = self.router.vcs;
        let (radix, servers) = (0..topo.num_switches())
            .map(|s| (topo.network_ports(s) + topo.servers_at(s), topo.servers_at(s)))
            .max()
            .unwrap_or((0, 0));
        if radix * vcs > 1 << 16 {
            let (key, value) = if servers * 2 > radix {
                ("topology.servers_per_switch", servers)
            } else {
                ("router.vcs", vcs)
            };
            return Err(SpecError::new(key, value, format!("a switch of {radix} ports x {vcs} VCs has more than the 65536 input VCs a switch may have")));
        }
        if topo.diameter() * 2 > u16::MAX as usize {
            return Err(SpecError::new(
                "topology.dims",
                format!("{:?}", topo.dims()),
                format!("diameter {} is too long: paths of up to twice the diameter are counted in 16 bits (at most 32767)", topo.diameter()),
            ));
        }
        Ok(())
    }
}
