//! The memory a run needs, estimated before anything large is allocated, so that a run that
//! cannot fit is refused with a clear error instead of the allocator aborting the process
//! (and with it a Python session). The formula is in docs/model.md, with how close it comes
//! to the measured peak; every size is taken from the engine's own types.

use crate::error::{SpecError, SpecResult};
use crate::spec::{FlowControl, Spec};
use crate::topology::Topology;
use std::mem::size_of;

mod limit;
pub use limit::{available, available_in, parse_size, parse_size_for, refuses, Root, MAX_MEMORY_VAR, MEMORY_CHECK_VAR, SIZE_FORMS};

/// One part of the estimate, and the key that sets its size.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub what: String,
    pub key: &'static str,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// What the run adds to the process.
    pub parts: Vec<Part>,
    /// What the process holds already (its resident memory when the estimate was made): part
    /// of its peak, but not of what must still be available.
    pub held: u64,
}

impl Estimate {
    /// The process's peak: what it holds and what the run adds.
    pub fn total(&self) -> u64 {
        self.held.saturating_add(self.run())
    }

    /// What the run adds, which must fit in the memory available.
    pub fn run(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).fold(0u64, u64::saturating_add)
    }

    pub fn largest(&self) -> &Part {
        self.parts.iter().max_by_key(|p| p.bytes).expect("an estimate has parts")
    }
}

/// The program, its libraries and stack, when the process's own resident memory cannot be
/// read.
const BASELINE: u64 = 4 << 20;

/// The process's resident memory now.
pub fn resident() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(BASELINE, |kb| kb * 1024)
}
/// Bytes per row of the result tables once written as JSON (numbers as text).
const JSON_PER_NUMBER: u64 = 12;

/// Capacity a growing vector reaches for `n` items (it doubles).
fn grown(n: u64) -> u64 {
    n.max(1).checked_next_power_of_two().unwrap_or(u64::MAX)
}

fn times(a: u64, b: u64) -> u64 {
    a.saturating_mul(b)
}

/// Of the packets the input buffers on the servers' paths can hold, the share alive in a
/// saturated network, as (numerator, denominator): measured on saturated tori, HyperX,
/// Dragonfly and fat-trees (docs/benchmark-log.md).
const ALIVE_OF_BUFFERED: (u64, u64) = (2, 5);

/// What the run described by `spec` on `topo` needs, in bytes, part by part.
pub fn estimate(spec: &Spec, topo: &dyn Topology) -> Estimate {
    estimate_on_ranks(spec, topo, 1)
}

