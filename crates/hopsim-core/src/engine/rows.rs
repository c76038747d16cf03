//! The result's tables of a row per network link and per server, and the sums over them
//! that the metrics need.
//!
//! One process makes the rows of all its switches and servers at once. Over MPI ranks
//! (engine/ranks) each rank sends rank 0 its links' phit counts and its servers' counters,
//! one rank after another, and rank 0 makes that rank's rows and adds its sums before
//! taking the next: the rows come in the one-process order, and the sums are exact (integers)
//! whatever the order. Rank 0 keeps the rows in memory (`Rows::Memory`, the result as one
//! process gives it), or writes them as they come to the run's files (`Rows::Files`), so
//! that it never holds a table of the whole network.

use crate::nic::Counters;
use crate::stats::csv_text::{push_float, push_int};
use crate::stats::result::CounterTable;
use crate::stats::LinkTable;
use crate::topology::Topology;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The columns of `links.csv`, in `LinkTable`'s order (a test checks it).
pub const LINK_COLUMNS: [&str; 9] = ["switch", "port", "to_switch", "to_port", "dim", "class", "direction", "phits", "load"];

/// The columns of `counters.csv`, in `CounterTable`'s order (a test checks it).
pub const COUNTER_COLUMNS: [&str; 12] = [
    "server",
    "request_flits",
    "stalled_cycles",
    "request_packets",
    "responses_received",
    "cumulative_request_latency",
    "responses_sent",
    "packets",
    "cumulative_packet_latency",
    "stalls_per_flit",
    "request_latency_mean",
    "outstanding_max",
];

/// The buffer of each file written (three: the memory estimate counts them).
pub const FILE_BUFFER: usize = 64 << 10;

/// The loads of a set of links, as exact sums of their phit counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkLoads {
    links: u64,
    phits: u128,
    squares: u128,
    max: u64,
}

impl LinkLoads {
    fn add(&mut self, phits: u64) {
        self.links += 1;
        self.phits += phits as u128;
        self.squares += (phits as u128) * (phits as u128);
        self.max = self.max.max(phits);
    }

    /// Largest load, mean load and their coefficient of variation, a load being phits per
    /// measured cycle: sd / mean = sqrt(n * sum(p^2) - sum(p)^2) / sum(p), exact up to the
    /// last division.
    pub fn summary(&self, measured_cycles: f64) -> (f64, f64, f64) {
        if self.links == 0 {
            return (0.0, 0.0, 0.0);
        }
        let n = self.links as f64;
        let spread = (self.links as u128 * self.squares - self.phits * self.phits) as f64;
        let cv = if self.phits > 0 { spread.sqrt() / self.phits as f64 } else { 0.0 };
        (self.max as f64 / measured_cycles, self.phits as f64 / (n * measured_cycles), cv)
    }
}

/// The loads of all links and of each class's.
#[derive(Debug, Default)]
pub struct Loads {
    pub all: LinkLoads,
    pub by_class: BTreeMap<&'static str, LinkLoads>,
}

/// What the metrics sum over the NICs: the measured window's counters of the active servers
/// (the paper's s and L over the run), the whole run's of every server.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct NicSums {
    pub injected: u64,
    pub request_flits: u64,
    pub stalled_cycles: u64,
    pub responses_received_measured: u64,
    pub request_latency: u64,
    pub requests_sent: u64,
    pub responses_sent: u64,
    pub responses_received: u64,
    pub outstanding_max: u64,
}

impl NicSums {
    /// The run-wide counts of the NICs `nics` holds, `injected` among them.
    pub fn of_totals(nics: &crate::nic::Nics) -> Self {
        let totals = &nics.totals;
        NicSums {
            injected: nics.injected,
            requests_sent: totals.iter().map(|c| u64::from(c.request_packets)).sum(),
            responses_sent: totals.iter().map(|c| u64::from(c.responses_sent)).sum(),
            responses_received: totals.iter().map(|c| u64::from(c.responses_received)).sum(),
            outstanding_max: nics.nics.iter().map(|n| n.outstanding_max as u64).max().unwrap_or(0),
            ..NicSums::default()
        }
    }

    /// Add another part's (the window's sums are added by `Rows::counter`).
    pub fn add(&mut self, o: &NicSums) {
        self.injected += o.injected;
        self.request_flits += o.request_flits;
        self.stalled_cycles += o.stalled_cycles;
        self.responses_received_measured += o.responses_received_measured;
        self.request_latency += o.request_latency;
        self.requests_sent += o.requests_sent;
        self.responses_sent += o.responses_sent;
        self.responses_received += o.responses_received;
        self.outstanding_max = self.outstanding_max.max(o.outstanding_max);
    }
}

/// Where the rows go (one a run: its size does not matter).
#[allow(clippy::large_enum_variant)]
pub enum Rows {
    Memory { links: LinkTable, counters: CounterTable },
    Files(Files),
}

/// `links.csv` and `counters.csv` being written, with the first error met.
pub struct Files {
    dir: PathBuf,
    links: std::io::BufWriter<std::fs::File>,
    counters: std::io::BufWriter<std::fs::File>,
    line: String,
    error: Option<WriteError>,
}

