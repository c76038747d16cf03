//! What a run measures: latency distribution, accepted load (at ejection), load over time.

pub mod csv_text;
mod histogram;
pub mod metric_units;
pub mod jobs;
pub mod result;
pub mod stability;

pub use histogram::Histogram;
use strength_reduce::StrengthReducedU64;
pub use result::{LinkTable, RunResult, Temporal};

#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct Bin {
    pub generated_phits: u64,
    pub ejected_phits: u64,
    pub latency_sum: u64,
    pub delivered: u64,
    /// Delivered packets injected in this bin, and those of them routed non-minimally.
    pub injected_delivered: u64,
    pub injected_nonminimal: u64,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub warmup: u64,
    pub end: u64,
    pub latency: Histogram,
    pub network_latency_sum: u64,
    pub queueing_latency_sum: u64,
    pub hops_sum: u64,
    /// Measured packets that went through an intermediate (Valiant, or an adaptive routing's
    /// non-minimal choice).
    pub nonminimal_measured: u64,
    /// Per `RouteState::mode`: measured packets delivered, and those routed non-minimally.
    pub by_mode: [(u64, u64); 8],
    /// Over measured delivered packets: their links' latency beyond `link.latency`.
    pub extra_link_latency_sum: i64,
    /// Measured packets delivered, by switch-to-switch hops taken (index = hops).
    pub hops_count: Vec<u64>,
    /// Phits of the measured packets delivered (their lengths may differ).
    pub measured_packet_phits: u64,
    /// Measured packets (generated in the window) that were delivered.
    pub delivered_measured: u64,
    pub generated_measured_phits: u64,
    /// Phits ejected during the measured window, whatever their creation time.
    pub ejected_window_phits: u64,
    pub bin_cycles: u64,
    /// `bin_cycles` as a divisor that divides by a multiplication: a packet's life reads
    /// its bins four times, and a division costs more than the rest of each reading.
    #[serde(with = "divisor_serde")]
    bin_divisor: StrengthReducedU64,
    pub bins: Vec<Bin>,
    // Totals for the conservation check.
    pub packets_generated: u64,
    pub packets_delivered: u64,
    pub phits_generated: u64,
    pub phits_delivered: u64,
    /// Message latency: creation to the last packet at the destination (measured messages).
    pub message_latency: Histogram,
    /// Acknowledgements of the closed-loop workloads, kept out of `message_latency`.
    pub ack_latency: Histogram,
    pub packets_out_of_order: u64,
    /// Cycles packets waited in reorder buffers for an earlier packet of their message.
    pub reorder_delay_sum: u64,
    pub reorder_released: u64,
    pub reorder_buffer_max: u64,
    /// Packets of messages refused because their source queue was full.
    pub packets_dropped_at_source: u64,
    /// `run.measure = "received"`: the latencies count what is delivered in the window,
    /// whenever it was created, not the packets and messages measured at their creation.
    pub by_receipt: bool,
}

impl Stats {
    pub fn new(warmup: u64, cycles: u64, bin_cycles: u64) -> Self {
        let end = warmup + cycles;
        Stats {
            warmup,
            end,
            latency: Histogram::default(),
            network_latency_sum: 0,
            queueing_latency_sum: 0,
            hops_sum: 0,
            nonminimal_measured: 0,
            by_mode: [(0, 0); 8],
            extra_link_latency_sum: 0,
            hops_count: Vec::new(),
            measured_packet_phits: 0,
            delivered_measured: 0,
            generated_measured_phits: 0,
            ejected_window_phits: 0,
            bin_cycles,
            bin_divisor: StrengthReducedU64::new(bin_cycles),
            bins: Vec::new(),
            packets_generated: 0,
            packets_delivered: 0,
            phits_generated: 0,
            phits_delivered: 0,
            message_latency: Histogram::default(),
            ack_latency: Histogram::default(),
            packets_out_of_order: 0,
            reorder_delay_sum: 0,
            reorder_released: 0,
            reorder_buffer_max: 0,
            packets_dropped_at_source: 0,
            by_receipt: false,
        }
    }

    /// Whether a packet or message delivered at `now`, `measured` at its creation or
    /// injection, counts in the latencies.
    #[inline]
    fn counts(&self, measured: bool, now: u64) -> bool {
        if self.by_receipt {
            self.in_window(now)
        } else {
            measured
        }
    }

    #[inline]
    pub fn in_window(&self, t: u64) -> bool {
        t >= self.warmup && t < self.end
    }

    /// The bin of cycle `t`. Bins are added as the run reaches them: a run of jobs ends
    /// when they do, and its `run.cycles` is only a cap, often a huge one.
    #[inline]
    fn bin(&mut self, t: u64) -> Option<&mut Bin> {
        let i = (t / self.bin_divisor) as usize;
        if i >= self.bins.len() {
            if t >= self.end {
                return None;
            }
            self.bins.resize(i + 1, Bin::default());
        }
        Some(&mut self.bins[i])
    }

    pub fn on_generate(&mut self, now: u64, phits: u64) {
        self.on_generate_packets(now, 1, phits);
    }

    /// `packets` packets of `phits` phits in all generated at `now` (a message's).
    pub fn on_generate_packets(&mut self, now: u64, packets: u64, phits: u64) {
        self.packets_generated += packets;
        self.phits_generated += phits;
        if self.in_window(now) {
            self.generated_measured_phits += phits;
        }
        if let Some(b) = self.bin(now) {
            b.generated_phits += phits;
        }
    }

