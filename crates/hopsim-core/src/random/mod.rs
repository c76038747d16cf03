//! Random streams: the generator every part of a run uses, and how each stream is seeded
//! so that results depend only on the run's seed, never on the order parts are built in.

pub mod geometric;

use rand_pcg::Pcg64Mcg;

pub type Rng = Pcg64Mcg;

/// The servers' random streams a process holds, indexed by server number: every server's,
/// or only an MPI rank's own servers' where the workload draws only from the stream of the
/// server it acts for (engine/ranks), so that a rank's memory is its share.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Streams {
    first: usize,
    rngs: Vec<Rng>,
}

impl Streams {
    /// The streams of the servers `servers` of a run seeded with `seed`.
    pub fn new(seed: u64, servers: std::ops::Range<usize>) -> Self {
        use rand::SeedableRng;
        Streams { first: servers.start, rngs: servers.map(|s| Rng::seed_from_u64(seed_for(seed, 1, s as u64))).collect() }
    }
    /// The stream of `server`, if this process holds it.
    pub fn get_mut(&mut self, server: usize) -> Option<&mut Rng> {
        self.rngs.get_mut(server.wrapping_sub(self.first))
    }
}

impl std::ops::Index<usize> for Streams {
    type Output = Rng;
    #[inline]
    fn index(&self, server: usize) -> &Rng {
        &self.rngs[server - self.first]
    }
}

impl std::ops::IndexMut<usize> for Streams {
    #[inline]
    fn index_mut(&mut self, server: usize) -> &mut Rng {
        &mut self.rngs[server - self.first]
    }
}

/// A deterministic seed for stream `stream`, item `index` of a run seeded with `seed`.
pub fn seed_for(seed: u64, stream: u64, index: u64) -> u64 {
    let mut z = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::Streams;
    use rand::RngCore;

    #[test]
    fn a_rank_holds_the_same_streams_as_one_process_for_its_servers_only() {
        let (mut whole, mut part) = (Streams::new(7, 0..30), Streams::new(7, 10..20));
        for s in 10..20 {
            assert_eq!(whole[s].next_u64(), part[s].next_u64(), "server {s}");
        }
        assert!(part.get_mut(9).is_none() && part.get_mut(20).is_none() && part.get_mut(15).is_some());
        assert!(whole.get_mut(0).is_some() && whole.get_mut(30).is_none());
    }
}