/// A file of the run's rows that could not be written, and why (a full disk, a file-size
/// limit): the Python layer reports it as it reports its own files (`OSError`).
#[derive(Debug)]
pub struct WriteError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.error)
    }
}

/// The run's files written by the engine, by name (`RunResult::written`).
pub type Written = BTreeMap<String, String>;

fn create(path: &Path, header: &[&str]) -> std::io::Result<std::io::BufWriter<std::fs::File>> {
    let mut w = std::io::BufWriter::with_capacity(FILE_BUFFER, std::fs::File::create(path)?);
    writeln!(w, "{}", header.join(","))?;
    Ok(w)
}

impl Rows {
    pub fn in_memory() -> Self {
        Rows::Memory { links: LinkTable::default(), counters: CounterTable::default() }
    }

    /// Rows written to `links.csv` and `counters.csv` in `dir` (an existing folder).
    pub fn to_files(dir: &Path) -> Result<Self, WriteError> {
        let open = |name: &str, header: &[&str]| create(&dir.join(name), header).map_err(|error| WriteError { path: dir.join(name), error });
        Ok(Rows::Files(Files { dir: dir.to_path_buf(), links: open("links.csv", &LINK_COLUMNS)?, counters: open("counters.csv", &COUNTER_COLUMNS)?, line: String::new(), error: None }))
    }

    /// The rows of the links leaving `switches`, whose phit counts `phits_of(switch, port)`
    /// gives, their loads added to `loads`.
    pub fn links(&mut self, topo: &dyn Topology, switches: std::ops::Range<usize>, phits_of: impl Fn(usize, usize) -> u32, measured_cycles: f64, loads: &mut Loads) {
        for s in switches {
            for p in 0..topo.network_ports(s) {
                let Some(to) = topo.neighbour(s, p) else { continue };
                let phits = phits_of(s, p) as u64;
                let class = topo.link_class(s, p).name();
                let dim = topo.port_dimension(s, p).map_or(-1, |d| d as i32);
                let direction = topo.port_direction(s, p);
                let load = phits as f64 / measured_cycles;
                loads.all.add(phits);
                loads.by_class.entry(class).or_default().add(phits);
                match self {
                    Rows::Memory { links: t, .. } => {
                        t.switch.push(s as u32);
                        t.port.push(p as u16);
                        t.to_switch.push(to.switch);
                        t.to_port.push(to.port);
                        t.dim.push(dim);
                        t.class.push(class);
                        t.direction.push(direction);
                        t.phits.push(phits);
                        t.load.push(load);
                    }
                    Rows::Files(f) => {
                        let l = &mut f.line;
                        l.clear();
                        for v in [s as i64, p as i64, to.switch as i64, to.port as i64, dim as i64] {
                            push_int(l, v);
                            l.push(',');
                        }
                        l.push_str(class);
                        l.push(',');
                        push_int(l, direction);
                        l.push(',');
                        push_int(l, phits);
                        l.push(',');
                        push_float(l, load);
                        l.push('\n');
                        let r = f.links.write_all(l.as_bytes());
                        f.note(r, "links.csv");
                    }
                }
            }
        }
    }

    /// The row of active server `server`, with its window's counters `c` and the most
    /// requests it had outstanding; its counts added to `sums`.
    pub fn counter(&mut self, server: u32, c: &Counters, outstanding_max: u32, sums: &mut NicSums) {
        sums.request_flits += u64::from(c.request_flits);
        sums.stalled_cycles += u64::from(c.stalled_cycles);
        sums.responses_received_measured += u64::from(c.responses_received);
        sums.request_latency += c.request_latency;
        match self {
            Rows::Memory { counters: t, .. } => {
                t.server.push(server);
                t.request_flits.push(c.request_flits.into());
                t.stalled_cycles.push(c.stalled_cycles.into());
                t.request_packets.push(c.request_packets.into());
                t.responses_received.push(c.responses_received.into());
                t.cumulative_request_latency.push(c.request_latency);
                t.responses_sent.push(c.responses_sent.into());
                t.packets.push(c.packets.into());
                t.cumulative_packet_latency.push(c.latency_sum);
                t.stalls_per_flit.push(c.stalls_per_flit());
                t.request_latency_mean.push(c.request_latency_mean());
                t.outstanding_max.push(outstanding_max);
            }
            Rows::Files(f) => {
                let l = &mut f.line;
                l.clear();
                push_int(l, server);
                for v in [c.request_flits.into(), c.stalled_cycles.into(), c.request_packets.into(), c.responses_received.into(), c.request_latency, c.responses_sent.into(), c.packets.into(), c.latency_sum] {
                    l.push(',');
                    push_int(l, v);
                }
                l.push(',');
                push_float(l, c.stalls_per_flit());
                l.push(',');
                push_float(l, c.request_latency_mean());
                l.push(',');
                push_int(l, outstanding_max);
                l.push('\n');
                let r = f.counters.write_all(l.as_bytes());
                f.note(r, "counters.csv");
            }
        }
    }

