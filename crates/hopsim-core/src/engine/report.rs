//! Turn the state at the end of a run into a `RunResult`.

use super::invariants::Conservation;
use super::Simulation;
use crate::stats::jobs::JobResult;
use super::rows::{Loads, NicSums, Rows, Written};
use crate::stats::result::{CounterTable, HistogramTable, HopTable, Metrics, SampleTable};
use crate::stats::{LinkTable, RunResult, Temporal};

/// The result's rows and the sums over them (engine/rows.rs): one process's own, or made by
/// rank 0 from every rank's end.
pub struct Tables {
    pub links: LinkTable,
    pub counters: CounterTable,
    pub written: Written,
    pub loads: Loads,
    pub nics: NicSums,
}

/// The cycles the run measured over: a run cut short by the watchdog, the part that ran.
pub fn measured_cycles(sim: &Simulation) -> f64 {
    let st = sim.server_side.stats();
    sim.now.min(st.end).saturating_sub(st.warmup).max(1) as f64
}

/// The rows of the switches `switches` and of the active servers among the NICs held, into
/// `rows`, their sums into `loads` and `nics`.
pub fn own_rows(sim: &Simulation, switches: std::ops::Range<usize>, rows: &mut Rows, loads: &mut Loads, nics: &mut NicSums) {
    let r = sim.switch_side.routers();
    rows.links(sim.parts.topo.as_ref(), switches, |s, p| r.ports[r.global_port(s, p)].link_phits, measured_cycles(sim), loads);
    let held = sim.server_side.nics();
    nics.add(&NicSums::of_totals(held));
    for s in sim.parts.traffic.active.within(held.held()) {
        rows.counter(s, held.counters_of(s as usize), held.nic(s as usize).outstanding_max, nics);
    }
}

/// The result of a run on one process, its rows in it or written to `rows`' files.
pub fn summarise_alone(sim: &Simulation, cons: Conservation, wall: f64, mut rows: Rows) -> Result<RunResult, super::rows::WriteError> {
    let (mut loads, mut nics) = (Loads::default(), NicSums::default());
    own_rows(sim, 0..sim.parts.topo.num_switches(), &mut rows, &mut loads, &mut nics);
    let (links, counters, written) = rows.finish(sim.parts.topo.as_ref())?;
    Ok(summarise(sim, cons, wall, Tables { links, counters, written, loads, nics }, &sim.server_side.nics().totals))
}

