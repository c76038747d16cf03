//! Python bindings of `hopsim-core`: the extension module `hopsim._core`.
//!
//! Conversions only, no logic (see docs/engine-contract.md). Every function takes
//! and returns JSON text, releases the GIL while the engine works (so Python
//! threads run simulations in parallel), and turns a `SpecError` into a
//! `ValueError` whose message is the engine's one-line message, starting with
//! the dotted key.

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyList};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

// Huge pages for the engine's large arrays (hopsim_core::huge_pages says why).
#[global_allocator]
static ALLOC: hopsim_core::huge_pages::HugePageAlloc = hopsim_core::huge_pages::HugePageAlloc;

fn spec_error(e: hopsim_core::SpecError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The cycles a run has simulated so far, readable from any thread while it runs; `cancel()`
/// stops the run from any thread.
#[pyclass(frozen)]
struct Progress {
    cycles: Arc<AtomicU64>,
    cancel: Arc<AtomicBool>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress { cycles: Arc::new(AtomicU64::new(0)), cancel: Arc::new(AtomicBool::new(false)) }
    }

    #[getter]
    fn cycles(&self) -> u64 {
        self.cycles.load(Ordering::Relaxed)
    }

    /// Stop the run soon (within a cycle); its `simulate_json` raises KeyboardInterrupt.
    fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// How often the calling thread wakes up to let Python handle a signal (Ctrl-C).
const SIGNAL_POLL: Duration = Duration::from_millis(50);
/// The engine thread gets the stack a process's main thread has.
const ENGINE_STACK: usize = 8 << 20;

/// Set when the engine thread ends, even by a panic.
struct Done<'a>(&'a (Mutex<bool>, Condvar));

impl Drop for Done<'_> {
    fn drop(&mut self) {
        *self.0 .0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.0 .1.notify_all();
    }
}

/// A run's spec the engine parsed and validated (`prepare`): `simulate_prepared` runs it
/// without parsing or validating it again.
#[pyclass(frozen)]
struct PreparedSpec {
    inner: hopsim_core::Prepared,
}

#[pymethods]
impl PreparedSpec {
    /// The normalized spec (defaults filled in) as JSON.
    #[getter]
    fn normalized_json(&self) -> &str {
        &self.inner.normalised_json
    }

    /// The engine's seal of the text it was prepared from (`simulate_json`'s `seal`).
    #[getter]
    fn seal(&self) -> &str {
        &self.inner.seal
    }

    /// Bytes the run will add to the process's memory: the engine's estimate.
    #[getter]
    fn memory_run(&self) -> u64 {
        self.inner.memory_run
    }
}

/// Parse and check one run's spec, once: a `PreparedSpec`. With `ranks` > 1, as one rank
/// of a run over that many MPI ranks: what they cannot do yet is refused, and the memory
/// checked and estimated is a rank's.
#[pyfunction]
#[pyo3(signature = (spec_json, ranks=1))]
fn prepare(py: Python<'_>, spec_json: &str, ranks: usize) -> PyResult<PreparedSpec> {
    py.detach(|| hopsim_core::prepare_on_ranks(spec_json, ranks)).map(|inner| PreparedSpec { inner }).map_err(spec_error)
}

/// Run one simulation. Takes one run's spec as JSON, returns the result JSON; `progress`
/// (a `Progress`) follows the cycles simulated; `max_threads` caps the threads the run uses
/// (a sweep running several runs at once gives each its share of the cores); `with_spec`
/// adds `spec` to the result, the spec with the engine's defaults filled in, so that one
/// call validates and runs (the spec is validated once); `seal`, the one `prepare_json` gave
/// for this very text, spares validating it again; `rows_to` (a folder) takes the rows per
/// link and per server into files there (`links.csv`, `counters.csv`, `topology.json`), the
/// files the Python layer writes from a result, listed in the result under `written`.
///
/// The engine runs on its own thread while this one waits without the GIL, waking up to
/// check for signals: Ctrl-C stops the engine and raises KeyboardInterrupt, with nothing
/// returned of the stopped run. So does `progress.cancel()`.
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None, max_threads=None, with_spec=false, seal=None, checkpoint=None, resume=false, rows_to=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_json(
    py: Python<'_>,
    spec_json: &str,
    progress: Option<&Bound<'_, Progress>>,
    max_threads: Option<usize>,
    with_spec: bool,
    seal: Option<&str>,
    checkpoint: Option<std::path::PathBuf>,
    resume: bool,
    rows_to: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let checkpoint = checkpoint.map(|path| hopsim_core::Checkpointing { path, resume });
    run_engine(py, progress, |cycles, cancel| hopsim_core::simulate_json_cancellable(spec_json, cycles, cancel, max_threads, with_spec, seal, checkpoint.as_ref(), rows_to.as_deref()))
}

