//! Packets live in one arena and are referred to by index, so nothing is allocated per phit.

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

#[derive(Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
    live: usize,
}

impl Arena {
    pub fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        }
    }
    pub fn release(&mut self, id: u32) {
        self.live -= 1;
        self.free.push(id);
    }
    pub fn live(&self) -> usize {
        self.live
    }
    #[inline]
    pub fn get(&self, id: u32) -> &Packet {
        &self.slots[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.slots[id as usize]
    }
}
