//! Range and combination checks that do not depend on which topology or routing is chosen.
//! Names (topology kind, algorithm, policy, pattern) are checked where they are built.

use super::Spec;
use crate::error::{SpecError, SpecResult};
use std::sync::atomic::{AtomicU64, Ordering};

/// Simulated cycles (warmup + measured) are stored in 32 bits (flit timestamps, creation
/// cycles of queued messages), with headroom for the cycles a flit is scheduled ahead.
pub const MAX_CYCLES: u64 = u32::MAX as u64 / 2;
/// Threads one run may be split across (`run.threads`).
pub const MAX_THREADS: usize = 256;
/// Phits one VC buffer holds: a VC's occupancy and credits are counted in 16 bits, which
/// keeps its record to 48 bytes (router/mod.rs), and so are the positions of its flits
/// (router/fifo.rs), of which there are at most as many as phits.
pub const MAX_BUFFER_PHITS: usize = u16::MAX as usize;
/// Servers per switch: a switch's ports (network and server) are numbered in 16 bits and
/// the topologies allow radix up to 60000.
pub const MAX_SERVERS_PER_SWITCH: usize = 60_000;
/// Smallest rate of messages per server per cycle of the open-loop workload.
pub const MIN_MESSAGE_RATE: f64 = 1e-13;
/// Most packets (requests) one message is cut into: they are counted in 32 bits.
pub const MAX_MESSAGE_PACKETS: u64 = u32::MAX as u64;
/// Largest `nic.source_queue_limit`, in packets per server.
pub const MAX_SOURCE_QUEUE: u64 = 1 << 32;

/// How many specs have been validated in this process: a run's spec is validated once, and
/// tests check that no layer validates it again.
static VALIDATIONS: AtomicU64 = AtomicU64::new(0);

/// Specs validated so far in this process.
pub fn validations() -> u64 {
    VALIDATIONS.load(Ordering::Relaxed)
}

/// A spec found valid, held so that it cannot change: what the engine builds a run from
/// (`Simulation::new`, `Simulation::check`), so a run cannot be built from a spec no one
/// checked, and one that was checked is not checked again. Made only by validating a spec,
/// or from the engine's own seal of the text of one it validated (`sealed`), which a spec
/// sent to another process carries.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct Validated {
    spec: Spec,
}

impl Validated {
    pub fn new(spec: Spec) -> SpecResult<Self> {
        spec.validate()?;
        Ok(Validated { spec })
    }

    /// `spec`, parsed from `text`: validated, unless `given` is this engine's seal of `text`.
    pub fn sealed(spec: Spec, text: &str, given: &str) -> SpecResult<Self> {
        if seal(text) == given {
            return Ok(Validated { spec });
        }
        Self::new(spec)
    }

    pub fn into_spec(self) -> Spec {
        self.spec
    }
}

impl std::ops::Deref for Validated {
    type Target = Spec;
    fn deref(&self) -> &Spec {
        &self.spec
    }
}

/// The engine's seal of a spec's JSON text that it found valid: a keyed hash of the text and
/// the engine's version. A run sent to another process carries its text and seal, and the
/// engine there runs it without validating it again; any other text (a user's spec, one
/// changed since) is validated. It guards against a spec that skips validation by mistake,
/// not against someone who reads this key.
pub fn seal(text: &str) -> String {
    use std::hash::Hasher;
    const KEY: u64 = 0x6f70_7369_6d5f_7365;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write_u64(KEY);
    h.write(crate::VERSION.as_bytes());
    h.write(text.as_bytes());
    format!("{:016x}", h.finish())
}

impl Spec {
    /// Check ranges and combinations that need no network; errors name the key.
    pub fn validate(&self) -> SpecResult<()> {
        VALIDATIONS.fetch_add(1, Ordering::Relaxed);
        self.check_without_network()
    }

    /// What describing the network needs of a spec: the links and the servers per switch
    /// (each topology checks its own keys when built). Routing, traffic and the rest are
    /// not read, so they are not checked.
    pub fn validate_topology(&self) -> SpecResult<()> {
        self.validate_link()?;
        self.check_servers_per_switch()
    }

