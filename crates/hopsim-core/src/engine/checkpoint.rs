//! Checkpoints: a run's whole state between two cycles, written to a file every
//! `run.checkpoint_every` cycles, from which a run that was stopped (killed, out of time on a
//! cluster's queue) goes on with exactly the results of one that was not.
//!
//! What a checkpoint holds is what changes as the run goes: the switches and their random
//! streams, the packets, the calendar, the NICs and their streams, the workload's progress
//! (`Workload::save`), the messages and statistics, and the loop's own counters and deadlock
//! detector. What was built from the spec (topology, routing, traffic pattern, the jobs'
//! programs and placement) is built again from the same spec, which is why a checkpoint
//! names the spec it belongs to and the hopsim version that wrote it, and is refused for
//! another. The number of threads is not part of it: the results do not depend on it.
//!
//! A checkpoint is written beside its final name and renamed over it once complete and on
//! disk, so a run killed while writing one keeps the one before.

use super::deadlock::Detector;
use super::{Built, Simulation};
use crate::packet::Arena;
use crate::calendar::Calendar;
use std::fmt;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"HOPSIMCK";
/// Bumped whenever what a checkpoint holds changes shape.
const FORMAT: u32 = 1;

/// Why a checkpoint cannot be resumed from.
#[derive(Debug)]
pub enum CheckpointError {
    /// No file, or one that cannot be read.
    Unreadable(String),
    /// A file that is not a hopsim checkpoint at all: hopsim never writes over it.
    NotACheckpoint,
    /// A hopsim checkpoint cut short or of another format.
    Damaged(String),
    /// Written by another hopsim version, whose state may differ in shape.
    OtherVersion(String),
    /// Written for a run whose spec differs in something the results depend on.
    OtherSpec,
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Unreadable(why) => write!(f, "not readable: {why}"),
            CheckpointError::NotACheckpoint => write!(f, "not a hopsim checkpoint"),
            CheckpointError::Damaged(why) => write!(f, "a damaged checkpoint: {why}"),
            CheckpointError::OtherVersion(v) => write!(f, "written by hopsim {v}, not {}", crate::VERSION),
            CheckpointError::OtherSpec => write!(f, "written for a run with another spec"),
        }
    }
}

impl std::error::Error for CheckpointError {}

fn unreadable(e: impl fmt::Display) -> CheckpointError {
    CheckpointError::Unreadable(e.to_string())
}

fn damaged(e: impl fmt::Display) -> CheckpointError {
    CheckpointError::Damaged(e.to_string())
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    version: String,
    /// The spec as the results depend on it (`results_spec`).
    spec: String,
    cycle: u64,
}

/// The state of the cycle loop (`Simulation::run_on`) a checkpoint keeps beside the run's:
/// the cycle it stops at (the window's end, or the drain's once it drains), whether the
/// workload's timers of the cycle due fired already, and the deadlock detector.
pub(super) type LoopState = (u64, bool, Detector);

/// Where and how often a run writes its checkpoints.
pub(super) struct Schedule {
    pub path: PathBuf,
    pub every: u64,
    pub next: u64,
}

/// The spec without what does not change the results (`spec::NOT_IN_RESULTS`): a run may go
/// on with other threads or checkpoints.
fn results_spec(spec: &crate::Spec) -> String {
    crate::spec::results_view(spec).to_string()
}

impl Simulation {
    /// Write a checkpoint every `run.checkpoint_every` cycles to `path` (none when it is 0).
    pub fn checkpoint_to(&mut self, path: impl Into<PathBuf>) {
        let every = self.spec.run.checkpoint_every;
        self.checkpoint = (every > 0).then(|| Schedule { path: path.into(), every, next: self.now + every });
    }

    /// The run of `built` at the cycle the checkpoint at `path` was written, as if it had run
    /// there; `built` must come from the spec the checkpoint was written for.
    pub fn resume_from(built: Built, path: &Path) -> Result<Simulation, CheckpointError> {
        Self::resume_with(Simulation::from_built(built), path, |_| Ok(()))
    }