/// `simulate_json` of a `PreparedSpec`: neither parsed nor validated again.
#[pyfunction]
#[pyo3(signature = (prepared, progress=None, max_threads=None, with_spec=false, checkpoint=None, resume=false, rows_to=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_prepared(
    py: Python<'_>,
    prepared: &PreparedSpec,
    progress: Option<&Bound<'_, Progress>>,
    max_threads: Option<usize>,
    with_spec: bool,
    checkpoint: Option<std::path::PathBuf>,
    resume: bool,
    rows_to: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let checkpoint = checkpoint.map(|path| hopsim_core::Checkpointing { path, resume });
    run_engine(py, progress, |cycles, cancel| hopsim_core::simulate_validated(&prepared.inner.spec, cycles, cancel, max_threads, with_spec, checkpoint.as_ref(), rows_to.as_deref()))
}

type Outcome = Result<Option<String>, hopsim_core::RunError>;

/// A run's error as Python's: a bad spec as ValueError, a file the engine could not write as
/// OSError (with its errno and path), as the Python layer's own files fail.
fn run_error(e: hopsim_core::RunError) -> PyErr {
    match e {
        hopsim_core::RunError::Spec(e) => spec_error(e),
        hopsim_core::RunError::Write(w) => match w.error.raw_os_error() {
            Some(errno) => {
                let text = w.error.to_string();
                let strerror = text.strip_suffix(&format!(" (os error {errno})")).unwrap_or(&text).to_string();
                PyOSError::new_err((errno, strerror, w.path.display().to_string()))
            }
            None => PyOSError::new_err(w.to_string()),
        },
    }
}

/// Run `engine` (cycles to publish, flag that stops it) on a thread of its own, waiting
/// without the GIL and waking to let Python handle signals.
fn run_engine(py: Python<'_>, progress: Option<&Bound<'_, Progress>>, engine: impl FnOnce(Option<Arc<AtomicU64>>, Arc<AtomicBool>) -> Outcome + Send) -> PyResult<String> {
    on_engine_thread(py, progress, engine)?.map_err(run_error)?.ok_or_else(|| PyKeyboardInterrupt::new_err("the run was cancelled"))
}