    fn check_without_network(&self) -> SpecResult<()> {
        self.validate_router()?;
        self.validate_link()?;
        self.validate_load()?;
        self.nic.validate(self.packet.phits)?;
        self.validate_nic()?;
        self.validate_messages()?;
        super::jobs::validate_jobs(&self.jobs)?;
        super::jobs::refuse_unread_app_aware(self)?;
        self.nic.refuse_unread(&self.keys_left_to_others("nic.protocol", super::nic::PROTOCOL_KEYS.into_iter()))?;
        self.validate_traffic()?;
        self.validate_run()
    }

    /// `[router]` and `[packet]`, and the buffers they size.
    fn validate_router(&self) -> SpecResult<()> {
        let r = &self.router;
        if r.vcs == 0 || r.vcs > 32 {
            return Err(SpecError::new("router.vcs", r.vcs, "must be between 1 and 32"));
        }
        if !matches!(r.flow_control.as_str(), "vct" | "wormhole") {
            return Err(SpecError::new(
                "router.flow_control",
                format!("{:?}", r.flow_control),
                "allowed: \"vct\" (virtual cut-through), \"wormhole\"",
            ));
        }
        if r.speedup == 0 || r.speedup > 64 {
            return Err(SpecError::new("router.speedup", r.speedup, "must be between 1 and 64"));
        }
        if !matches!(r.jsq_tie_break.as_str(), "lowest" | "random") {
            return Err(SpecError::new(
                "router.jsq_tie_break",
                format!("{:?}", r.jsq_tie_break),
                "allowed: \"lowest\" (first candidate port, lowest VC), \"random\"",
            ));
        }
        if crate::staging::VcAllocation::from_name(&r.vc_allocation).is_none() {
            return Err(SpecError::new("router.vc_allocation", format!("{:?}", r.vc_allocation), crate::staging::VcAllocation::ALLOWED));
        }
        if crate::staging::NextHeadRouting::from_name(&r.next_head_routing).is_none() {
            return Err(SpecError::new("router.next_head_routing", format!("{:?}", r.next_head_routing), crate::staging::NextHeadRouting::ALLOWED));
        }
        use crate::allocation::{SwitchAllocator, VcAllocator};
        let Some(vc_allocator) = VcAllocator::from_name(&r.vc_allocator, 1) else {
            return Err(SpecError::new("router.vc_allocator", format!("{:?}", r.vc_allocator), VcAllocator::ALLOWED));
        };
        if vc_allocator == VcAllocator::Unowned && self.flow_control() == crate::spec::FlowControl::Wormhole {
            return Err(SpecError::new(
                "router.vc_allocator",
                format!("{:?}", r.vc_allocator),
                "\"none\" needs router.flow_control = \"vct\": only a whole packet may enter an output VC that another packet may enter too",
            ));
        }
        let Some(switch_allocator) = SwitchAllocator::from_name(&r.switch_allocator, 1) else {
            return Err(SpecError::new("router.switch_allocator", format!("{:?}", r.switch_allocator), SwitchAllocator::ALLOWED));
        };
        let most = crate::allocation::MAX_ISLIP_ITERATIONS;
        if r.islip_iterations == 0 || r.islip_iterations > most {
            return Err(SpecError::new("router.islip_iterations", r.islip_iterations, format!("must be between 1 and {most}")));
        }
        let iterated = matches!(vc_allocator, VcAllocator::Islip { .. }) || matches!(switch_allocator, SwitchAllocator::Islip { .. });
        if r.islip_iterations != 1 && !iterated {
            return Err(SpecError::new(
                "router.islip_iterations",
                r.islip_iterations,
                format!(
                    "only iSLIP iterates: set router.switch_allocator or router.vc_allocator = \"islip\" (they are {:?} and {:?}) or leave this key out",
                    r.switch_allocator, r.vc_allocator
                ),
            ));
        }
        if super::InjectionRule::from_name(&self.routing.injection_vcs).is_none() {
            return Err(SpecError::new(
                "routing.injection_vcs",
                format!("{:?}", self.routing.injection_vcs),
                "allowed: \"policy\" (the VCs the VC policy gives the first hop), \"any\" (every VC, the one with most room), \"any_first\" (the lowest VC with room), \"any_round_robin\" (the first VC with room after the previous packet's), \"any_random\" (one VC drawn each cycle, waiting while it has no room)",
            ));
        }
        if crate::route::QueueReach::from_name(&self.routing.queue_reach).is_none() {
            return Err(SpecError::new("routing.queue_reach", format!("{:?}", self.routing.queue_reach), crate::route::QueueReach::ALLOWED));
        }
        if super::EjectionVcs::from_name(&self.routing.ejection_vcs).is_none() {
            return Err(SpecError::new("routing.ejection_vcs", format!("{:?}", self.routing.ejection_vcs), super::EjectionVcs::ALLOWED));
        }
        if r.pipeline_delay > 1000 {
            return Err(SpecError::new("router.pipeline_delay", r.pipeline_delay, "must be between 0 and 1000 cycles"));
        }
        let p = self.packet.phits;
        if p == 0 || p > 4096 {
            return Err(SpecError::new("packet.phits", p, "must be between 1 and 4096"));
        }
        if let Some(b) = self.packet.bytes {
            if !(b > 0.0 && b.is_finite()) {
                return Err(SpecError::new("packet.bytes", b, "must be a positive number of bytes"));
            }
        }
        self.check_buffer("input_buffer", r.input_buffer, r.input_buffer_phits)?;
        self.check_buffer("output_buffer", r.output_buffer, r.output_buffer_phits)
    }

