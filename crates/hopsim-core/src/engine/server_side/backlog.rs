//! The messages waiting at a source NIC before their packets are made.
//!
//! Above saturation (offered load 1.0 in the VC-management study) sources queue tens of
//! millions of messages over a 510k-cycle run, so the record of a waiting message is what
//! sets a run's memory. Nearly all of them are one-packet messages that nobody tracks, and
//! those take one 8-byte slot: destination and creation cycle. Longer or tracked messages
//! take two more slots, after the first one, for their packet count, next sequence number,
//! message record and tie directions.

use crate::packet::NIL;
use std::collections::VecDeque;

/// A message waiting at its source NIC, as the engine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Queued {
    pub dst: u32,
    /// Creation cycle (runs are shorter than 2^32 cycles).
    pub created: u32,
    pub packets: u32,
    pub next_seq: u32,
    /// The message record, or `NIL` when nobody tracks the message.
    pub message: u32,
    /// How its packets break ties, fixed when its first packet is made.
    pub tie_dirs: Option<u32>,
}

impl Queued {
    /// A one-packet message nobody tracks, none of it made yet: what a one-slot entry holds.
    pub fn untracked(dst: u32, created: u32) -> Self {
        Queued { dst, created, packets: 1, next_seq: 0, message: NIL, tie_dirs: None }
    }
}

/// The first slot's `dst` carries two flags; server indices stay below 2^30.
const EXTENDED: u32 = 1 << 31;
const TIES_SET: u32 = 1 << 30;
const DST_MASK: u32 = TIES_SET - 1;

/// One source queue, oldest message first.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Backlog(VecDeque<[u32; 2]>, u64);

impl Backlog {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Queue a new message (none of its packets made yet).
    pub fn push_back(&mut self, dst: u32, created: u32, packets: u32, message: u32) {
        debug_assert!(dst <= DST_MASK, "server index {dst} does not fit a backlog slot");
        self.1 += packets as u64;
        if packets == 1 && message == NIL {
            self.0.push_back([dst, created]);
        } else {
            self.0.push_back([dst | EXTENDED, created]);
            self.0.push_back([packets, 0]);
            self.0.push_back([message, 0]);
        }
    }

    /// The oldest message.
    pub fn front(&self) -> Option<Queued> {
        let &[head, created] = self.0.front()?;
        let dst = head & DST_MASK;
        if head & EXTENDED == 0 {
            return Some(Queued::untracked(dst, created));
        }
        let [packets, next_seq] = self.0[1];
        let [message, ties] = self.0[2];
        let tie_dirs = (head & TIES_SET != 0).then_some(ties);
        Some(Queued { dst, created, packets, next_seq, message, tie_dirs })
    }

    /// Record that the oldest message's next packet has been made, with these tie
    /// directions; the message leaves the queue with its last packet.
    pub fn advance_front(&mut self, tie_dirs: u32) {
        let Some(&[head, _]) = self.0.front() else { return };
        self.1 -= 1;
        if head & EXTENDED == 0 {
            self.0.pop_front();
            return;
        }
        let [packets, next_seq] = self.0[1];
        if next_seq + 1 == packets {
            self.0.drain(..3);
            return;
        }
        self.0[0][0] = head | TIES_SET;
        self.0[1][1] = next_seq + 1;
        self.0[2][1] = tie_dirs;
    }

    /// The queued messages, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = Queued> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            let &[head, created] = self.0.get(i)?;
            let dst = head & DST_MASK;
            if head & EXTENDED == 0 {
                i += 1;
                return Some(Queued::untracked(dst, created));
            }
            let ([packets, next_seq], [message, ties]) = (self.0[i + 1], self.0[i + 2]);
            i += 3;
            Some(Queued { dst, created, packets, next_seq, message, tie_dirs: (head & TIES_SET != 0).then_some(ties) })
        })
    }

    /// Packets of the queued messages not made yet (counted as they come and go: the
    /// source-queue cap looks at it for every message).
    pub fn packets(&self) -> u64 {
        self.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(dst: u32, created: u32, packets: u32, message: u32) -> Queued {
        Queued { dst, created, packets, next_seq: 0, message, tie_dirs: None }
    }

    #[test]
    fn a_one_packet_untracked_message_takes_one_slot() {
        let mut b = Backlog::default();
        b.push_back(7, 100, 1, NIL);
        assert_eq!(b.0.len(), 1);
        assert_eq!(b.front(), Some(message(7, 100, 1, NIL)));
        b.advance_front(0xdead);
        assert!(b.is_empty());
    }

    #[test]
    fn longer_messages_keep_their_sequence_and_tie_directions() {
        let mut b = Backlog::default();
        let big = DST_MASK;
        b.push_back(big, 5, 3, 42);
        b.push_back(3, 6, 1, NIL);
        b.push_back(4, 7, 1, 9);
        assert_eq!(b.0.len(), 7);
        assert_eq!(b.packets(), 5);
        assert_eq!(b.front(), Some(message(big, 5, 3, 42)));
        assert_eq!(b.iter().map(|q| (q.dst, q.packets, q.message)).collect::<Vec<_>>(), vec![(big, 3, 42), (3, 1, NIL), (4, 1, 9)]);
        b.advance_front(u32::MAX);
        let q = b.front().unwrap();
        assert_eq!((q.dst, q.next_seq, q.message, q.tie_dirs), (big, 1, 42, Some(u32::MAX)));
        assert_eq!(b.packets(), 4);
        b.advance_front(u32::MAX);
        assert_eq!(b.front().unwrap().next_seq, 2);
        b.advance_front(u32::MAX);
        assert_eq!(b.front(), Some(message(3, 6, 1, NIL)));
        b.advance_front(0);
        assert_eq!(b.front(), Some(message(4, 7, 1, 9)));
        b.advance_front(0);
        assert!(b.is_empty());
        assert_eq!(b.packets(), 0);
    }
}