/// What rank 0 of the run over `ranks` MPI ranks needs (engine/ranks), the largest of its
/// ranks: the state of its share of the switches and their servers; the tables every rank
/// keeps of the whole network (ports and server numbering where switches differ, the
/// traffic's tables, the workload's per server); and at the end what the other ranks send
/// it, one at a time, as it writes the result's rows. One rank is the one-process run, which
/// holds the result's tables.
pub fn estimate_on_ranks(spec: &Spec, topo: &dyn Topology, ranks: usize) -> Estimate {
    use crate::router::{Entry, OutEntry, Port, Vc};
    let all = topo.num_switches() as u64;
    let held = super::parallel::Partition::new(ranks.clamp(1, topo.num_switches().max(1)), topo.num_switches()).range(0);
    let n = held.len() as u64;
    let (mut net_ports, mut servers, mut max_ports) = (0u64, 0u64, 0u64);
    let (mut all_net_ports, mut all_servers) = (0u64, 0u64);
    let mut server_ports_dominate = false;
    for s in 0..topo.num_switches() {
        let (np, sp) = (topo.network_ports(s) as u64, topo.servers_at(s) as u64);
        all_net_ports += np;
        all_servers += sp;
        max_ports = max_ports.max(np + sp);
        server_ports_dominate |= sp > np;
        if held.contains(&s) {
            net_ports += np;
            servers += sp;
        }
    }
    let ports = net_ports + servers;
    let all_ports = all_net_ports + all_servers;
    let vcs = spec.router.vcs as u64;
    let nvc = times(ports, vcs);
    let p = spec.packet.phits as u64;
    let (in_slots, out_slots) = crate::params::buffer_slots(spec);
    let (in_slots, out_slots) = (in_slots as u64, out_slots as u64);
    // Flits of the packets that make most of the traffic, for the events of a cycle.
    let flit = if spec.flow_control() == FlowControl::Wormhole { 1 } else { p };
    let size_key = match topo.kind() {
        "dragonfly" | "dragonfly_plus" => "topology.groups",
        "fat_tree" => "topology.levels",
        _ => "topology.dims",
    };
    let port_key = if server_ports_dominate { "topology.servers_per_switch" } else { size_key };
    let words = |bits: u64| bits.div_ceil(64).max(1);
    let rng = size_of::<crate::routing::Rng>() as u64;
    // What the allocators chosen keep beside the records: per port the accept pointer of
    // an allocator that matches every request, and (heads waiting out a pipeline delay) the
    // cycle before which none may ask; per VC iSLIP's accept pointer and LRU's list entry.
    let (sw, va) = (spec.switch_allocator(), spec.vc_allocator());
    let per_port_extra = if sw.matches_all_requests() { 2 } else { 0 } + if spec.router.pipeline_delay > 0 { 4 } else { 0 };
    let per_vc_extra = if matches!(va, crate::allocation::VcAllocator::Islip { .. }) { 2 } else { 0 } + if sw == crate::allocation::SwitchAllocator::Lru { 2 } else { 0 };

    let mut parts = vec![
        // Ports (with their link's timing and phit counter), VCs; where each switch's ports
        // start and how many face the network, on every rank, where switches differ.
        Part {
            what: format!("state of {n} switches, {ports} ports and {nvc} VCs"),
            key: port_key,
            bytes: crate::router::Routers::network_table_bytes_for(topo) + times(n, 8 + 32 * words(max_ports) + rng)
                + times(ports, size_of::<Port>() as u64 + per_port_extra)
                + times(nvc, size_of::<Vc>() as u64 + per_vc_extra),
        },
        // The flits behind each VC's front (the front is in the VC's record).
        Part { what: "input buffers".into(), key: buffer_key(spec, "input"), bytes: times(times(nvc, in_slots.saturating_sub(1)), size_of::<Entry>() as u64) },
        Part { what: "output buffers".into(), key: buffer_key(spec, "output"), bytes: times(times(nvc, out_slots.saturating_sub(1)), size_of::<OutEntry>() as u64) },
        // A bit per input VC of the switch for every output VC: quadratic in the radix.
        Part {
            what: format!("VC-allocation waiter bits ({max_ports} ports x {vcs} VCs per switch, squared)"),
            key: if server_ports_dominate { "topology.servers_per_switch" } else { "router.vcs" },
            bytes: times(times(nvc, crate::router::waiter_words(max_ports as usize, vcs as usize) as u64), size_of::<crate::router::WaiterWord>() as u64),
        },
    ];

    // Routing that reads other switches' ports keeps every port's backlog, on every rank,
    // and for its own ports their queues as last read and a mark of those to read again.
    if crate::routing::algorithm(spec).is_ok_and(|a| a.reads_remote_queues()) {
        parts.push(Part { what: format!("backlogs of the network's {all_ports} ports for routing"), key: "routing.algorithm", bytes: times(all_ports, 4) + times(ports, 4 + 1) });
    }

    // Packets alive at saturation: the share `ALIVE_OF_BUFFERED` of the packets the buffers
    // they can reach hold. Those are the input buffers of the network ports, but no more than
    // the servers can reach: a buffer's packets at each hop of a path of up to twice the
    // diameter (on a low-diameter network with many ports per server, such as a HyperX or a
    // fat-tree, the servers' paths cover fewer buffers than the network has). The arena is
    // reserved up front, so only the packets alive take memory; plus the two made at each NIC.
    // Each with its candidates (beside it when the routing may offer more than it holds).
    let buffer_packets = spec.input_buffer_phits() as u64 / p;
    let packet_slots = times(times(net_ports, vcs), buffer_packets);
    let path = 2 * topo.diameter() as u64 + 1;
    let reachable = packet_slots.min(times(servers, times(path, buffer_packets.max(1))));
    let live = reachable / ALIVE_OF_BUFFERED.1 * ALIVE_OF_BUFFERED.0 + 2 * servers;
    parts.push(Part { what: "packets in flight".into(), key: buffer_key(spec, "input"), bytes: times(live, crate::packet::Arena::bytes_per_packet(crate::routing::max_candidates(spec, topo)) as u64) });

    // NICs, their credits, two sets of counters (the window's and the run's), source-queue
    // headers, reorder counts and a workload timer, for the servers held; and on every rank,
    // what is kept for the whole network: the server numbering where it is not arithmetic,
    // the traffic's tables, and the workload's per server (a periodic workload's counts, the
    // jobs' owner of each server). The random streams and the jobs' programs are the servers
    // held's, or every server's where a workload runs whole on every rank.
    let held_per_server = size_of::<crate::nic::Nic>() + 2 * size_of::<crate::nic::Counters>() + 4 * spec.router.vcs + super::server_side::BACKLOG_BYTES + 4 + 8;
    let network_tables = crate::topology::ServerMap::bytes_for(topo) + crate::traffic::table_bytes(spec, all_servers, all) + crate::workload::table_bytes(spec, all_servers);
    let streams = if crate::workload::servers_independent(spec) { servers } else { all_servers };
    let programs = times(streams, crate::workload::program_bytes(spec));
    parts.push(Part { what: "NICs".into(), key: "topology.servers_per_switch", bytes: times(servers, held_per_server as u64) + network_tables + times(streams, rng) + programs });
    // On ranks: the deliveries kept for other ranks' NICs, at most one (source, window)
    // entry a server held before they go (`RankView::deliveries_due`), in a hash map.
    if ranks > 1 {
        parts.push(Part { what: "deliveries kept for other ranks' NICs".into(), key: "ranks", bytes: times(servers, 64) });
    }

    let (queue, packets, limited) = source_queue(spec, servers);
    let key = match (limited, server_ports_dominate) {
        (true, _) => "nic.source_queue_limit",
        (false, true) => "topology.servers_per_switch",
        (false, false) => "run.cycles",
    };
    parts.push(Part { what: format!("source queues ({servers} servers x up to {packets} packets waiting)"), key, bytes: queue });

    // Calendar: the events of a cycle (a flit and a credit per port every flit time; a list
    // keeps the capacity it once needed) and, per slot of the wheel, the switches and NICs to
    // visit (a bit each, a summary bit per 64 and a count). The wheel spans the furthest
    // event (a credit after a whole packet's tail on the slowest link); but only the cycles
    // that may have events pending hold a list: a link's latency, a flit and the pipeline
    // ahead. Under wormhole a flit is a phit, so long packets do not widen that window.
    let timings = crate::link::ClassTimings::build(spec, topo).ok();
    let latency = timings.as_ref().map_or(spec.link.latency as u64, |t| t.max_latency() as u64);
    let packet_cycles = timings.as_ref().map_or(p, |t| t.max_cycles(p));
    let flit_cycles = timings.as_ref().map_or(flit, |t| t.max_cycles(flit));
    let delay = spec.router.pipeline_delay as u64;
    let wheel = (latency + packet_cycles + delay + 4 + 2).next_power_of_two().max(64);
    let pending = (latency + flit_cycles + delay + 4 + 2).min(wheel);
    let due = |items: u64| crate::calendar::Calendar::due_bytes_per_slot(items as usize);
    let lists = times(pending, times(grown((2 * ports).div_ceil(flit)), size_of::<crate::calendar::Event>() as u64));
    // The wheels of visits hold a rank's own switches and NICs.
    let per_slot = due(n) + due(servers);
    let calendar_key = if lists > times(wheel, per_slot) { "link.latency" } else { size_key };
    parts.push(Part { what: format!("event calendar ({pending} cycles of events, a wheel of {wheel})"), key: calendar_key, bytes: lists + times(wheel, per_slot) + times(n + servers, 4) });

    // Walking a cycle block by block (engine/blocks.rs), on each thread: the cycle's events
    // picked out with their blocks (8 bytes each) and grouped by block (4), and per switch of
    // its range a block start and its lists of switches its deliveries need stepped and of
    // switches to step, 4 bytes each.
    let cycle_events = grown((2 * ports).div_ceil(flit));
    let walk = times(cycle_events, 12) + times(grown(n), 12);
    // Threads of one run (engine/parallel.rs): each one's outbox holds, for one cycle, 8
    // bytes per switch it stepped and per arrival it delivered (wake-ups) and the events the
    // steps made, in a list per distance ahead (arrivals at one, credits and ejections at
    // about a packet's length: each list at most a cycle's events, grown to a power of two,
    // two such lists counted), and its stack's touched pages; the NICs' events held back
    // while the switches step are at most one per server.
    // A rank splits its own switches among its threads.
    let threads = super::parallel::threads_at_most(spec.run.threads, held.len(), ports as usize) as u64;
    if threads > 1 {
        let event = size_of::<crate::calendar::Event>() as u64;
        let held_back = size_of::<(u64, crate::calendar::Event)>() as u64;
        let events = times(2 * cycle_events, event) + times(grown(servers), held_back) + times(cycle_events, 8);
        parts.push(Part { what: format!("{threads} threads' outboxes"), key: "run.threads", bytes: times(grown(n), 8) + events + walk + times(threads, 64 << 10) });
    } else {
        parts.push(Part { what: "a cycle's events grouped by block of switches".into(), key: size_key, bytes: walk });
    }

    let end = run_length(spec);
    let bins = end.div_ceil(spec.run.temporal_bin.max(1));
    // Per bin: the counters (a vector grown as the run reaches them), then the result's five
    // columns and their JSON.
    parts.push(Part {
        what: format!("{bins} load-over-time bins"),
        key: "run.temporal_bin",
        bytes: times(grown(bins), size_of::<crate::stats::Bin>() as u64) + times(bins, 33 + 5 * JSON_PER_NUMBER),
    });
    parts.extend(jobs_parts(spec));
    parts.extend(matrix_part(spec));
    // The three latency histograms, exact to 65536 cycles.
    let histograms = times(3 * end.min(1 << 16), 8);
    if ranks > 1 {
        // Rank 0 writes the rows as each rank's end comes (engine/rows.rs), holding one
        // other rank's end at a time (they come in turn, as received and as decoded): its
        // ports' phit counts, its servers' window counters and most requests outstanding,
        // its conservation counts (8 bytes a VC of its share); and where jobs read them,
        // every server's run-wide counters, which each end adds to.
        let counters = size_of::<crate::nic::Counters>() as u64;
        let jobs = !spec.jobs.is_empty();
        let other = times(ports, 4) + times(servers, counters + 4 + if jobs { counters } else { 0 }) + times(nvc, 8);
        parts.push(Part { what: format!("the result's histograms and file buffers, and the ends of {} other ranks, one at a time", ranks - 1), key: "ranks", bytes: histograms + times(other, 2) + 3 * super::rows::FILE_BUFFER as u64 });
        if jobs {
            parts.push(Part { what: format!("run-wide NIC counters of the network's {all_servers} servers, for the jobs' results"), key: "jobs", bytes: times(all_servers, counters) });
        }
    } else {
        // Result tables: a row per switch-to-switch channel (7 columns), per server (5 NIC
        // counters), per switch (its coordinates), each in memory and as JSON.
        let dims = topo.dims().len() as u64;
        let result = histograms + times(all_net_ports, 40 + 7 * JSON_PER_NUMBER) + times(all_servers, 40 + 5 * JSON_PER_NUMBER) + times(all, 24 + dims * (8 + JSON_PER_NUMBER));
        parts.push(Part { what: "result tables".into(), key: "run", bytes: result });
    }
    Estimate { parts, held: resident() }
}