    fn validate_link(&self) -> SpecResult<()> {
        if self.link.latency == 0 || self.link.latency > 10_000 {
            return Err(SpecError::new("link.latency", self.link.latency, "must be between 1 and 10000 cycles"));
        }
        if let Some(g) = self.link.gbytes_per_s {
            if !(g > 0.0 && g.is_finite()) {
                return Err(SpecError::new("link.gbytes_per_s", g, "must be a positive bandwidth in GB/s"));
            }
        }
        self.link.class_specs()?;
        Ok(())
    }

    /// `traffic.load`, when given, in range (whether the workload needs it is its own check,
    /// `workload::check`).
    fn validate_load(&self) -> SpecResult<()> {
        match self.traffic.load {
            Some(l) if !(l > 0.0 && l <= 1.0) => Err(SpecError::new("traffic.load", l, "must be in (0, 1] phits per server per cycle")),
            _ => Ok(()),
        }
    }

    /// `[traffic]`: the active servers (the patterns check their own keys).
    fn validate_traffic(&self) -> SpecResult<()> {
        let t = &self.traffic;
        if let Some(f) = t.active_fraction {
            if !(f > 0.0 && f <= 1.0) {
                return Err(SpecError::new("traffic.active_fraction", f, "must be in (0, 1]"));
            }
            if t.active_servers.is_some() {
                return Err(SpecError::new(
                    "traffic.active_fraction",
                    f,
                    "give either traffic.active_servers or traffic.active_fraction, not both",
                ));
            }
        }
        Ok(())
    }