    /// `sim`, built and started, at the cycle of the checkpoint at `path`; `extra` reads what
    /// the writer added after the run's state (`save_with`: a rank's own state).
    pub(super) fn resume_with(mut sim: Simulation, path: &Path, extra: impl FnOnce(&mut dyn Read) -> bincode::Result<()>) -> Result<Simulation, CheckpointError> {
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut magic = [0u8; 8];
        if input.read_exact(&mut magic).is_err() || &magic != MAGIC {
            return Err(CheckpointError::NotACheckpoint);
        }
        let mut format = [0u8; 4];
        input.read_exact(&mut format).map_err(damaged)?;
        if u32::from_le_bytes(format) != FORMAT {
            return Err(CheckpointError::Damaged(format!("of format {}, not {FORMAT}", u32::from_le_bytes(format))));
        }
        let header: Header = bincode::deserialize_from(&mut input).map_err(damaged)?;
        if header.version != crate::VERSION {
            return Err(CheckpointError::OtherVersion(header.version));
        }
        if header.spec != results_spec(&sim.spec) {
            return Err(CheckpointError::OtherSpec);
        }
        sim.restore(&mut input, header.cycle).map_err(damaged)?;
        extra(&mut input).map_err(damaged)?;
        Ok(sim)
    }

    fn restore(&mut self, input: &mut impl Read, cycle: u64) -> bincode::Result<()> {
        let (last_progress, phit_hops, looped): (u64, u64, LoopState) = bincode::deserialize_from(&mut *input)?;
        let packets: Arena = bincode::deserialize_from(&mut *input)?;
        self.cal = bincode::deserialize_from::<_, Calendar>(&mut *input)?;
        self.switch_side.restore(input)?;
        self.server_side.restore(input)?;
        // The arena keeps the room it was built with: threads read packets while the run's
        // thread makes others only while that room is not reached (`Simulation::packet_room`).
        self.packets = packets.with_room(self.packet_room);
        self.now = cycle;
        self.last_progress = last_progress;
        self.phit_hops = phit_hops;
        self.resumed = Some(looped);
        Ok(())
    }

    /// Write the checkpoint of cycle `self.now` (between two cycles), if one is due.
    #[inline]
    pub(super) fn checkpoint_if_due(&mut self, looped: (u64, bool, &Detector)) {
        if self.checkpoint.as_ref().is_some_and(|s| self.now >= s.next) {
            self.write_checkpoint(looped);
        }
    }

    #[cold]
    fn write_checkpoint(&mut self, looped: (u64, bool, &Detector)) {
        let Some(schedule) = &self.checkpoint else { return };
        let path = schedule.path.clone();
        if let Err(e) = self.save_with(&path, looped, |_| Ok(())) {
            // The run itself is not harmed: it goes on, and says once that it has no checkpoint.
            eprintln!("hopsim: warning: the checkpoint of cycle {} could not be written to {}: {e}; the run goes on without checkpoints", self.now, path.display());
            self.checkpoint = None;
            return;
        }
        if let Some(s) = &mut self.checkpoint {
            s.next = self.now + s.every;
        }
    }

    /// Write the checkpoint of cycle `self.now` to `path`, with `extra` after the run's state.
    pub(super) fn save_with(&self, path: &Path, looped: (u64, bool, &Detector), extra: impl FnOnce(&mut dyn Write) -> bincode::Result<()>) -> std::io::Result<()> {
        let mut part = path.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        let written = self.write(&part, looped, extra).and_then(|()| std::fs::rename(&part, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&part);
        }
        written
    }

    fn write(&self, part: &Path, looped: (u64, bool, &Detector), extra: impl FnOnce(&mut dyn Write) -> bincode::Result<()>) -> std::io::Result<()> {
        let file = std::fs::File::create(part)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let header = Header { version: crate::VERSION.to_string(), spec: results_spec(&self.spec), cycle: self.now };
        let encoded = (|| -> bincode::Result<()> {
            out.write_all(MAGIC)?;
            out.write_all(&FORMAT.to_le_bytes())?;
            bincode::serialize_into(&mut out, &header)?;
            bincode::serialize_into(&mut out, &(self.last_progress, self.phit_hops, looped))?;
            bincode::serialize_into(&mut out, &self.packets)?;
            bincode::serialize_into(&mut out, &self.cal)?;
            self.switch_side.save(&mut out)?;
            self.server_side.save(&mut out)?;
            extra(&mut out)
        })();
        encoded.map_err(std::io::Error::other)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()
    }
}
