//! The routing modes of Aries (`routing.mode`, and a job's `routing_mode`): vocabulary of the
//! experiment file that the routing (`routing/aries.rs`), the NICs and the jobs share, so it
//! sits in the spec below all of them.

/// The routing modes of Aries, in `routing.mode` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum AriesMode {
    Adaptive,
    AdaptiveLowBias,
    AdaptiveHighBias,
    IncreasinglyMinimal,
    MinHash,
    NminHash,
    InOrder,
}

impl AriesMode {
    pub const ALL: [AriesMode; 7] =
        [AriesMode::Adaptive, AriesMode::AdaptiveLowBias, AriesMode::AdaptiveHighBias, AriesMode::IncreasinglyMinimal, AriesMode::MinHash, AriesMode::NminHash, AriesMode::InOrder];

    pub fn name(self) -> &'static str {
        match self {
            AriesMode::Adaptive => "adaptive",
            AriesMode::AdaptiveLowBias => "adaptive_low_bias",
            AriesMode::AdaptiveHighBias => "adaptive_high_bias",
            AriesMode::IncreasinglyMinimal => "increasingly_minimal",
            AriesMode::MinHash => "min_hash",
            AriesMode::NminHash => "nmin_hash",
            AriesMode::InOrder => "in_order",
        }
    }

    /// One line on the mode, for `hopsim list`.
    pub fn about(self) -> &'static str {
        match self {
            AriesMode::Adaptive => "adaptive, minimal and non-minimal paths weighed equally",
            AriesMode::AdaptiveLowBias => "adaptive, slightly biased towards minimal paths",
            AriesMode::AdaptiveHighBias => "adaptive, strongly biased towards minimal paths",
            AriesMode::IncreasinglyMinimal => "adaptive, more minimal with each hop (Cray's alltoall default)",
            AriesMode::MinHash => "minimal, the path chosen by a hash of the packet",
            AriesMode::NminHash => "non-minimal, the path chosen by a hash of the packet",
            AriesMode::InOrder => "one deterministic minimal path per pair (in-order delivery)",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The value `RouteState::mode` carries for this mode (0 is "the run's mode").
    pub fn code(self) -> u8 {
        Self::ALL.iter().position(|&m| m == self).expect("listed") as u8 + 1
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get((code as usize).checked_sub(1)?).copied()
    }
}