    /// `[run]`, and `topology.servers_per_switch`, whose range needs no network.
    fn validate_run(&self) -> SpecResult<()> {
        let run = &self.run;
        if run.cycles == 0 {
            return Err(SpecError::new("run.cycles", run.cycles, "must be at least 1 measured cycle"));
        }
        // Cycles are stored in 32 bits where memory counts (flit timestamps, source queues).
        if run.warmup > MAX_CYCLES {
            return Err(SpecError::new("run.warmup", run.warmup, format!("must be between 0 and {MAX_CYCLES} cycles (warmup + cycles must stay below 2^31)")));
        }
        if run.warmup.saturating_add(run.cycles) > MAX_CYCLES {
            return Err(SpecError::new(
                "run.cycles",
                run.cycles,
                format!("warmup + cycles must stay below 2^31: at most {} measured cycles after run.warmup = {}", MAX_CYCLES - run.warmup, run.warmup),
            ));
        }
        let window_end = run.warmup + run.cycles;
        if run.drain > MAX_CYCLES - window_end {
            return Err(SpecError::new("run.drain", run.drain, format!("warmup + cycles + drain must stay below 2^31: at most {} cycles of drain after a window ending at {window_end}", MAX_CYCLES - window_end)));
        }
        if run.drain > 0 && run.measure == super::Measure::Received {
            return Err(SpecError::new("run.drain", run.drain, "measured by receipt (run.measure = \"received\") nothing delivered after the window counts: no drain"));
        }
        if run.drain_quiet && (run.drain == 0 || run.measure != super::Measure::Injected) {
            return Err(SpecError::new(
                "run.drain_quiet",
                true,
                "stops the sources during a drain of the packets measured at injection: needs run.drain > 0 and run.measure = \"injected\" (measured by generation, packets still queued at the window's end must be sent)",
            ));
        }
        if run.watchdog < 100 {
            return Err(SpecError::new("run.watchdog", run.watchdog, "must be at least 100 cycles"));
        }
        if let Some(t) = run.threads {
            if t == 0 || t > MAX_THREADS {
                return Err(SpecError::new("run.threads", t, format!("must be between 1 and {MAX_THREADS}")));
            }
        }
        if run.temporal_bin == 0 || run.temporal_bin > MAX_CYCLES {
            return Err(SpecError::new("run.temporal_bin", run.temporal_bin, format!("must be between 1 and {MAX_CYCLES} cycles")));
        }
        if let Some(b) = &self.traffic.burst {
            for (key, v) in [("traffic.burst.start", b.start), ("traffic.burst.cycles", b.cycles)] {
                if v > MAX_CYCLES {
                    return Err(SpecError::new(key, v, format!("must be between 0 and {MAX_CYCLES} cycles (a run lasts less than 2^31 cycles)")));
                }
            }
        }
        self.check_servers_per_switch()
    }

    fn check_servers_per_switch(&self) -> SpecResult<()> {
        if let Some(sps) = self.topology.servers_per_switch {
            if sps == 0 || sps > MAX_SERVERS_PER_SWITCH {
                return Err(SpecError::new("topology.servers_per_switch", sps, format!("must be between 1 and {MAX_SERVERS_PER_SWITCH} (ports of a switch are numbered in 16 bits)")));
            }
        }
        Ok(())
    }

    /// `[nic]`: the source queue's cap (what a closed-loop window needs of it is the
    /// workload's check).
    fn validate_nic(&self) -> SpecResult<()> {
        let limit = self.nic.source_queue_limit;
        if limit == 0 || limit > MAX_SOURCE_QUEUE {
            return Err(SpecError::new("nic.source_queue_limit", limit, format!("must be between 1 and {MAX_SOURCE_QUEUE} packets per server")));
        }
        Ok(())
    }

    /// Packets per message, from `message.packets` or `message.bytes` / `packet.bytes`.
    pub fn packets_per_message(&self) -> usize {
        match (self.message.packets, self.message.bytes, self.packet.bytes) {
            (Some(n), _, _) => n,
            (None, Some(m), Some(p)) => (m / p).ceil().max(1.0) as usize,
            _ => 1,
        }
    }

    /// Packets (requests under a `nic.protocol`) a message of `bytes` is cut into, as the
    /// NIC cuts it; saturating, so that a size too large for any check is still refused.
    pub fn packets_for_bytes(&self, bytes: u64) -> u64 {
        if self.nic.kind() != super::ProtocolKind::None {
            bytes.div_ceil(self.nic.payload_bytes.max(1) as u64).max(1)
        } else {
            (bytes as f64 / self.packet.bytes.unwrap_or(1.0)).ceil().max(1.0) as u64
        }
    }

    /// Refuse a message of `bytes` (made by `key = value`) too long to send: open-loop
    /// (`droppable`), one that a server's source queue could never hold, which would be
    /// dropped at the source every time; a program's, which is never dropped, one of more
    /// packets than a message can count.
    pub fn check_message_fits(&self, key: &str, value: impl std::fmt::Display, bytes: u64, what: &str, droppable: bool) -> SpecResult<()> {
        let packets = self.packets_for_bytes(bytes);
        let what = format!("{what} of {bytes} bytes");
        if droppable {
            return self.check_packets_fit(key, value, packets, &what);
        }
        if packets > MAX_MESSAGE_PACKETS {
            let unit = if self.nic.kind() == super::ProtocolKind::None { "packets of packet.bytes" } else { "requests of nic.payload_bytes" };
            return Err(SpecError::new(key, value, format!("{what} is {packets} {unit}: at most {MAX_MESSAGE_PACKETS} per message")));
        }
        Ok(())
    }

