//! Requests and responses, as Cray Aries NICs make them: a message is cut into requests of at
//! most `payload_bytes` of payload; under PUT a request is a header flit plus the payload flits
//! and its response one header flit; under GET the request is one header flit and the response
//! carries the payload. One flit is one phit.

pub use crate::spec::ProtocolKind;
use crate::spec::Spec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Protocol {
    pub kind: ProtocolKind,
    pub max_outstanding: u32,
    flit_bytes: u64,
    payload_bytes: u64,
    header_flits: u16,
}

impl Protocol {
    pub fn from_spec(spec: &Spec) -> Self {
        let n = &spec.nic;
        Protocol {
            kind: n.kind(),
            max_outstanding: n.max_outstanding,
            flit_bytes: n.flit_bytes as u64,
            payload_bytes: n.payload_bytes as u64,
            header_flits: n.header_flits as u16,
        }
    }

    pub fn is_on(&self) -> bool {
        self.kind != ProtocolKind::None
    }

    /// Requests a message of `bytes` is cut into.
    pub fn requests(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.payload_bytes).max(1) as u32
    }

    /// Payload flits of request `seq` of a message of `bytes` (the last one carries the rest).
    pub fn payload_flits(&self, bytes: u64, seq: u32) -> u16 {
        let before = seq as u64 * self.payload_bytes;
        let payload = bytes.saturating_sub(before).min(self.payload_bytes);
        payload.div_ceil(self.flit_bytes) as u16
    }

    pub fn request_phits(&self, bytes: u64, seq: u32) -> u16 {
        match self.kind {
            ProtocolKind::Put => self.header_flits + self.payload_flits(bytes, seq),
            _ => self.header_flits,
        }
    }

    pub fn response_phits(&self, bytes: u64, seq: u32) -> u16 {
        match self.kind {
            ProtocolKind::Get => self.header_flits + self.payload_flits(bytes, seq),
            _ => self.header_flits,
        }
    }

    /// Phits of all a message's requests, without a walk over them: PUT's carry its data,
    /// GET's are their headers.
    pub fn requests_phits(&self, bytes: u64) -> u64 {
        match self.kind {
            ProtocolKind::Put => self.data_phits(bytes),
            _ => self.requests(bytes) as u64 * self.header_flits as u64,
        }
    }

    /// Phits of the packets that carry a message's data (PUT: its requests; GET: their
    /// responses): what an open-loop workload's offered load counts.
    pub fn data_phits(&self, bytes: u64) -> u64 {
        self.requests(bytes) as u64 * self.header_flits as u64 + self.message_payload_flits(bytes)
    }

    /// Payload flits of a whole message: its full requests' and the last one's rest, counted
    /// without a walk over its requests (a message may have billions).
    pub fn message_payload_flits(&self, bytes: u64) -> u64 {
        let (full, rest) = (bytes / self.payload_bytes, bytes % self.payload_bytes);
        full * self.payload_bytes.div_ceil(self.flit_bytes) + rest.div_ceil(self.flit_bytes)
    }

    /// Whether packets of this kind complete messages where they arrive.
    pub fn carries_data(&self, kind: crate::packet::PacketKind) -> bool {
        use crate::packet::PacketKind;
        match kind {
            PacketKind::Data => true,
            PacketKind::Request => self.kind == ProtocolKind::Put,
            PacketKind::Response => self.kind == ProtocolKind::Get,
        }
    }

    /// The longest and shortest packets of a run whose other packets are `packet_phits` long.
    pub fn packet_range(&self, packet_phits: u16) -> (u16, u16) {
        if self.is_on() {
            (packet_phits, self.header_flits)
        } else {
            (packet_phits, packet_phits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(kind: ProtocolKind) -> Protocol {
        Protocol { kind, max_outstanding: 1024, flit_bytes: 16, payload_bytes: 64, header_flits: 1 }
    }

    #[test]
    fn sizes_follow_aries() {
        let put = protocol(ProtocolKind::Put);
        let get = protocol(ProtocolKind::Get);
        // 1 packet every 64 bytes; 5 request flits per PUT packet, 1 per GET.
        assert_eq!(put.requests(1024), 16);
        assert_eq!(put.requests(1025), 17);
        assert_eq!(put.requests(1), 1);
        assert_eq!((0..16).map(|s| put.request_phits(1024, s) as u32).sum::<u32>(), 80);
        assert_eq!((0..16).map(|s| get.request_phits(1024, s) as u32).sum::<u32>(), 16);
        assert_eq!((0..16).map(|s| get.response_phits(1024, s) as u32).sum::<u32>(), 80);
        assert_eq!(put.response_phits(1024, 3), 1);
        for bytes in [0, 1, 63, 64, 65, 1000, 1024, 1025] {
            let walked: u64 = (0..put.requests(bytes)).map(|s| put.request_phits(bytes, s) as u64).sum();
            assert_eq!(put.data_phits(bytes), walked, "{bytes} bytes");
            assert_eq!(put.requests_phits(bytes), walked, "{bytes} bytes");
            let walked: u64 = (0..get.requests(bytes)).map(|s| get.request_phits(bytes, s) as u64).sum();
            assert_eq!(get.requests_phits(bytes), walked, "{bytes} bytes");
        }
        // The last request carries the rest: 100 bytes = 64 + 36 -> 4 + 3 payload flits.
        assert_eq!((put.request_phits(100, 0), put.request_phits(100, 1)), (5, 4));
        assert_eq!(put.data_phits(100), 9);
        assert_eq!(put.message_payload_flits(100), 7);
        assert_eq!(get.data_phits(100), 9);
    }
}
