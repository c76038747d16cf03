//! Random streams: the generator every part of a run uses, and how each stream is seeded
//! so that results depend only on the run's seed, never on the order parts are built in.

pub mod geometric;

use rand_pcg::Pcg64Mcg;

pub type Rng = Pcg64Mcg;

/// A deterministic seed for stream `stream`, item `index` of a run seeded with `seed`.
pub fn seed_for(seed: u64, stream: u64, index: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