    /// Refuse `packets` packets in one message (made by `key = value`) above
    /// `nic.source_queue_limit`.
    pub fn check_packets_fit(&self, key: &str, value: impl std::fmt::Display, packets: u64, what: &str) -> SpecResult<()> {
        let limit = self.nic.source_queue_limit;
        if packets > limit {
            let unit = if self.nic.kind() == super::ProtocolKind::None { "packets" } else { "requests" };
            return Err(SpecError::new(
                key,
                value,
                format!("{what} is {packets} {unit}, more than nic.source_queue_limit = {limit}: a message longer than a server's source queue could never be sent; raise nic.source_queue_limit or send smaller messages"),
            ));
        }
        Ok(())
    }

    /// Bytes of a message under a `nic.protocol`: `message.bytes`, or `message.packets` full
    /// requests, or one full request.
    pub fn message_bytes(&self) -> u64 {
        match (self.message.bytes, self.message.packets) {
            (Some(b), _) => b.ceil() as u64,
            (None, Some(n)) => n as u64 * self.nic.payload_bytes as u64,
            _ => self.nic.payload_bytes as u64,
        }
    }

    fn validate_messages(&self) -> SpecResult<()> {
        let m = &self.message;
        if let Some(n) = m.packets {
            if n == 0 || n > 1 << 20 {
                return Err(SpecError::new("message.packets", n, "must be between 1 and 1048576 packets"));
            }
            if m.bytes.is_some() {
                return Err(SpecError::new("message.packets", n, "give either message.packets or message.bytes, not both"));
            }
        }
        if let Some(b) = m.bytes {
            if !(b > 0.0 && b.is_finite()) {
                return Err(SpecError::new("message.bytes", b, "must be a positive number of bytes"));
            }
            if self.packet.bytes.is_none() && self.nic.kind() == super::ProtocolKind::None {
                return Err(SpecError::new("message.bytes", b, "needs packet.bytes to cut messages into packets (or give message.packets)"));
            }
            if self.packets_per_message() > 1 << 20 || b / self.nic.payload_bytes.max(1) as f64 > (1 << 20) as f64 {
                return Err(SpecError::new("message.bytes", b, "makes more than 1048576 packets per message"));
            }
        }
        // `[message]` is what `[workload]` sends; jobs size their own messages.
        if self.jobs.is_empty() {
            let packets = if self.nic.kind() == super::ProtocolKind::None { self.packets_per_message() as u64 } else { self.packets_for_bytes(self.message_bytes()) };
            match (m.packets, m.bytes) {
                (Some(n), _) => self.check_packets_fit("message.packets", n, packets, "a message")?,
                (None, Some(b)) => self.check_packets_fit("message.bytes", b, packets, "a message")?,
                _ => {}
            }
        }
        Ok(())
    }

    fn check_buffer(&self, name: &str, packets: usize, phits: Option<usize>) -> SpecResult<()> {
        let p = self.packet.phits;
        match phits {
            Some(ph) => {
                let key = format!("router.{name}_phits");
                if ph == 0 || ph > MAX_BUFFER_PHITS {
                    return Err(SpecError::new(key, ph, format!("must be between 1 and {MAX_BUFFER_PHITS} phits per VC")));
                }
                if self.flow_control() == crate::spec::FlowControl::VirtualCutThrough && ph < p {
                    return Err(SpecError::new(
                        key,
                        ph,
                        format!("virtual cut-through needs room for a whole packet: at least packet.phits = {p}"),
                    ));
                }
            }
            None => {
                let most = MAX_BUFFER_PHITS / p;
                if packets == 0 || packets > most {
                    return Err(SpecError::new(
                        format!("router.{name}"),
                        packets,
                        format!("must be between 1 and {most} packets of {p} phits per VC: room for a whole packet, and at most {MAX_BUFFER_PHITS} phits"),
                    ));
                }
            }
        }
        Ok(())
    }
}