/// Run `engine` (cycles to publish, flag that stops it) on a thread of its own and return
/// what it returns, waiting without the GIL and waking to let Python handle signals: a
/// signal's exception (Ctrl-C) sets the flag, waits for the engine to stop, and is raised.
fn on_engine_thread<T: Send>(py: Python<'_>, progress: Option<&Bound<'_, Progress>>, engine: impl FnOnce(Option<Arc<AtomicU64>>, Arc<AtomicBool>) -> T + Send) -> PyResult<T> {
    let cycles = progress.map(|p| p.get().cycles.clone());
    let cancel = progress.map_or_else(|| Arc::new(AtomicBool::new(false)), |p| p.get().cancel.clone());
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|s| {
        let engine_cancel = cancel.clone();
        let runner = std::thread::Builder::new()
            .name("hopsim-engine".into())
            .stack_size(ENGINE_STACK)
            .spawn_scoped(s, || {
                let _done = Done(&done);
                engine(cycles, engine_cancel)
            })
            .map_err(|e| PyErr::new::<pyo3::exceptions::PyOSError, _>(format!("cannot start the engine thread: {e}")))?;
        loop {
            let finished = py.detach(|| {
                let guard = done.0.lock().unwrap_or_else(|e| e.into_inner());
                let (guard, _) = done.1.wait_timeout_while(guard, SIGNAL_POLL, |d| !*d).unwrap_or_else(|e| e.into_inner());
                *guard
            });
            if finished {
                break;
            }
            if let Err(e) = py.check_signals() {
                cancel.store(true, Ordering::Relaxed);
                let _ = py.detach(|| runner.join());
                return Err(e);
            }
        }
        match runner.join() {
            Ok(result) => Ok(result),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

pyo3::create_exception!(
    _core,
    RankFailure,
    pyo3::exceptions::PyRuntimeError,
    "A run over several ranks could not go on: a rank failed (the engine's message)."
);

/// The engine's exchange between ranks (`hopsim_core::Exchange`) as a Python object with
/// `rank`, `ranks` and `all_to_all(list[bytes]) -> list[bytes]`, and optionally
/// `all_gather(bytes) -> list[bytes]` and `sparse(list[tuple[int, bytes]], list[int],
/// list[int]) -> (list[tuple[int, bytes]], list[int], list[int])` (hopsim.mpi.MpiExchange;
/// without them the engine makes them of `all_to_all`): each call takes the GIL. An
/// exception of the object's is kept, to be raised again once the engine has stopped, and
/// given to the engine as a `RankFailure` with its text.
struct PyExchange {
    exchange: Py<PyAny>,
    rank: usize,
    ranks: usize,
    /// Whether the object has `all_gather` and `sparse` of its own.
    gathers: bool,
    sparse: bool,
    /// The ranks on this machine (`exchange.ranks_here`, 1 if it has none).
    ranks_here: usize,
    /// Set by `Progress.cancel()` or Ctrl-C: the next call fails instead of exchanging.
    cancel: Arc<AtomicBool>,
    error: Arc<Mutex<Option<PyErr>>>,
}

impl PyExchange {
    fn cancelled(&self) -> PyResult<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(PyKeyboardInterrupt::new_err("the run was cancelled"));
        }
        Ok(())
    }

    /// The engine's `RankFailure` for an exception of the exchange, which is kept.
    fn failed(&self, e: PyErr) -> hopsim_core::RankFailure {
        let text = e.to_string();
        *self.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        hopsim_core::RankFailure(text)
    }

    fn gather(&self, mine: Vec<u8>) -> PyResult<Vec<Vec<u8>>> {
        self.cancelled()?;
        Python::attach(|py| {
            let got = self.exchange.bind(py).call_method1("all_gather", (PyBytes::new(py, &mine),))?;
            let all: Vec<Vec<u8>> = got.try_iter()?.map(|item| Ok(item?.extract::<PyBackedBytes>()?.to_vec())).collect::<PyResult<_>>()?;
            if all.len() != self.ranks {
                return Err(PyValueError::new_err(format!("all_gather returned {} messages; expected one from each of the {} ranks", all.len(), self.ranks)));
            }
            Ok(all)
        })
    }

    fn sparse_exchange(&self, out: Vec<(usize, Vec<u8>)>, sums: Vec<u64>, maxima: Vec<u64>) -> PyResult<hopsim_core::Sparse> {
        self.cancelled()?;
        Python::attach(|py| {
            let sent = PyList::new(py, out.iter().map(|(r, b)| (*r, PyBytes::new(py, b))))?;
            let got = self.exchange.bind(py).call_method1("sparse", (sent, sums.clone(), maxima.clone()))?;
            let (received, all_sums, all_maxima): (Vec<(usize, PyBackedBytes)>, Vec<u64>, Vec<u64>) = got.extract()?;
            if all_sums.len() != sums.len() || all_maxima.len() != maxima.len() {
                return Err(PyValueError::new_err(format!("sparse returned {} sums and {} maxima; expected {} and {}", all_sums.len(), all_maxima.len(), sums.len(), maxima.len())));
            }
            Ok(hopsim_core::Sparse { received: received.into_iter().map(|(r, b)| (r, b.to_vec())).collect(), sums: all_sums, maxima: all_maxima })
        })
    }

    fn exchange(&self, out: Vec<Vec<u8>>) -> PyResult<Vec<Vec<u8>>> {
        self.cancelled()?;
        Python::attach(|py| {
            let sent = PyList::new(py, out.iter().map(|b| PyBytes::new(py, b)))?;
            let got = self.exchange.bind(py).call_method1("all_to_all", (sent,))?;
            let mut received = Vec::with_capacity(self.ranks);
            for item in got.try_iter()? {
                received.push(item?.extract::<PyBackedBytes>()?.to_vec());
            }
            if received.len() != self.ranks {
                return Err(PyValueError::new_err(format!(
                    "all_to_all returned {} messages; expected one from each of the {} ranks",
                    received.len(),
                    self.ranks
                )));
            }
            Ok(received)
        })
    }
}

impl hopsim_core::Exchange for PyExchange {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn ranks_here(&self) -> usize {
        self.ranks_here
    }

    fn all_to_all(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, hopsim_core::RankFailure> {
        self.exchange(out).map_err(|e| self.failed(e))
    }

    fn all_gather(&mut self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>, hopsim_core::RankFailure> {
        if !self.gathers {
            return self.all_to_all(vec![mine; self.ranks]);
        }
        self.gather(mine).map_err(|e| self.failed(e))
    }

    fn sparse(&mut self, out: Vec<(usize, Vec<u8>)>, sums: Vec<u64>, maxima: Vec<u64>) -> Result<hopsim_core::Sparse, hopsim_core::RankFailure> {
        if !self.sparse {
            return hopsim_core::engine::ranks::sparse_over_all_to_all(self, out, sums, maxima);
        }
        self.sparse_exchange(out, sums, maxima).map_err(|e| self.failed(e))
    }
}

/// An int attribute of `exchange` (or the int a method of that name returns).
fn rank_count(exchange: &Bound<'_, PyAny>, name: &str) -> PyResult<usize> {
    let value = exchange.getattr(name)?;
    let value = if value.is_callable() { value.call0()? } else { value };
    value.extract().map_err(|_| PyValueError::new_err(format!("exchange.{name}: must be a non-negative int")))
}

/// This rank's share of one run partitioned over the ranks of `exchange` (an object with
/// `rank`, `ranks` and the collectives of `PyExchange`: hopsim.mpi.MpiExchange). Every rank calls it with the same
/// spec; rank 0 gets the result JSON (what `simulate_json` returns for the spec on one
/// thread), the others None. `with_spec` and `seal` are `simulate_json`'s; `progress` follows
/// the cycles simulated, and `progress.cancel()` stops this rank at its next exchange (the
/// others then wait for it: cancel every rank).
///
/// With `rows_to` (a folder, on rank 0), the result's rows per link and per server are
/// written there as they come from the ranks (`links.csv`, `counters.csv`, `topology.json`),
/// the files the Python layer writes from a result, and the result lists them under `written`.
///
/// A spec the engine refuses raises ValueError, the same on every rank. An exception raised
/// by a method of `exchange` stops the engine and is raised again here; a failure the engine
/// finds itself raises `RankFailure`.
#[pyfunction]
#[pyo3(signature = (spec_json, exchange, with_spec=false, seal=None, progress=None, checkpoint=None, resume=false, rows_to=None))]
#[allow(clippy::too_many_arguments)]
fn simulate_on_rank(
    py: Python<'_>,
    spec_json: &str,
    exchange: &Bound<'_, PyAny>,
    with_spec: bool,
    seal: Option<&str>,
    progress: Option<&Bound<'_, Progress>>,
    checkpoint: Option<std::path::PathBuf>,
    resume: bool,
    rows_to: Option<std::path::PathBuf>,
) -> PyResult<Option<String>> {
    let rank = rank_count(exchange, "rank")?;
    let ranks = rank_count(exchange, "ranks")?;
    if rank >= ranks {
        return Err(PyValueError::new_err(format!("exchange.rank = {rank}: must be less than exchange.ranks = {ranks}")));
    }
    let ranks_here = if exchange.hasattr("ranks_here")? { rank_count(exchange, "ranks_here")?.max(1) } else { 1 };
    let error = Arc::new(Mutex::new(None));
    let mut shared = PyExchange {
        exchange: exchange.clone().unbind(),
        rank,
        ranks,
        ranks_here,
        gathers: exchange.hasattr("all_gather")?,
        sparse: exchange.hasattr("sparse")?,
        cancel: Arc::new(AtomicBool::new(false)),
        error: error.clone(),
    };
    let outcome = on_engine_thread(py, progress, move |cycles, cancel| {
        shared.cancel = cancel;
        // The engine thread keeps one Python thread state for the whole run: each exchange
        // then only takes the GIL, rather than creating and dropping a thread state a cycle.
        let checkpoint = checkpoint.map(|path| hopsim_core::Checkpointing { path, resume });
        Python::attach(|py| py.detach(|| hopsim_core::simulate_on_rank(spec_json, &mut shared, cycles, with_spec, seal, checkpoint.as_ref(), rows_to.as_deref())))
    })?;
    match outcome {
        Ok(result) => Ok(result),
        Err(hopsim_core::RankError::Spec(e)) => Err(spec_error(e)),
        Err(hopsim_core::RankError::Rank(failure)) => {
            let raised = error.lock().unwrap_or_else(|p| p.into_inner()).take();
            Err(raised.unwrap_or_else(|| RankFailure::new_err(failure.0)))
        }
    }
}

/// Refuse `ranks_here` ranks of a run of `run_bytes` (its memory estimate) on this machine
/// if its memory cannot hold them all (`hopsim_core::engine::ranks::check_ranks_fit`).
#[pyfunction]
fn check_ranks_fit(run_bytes: u64, ranks_here: usize) -> PyResult<()> {
    let available = hopsim_core::engine::memory::available().map_err(spec_error)?;
    hopsim_core::engine::ranks::check_ranks_fit(run_bytes, ranks_here, available).map_err(spec_error)
}

/// Where rank `rank` of `ranks` keeps its checkpoint of a run whose checkpoint is `path`.
#[pyfunction]
fn rank_checkpoint(path: std::path::PathBuf, rank: usize, ranks: usize) -> std::path::PathBuf {
    hopsim_core::engine::ranks::rank_checkpoint(&path, rank, ranks)
}

/// Refuse, naming `ranks`, more MPI ranks than the network's `switches`
/// (`hopsim_core::engine::ranks::check_ranks`).
#[pyfunction]
fn check_on_ranks(ranks: usize, switches: usize) -> PyResult<()> {
    hopsim_core::engine::ranks::check_ranks(ranks, switches).map_err(spec_error)
}

/// Check a spec without running it. Returns the normalized spec (defaults filled in) as JSON.
#[pyfunction]
fn validate_json(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    py.detach(|| hopsim_core::validate_json(spec_json))
        .map_err(spec_error)
}

/// `validate_json`, and the engine's seal of `spec_json`: `(normalized_json, seal)`.
#[pyfunction]
fn prepare_json(py: Python<'_>, spec_json: &str) -> PyResult<(String, String)> {
    py.detach(|| hopsim_core::prepare_json(spec_json)).map_err(spec_error)
}

/// A spec as this engine normalises it, without checking it (a run folder's `spec.json`
/// from an older build, compared on `--resume`).
#[pyfunction]
fn normalise_json(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    py.detach(|| hopsim_core::normalise_json(spec_json)).map_err(spec_error)
}

/// Describe the topology of a spec as JSON: kind, switches, servers, links, radix,
/// diameter, wiring_ok, description.
#[pyfunction]
#[pyo3(signature = (spec_json, seal=None))]
fn topology_json(py: Python<'_>, spec_json: &str, seal: Option<&str>) -> PyResult<String> {
    py.detach(|| hopsim_core::topology_json(spec_json, seal))
        .map_err(spec_error)
}

/// The memory estimate of a spec (of a rank's share over `ranks` MPI ranks) and the memory
/// available, as JSON.
#[pyfunction]
#[pyo3(signature = (spec_json, seal=None, ranks=1))]
fn memory_estimate_json(py: Python<'_>, spec_json: &str, seal: Option<&str>, ranks: usize) -> PyResult<String> {
    py.detach(|| hopsim_core::memory_estimate_json(spec_json, seal, ranks)).map_err(spec_error)
}

/// Bytes this process may still take (its cgroup, the machine, `HOPSIM_MAX_MEMORY`), or None.
#[pyfunction]
fn memory_available() -> PyResult<Option<u64>> {
    hopsim_core::memory_available().map_err(spec_error)
}

/// A memory size in bytes (the grammar of `HOPSIM_MAX_MEMORY` and `[cluster] memory`); a
/// value that is not one is refused naming `key`.
#[pyfunction]
fn parse_memory_size(key: &str, text: &str) -> PyResult<u64> {
    hopsim_core::engine::memory::parse_size_for(key, text).map_err(spec_error)
}

/// Per switch, its group and tier, as JSON (link maps).
#[pyfunction]
#[pyo3(signature = (spec_json, seal=None))]
fn switch_roles_json(py: Python<'_>, spec_json: &str, seal: Option<&str>) -> PyResult<String> {
    py.detach(|| hopsim_core::switch_roles_json(spec_json, seal))
        .map_err(spec_error)
}

/// Every registered component with its keys and defaults, as JSON (`hopsim list`).
#[pyfunction]
fn components_json() -> String {
    hopsim_core::components_json()
}

/// How many times the engine has validated a spec in this process (tests check that a run
/// is validated once).
#[pyfunction]
fn validations() -> u64 {
    hopsim_core::spec::validations()
}

/// How many times the engine has parsed a spec in this process.
#[pyfunction]
fn parses() -> u64 {
    hopsim_core::spec::parses()
}

/// The dotted keys that never change a run's results (`spec::NOT_IN_RESULTS`).
#[pyfunction]
fn keys_not_in_results() -> Vec<&'static str> {
    hopsim_core::spec::NOT_IN_RESULTS.to_vec()
}

/// The engine crate's version.
#[pyfunction]
fn version() -> &'static str {
    hopsim_core::VERSION
}

/// The git tree of the engine's code whose profile the engine was compiled from
/// (profile-guided optimization, pgo/profile.json), or None for a build without one
/// (build.rs).
#[pyfunction]
fn build_profile() -> Option<&'static str> {
    Some(env!("HOPSIM_PROFILE_TREE")).filter(|t| !t.is_empty())
}

