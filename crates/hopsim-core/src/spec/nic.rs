//! `[nic]`: the request/response protocol of the NICs (Cray Aries), and which VCs servers
//! inject into (`routing.injection_vcs`).

use crate::error::{SpecError, SpecResult};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NicSpec {
    /// "none" (packets nobody answers), "put" (requests carry the data, one-flit responses)
    /// or "get" (one-flit requests, responses carry the data).
    #[serde(default = "none")]
    pub protocol: String,
    /// Requests a NIC may have sent without their response back.
    #[serde(default = "default_outstanding")]
    pub max_outstanding: u32,
    /// Bytes per flit; one flit is one phit of the link.
    #[serde(default = "sixteen")]
    pub flit_bytes: u32,
    /// Most payload bytes one request (PUT) or response (GET) carries.
    #[serde(default = "sixty_four")]
    pub payload_bytes: u32,
    /// Header flits of every request and response.
    #[serde(default = "one")]
    pub header_flits: u32,
    /// Packets a server's source queue holds (made or not); a message that would exceed it
    /// is dropped at the source and counted (`packets_dropped_at_source`). Large enough that
    /// only runs far above saturation for a long time reach it; it bounds their memory.
    #[serde(default = "default_source_queue_limit")]
    pub source_queue_limit: u64,
}

/// The `[nic]` keys only the protocols (`put`, `get`) read.
pub const PROTOCOL_KEYS: [&str; 4] = ["max_outstanding", "flit_bytes", "payload_bytes", "header_flits"];

impl Default for NicSpec {
    fn default() -> Self {
        NicSpec {
            protocol: none(),
            max_outstanding: default_outstanding(),
            flit_bytes: 16,
            payload_bytes: 64,
            header_flits: 1,
            source_queue_limit: default_source_queue_limit(),
        }
    }
}

fn none() -> String {
    "none".into()
}
fn default_outstanding() -> u32 {
    1024
}
fn sixteen() -> u32 {
    16
}
fn sixty_four() -> u32 {
    64
}
fn one() -> u32 {
    1
}
fn default_source_queue_limit() -> u64 {
    1_000_000
}

/// `nic.protocol`, as the engine uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolKind {
    /// Packets nobody answers (the default).
    None,
    Put,
    Get,
}

impl ProtocolKind {
    pub const ALL: [ProtocolKind; 3] = [ProtocolKind::None, ProtocolKind::Put, ProtocolKind::Get];

    pub fn name(self) -> &'static str {
        match self {
            ProtocolKind::None => "none",
            ProtocolKind::Put => "put",
            ProtocolKind::Get => "get",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The `[nic]` keys it reads besides `protocol` and `source_queue_limit`.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            ProtocolKind::None => &[],
            ProtocolKind::Put | ProtocolKind::Get => &PROTOCOL_KEYS,
        }
    }
}

impl NicSpec {
    /// The protocol this table names (`validate` refuses any other name).
    pub fn kind(&self) -> ProtocolKind {
        ProtocolKind::from_name(&self.protocol).unwrap_or(ProtocolKind::None)
    }

    /// The keys only a protocol (`put`, `get`) reads, with their values, when given other
    /// than their defaults (a key given as its default cannot be told from one not given).
    fn protocol_keys_given(&self) -> Vec<(&'static str, u32)> {
        let d = NicSpec::default();
        let keys = [
            ("max_outstanding", self.max_outstanding, d.max_outstanding),
            ("flit_bytes", self.flit_bytes, d.flit_bytes),
            ("payload_bytes", self.payload_bytes, d.payload_bytes),
            ("header_flits", self.header_flits, d.header_flits),
        ];
        keys.into_iter().filter(|(_, v, d)| v != d).map(|(k, v, _)| (k, v)).collect()
    }

    /// Refuse a protocol's key under a protocol that does not read it (`none` reads none),
    /// unless the experiment sweeps the protocol (`left`: `Spec::keys_left_to_others`).
    pub fn refuse_unread(&self, left: &[&str]) -> SpecResult<()> {
        let own = self.kind().keys();
        match self.protocol_keys_given().into_iter().find(|(k, _)| !own.contains(k) && !left.contains(k)) {
            Some((key, value)) => {
                let allowed: Vec<&str> = ["protocol", "source_queue_limit"].into_iter().chain(own.iter().copied()).collect();
                Err(super::unknown_key("nic", key, value, &format!("nic.protocol = {:?}", self.protocol), &allowed))
            }
            None => Ok(()),
        }
    }

