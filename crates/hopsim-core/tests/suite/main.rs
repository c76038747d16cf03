//! The engine's integration tests, one module per subject. They form one test binary
//! because each binary links and optimizes the whole engine again: eleven binaries took
//! about ten minutes of a clean CI build, one takes a fraction of that.

mod common;

mod adaptive;
mod allocation_stages;
mod aries;
mod aries_modes;
mod booksim2;
mod checkpoint;
mod dal;
mod deadlock;
mod docs_keys;
mod drain;
mod every_cycle;
mod determinism;
mod fuzz;
mod graph;
mod jobs;
mod motifs;
mod limits;
mod low_diameter;
mod module_cycles;
mod other_kinds_keys;
mod messages;
mod protocol;
mod ranks;
mod routing;
mod skeletons;
mod slim_fly;
mod spec_errors;
mod switch_allocators;
mod threads;
mod throughput;
mod topology;
mod trust;
mod traffic;
mod zero_load;