fn buffer_key(spec: &Spec, which: &str) -> &'static str {
    match (which, spec.router.input_buffer_phits.is_some(), spec.router.output_buffer_phits.is_some()) {
        ("input", true, _) => "router.input_buffer_phits",
        ("input", false, _) => "router.input_buffer",
        (_, _, true) => "router.output_buffer_phits",
        _ => "router.output_buffer",
    }
}

/// Bytes of one server's source queue at its largest: every message the run may generate
/// there still waiting (nothing sent), capped by `nic.source_queue_limit`; with the packets
/// that makes and whether the cap bounds it. One-packet messages nobody tracks take an
/// 8-byte slot; others take three and a message record.
fn source_queue(spec: &Spec, servers: u64) -> (u64, u64, bool) {
    let end = run_length(spec);
    let packets_per_message = spec.packets_per_message().max(1) as u64;
    let limit = spec.nic.source_queue_limit;
    if !spec.jobs.is_empty() {
        // Each job's ranks: a Bernoulli job's all it generates (its `load` over the run),
        // another's a window of messages, since its sends wait on receives.
        let (mut bytes, mut most, mut limited) = (0u64, 0u64, false);
        for j in &spec.jobs {
            let generated = if crate::workload::is_open_loop_motif(&j.workload.motif) {
                let load = j.workload.motif_keys.get("load").and_then(|v| v.as_f64()).unwrap_or(1.0).clamp(0.0, 1.0);
                (load * end as f64 / spec.packet.phits.max(1) as f64).ceil() as u64
            } else {
                JOB_WINDOW_PACKETS
            };
            let queued = generated.min(limit);
            let job_bytes = j.workload.motif_keys.get("bytes").and_then(|v| v.as_f64());
            let per_message = match (job_bytes, spec.packet.bytes) {
                (Some(m), Some(p)) if p > 0.0 => (m / p).ceil().clamp(1.0, 1e12) as u64,
                _ => packets_per_message,
            };
            bytes = bytes.saturating_add(times(j.ranks as u64, queue_bytes(queued, per_message, true)));
            most = most.max(queued);
            limited |= generated > limit;
        }
        return (bytes, most, limited);
    }
    let open_loop = crate::workload::is_open_loop(spec);
    let generated = if open_loop {
        (spec.traffic.load.unwrap_or(1.0) * end as f64 / spec.packet.phits as f64).ceil() as u64
    } else {
        crate::workload::packets_at_once(spec)
    };
    let queued = generated.min(limit);
    let tracked = packets_per_message > 1 || !open_loop;
    (times(servers, queue_bytes(queued, packets_per_message, tracked)), queued, generated > limit)
}