/// `cons`: the conservation check, made before the network's buffers were freed; `tables`:
/// the rows and their sums; `nic_totals`: every server's run-wide NIC counters where jobs
/// read them (empty otherwise).
pub fn summarise(sim: &Simulation, cons: Conservation, wall: f64, tables: Tables, nic_totals: &[crate::nic::Counters]) -> RunResult {
    let st = sim.server_side.stats();
    let spec = &sim.spec;
    let prm = &sim.parts.params;
    let active = sim.parts.traffic.active.len() as f64;
    // A run cut short by the watchdog is measured over the part that ran.
    let simulated_end = sim.now.min(st.end);
    let measured_cycles = measured_cycles(sim);
    let h = &st.latency;
    let n = st.delivered_measured.max(1) as f64;
    let hops_mean = st.hops_sum as f64 / n;
    // The mean length of the measured packets: their zero-load latency is linear in it.
    let mean_phits = if st.delivered_measured > 0 { st.measured_packet_phits as f64 / n } else { prm.packet_phits as f64 };
    let (l, d, p) = (prm.latency as f64, (prm.pipeline_delay + prm.staging.zero_load_extra()) as f64, mean_phits);

    let Tables { links, counters, written, loads, nics } = tables;
    let (lmax, lmean, lcv) = loads.all.summary(measured_cycles);

    let generated_load = st.generated_measured_phits as f64 / (active * measured_cycles);
    let ml = &st.message_latency;
    let samples = sample_table(sim);
    let mut sample_cycles: Vec<u64> = samples.cycles.clone();
    sample_cycles.sort_unstable();
    let jobs = sim.server_side.workload().job_results(nic_totals);
    let pick = |q: f64| if sample_cycles.is_empty() { f64::NAN } else { sample_cycles[((q * sample_cycles.len() as f64).ceil() as usize).clamp(1, sample_cycles.len()) - 1] as f64 };
    let mut m = Metrics {
        // With a burst the servers offer two loads over the window: what they generated.
        offered_load: spec.traffic.load.filter(|_| spec.traffic.burst.is_none()).unwrap_or(generated_load),
        generated_load,
        accepted_load: st.ejected_window_phits as f64 / (active * measured_cycles),
        packet_latency_mean: h.mean(),
        packet_latency_p50: h.quantile(0.5),
        packet_latency_p99: h.quantile(0.99),
        packet_latency_max: if h.count() > 0 { h.max() as f64 } else { f64::NAN },
        network_latency_mean: st.network_latency_sum as f64 / n,
        queueing_latency_mean: st.queueing_latency_sum as f64 / n,
        hops_mean,
        nonminimal_fraction: st.nonminimal_measured as f64 / n,
        per_mode: per_mode(st),
        per_link_class: per_link_class(&loads, measured_cycles),
        // Links of other latency than link.latency ([link.<class>]) add their difference.
        zero_load_latency: (hops_mean + 2.0) * l + st.extra_link_latency_sum as f64 / n + (hops_mean + 1.0) * (d + 1.0) + p - 1.0,
        packets_generated: st.packets_generated,
        packets_injected: nics.injected,
        packets_delivered: st.packets_delivered,
        packets_measured_delivered: st.delivered_measured,
        packets_in_flight_end: nics.injected - st.packets_delivered,
        packets_queued_end: st.packets_generated - nics.injected,
        packets_dropped_at_source: st.packets_dropped_at_source,
        phits_generated: st.phits_generated,
        phits_delivered: st.phits_delivered,
        phits_in_flight_end: cons.phits_in_flight,
        phits_queued_end: cons.phits_queued,
        phit_hops: sim.phit_hops,
        phits_conserved: cons.phits_conserved,
        credits_conserved: cons.credits_conserved,
        deadlock: sim.deadlock.is_some(),
        deadlock_cycle: sim.deadlock.as_ref().map(|d| d.0),
        deadlock_where: sim.deadlock.as_ref().map(|d| d.1.clone()).unwrap_or_default(),
        cycles: simulated_end,
        warmup: st.warmup,
        switches: sim.parts.topo.num_switches() as u64,
        servers: sim.parts.servers.num_servers() as u64,
        active_servers: active as u64,
        wall_seconds: wall,
        router_cycles_per_second: sim.parts.topo.num_switches() as f64 * simulated_end as f64 / wall.max(1e-9),
        phits_moved_per_second: sim.phit_hops as f64 / wall.max(1e-9),
        link_load_max: lmax,
        link_load_mean: lmean,
        link_load_cv: lcv,
        messages_measured_delivered: ml.count(),
        message_latency_mean: ml.mean(),
        message_latency_p50: ml.quantile(0.5),
        message_latency_p99: ml.quantile(0.99),
        message_latency_max: if ml.count() > 0 { ml.max() as f64 } else { f64::NAN },
        acks_measured_delivered: st.ack_latency.count(),
        ack_latency_mean: st.ack_latency.mean(),
        packets_out_of_order: st.packets_out_of_order,
        reorder_delay_mean: if st.reorder_released > 0 { st.reorder_delay_sum as f64 / st.reorder_released as f64 } else { 0.0 },
        reorder_buffer_max: st.reorder_buffer_max,
        // With [[jobs]] the [workload] table is ignored: the jobs are the workload.
        workload: if spec.jobs.is_empty() { spec.workload.kind.clone() } else { jobs_workload(&spec.jobs) },
        workload_complete: if spec.jobs.is_empty() { sim.finished_early || crate::workload::is_open_loop(spec) } else { all_jobs_finished(&jobs) },
        samples: samples.cycles.len() as u64,
        sample_cycles_mean: if sample_cycles.is_empty() { f64::NAN } else { sample_cycles.iter().sum::<u64>() as f64 / sample_cycles.len() as f64 },
        sample_cycles_p50: pick(0.5),
        sample_cycles_p99: pick(0.99),
        sample_phits_per_cycle_mean: if samples.cycles.is_empty() { f64::NAN } else { samples.phits_per_cycle.iter().sum::<f64>() / samples.cycles.len() as f64 },
        hops_max: st.hops_count.len().saturating_sub(1) as u64,
        ..Default::default()
    };
    if let Some(v) = &cons.first_violation {
        m.deadlock_where = if m.deadlock_where.is_empty() { format!("conservation violated: {v}") } else { format!("{}; conservation violated: {v}", m.deadlock_where) };
    }
    if let (Some(gbs), Some(cycle_ns)) = (prm.fastest_gbytes_per_s, spec.cycle_ns(prm.fastest_gbytes_per_s)) {
        m.cycle_ns = Some(cycle_ns);
        m.packet_latency_mean_us = Some(m.packet_latency_mean * cycle_ns / 1000.0);
        m.packet_latency_p99_us = Some(m.packet_latency_p99 * cycle_ns / 1000.0);
        m.accepted_gbytes_per_s = Some(m.accepted_load * gbs);
        m.message_latency_mean_us = Some(m.message_latency_mean * cycle_ns / 1000.0);
        m.ack_latency_mean_us = Some(m.ack_latency_mean * cycle_ns / 1000.0);
        m.sample_mean_us = Some(m.sample_cycles_mean * cycle_ns / 1000.0);
        m.sample_gbytes_per_s_mean = Some(m.sample_phits_per_cycle_mean * gbs);
    }

    let bins = h.bins();
    let latency_histogram = HistogramTable {
        lower: bins.iter().map(|b| b.0).collect(),
        upper: bins.iter().map(|b| b.1).collect(),
        count: bins.iter().map(|b| b.2).collect(),
    };

    let bc = st.bin_cycles;
    let nbins = simulated_end.div_ceil(bc) as usize;
    let mut temporal = Temporal { bin_cycles: bc, ..Default::default() };
    // Bins after the last event were never made: they are empty.
    let empty = crate::stats::Bin::default();
    for i in 0..nbins {
        let b = st.bins.get(i).unwrap_or(&empty);
        let start = i as u64 * bc;
        let width = (start + bc).min(simulated_end) - start;
        let denom = active * width as f64;
        temporal.start.push(start);
        temporal.measured.push(start >= st.warmup);
        temporal.offered_load.push(b.generated_phits as f64 / denom);
        temporal.accepted_load.push(b.ejected_phits as f64 / denom);
        temporal.latency_mean.push(if b.delivered > 0 { b.latency_sum as f64 / b.delivered as f64 } else { f64::NAN });
        let routed = b.injected_delivered as f64;
        temporal.nonminimal_fraction.push(if routed > 0.0 { b.injected_nonminimal as f64 / routed } else { f64::NAN });
    }

    let measured: Vec<f64> = temporal.accepted_load.iter().zip(&temporal.measured).filter(|(_, &m)| m).map(|(&a, _)| a).collect();
    // The last bin may be partial; judge full bins only.
    let full = if simulated_end.is_multiple_of(bc) { measured.len() } else { measured.len().saturating_sub(1) };
    let (category, drop, dips) = crate::stats::stability::classify(&measured[..full]);
    m.stability_category = category;
    m.stability_drop = drop;
    m.stability_dips = dips;

    let topo = sim.parts.topo.as_ref();
    // Written with the rows (`topology.json`) when they went to files.
    let switch_coords = if topo.dims().is_empty() || !written.is_empty() { Vec::new() } else { (0..topo.num_switches()).map(|s| topo.coordinates(s)).collect() };
    m.nic_stalls_per_flit = crate::nic::stalls_per_flit(nics.stalled_cycles, nics.request_flits);
    m.nic_request_latency_mean = crate::nic::request_latency_mean(nics.request_latency, nics.responses_received_measured);
    m.requests_sent = nics.requests_sent;
    m.responses_sent = nics.responses_sent;
    m.responses_received = nics.responses_received;
    m.outstanding_max = nics.outstanding_max;
    let hop_histogram = HopTable { hops: (0..st.hops_count.len() as u32).collect(), packets: st.hops_count.clone() };
    RunResult { metrics: m, latency_histogram, temporal, links, switch_coords, dims: topo.dims(), counters, samples, hop_histogram, jobs, written }
}