    pub fn validate(&self, packet_phits: usize) -> SpecResult<()> {
        if ProtocolKind::from_name(&self.protocol).is_none() {
            return Err(SpecError::new(
                "nic.protocol",
                format!("{:?}", self.protocol),
                "allowed: \"none\" (no responses), \"put\" (requests carry the data), \"get\" (responses carry the data)",
            ));
        }
        if self.max_outstanding == 0 || self.max_outstanding > 1 << 20 {
            return Err(SpecError::new("nic.max_outstanding", self.max_outstanding, "must be between 1 and 1048576 requests"));
        }
        if self.flit_bytes == 0 || self.flit_bytes > 4096 {
            return Err(SpecError::new("nic.flit_bytes", self.flit_bytes, "must be between 1 and 4096 bytes"));
        }
        if self.payload_bytes == 0 || self.payload_bytes > 1 << 20 {
            return Err(SpecError::new("nic.payload_bytes", self.payload_bytes, "must be between 1 and 1048576 bytes"));
        }
        if self.header_flits == 0 || self.header_flits > 64 {
            return Err(SpecError::new("nic.header_flits", self.header_flits, "must be between 1 and 64 flits"));
        }
        if self.kind() != ProtocolKind::None {
            let longest = self.header_flits as usize + self.payload_bytes.div_ceil(self.flit_bytes) as usize;
            if packet_phits < longest {
                return Err(SpecError::new(
                    "packet.phits",
                    packet_phits,
                    format!(
                        "with nic.protocol = {:?} packet.phits is the longest packet and the unit of buffer sizes: at least nic.header_flits + nic.payload_bytes / nic.flit_bytes = {longest}",
                        self.protocol
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Which VCs of its switch's input buffer a server injects a packet into
/// (`routing.injection_vcs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InjectionRule {
    /// The VCs the VC policy gives the first hop; the one with most room.
    Policy,
    /// Every VC; the one with most room.
    Any,
    /// Every VC; the lowest-numbered one with room (CAMINOS's servers).
    AnyFirst,
    /// Every VC; the first with room in round-robin order from the one after the previous
    /// packet's VC (BookSim2's sources: src/trafficmanager.cpp of 28f43299, `_last_vc`).
    AnyRoundRobin,
    /// Every VC; one drawn at random each cycle, and the packet waits a cycle when it has no
    /// room (BookSim2's Dragonfly routings: src/networks/dragonfly.cpp of 28f43299,
    /// `inject_vc = RandomInt(gNumVCs-1)`).
    AnyRandom,
}

/// Which VCs of a server's port a packet may take at its destination switch
/// (`routing.ejection_vcs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EjectionVcs {
    /// Any VC no other packet holds: the ejection port is one more output to allocate.
    Any,
    /// The VC class the packet travels in, as the VC policy names it (`VcPolicy::ejection`;
    /// every VC under policies without such classes): packets for one server in one class
    /// take its ejection VCs one after another. BookSim2's Dragonfly routings do this
    /// (src/networks/dragonfly.cpp of 28f43299: `min_dragonflynew` and `ugal_dragonflynew`
    /// give the ejection hop the packet's phase VC).
    Policy,
}

impl EjectionVcs {
    pub const ALLOWED: &'static str = "allowed: \"any\" (any free VC of the server's port; the default), \"policy\" (the VCs of the packet's class under the VC policy)";

    /// The rule a `routing.ejection_vcs` value names, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "any" => Some(EjectionVcs::Any),
            "policy" => Some(EjectionVcs::Policy),
            _ => None,
        }
    }
}

impl InjectionRule {
    /// The rule a `routing.injection_vcs` value names, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "policy" => Some(InjectionRule::Policy),
            "any" => Some(InjectionRule::Any),
            "any_first" => Some(InjectionRule::AnyFirst),
            "any_round_robin" => Some(InjectionRule::AnyRoundRobin),
            "any_random" => Some(InjectionRule::AnyRandom),
            _ => None,
        }
    }
}
