//! The engine's metric vocabulary: every scalar of a run's `metrics` with its unit, in the
//! order of `Metrics`. Python reads it (`components_json`) to label tables and axes
//! instead of keeping its own lists; a test keeps it equal to the fields of `Metrics`.

/// (name, unit) of each metric of `Metrics`; "" for a ratio, a category or text.
pub const METRICS: &[(&str, &str)] = &[
    ("offered_load", "phits/server/cycle"),
    ("generated_load", "phits/server/cycle"),
    ("accepted_load", "phits/server/cycle"),
    ("packet_latency_mean", "cycles"),
    ("packet_latency_p50", "cycles"),
    ("packet_latency_p99", "cycles"),
    ("packet_latency_max", "cycles"),
    ("network_latency_mean", "cycles"),
    ("queueing_latency_mean", "cycles"),
    ("hops_mean", "hops"),
    ("nonminimal_fraction", ""),
    ("zero_load_latency", "cycles"),
    ("packets_generated", "packets"),
    ("packets_injected", "packets"),
    ("packets_delivered", "packets"),
    ("packets_measured_delivered", "packets"),
    ("packets_in_flight_end", "packets"),
    ("packets_queued_end", "packets"),
    ("packets_dropped_at_source", "packets"),
    ("phits_generated", "phits"),
    ("phits_delivered", "phits"),
    ("phits_in_flight_end", "phits"),
    ("phits_queued_end", "phits"),
    ("phit_hops", "phits"),
    ("phits_conserved", "bool"),
    ("credits_conserved", "bool"),
    ("deadlock", "bool"),
    ("deadlock_cycle", "cycles"),
    ("deadlock_where", ""),
    ("cycles", "cycles"),
    ("warmup", "cycles"),
    ("switches", "switches"),
    ("servers", "servers"),
    ("active_servers", "servers"),
    ("wall_seconds", "s"),
    ("router_cycles_per_second", "router-cycles/s"),
    ("phits_moved_per_second", "phits/s"),
    ("link_load_max", "phits/cycle"),
    ("link_load_mean", "phits/cycle"),
    ("link_load_cv", ""),
    ("stability_category", ""),
    ("stability_drop", ""),
    ("stability_dips", "dips"),
    ("messages_measured_delivered", "messages"),
    ("message_latency_mean", "cycles"),
    ("message_latency_p50", "cycles"),
    ("message_latency_p99", "cycles"),
    ("message_latency_max", "cycles"),
    ("acks_measured_delivered", "messages"),
    ("ack_latency_mean", "cycles"),
    ("packets_out_of_order", "packets"),
    ("reorder_delay_mean", "cycles"),
    ("reorder_buffer_max", "packets"),
    ("workload", ""),
    ("workload_complete", "bool"),
    ("samples", "samples"),
    ("sample_cycles_mean", "cycles"),
    ("sample_cycles_p50", "cycles"),
    ("sample_cycles_p99", "cycles"),
    ("sample_phits_per_cycle_mean", "phits/cycle"),
    ("hops_max", "hops"),
    ("nic_stalls_per_flit", "cycles/flit"),
    ("nic_request_latency_mean", "cycles"),
    ("requests_sent", "packets"),
    ("responses_sent", "packets"),
    ("responses_received", "packets"),
    ("outstanding_max", "packets"),
    ("message_latency_mean_us", "us"),
    ("ack_latency_mean_us", "us"),
    ("sample_mean_us", "us"),
    ("sample_gbytes_per_s_mean", "GB/s"),
    ("cycle_ns", "ns"),
    ("packet_latency_mean_us", "us"),
    ("packet_latency_p99_us", "us"),
    ("accepted_gbytes_per_s", "GB/s/server"),
];

/// Metric families with one column per routing mode, link class or job: (pattern, unit),
/// where `<mode>` is an Aries routing mode (or `default`, the run's), `<class>` a link class
/// of the topology and `<name>` a job's name. The `job.<name>.*` columns are those runs.csv
/// derives from a run's `jobs` (python/hopsim/jobs.py); their units are declared here so
/// that every column of runs.csv has its unit in one list.
pub const METRIC_FAMILIES: &[(&str, &str)] = &[
    ("packets_<mode>", "packets"),
    ("nonminimal_fraction_<mode>", ""),
    ("link_load_mean_<class>", "phits/cycle"),
    ("link_load_max_<class>", "phits/cycle"),
    ("job.<name>.iterations", "iterations"),
    ("job.<name>.iteration_median", "cycles"),
    ("job.<name>.iteration_mean", "cycles"),
    ("job.<name>.iteration_p99", "cycles"),
    ("job.<name>.iteration_median_us", "us"),
    ("job.<name>.iteration_mean_us", "us"),
    ("job.<name>.iteration_p99_us", "us"),
    ("job.<name>.iteration_qcd", ""),
    ("job.<name>.completion_cycles", "cycles"),
    ("job.<name>.completion_us", "us"),
    ("job.<name>.finished", "bool"),
    ("job.<name>.unsupported_events", "events"),
    ("job.<name>.share_<mode>", ""),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_of_metrics_is_listed_once() {
        let json = serde_json::to_value(super::super::result::Metrics::default()).unwrap();
        let fields: Vec<&str> = json.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut listed: Vec<&str> = METRICS.iter().map(|m| m.0).collect();
        let n = listed.len();
        listed.sort();
        listed.dedup();
        assert_eq!(listed.len(), n, "a metric is listed twice");
        let mut fields_sorted = fields.clone();
        fields_sorted.sort();
        assert_eq!(listed, fields_sorted, "METRICS must list exactly the fields of Metrics");
    }
}