/// One source queue of `queued` packets: one-packet messages nobody tracks take an 8-byte
/// slot; others three and a message record.
fn queue_bytes(queued: u64, packets_per_message: u64, tracked: bool) -> u64 {
    if tracked {
        let messages = queued.div_ceil(packets_per_message);
        times(grown(times(messages, 3)), 8) + times(messages, size_of::<crate::message::Message>() as u64 + 4)
    } else {
        times(grown(queued), 8)
    }
}

/// Cycles the run's growing parts are counted for: warm-up and cycles, but a run of jobs
/// that ends when they do (its `run.cycles` only a cap, often a huge one) for at most
/// `CLOSED_LOOP_CYCLES`.
fn run_length(spec: &Spec) -> u64 {
    let end = spec.run.warmup.saturating_add(spec.run.cycles);
    let closed = !spec.jobs.is_empty() || !crate::workload::is_open_loop(spec);
    if closed {
        end.min(CLOSED_LOOP_CYCLES)
    } else {
        end
    }
}

/// How long a run that ends with its jobs is counted for: such runs last a few million
/// cycles; their bins are calloc'd, so only the cycles run take memory.
const CLOSED_LOOP_CYCLES: u64 = 1 << 24;

/// What a rank of a closed-loop job has waiting at most, as measured: its sends wait on
/// receives, so a few messages.
const JOB_WINDOW_PACKETS: u64 = 64;