    /// A flit's last phit reached its NIC at `now`.
    pub fn on_eject_phits(&mut self, now: u64, phits: u64) {
        self.phits_delivered += phits;
        if self.in_window(now) {
            self.ejected_window_phits += phits;
        }
        if let Some(b) = self.bin(now) {
            b.ejected_phits += phits;
        }
    }

    /// A packet reached the application: latency, hops, its route's kind (by the bin of its
    /// injection and, measured, by routing mode), and its links' extra latency.
    pub fn on_deliver(&mut self, now: u64, p: &crate::packet::Packet) {
        let (created, injected, hops) = (p.created, p.injected, p.state.hops as u64);
        let nonminimal = u64::from(p.state.valiant);
        self.packets_delivered += 1;
        let latency = now - created;
        if let Some(b) = self.bin(now) {
            b.latency_sum += latency;
            b.delivered += 1;
        }
        if let Some(b) = self.bin(injected) {
            b.injected_delivered += 1;
            b.injected_nonminimal += nonminimal;
        }
        if self.counts(p.measured, now) {
            self.delivered_measured += 1;
            self.latency.add(latency);
            self.network_latency_sum += now - injected;
            self.queueing_latency_sum += injected - created;
            self.hops_sum += hops;
            self.measured_packet_phits += p.phits as u64;
            let h = hops as usize;
            if h >= self.hops_count.len() {
                self.hops_count.resize(h + 1, 0);
            }
            self.hops_count[h] += 1;
            self.nonminimal_measured += nonminimal;
            let m = &mut self.by_mode[(p.state.mode as usize).min(7)];
            m.0 += 1;
            m.1 += nonminimal;
            self.extra_link_latency_sum += p.extra_link_latency as i64;
        }
    }
}

impl Stats {
    #[inline]
    pub fn on_message(&mut self, now: u64, created: u64, measured: bool, acknowledgement: bool) {
        if self.counts(measured, now) {
            if acknowledgement {
                self.ack_latency.add(now - created);
            } else {
                self.message_latency.add(now - created);
            }
        }
    }


    pub fn on_reorder_release(&mut self, waited: u64) {
        self.reorder_delay_sum += waited;
        self.reorder_released += 1;
    }

    /// Add what `other`, the statistics of another part of the same run, counted (a run on
    /// MPI ranks: each counts what its own servers generate and receive). Every field is a
    /// count, a sum or a maximum, so the order of the parts does not matter.
    pub fn absorb(&mut self, other: &Stats) {
        fn add_vec<T: Copy + Default>(a: &mut Vec<T>, b: &[T], add: impl Fn(&mut T, T)) {
            if a.len() < b.len() {
                a.resize(b.len(), T::default());
            }
            a.iter_mut().zip(b).for_each(|(x, &y)| add(x, y));
        }
        self.latency.absorb(&other.latency);
        self.message_latency.absorb(&other.message_latency);
        self.ack_latency.absorb(&other.ack_latency);
        self.network_latency_sum += other.network_latency_sum;
        self.queueing_latency_sum += other.queueing_latency_sum;
        self.hops_sum += other.hops_sum;
        self.nonminimal_measured += other.nonminimal_measured;
        for (a, b) in self.by_mode.iter_mut().zip(&other.by_mode) {
            a.0 += b.0;
            a.1 += b.1;
        }
        self.extra_link_latency_sum += other.extra_link_latency_sum;
        add_vec(&mut self.hops_count, &other.hops_count, |a, b| *a += b);
        self.measured_packet_phits += other.measured_packet_phits;
        self.delivered_measured += other.delivered_measured;
        self.generated_measured_phits += other.generated_measured_phits;
        self.ejected_window_phits += other.ejected_window_phits;
        add_vec(&mut self.bins, &other.bins, |a, b| {
            a.generated_phits += b.generated_phits;
            a.ejected_phits += b.ejected_phits;
            a.latency_sum += b.latency_sum;
            a.delivered += b.delivered;
            a.injected_delivered += b.injected_delivered;
            a.injected_nonminimal += b.injected_nonminimal;
        });
        self.packets_generated += other.packets_generated;
        self.packets_delivered += other.packets_delivered;
        self.phits_generated += other.phits_generated;
        self.phits_delivered += other.phits_delivered;
        self.packets_out_of_order += other.packets_out_of_order;
        self.reorder_delay_sum += other.reorder_delay_sum;
        self.reorder_released += other.reorder_released;
        self.reorder_buffer_max = self.reorder_buffer_max.max(other.reorder_buffer_max);
        self.packets_dropped_at_source += other.packets_dropped_at_source;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_made_as_the_run_reaches_them_and_none_past_its_end() {
        // A run of jobs has a cap of 2e9 cycles: its bins must not be made up front.
        let mut st = Stats::new(0, 2_000_000_000, 1000);
        assert!(st.bins.is_empty());
        st.on_generate_packets(5_500, 1, 8);
        st.on_eject_phits(5_600, 8);
        assert_eq!(st.bins.len(), 6);
        assert_eq!((st.bins[5].generated_phits, st.bins[5].ejected_phits), (8, 8));
        assert!(st.bins[..5].iter().all(|b| b.generated_phits == 0));
        let mut short = Stats::new(100, 900, 1000);
        short.on_generate_packets(1_000, 1, 8);
        assert!(short.bins.is_empty(), "a cycle past the run's end has no bin");
    }
}

/// A checkpoint keeps the divisor as the number it divides by.
mod divisor_serde {
    use serde::{Deserialize, Deserializer, Serializer};
    use strength_reduce::StrengthReducedU64;

    pub fn serialize<S: Serializer>(d: &StrengthReducedU64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.get())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StrengthReducedU64, D::Error> {
        Ok(StrengthReducedU64::new(u64::deserialize(d)?))
    }
}
