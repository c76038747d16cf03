//! A packet: its route state, where its head may go next, and its place in the source queue.

use crate::routing::{Candidates, RouteState};

pub const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
pub struct Packet {
    pub src: u32,
    pub dst: u32,
    /// Cycle the packet was generated (entered the source queue).
    pub created: u64,
    /// Cycle its first phit left the NIC.
    pub injected: u64,
    pub state: RouteState,
    /// Where the head may go next, computed when it arrived at its current switch.
    pub candidates: Candidates,
    pub flits_ejected: u16,
    /// Generated inside the measured window.
    pub measured: bool,
    /// Next packet in the NIC's source queue.
    pub next: u32,
    /// The message this packet belongs to (`NIL` for single-packet messages nobody waits
    /// for) and its place in it.
    pub message: u32,
    pub seq: u32,
}

/// Where packets live.
pub type Arena = crate::slab::Slab<Packet>;