/// The jobs' own state: per rank its program and counters, the ops of a trace as loaded,
/// and the calls of `timeline = true`.
fn jobs_parts(spec: &Spec) -> Vec<Part> {
    if spec.jobs.is_empty() {
        return Vec::new();
    }
    let ranks: u64 = spec.jobs.iter().map(|j| j.ranks as u64).sum();
    let mut parts = vec![Part { what: format!("{ranks} ranks of {} jobs", spec.jobs.len()), key: "jobs.ranks", bytes: times(ranks, PER_RANK) }];
    let trace: u64 = spec
        .jobs
        .iter()
        .filter_map(|j| j.workload.motif_keys.get("trace").and_then(|v| v.as_str()))
        .map(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
        .sum();
    if trace > 0 {
        parts.push(Part { what: "the traces' operations".into(), key: "jobs.workload.trace", bytes: times(trace, TRACE_BYTES_PER_FILE_BYTE) });
    }
    let timeline: u64 = spec
        .jobs
        .iter()
        .filter(|j| j.timeline)
        .map(|j| times(times(j.ranks as u64, j.workload.iterations as u64), CALLS_PER_ITERATION))
        .sum();
    if timeline > 0 {
        parts.push(Part { what: format!("{timeline} timeline calls"), key: "jobs.timeline", bytes: times(timeline, size_of::<crate::stats::jobs::Call>() as u64) });
    }
    parts
}

/// A traffic matrix's rows (`traffic.matrix`): while a `.npy` is read its numbers are held
/// once as 8-byte floats beside the rows built from them; a CSV weight above zero takes at
/// least two bytes of text ("1,").
fn matrix_part(spec: &Spec) -> Option<Part> {
    let path = spec.traffic.pattern_keys.get("matrix").and_then(|v| v.as_str())?;
    let bytes = std::fs::metadata(path).ok()?.len();
    let per_file_byte = if path.ends_with(".npy") { MATRIX_BYTES_PER_NPY_BYTE } else { MATRIX_BYTES_PER_CSV_BYTE };
    Some(Part { what: "the traffic matrix's rows".into(), key: "traffic.matrix", bytes: times(bytes, per_file_byte) })
}

/// A row keeps 16 bytes per destination above zero (its number and the alias table's
/// probability and alias). A `.npy` is read whole first, and 4-byte numbers are widened to
/// 8: per 4 bytes of file, 4 + 8 while reading and 16 in the rows.
const MATRIX_BYTES_PER_NPY_BYTE: u64 = 7;
/// A CSV weight above zero is at least 2 bytes of file.
const MATRIX_BYTES_PER_CSV_BYTE: u64 = 8;

/// A rank's program state, counters and iteration times (a few hundred bytes).
const PER_RANK: u64 = 1024;
/// A converted trace's records are decoded into ops about the size they are stored in.
const TRACE_BYTES_PER_FILE_BYTE: u64 = 2;
/// Calls a rank records per iteration with `timeline = true` (sends, waits, compute).
const CALLS_PER_ITERATION: u64 = 32;

/// Bytes in binary units, named as such (docs/model.md keeps MB for 10^6 bytes).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// Refuse a run whose estimate exceeds `available` bytes, naming the key of its largest part.
pub fn check_fits(spec: &Spec, topo: &dyn Topology, available: Option<u64>) -> SpecResult<()> {
    check_fits_on_ranks(spec, topo, available, 1)
}

/// `check_fits` for one rank of a run over `ranks` MPI ranks (`estimate_on_ranks`).
pub fn check_fits_on_ranks(spec: &Spec, topo: &dyn Topology, available: Option<u64>, ranks: usize) -> SpecResult<()> {
    let Some(avail) = available else { return Ok(()) };
    let est = estimate_on_ranks(spec, topo, ranks);
    let total = est.run();
    if total <= avail {
        return Ok(());
    }
    let big = est.largest();
    refuse_or_warn(SpecError::new(
        big.key,
        value_of(spec, big.key),
        format!(
            "the run needs about {} of memory, more than the {} available; largest part: {}, {} (docs/model.md gives the estimate, made for a saturated network; {MEMORY_CHECK_VAR}=warn runs it anyway)",
            human(total),
            human(avail),
            big.what,
            human(big.bytes)
        ),
    ))
}

/// `Err(refusal)`, or with `HOPSIM_MEMORY_CHECK=warn` the refusal said as a warning and `Ok`.
pub fn refuse_or_warn(refusal: SpecError) -> SpecResult<()> {
    if refuses()? {
        return Err(refusal);
    }
    eprintln!("hopsim: warning: {refusal}; going on ({MEMORY_CHECK_VAR}=warn)");
    Ok(())
}

/// The value of one of the keys an estimate names, as the experiment file gives it.
fn value_of(spec: &Spec, key: &str) -> String {
    let r = &spec.router;
    let t = &spec.topology;
    let opt = |v: Option<usize>| v.map(|x| x.to_string()).unwrap_or_default();
    match key {
        "topology.servers_per_switch" => opt(t.servers_per_switch),
        _ if key.starts_with("topology.") => t.given(&key["topology.".len()..]).unwrap_or_default(),
        "router.input_buffer" => r.input_buffer.to_string(),
        "router.output_buffer" => r.output_buffer.to_string(),
        "router.input_buffer_phits" => opt(r.input_buffer_phits),
        "router.output_buffer_phits" => opt(r.output_buffer_phits),
        "router.vcs" => r.vcs.to_string(),
        "nic.source_queue_limit" => spec.nic.source_queue_limit.to_string(),
        "run.cycles" => spec.run.cycles.to_string(),
        "run.temporal_bin" => spec.run.temporal_bin.to_string(),
        "link.latency" => spec.link.latency.to_string(),
        "run.threads" => opt(spec.run.threads),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::from_toml_str;

    fn est(toml: &str) -> Estimate {
        let spec = from_toml_str(toml).unwrap();
        let topo = crate::topology::build(&spec).unwrap();
        estimate(&spec, topo.as_ref())
    }

    /// The bytes of the parts whose description holds `what` (descriptions carry counts:
    /// "4096 load-over-time bins").
    fn part(e: &Estimate, what: &str) -> u64 {
        e.parts.iter().filter(|p| p.what.contains(what)).map(|p| p.bytes).sum()
    }

    /// A rank's NICs and what it keeps of the whole network: under open-loop uniform traffic
    /// on a torus nothing grows with the network beyond the rank's share (a rank of 64
    /// switches needs the same of a network twice as large), while a random permutation's
    /// table and a periodic workload's counts do.
    #[test]
    fn a_rank_keeps_of_the_whole_network_only_what_its_traffic_and_workload_declare() {
        let nics = |dims: &str, ranks: usize, more: &str| {
            let spec = from_toml_str(&format!("[topology]\nkind = \"torus\"\ndims = {dims}\n[traffic]\nload = 0.2\n{more}")).unwrap();
            let topo = crate::topology::build(&spec).unwrap();
            part(&estimate_on_ranks(&spec, topo.as_ref(), ranks), "NICs")
        };
        assert_eq!(nics("[8, 8, 8]", 8, ""), nics("[8, 8, 16]", 16, ""));
        let permutation = "pattern = \"random_permutation\"\n";
        assert_eq!(nics("[8, 8, 16]", 16, permutation) - nics("[8, 8, 8]", 8, permutation), 4 * 512);
        let periodic = "[workload]\nkind = \"periodic\"\n";
        assert_eq!(nics("[8, 8, 16]", 16, periodic) - nics("[8, 8, 8]", 8, periodic), 8 * 512);
    }

    #[test]
    fn a_protocol_s_one_flit_headers_size_the_buffers() {
        // The engine makes a slot for each flit a buffer could hold were all of the shortest
        // packet: with PUT, its one-flit headers, a fifth of a 5-phit packet.
        let base = "[topology]\nkind = \"torus\"\ndims = [4, 4]\n[packet]\nphits = 5\nbytes = 80\n[router]\ninput_buffer = 8\n";
        let plain = part(&est(base), "input buffers");
        let put = part(&est(&format!("{base}[nic]\nprotocol = \"put\"\n")), "input buffers");
        assert_eq!(put, plain * (8 * 5 - 1) / (8 - 1));
    }

    const TORUS: &str = "[topology]\nkind = \"torus\"\ndims = [8, 8, 8]\n[traffic]\nload = 1.0\n[run]\nthreads = 1\n";

    #[test]
    fn a_wormhole_calendar_does_not_grow_with_the_packet() {
        let worm = |phits: usize| est(&format!("{TORUS}[router]\nflow_control = \"wormhole\"\ninput_buffer_phits = 32\noutput_buffer_phits = 8\n[packet]\nphits = {phits}\n"));
        let (short, long) = (part(&worm(1), "event calendar"), part(&worm(256), "event calendar"));
        // Only the wheel of due switches widens, not the cycles of events pending.
        assert!(long < 2 * short, "{short} -> {long}");
    }

    #[test]
    fn packets_in_flight_grow_with_buffers_and_stop_at_what_servers_keep() {
        let buf = |n: usize| part(&est(&format!("{TORUS}[router]\ninput_buffer = {n}\n")), "packets in flight");
        assert!(buf(8) > buf(4));
        // A fat-tree's few servers cannot fill its many buffers: fewer than the share a
        // torus keeps.
        let spec = from_toml_str("[topology]\nkind = \"fat_tree\"\nk = 8\nlevels = 3\n[router]\ninput_buffer = 16\n[traffic]\nload = 1.0\n").unwrap();
        let topo = crate::topology::build(&spec).unwrap();
        let net_ports: u64 = (0..topo.num_switches()).map(|s| topo.network_ports(s) as u64).sum();
        let slots = net_ports * spec.router.vcs as u64 * 16;
        let live = part(&estimate(&spec, topo.as_ref()), "packets in flight") / size_of::<crate::packet::Packet>() as u64;
        assert!(live < slots * 2 / 5, "{live} of {slots}");
    }

    #[test]
    fn bins_grow_with_an_open_loop_run_and_a_closed_loop_run_is_counted_to_its_cap() {
        let bins = |cycles: u64| part(&est(&format!("{TORUS}[run]\ncycles = {cycles}\ntemporal_bin = 10\n").replace("[run]\nthreads = 1\n", "")), "load-over-time");
        assert!(bins(2_000_000) > 10 * bins(100_000));
        let jobs = |cycles: u64| {
            est(&format!("[topology]\nkind = \"torus\"\ndims = [4, 4]\n[traffic]\n[run]\nwarmup = 0\ncycles = {cycles}\ntemporal_bin = 10\n[[jobs]]\nname = \"a\"\nranks = 16\nworkload = {{ motif = \"allreduce\" }}\n"))
        };
        assert_eq!(part(&jobs(1_000_000_000), "load-over-time"), part(&jobs(2_000_000_000), "load-over-time"));
        // The cap: a jobs run that ends with its jobs is counted for at most 2^24 cycles.
        assert_eq!(part(&jobs(1 << 25), "load-over-time"), part(&jobs(2_000_000_000), "load-over-time"));
        assert!(part(&jobs(1 << 20), "load-over-time") < part(&jobs(1 << 25), "load-over-time"));
    }

    #[test]
    fn jobs_count_their_ranks_queues_and_timelines() {
        let run = |load: f64, timeline: bool| {
            est(&format!(
                "[topology]\nkind = \"torus\"\ndims = [8, 8]\n[packet]\nphits = 4\nbytes = 64\n[traffic]\n[run]\nwarmup = 0\ncycles = 100000\n\
                 [[jobs]]\nname = \"app\"\nranks = 32\ntimeline = {timeline}\nworkload = {{ motif = \"allreduce\", iterations = 1000 }}\n\
                 [[jobs]]\nname = \"noise\"\nranks = 32\nbackground = true\nallocation = {{ policy = \"linear\", offset = 32 }}\nworkload = {{ motif = \"bernoulli\", load = {load}, bytes = 4096 }}\n"
            ))
        };
        assert!(part(&run(0.8, false), "source queues") > 2 * part(&run(0.2, false), "source queues"));
        assert!(part(&run(0.2, false), "64 ranks") > 0);
        assert_eq!(part(&run(0.2, false), "timeline calls"), 0);
        assert!(part(&run(0.2, true), "timeline calls") > 0);
    }

    #[test]
    fn a_refusal_names_the_largest_part_in_binary_units() {
        let spec = from_toml_str(&format!("{TORUS}[router]\ninput_buffer = 512\n")).unwrap();
        let topo = crate::topology::build(&spec).unwrap();
        let e = check_fits(&spec, topo.as_ref(), Some(100_000_000)).unwrap_err();
        assert_eq!(e.key, "router.input_buffer", "{e}");
        assert!(e.allowed.contains("95.4 MiB available") && e.allowed.contains("packets in flight"), "{e}");
        // What the process holds already is not asked of the memory still free.
        let est = estimate(&spec, topo.as_ref());
        assert_eq!(est.total(), est.held + est.run());
        assert!(check_fits(&spec, topo.as_ref(), Some(est.run())).is_ok());
    }
}