    /// The tables kept in memory (empty when written), and the files written by name, or
    /// the first error writing them. With files, `topology.json` is written too: the
    /// network's `dims` and every switch's coordinates, as the Python layer writes it.
    pub fn finish(self, topo: &dyn Topology) -> Result<(LinkTable, CounterTable, Written), WriteError> {
        match self {
            Rows::Memory { links, counters } => Ok((links, counters, Written::new())),
            Rows::Files(mut f) => {
                let r = f.links.flush();
                f.note(r, "links.csv");
                let r = f.counters.flush();
                f.note(r, "counters.csv");
                let topology = f.dir.join("topology.json");
                if f.error.is_none() {
                    if let Err(error) = write_topology(topo, &topology) {
                        f.error = Some(WriteError { path: topology.clone(), error });
                    }
                }
                if let Some(e) = f.error {
                    return Err(e);
                }
                let written = ["links.csv", "counters.csv", "topology.json"].iter().map(|n| (n.to_string(), f.dir.join(n).display().to_string())).collect();
                Ok((LinkTable::default(), CounterTable::default(), written))
            }
        }
    }
}

impl Files {
    fn note(&mut self, r: std::io::Result<()>, name: &str) {
        if let (Err(error), None) = (r, &self.error) {
            self.error = Some(WriteError { path: self.dir.join(name), error });
        }
    }
}

/// `topology.json` as the Python layer writes it (`json.dumps(..., indent=2)` and a newline):
/// `dims`, then `switch_coords`, a list per switch, each number on a line of its own.
fn write_topology(topo: &dyn Topology, path: &Path) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(FILE_BUFFER, std::fs::File::create(path)?);
    let list = |w: &mut dyn Write, values: &[usize], indent: &str| -> std::io::Result<()> {
        if values.is_empty() {
            return write!(w, "[]");
        }
        writeln!(w, "[")?;
        for (i, v) in values.iter().enumerate() {
            write!(w, "{indent}  {v}{}", if i + 1 < values.len() { ",\n" } else { "\n" })?;
        }
        write!(w, "{indent}]")
    };
    let dims = topo.dims();
    write!(w, "{{\n  \"dims\": ")?;
    list(&mut w, &dims, "  ")?;
    write!(w, ",\n  \"switch_coords\": ")?;
    if dims.is_empty() {
        write!(w, "[]")?;
    } else {
        writeln!(w, "[")?;
        let n = topo.num_switches();
        for s in 0..n {
            write!(w, "    ")?;
            list(&mut w, &topo.coordinates(s), "    ")?;
            writeln!(w, "{}", if s + 1 < n { "," } else { "" })?;
        }
        write!(w, "  ]")?;
    }
    writeln!(w, "\n}}")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(value: serde_json::Value) -> Vec<String> {
        value.as_object().unwrap().keys().cloned().collect()
    }

    #[test]
    fn the_files_have_the_tables_columns_in_their_order() {
        // serde_json's map keeps the fields' order (its `preserve_order` feature) or sorts
        // them: compare as the Python layer reads them, by name, and the order separately.
        let links = keys(serde_json::to_value(LinkTable::default()).unwrap());
        let counters = keys(serde_json::to_value(CounterTable::default()).unwrap());
        let sorted = |cols: &[&str]| {
            let mut v: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
            v.sort();
            v
        };
        let mut l = links.clone();
        l.sort();
        let mut c = counters.clone();
        c.sort();
        assert_eq!(l, sorted(&LINK_COLUMNS));
        assert_eq!(c, sorted(&COUNTER_COLUMNS));
        let text = serde_json::to_string(&LinkTable::default()).unwrap();
        let order: Vec<usize> = LINK_COLUMNS.iter().map(|k| text.find(&format!("\"{k}\"")).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "links.csv's columns in LinkTable's order: {text}");
        let text = serde_json::to_string(&CounterTable::default()).unwrap();
        let order: Vec<usize> = COUNTER_COLUMNS.iter().map(|k| text.find(&format!("\"{k}\":")).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "counters.csv's columns in CounterTable's order: {text}");
    }

    #[test]
    fn link_loads_are_exact_whatever_the_order() {
        let phits = [0u64, 7, 1000, 3, 3, 999_999, 12];
        let mut a = LinkLoads::default();
        phits.iter().for_each(|&p| a.add(p));
        let mut b = LinkLoads::default();
        phits.iter().rev().for_each(|&p| b.add(p));
        assert_eq!(a.summary(100.0), b.summary(100.0));
        let (max, mean, cv) = a.summary(100.0);
        let loads: Vec<f64> = phits.iter().map(|&p| p as f64 / 100.0).collect();
        let m = loads.iter().sum::<f64>() / loads.len() as f64;
        let sd = (loads.iter().map(|x| (x - m).powi(2)).sum::<f64>() / loads.len() as f64).sqrt();
        assert_eq!(max, 9999.99);
        assert!((mean - m).abs() < 1e-12 * m && (cv - sd / m).abs() < 1e-12, "{mean} {m} {cv} {}", sd / m);
        assert_eq!(LinkLoads::default().summary(10.0), (0.0, 0.0, 0.0));
    }
}