/// `metrics.workload` of a run with `[[jobs]]`: their motifs in the file's order, the
/// background marked, e.g. `jobs: halo3d+allreduce(bg)` (the `[workload]` table is ignored).
fn jobs_workload(jobs: &[crate::spec::JobSpec]) -> String {
    let motifs: Vec<String> = jobs.iter().map(|j| if j.background { format!("{}(bg)", j.workload.motif) } else { j.workload.motif.clone() }).collect();
    format!("jobs: {}", motifs.join("+"))
}

/// `metrics.workload_complete` of a run with `[[jobs]]`: every application job that runs a
/// program did all its iterations (the background and open-loop jobs never end).
fn all_jobs_finished(results: &[JobResult]) -> bool {
    results.iter().filter(|j| !j.background && !crate::workload::is_open_loop_motif(&j.motif)).all(|j| j.complete)
}

/// One row per round trip (ping_pong) or window (bandwidth), with physical units if known.
fn sample_table(sim: &Simulation) -> SampleTable {
    let spec = &sim.spec;
    let bytes_per_phit = spec.bytes_per_phit();
    let cycle_ns = spec.cycle_ns(sim.parts.params.fastest_gbytes_per_s);
    let mut t = SampleTable::default();
    // By the cycle each ended, then its pair: the order one process records them in but for
    // samples ending in one cycle, whose order would otherwise be the ranks' (MPI ranks
    // record their own senders' samples).
    let mut samples: Vec<_> = sim.server_side.samples().iter().collect();
    samples.sort_by_key(|s| (s.start + s.cycles, s.src, s.dst, s.iteration));
    for s in samples {
        t.src.push(s.src);
        t.dst.push(s.dst);
        t.iteration.push(s.iteration);
        t.start.push(s.start);
        t.cycles.push(s.cycles);
        t.phits.push(s.phits);
        t.phits_per_cycle.push(s.phits as f64 / s.cycles.max(1) as f64);
        t.message_cycles.push(s.message_cycles);
        let c = &s.counters;
        t.request_packets.push(c.request_packets.into());
        t.request_flits.push(c.request_flits.into());
        t.stalls_per_flit.push(c.stalls_per_flit());
        t.request_latency_mean.push(c.request_latency_mean());
        t.model_cycles.push(c.model_cycles());
        if let (Some(ns), Some(bpp)) = (cycle_ns, bytes_per_phit) {
            t.us.push(s.cycles as f64 * ns / 1000.0);
            // bytes per ns = GB/s
            t.gbytes_per_s.push(s.phits as f64 * bpp / (s.cycles.max(1) as f64 * ns));
        }
    }
    t
}

