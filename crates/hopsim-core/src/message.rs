//! Messages: cut into packets at the source, reassembled at the destination NIC, optionally
//! delivered to the application in order through a reorder buffer.

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Message {
    pub src: u32,
    pub dst: u32,
    pub created: u64,
    pub packets: u32,
    pub arrived: u32,
    /// Next sequence number the application expects.
    pub next_seq: u32,
    /// Packets that arrived ahead of a missing one: (seq, packet id, arrival cycle).
    pub pending: Vec<(u32, u32, u64)>,
    /// Workload data (which pair, data or acknowledgement...).
    pub tag: u32,
    pub measured: bool,
    /// Its size under a `nic.protocol` (which sets its requests' lengths).
    pub bytes: u64,
    /// `RouteState::mode` of its packets (0: the run's routing mode).
    pub mode: u8,
}

impl Message {
    /// The record as its source made it, before any packet of it arrived: what travels to
    /// another rank with its packets (engine/server_side/rank.rs).
    pub fn as_sent(&self) -> Message {
        Message { arrived: 0, next_seq: 0, pending: Vec::new(), ..self.clone() }
    }
}

/// Where messages live while their packets are on their way.
pub type Messages = crate::slab::Slab<Message>;