/// hopsim's simulation engine (Rust). Use the `hopsim` package rather than this module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    m.add_class::<Progress>()?;
    m.add_class::<PreparedSpec>()?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_prepared, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_on_rank, m)?)?;
    m.add_function(wrap_pyfunction!(check_on_ranks, m)?)?;
    m.add_function(wrap_pyfunction!(rank_checkpoint, m)?)?;
    m.add_function(wrap_pyfunction!(check_ranks_fit, m)?)?;
    m.add("RankFailure", m.py().get_type::<RankFailure>())?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(topology_json, m)?)?;
    m.add_function(wrap_pyfunction!(components_json, m)?)?;
    m.add_function(wrap_pyfunction!(switch_roles_json, m)?)?;
    m.add_function(wrap_pyfunction!(memory_estimate_json, m)?)?;
    m.add_function(wrap_pyfunction!(memory_available, m)?)?;
    m.add_function(wrap_pyfunction!(parse_memory_size, m)?)?;
    m.add_function(wrap_pyfunction!(validations, m)?)?;
    m.add_function(wrap_pyfunction!(parses, m)?)?;
    m.add_function(wrap_pyfunction!(prepare_json, m)?)?;
    m.add_function(wrap_pyfunction!(normalise_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(keys_not_in_results, m)?)?;
    Ok(())
}