/// Mean and largest load of each link class's channels.
fn per_link_class(loads: &Loads, measured_cycles: f64) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for (class, l) in &loads.by_class {
        let (max, mean, _) = l.summary(measured_cycles);
        out.insert(format!("link_load_mean_{class}"), mean);
        out.insert(format!("link_load_max_{class}"), max);
    }
    out
}

/// The per-mode packet counts and non-minimal fractions of the modes that carried packets.
fn per_mode(st: &crate::stats::Stats) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for (code, &(packets, nonminimal)) in st.by_mode.iter().enumerate() {
        let Some(mode) = crate::routing::AriesMode::from_code(code as u8) else { continue };
        if packets > 0 {
            out.insert(format!("packets_{}", mode.name()), packets as f64);
            out.insert(format!("nonminimal_fraction_{}", mode.name()), nonminimal as f64 / packets as f64);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(motif: &str, background: bool, complete: bool) -> JobResult {
        JobResult { motif: motif.into(), background, complete, ..Default::default() }
    }

    #[test]
    fn a_jobs_run_is_complete_when_every_program_job_finished() {
        assert!(all_jobs_finished(&[job("allreduce", false, true), job("bernoulli", true, false)]));
        assert!(!all_jobs_finished(&[job("allreduce", false, false), job("halo3d", false, true)]));
        // Open-loop traffic as the application runs until run.cycles: nothing to be late.
        assert!(all_jobs_finished(&[job("bernoulli", false, false)]));
    }
}
