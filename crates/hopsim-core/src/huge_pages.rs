//! An allocator that asks Linux for transparent huge pages on large blocks. At the sizes
//! studied, each cycle reads packets and switch state scattered over hundreds of megabytes,
//! so with 4 KiB pages many of those reads also miss the TLB; 2 MiB pages cover the same
//! memory with 512 times fewer entries. Linux distributions commonly enable THP only for
//! memory that asks for it (`madvise` mode), which is what this does. The binaries that
//! run simulations (the Python extension, the examples) install it with
//! `#[global_allocator]`; small blocks, and other systems, get the system allocator as is.
//!
//! Blocks stay where the system allocator puts them: placing each on a 2 MiB boundary of
//! its own mapping gets more of them into huge pages but can cost more CPU than it saves
//! (arrays that all start on the same boundary compete for the same cache sets;
//! docs/benchmark-log.md).

pub use crate::unsafe_parts::HugePageAlloc;
