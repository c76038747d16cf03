//! The converted trace file: what `hopsim.traces` writes from an OTF2 archive (read through
//! the OTF2 reference library) and the engine replays. Little-endian:
//!
//! ```text
//! magic    12 bytes  "HOPSIMTRACE\0"
//! version  u32       1
//! header   u32 length, then that many bytes of JSON (`Header`)
//! per rank u64 record count, then that many 32-byte records:
//!          kind u32, a u32, b u32, c u32, d u64, e u64
//! ```
//!
//! Peers and roots are world ranks (the trace's MPI_COMM_WORLD), already translated from the
//! communicator-relative ranks OTF2 records; communicators are indices into
//! `Header::communicators`.

use crate::error::{SpecError, SpecResult};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

pub const MAGIC: &[u8; 12] = b"HOPSIMTRACE\0";
pub const VERSION: u32 = 1;
pub const RECORD_BYTES: u64 = 32;

#[derive(Debug, Clone, Deserialize)]
pub struct Header {
    pub ranks: usize,
    /// Timer ticks per second.
    pub timer_resolution: u64,
    /// Members (world ranks) of each communicator, in communicator-rank order.
    pub communicators: Vec<Vec<u32>>,
    /// Events the replay cannot run, counted per kind (`RmaPut`, `IoOperationBegin`,
    /// `MpiCollectiveEnd(ALLTOALLW)`, ...).
    #[serde(default)]
    pub unsupported: BTreeMap<String, u64>,
    /// The archive the file was converted from.
    #[serde(default)]
    pub source: String,
}

/// One event of a rank, as the converter wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Time outside MPI calls, in timer ticks.
    Compute { ticks: u64 },
    Send { to: u32, comm: u32, tag: u32, bytes: u64 },
    /// A receive that completes here (MPI_Recv, or MPI_Wait on an MPI_Irecv).
    Recv { from: u32, comm: u32, tag: u32 },
    /// A collective; `root` is a world rank or `u32::MAX`.
    Collective { op: u32, comm: u32, root: u32, sent: u64, received: u64 },
    /// The start of an iteration (the user region the converter was told marks one).
    Iteration,
}

impl Record {
    fn decode(b: &[u8; 32]) -> Option<Record> {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let (a, bb, c, d, e) = (u32_at(4), u32_at(8), u32_at(12), u64_at(16), u64_at(24));
        Some(match u32_at(0) {
            1 => Record::Compute { ticks: d },
            2 => Record::Send { to: a, comm: bb, tag: c, bytes: d },
            3 => Record::Recv { from: a, comm: bb, tag: c },
            4 => Record::Collective { op: a, comm: bb, root: c, sent: d, received: e },
            5 => Record::Iteration,
            _ => return None,
        })
    }
}

/// An open converted trace: its header, and its ranks' records read one rank at a time.
pub struct TraceFile {
    pub header: Header,
    reader: BufReader<File>,
    path: String,
    left: u64,
    next_rank: usize,
}

impl TraceFile {
    /// Opens `path`, with errors naming `key` and the file.
    pub fn open(path: &Path, key: &str) -> SpecResult<TraceFile> {
        let shown = path.display().to_string();
        let bad = |why: String| SpecError::new(key, format!("{shown:?}"), why);
        let file = File::open(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
        let len = file.metadata().map_err(|e| bad(format!("cannot be read: {e}")))?.len();
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut magic = [0u8; 12];
        let mut word = [0u8; 4];
        let truncated = |_| bad("truncated: the file ends inside its header (convert the archive again)".into());
        reader.read_exact(&mut magic).map_err(truncated)?;
        if &magic != MAGIC {
            return Err(bad("not a converted trace (an OTF2 archive's traces.otf2 is converted by hopsim's Python package, with the hopsim[traces] extra)".into()));
        }
        reader.read_exact(&mut word).map_err(truncated)?;
        let version = u32::from_le_bytes(word);
        if version != VERSION {
            return Err(bad(format!("converted trace version {version}; this hopsim reads version {VERSION} (convert the archive again)")));
        }
        reader.read_exact(&mut word).map_err(truncated)?;
        let hlen = u32::from_le_bytes(word) as u64;
        if 20 + hlen > len {
            return Err(bad("truncated: the file ends inside its header (convert the archive again)".into()));
        }
        let mut text = vec![0u8; hlen as usize];
        reader.read_exact(&mut text).map_err(truncated)?;
        let header: Header = serde_json::from_slice(&text).map_err(|e| bad(format!("its header is not valid: {e}")))?;
        if header.timer_resolution == 0 {
            return Err(bad("its header gives a timer resolution of 0 ticks per second".into()));
        }
        for (c, members) in header.communicators.iter().enumerate() {
            if let Some(m) = members.iter().find(|&&m| m as usize >= header.ranks) {
                return Err(bad(format!("communicator {c} names rank {m}, beyond the trace's {} ranks", header.ranks)));
            }
        }
        let shown = if header.source.is_empty() { shown } else { header.source.clone() };
        Ok(TraceFile { header, reader, path: shown, left: 0, next_rank: 0 })
    }

    /// The file as the user named it: the archive it was converted from, if known.
    pub fn shown(&self) -> &str {
        &self.path
    }

    /// The records of the next rank, in the order that rank issued them.
    pub fn next_rank(&mut self, key: &str) -> SpecResult<Vec<Record>> {
        let bad = |path: &str, why: String| SpecError::new(key, format!("{path:?}"), why);
        let rank = self.next_rank;
        let mut word = [0u8; 8];
        self.reader.read_exact(&mut word).map_err(|_| bad(&self.path, format!("truncated: rank {rank} of {} is missing (convert the archive again)", self.header.ranks)))?;
        self.left = u64::from_le_bytes(word);
        let mut out = Vec::with_capacity(self.left.min(1 << 24) as usize);
        let mut rec = [0u8; 32];
        while self.left > 0 {
            self.reader.read_exact(&mut rec).map_err(|_| bad(&self.path, format!("truncated: rank {rank}'s events end early (convert the archive again)")))?;
            let r = Record::decode(&rec).ok_or_else(|| bad(&self.path, format!("rank {rank}: an event of unknown kind {}", rec[0])))?;
            if let Record::Send { to: p, .. } | Record::Recv { from: p, .. } = r {
                if p as usize >= self.header.ranks {
                    return Err(bad(&self.path, format!("rank {rank} communicates with rank {p}, beyond the trace's {} ranks", self.header.ranks)));
                }
            }
            out.push(r);
            self.left -= 1;
        }
        self.next_rank += 1;
        Ok(out)
    }
}
