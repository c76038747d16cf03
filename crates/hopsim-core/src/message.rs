//! Messages: cut into packets at the source, reassembled at the destination NIC, optionally
//! delivered to the application in order through a reorder buffer.

use crate::packet::NIL;

#[derive(Debug, Clone, Default)]
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
}

#[derive(Default)]
pub struct Messages {
    slots: Vec<Message>,
    free: Vec<u32>,
}

impl Messages {
    pub fn alloc(&mut self, m: Message) -> u32 {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = m;
            i
        } else {
            self.slots.push(m);
            (self.slots.len() - 1) as u32
        }
    }
    pub fn release(&mut self, id: u32) {
        debug_assert_ne!(id, NIL);
        self.slots[id as usize].pending = Vec::new();
        self.free.push(id);
    }
    pub fn get(&self, id: u32) -> &Message {
        &self.slots[id as usize]
    }
    pub fn get_mut(&mut self, id: u32) -> &mut Message {
        &mut self.slots[id as usize]
    }
}
