//! Python bindings of `hopsim-core`: the extension module `hopsim._core`.
//!
//! Conversions only, no logic (see docs/engine-contract.md). Every function takes
//! and returns JSON text, releases the GIL while the engine works (so Python
//! threads run simulations in parallel), and turns a `SpecError` into a
//! `ValueError` whose message is the engine's one-line message, starting with
//! the dotted key.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

// Huge pages for the engine's large arrays (hopsim_core::huge_pages says why).
#[global_allocator]
static ALLOC: hopsim_core::huge_pages::HugePageAlloc = hopsim_core::huge_pages::HugePageAlloc;

fn spec_error(e: hopsim_core::SpecError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The cycles a run has simulated so far, readable from any thread while it runs.
#[pyclass(frozen)]
struct Progress {
    cycles: Arc<AtomicU64>,
}

#[pymethods]
impl Progress {
    #[new]
    fn new() -> Self {
        Progress { cycles: Arc::new(AtomicU64::new(0)) }
    }

    #[getter]
    fn cycles(&self) -> u64 {
        self.cycles.load(Ordering::Relaxed)
    }
}

/// Run one simulation. Takes one run's spec as JSON, returns the result JSON; `progress`
/// (a `Progress`) follows the cycles simulated.
#[pyfunction]
#[pyo3(signature = (spec_json, progress=None))]
fn simulate_json(py: Python<'_>, spec_json: &str, progress: Option<&Bound<'_, Progress>>) -> PyResult<String> {
    let cycles = progress.map(|p| p.get().cycles.clone());
    py.detach(|| hopsim_core::simulate_json(spec_json, cycles))
        .map_err(spec_error)
}

/// Check a spec without running it. Returns the normalized spec (defaults filled in) as JSON.
#[pyfunction]
fn validate_json(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    py.detach(|| hopsim_core::validate_json(spec_json))
        .map_err(spec_error)
}

/// Describe the topology of a spec as JSON: kind, switches, servers, links, radix,
/// diameter, wiring_ok, description.
#[pyfunction]
fn topology_json(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    py.detach(|| hopsim_core::topology_json(spec_json))
        .map_err(spec_error)
}

/// The engine crate's version.
#[pyfunction]
fn version() -> &'static str {
    hopsim_core::VERSION
}

/// hopsim's simulation engine (Rust). Use the `hopsim` package rather than this module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Progress>()?;
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(topology_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
