//! The numbers the router and NIC models read on every step, fixed for a run.

/// Numbers the router and NIC models need on every step.
#[derive(Debug, Clone)]
pub struct Params {
    pub vcs: usize,
    /// A flit is a whole packet under virtual cut-through, one phit under wormhole.
    pub wormhole: bool,
    /// The longest packet (`packet.phits`, the unit of buffer sizes) and the shortest.
    pub packet_phits: u16,
    pub min_packet_phits: u16,
    pub in_cap: u32,
    pub out_cap: u32,
    /// `link.latency`, the default of the link classes (channels have their own, `Routers::link`).
    pub latency: u32,
    /// The servers' links to their switches (`[link.injection]`).
    pub injection_link: crate::link::LinkTiming,
    /// Bandwidth of the fastest link class, which moves one phit per cycle.
    pub fastest_gbytes_per_s: Option<f64>,
    pub pipeline_delay: u32,
    /// How VC and switch allocation are staged (`router.vc_allocation`, `router.next_head_routing`).
    pub staging: crate::staging::Staging,
    pub speedup: u32,
    /// `router.vc_allocator` and `router.switch_allocator`.
    pub vc_allocator: crate::allocation::VcAllocator,
    pub switch_allocator: crate::allocation::SwitchAllocator,
    /// Break join-the-shortest-queue ties among VCs at random (else the lowest wins).
    pub random_jsq_ties: bool,
    /// Which VCs of their switch's input buffer servers inject into.
    pub injection: crate::spec::InjectionRule,
    /// Which VCs of a server's port a packet may take at its destination switch
    /// (`routing.ejection_vcs`).
    pub ejection: crate::spec::EjectionVcs,
    /// How far adaptive routing's view of a queue reaches (`routing.queue_reach`).
    pub queue_reach: crate::route::QueueReach,
    /// Whether and how NICs answer requests (`nic.protocol`).
    pub protocol: crate::protocol::Protocol,
    /// Measured window [warmup, warmup + cycles).
    pub window: (u64, u64),
    /// Whether routing reads queues when a head arrives: output space must then be released
    /// in the very cycle its flit leaves, or the arrivals of later cycles would read it held
    /// (router/step.rs, `link_port`).
    pub routing_reads_queues: bool,
    /// Whether routing reads other switches' ports too (UGAL-G): the switches then keep the
    /// whole network's backlogs of the last cycle's end (router/observer.rs).
    pub routing_observes_network: bool,
    /// Whether an arriving flit is delivered to its switch only when it may be served there,
    /// `pipeline_delay` cycles after its head lands (`delivered_at`), rather than when it lands.
    /// Nothing can tell the two apart when routing reads no queue and the switch's random
    /// stream is drawn from by routing alone (join-the-shortest-queue ties go to the lowest),
    /// and delivering late lets the switch's step, due that very cycle, find the records the
    /// delivery loaded still in cache (engine/blocks.rs).
    pub deliver_when_ready: bool,
    /// The VCs the run's VC policy uses (`VcPolicy::all`), read at every arrival: kept here
    /// rather than asked of the policy through a dynamic call each time.
    pub policy_vcs: u32,
    /// How heads choose among their candidates' free VCs (`Routing::selection`).
    pub selection: crate::route::Selection,
    /// Who learns the hops packets take.
    pub hop_hook: HopHook,
    /// `run.measure = "injected"`: a packet is measured when its head leaves the NIC in
    /// the window, not when it is generated in it.
    pub measure_at_injection: bool,
    /// `run.drain_quiet` with a drain: past the window NICs start no new packet.
    pub quiet_after_window: bool,
}

/// The routing whose `Routing::on_hop` learns each hop a head wins, or `None` where the
/// engine counts hops itself: every routing whose `on_hop` is the counting
/// (`Routing::learns_hops`).
#[derive(Clone, Default)]
pub struct HopHook(pub Option<std::sync::Arc<dyn crate::routing::Routing>>);

impl std::fmt::Debug for HopHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.as_ref().map_or("counted by the engine", |r| r.name()))
    }
}

impl HopHook {
    /// The head of `state`'s packet at `switch` has won an output VC for `hop`.
    #[inline(always)]
    pub fn on_hop(&self, state: &mut crate::route::RouteState, switch: usize, hop: &crate::route::Hop) {
        match &self.0 {
            None => state.count_hop(hop),
            Some(routing) => routing.on_hop(state, switch, hop),
        }
    }
}

impl Params {
    /// Cycles between a head landing and its delivery: the pipeline delay when it is
    /// delivered when ready (`deliver_when_ready`), none otherwise.
    #[inline(always)]
    fn delivery_delay(&self) -> u64 {
        if self.deliver_when_ready {
            self.pipeline_delay as u64
        } else {
            0
        }
    }
    /// The cycle a flit whose head lands at `land` is delivered to its switch.
    #[inline(always)]
    pub fn delivered_at(&self, land: u64) -> u64 {
        land + self.delivery_delay()
    }
    /// The first cycle a flit delivered at `now` may be allocated: `pipeline_delay` cycles
    /// after its head landed.
    #[inline(always)]
    pub fn ready_from(&self, now: u64) -> u64 {
        now + self.pipeline_delay as u64 - self.delivery_delay()
    }
    /// Phits of each flit of a packet of `packet_phits`.
    #[inline(always)]
    pub fn flit_phits(&self, packet_phits: u16) -> u16 {
        if self.wormhole {
            1
        } else {
            packet_phits
        }
    }
    /// Flits of a packet of `packet_phits`.
    #[inline(always)]
    pub fn flits(&self, packet_phits: u16) -> u16 {
        if self.wormhole {
            packet_phits
        } else {
            1
        }
    }
}

/// Flit slots of an input and an output VC's buffer: the flits each holds were all of the
/// shortest packet (with a NIC protocol, its one-flit headers), whatever the packets that
/// come. Under wormhole a flit is a phit.
pub fn buffer_slots(spec: &crate::spec::Spec) -> (u32, u32) {
    let (_, shortest) = crate::protocol::Protocol::from_spec(spec).packet_range(spec.packet.phits as u16);
    let flit = if spec.flow_control() == crate::spec::FlowControl::Wormhole { 1 } else { shortest as usize };
    ((spec.input_buffer_phits() / flit) as u32, (spec.output_buffer_phits() / flit) as u32)
}
