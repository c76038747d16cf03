//! Traffic patterns: whom each server sends to. The injection process (when) is in `nic`.

mod active;
mod adv;
mod adv_random;
mod bit_complement;
mod hotspot;
mod matrix;
mod random_pairs;
mod random_permutation;
mod shift;
mod tornado;
mod transpose;
mod uniform;

use crate::error::{SpecError, SpecResult};
use crate::routing::Rng;
use crate::spec::{Key, Spec};
use crate::topology::{Cartesian, ServerMap, Topology};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::sync::Arc;
pub use active::Active;

pub trait TrafficPattern: Send + Sync {
    fn name(&self) -> &'static str;
    /// Destination server of a new packet from `src` (an active server).
    fn destination(&self, src: usize, rng: &mut Rng) -> usize;
}

/// A traffic pattern as the registry knows it, declared in its file: its `traffic.pattern`
/// name, one line on whom a server sends to, the `[traffic]` keys only it reads (set for
/// another pattern they are an error) and how it is built.
pub struct PatternKind {
    pub name: &'static str,
    pub about: &'static str,
    pub keys: &'static [Key],
    /// Its key type's values when nothing is given (`KeyType::defaults`), which a test
    /// compares with `keys`.
    pub defaults: fn() -> serde_json::Value,
    pub build: fn(&mut PatternCtx) -> SpecResult<Arc<dyn TrafficPattern>>,
    /// What it keeps for every server and every switch of the network, in bytes (on every
    /// MPI rank: the memory estimate, engine/memory).
    pub tables: Tables,
}

/// Bytes a pattern keeps per server and per switch of the network.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tables {
    pub per_server: u64,
    pub per_switch: u64,
}

impl Tables {
    pub const NONE: Tables = Tables { per_server: 0, per_switch: 0 };
}

registry! {
    /// The traffic patterns, as `traffic.pattern` names them: one line each, its variant and
    /// its entry, declared in its file.
    enum Pattern;
    /// Every traffic pattern, in the order `hopsim list` and error messages give them.
    const PATTERNS: [PatternKind] = {
        Uniform => uniform::KIND,
        RandomPairs => random_pairs::KIND,
        RandomPermutation => random_permutation::KIND,
        Shift => shift::KIND,
        Transpose => transpose::KIND,
        BitComplement => bit_complement::KIND,
        Tornado => tornado::KIND,
        Hotspot => hotspot::KIND,
        Adv => adv::KIND,
        AdvRandom => adv_random::KIND,
        Matrix => matrix::KIND,
    }
}

/// The `[traffic]` keys of every pattern (the others are declared by the patterns that read them).
pub const TABLE_KEYS: &[Key] = &[
    Key { name: "pattern", default: "\"uniform\"", meaning: "whom servers send to" },
    Key { name: "load", default: "required for bernoulli", meaning: "offered phits per active server per cycle, in (0, 1]" },
    Key { name: "active_servers", default: "all", meaning: "how many servers (drawn from the seed) take part" },
    Key { name: "active_fraction", default: "all", meaning: "or the share of servers that takes part" },
    Key { name: "burst", default: "none", meaning: "another pattern at another load during [start, start + cycles)" },
];

keys! {
    /// The key both ADV patterns read.
    pub(crate) struct AdvKeys {
        /// the group offset i of ADV+i / ADVr+i
        adv_offset: Option<usize> = "h (global links per switch)" => None,
    }
}

/// The chosen pattern's own `[traffic]` keys, read into its key type `T`.
pub fn own_keys<T: serde::de::DeserializeOwned>(spec: &Spec) -> SpecResult<T> {
    let t = &spec.traffic;
    let kind = pattern(&t.pattern).ok_or_else(|| SpecError::new("traffic.pattern", format!("{:?}", t.pattern), format!("unknown traffic pattern; allowed: {}", pattern_names())))?;
    let chosen = format!("traffic.pattern = {:?}", kind.name);
    // The burst's pattern reads its keys (`adv_offset`, ...) from the same table.
    let burst = t.burst.as_ref().and_then(|b| pattern(&b.pattern)).map_or(&[][..], |p| p.keys);
    let mut others = spec.keys_left_to_others("traffic.pattern", PATTERNS.iter().flat_map(|p| p.keys.iter()).map(|k| k.name));
    others.extend(burst.iter().map(|k| k.name));
    crate::spec::read_own_keys("traffic", &chosen, &t.pattern_keys, TABLE_KEYS, kind.keys, &others)
}

/// `spec` with every pattern's `[traffic]` keys that it does not give listed as null: the
/// normalised spec (`validate_json`) lists them all, as it did when they were fields of one
/// table (a run folder's `spec.json` is compared with it on `--resume`).
pub fn with_listed_keys(mut spec: Spec) -> Spec {
    for key in PATTERNS.iter().flat_map(|p| p.keys.iter()) {
        spec.traffic.pattern_keys.entry(key.name.to_string()).or_insert(serde_json::Value::Null);
    }
    spec
}

/// The pattern `traffic.pattern` names.
pub fn pattern(name: &str) -> Option<&'static PatternKind> {
    Pattern::from_name(name).map(Pattern::kind)
}

/// Every pattern's name, comma-separated.
pub fn pattern_names() -> String {
    PATTERNS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

/// A pattern together with the servers that take part.
pub struct Traffic {
    pub pattern: Arc<dyn TrafficPattern>,
    /// Servers that generate packets, ascending.
    pub active: Active,
    /// `traffic.burst`: another pattern, its load and its cycles `[start, end)`.
    pub burst: Option<Burst>,
}

pub struct Burst {
    pub pattern: Arc<dyn TrafficPattern>,
    pub load: f64,
    pub start: u64,
    pub end: u64,
}

/// What patterns are built from.
pub struct PatternCtx<'a> {
    pub spec: &'a Spec,
    pub topo: &'a dyn Topology,
    pub servers: &'a ServerMap,
    pub active: &'a Active,
    pub rng: &'a mut Rng,
}

impl PatternCtx<'_> {
    /// The grid, or an error naming the pattern that needs one.
    pub fn grid(&self) -> SpecResult<&Cartesian> {
        self.topo.cartesian().ok_or_else(|| {
            SpecError::new(
                "traffic.pattern",
                format!("{:?}", self.spec.traffic.pattern),
                format!("needs a topology with switch coordinates; topology.kind = {:?} has none", self.topo.kind()),
            )
        })
    }
}

/// The servers of each group (dragonflies), for the ADV patterns.
pub struct GroupServers {
    /// Servers of each group, ascending.
    pub members: Vec<Vec<u32>>,
    group: Vec<u32>,
    /// Index of each server among its group's servers.
    pub position: Vec<u32>,
    offset: usize,
}

impl GroupServers {
    pub fn new(ctx: &PatternCtx) -> SpecResult<Self> {
        let (topo, t) = (ctx.topo, &ctx.spec.traffic);
        let g = topo.groups();
        if g < 2 {
            return Err(SpecError::new(
                "traffic.pattern",
                format!("{:?}", t.pattern),
                format!("needs a topology with groups of switches; topology.kind = {:?} has one group", topo.kind()),
            ));
        }
        let AdvKeys { adv_offset } = own_keys(ctx.spec)?;
        let offset = adv_offset.unwrap_or(topo.global_links_per_switch());
        if offset % g == 0 {
            return Err(SpecError::new("traffic.adv_offset", offset, format!("must not be a multiple of the {g} groups (servers would send inside their own group)")));
        }
        let n = ctx.servers.num_servers();
        let mut members = vec![Vec::new(); g];
        let (mut group, mut position) = (vec![0; n], vec![0; n]);
        for s in 0..n {
            let gr = topo.group_of(ctx.servers.switch_of(s));
            group[s] = gr as u32;
            position[s] = members[gr].len() as u32;
            members[gr].push(s as u32);
        }
        Ok(GroupServers { members, group, position, offset: offset % g })
    }
    #[inline]
    pub fn target_group(&self, src: usize) -> usize {
        (self.group[src] as usize + self.offset) % self.members.len()
    }
}

/// Maps a source server to the server with the same local index at `dst_switch`.
pub fn same_local(servers: &ServerMap, src: usize, dst_switch: usize) -> usize {
    let local = servers.local_index(src) % servers.servers_at(dst_switch).max(1);
    servers.server(dst_switch, local)
}

/// Bytes the traffic keeps for the whole network, on every MPI rank: the list of active
/// servers when they are a subset, and the tables of its pattern and of its burst's (the
/// memory estimate, engine/memory).
pub fn table_bytes(spec: &Spec, servers: u64, switches: u64) -> u64 {
    let n = servers;
    let t = &spec.traffic;
    let listed = match active_count(spec, n as usize) {
        Ok(k) if (k as u64) < n => 4 * k as u64,
        _ => 0,
    };
    let of = |name: &str| pattern(name).map_or(0, |k| k.tables.per_server * n + k.tables.per_switch * switches);
    listed + of(&t.pattern) + t.burst.as_ref().map_or(0, |b| of(&b.pattern))
}

/// How many of the network's `n` servers generate traffic (`traffic.active_servers`,
/// `traffic.active_fraction`; all by default).
fn active_count(spec: &Spec, n: usize) -> SpecResult<usize> {
    let t = &spec.traffic;
    Ok(match (t.active_servers, t.active_fraction) {
        (Some(k), _) => {
            if k == 0 || k > n {
                return Err(SpecError::new("traffic.active_servers", k, format!("must be between 1 and the {n} servers of the network")));
            }
            k
        }
        (None, Some(f)) => ((f * n as f64).round() as usize).clamp(1, n),
        (None, None) => n,
    })
}

pub fn build(spec: &Spec, topo: &dyn Topology, servers: &ServerMap) -> SpecResult<Traffic> {
    let n = servers.num_servers();
    let t = &spec.traffic;
    // The set of communicating servers is drawn from its own stream so that changing the
    // pattern does not change which servers are on.
    let mut rng = Rng::seed_from_u64(crate::random::seed_for(spec.run.seed, 0x5e1ec7, 0));
    let count = active_count(spec, n)?;
    let mut active: Vec<u32> = (0..n as u32).collect();
    if count < n {
        active.shuffle(&mut rng);
        active.truncate(count);
        active.sort_unstable();
    }
    let active = Active::of(active, n);
    let mut ctx = PatternCtx { spec, topo, servers, active: &active, rng: &mut rng };
    let name = t.pattern.as_str();
    let kind = pattern(name).ok_or_else(|| SpecError::new("traffic.pattern", format!("{name:?}"), format!("unknown traffic pattern; allowed: {}", pattern_names())))?;
    // Unknown keys and wrong types, for every pattern (those without keys read none).
    own_keys::<serde_json::Value>(spec)?;
    let pattern = (kind.build)(&mut ctx)?;
    let burst = match &t.burst {
        None => None,
        Some(b) => Some(build_burst(spec, topo, servers, b)?),
    };
    Ok(Traffic { pattern, active, burst })
}

/// The burst's pattern, built as the main one with the burst's name (its other keys, such
/// as `adv_offset`, from the `[traffic]` table), over the same servers.
fn build_burst(spec: &Spec, topo: &dyn Topology, servers: &ServerMap, b: &crate::spec::BurstSpec) -> SpecResult<Burst> {
    if !(b.load > 0.0 && b.load <= 1.0) {
        return Err(SpecError::new("traffic.burst.load", b.load, "must be in (0, 1] phits per server per cycle"));
    }
    if b.cycles == 0 || b.start.checked_add(b.cycles).is_none() {
        return Err(SpecError::new("traffic.burst.cycles", b.cycles, "must be at least 1 cycle, and start + cycles must fit in 64 bits"));
    }
    let mut alone = spec.clone();
    alone.traffic.pattern = b.pattern.clone();
    alone.traffic.burst = None;
    let t = build(&alone, topo, servers).map_err(|e| if e.key == "traffic.pattern" { SpecError::new("traffic.burst.pattern", format!("{:?}", b.pattern), e.allowed) } else { e })?;
    Ok(Burst { pattern: t.pattern, load: b.load, start: b.start, end: b.start + b.cycles })
}

/// Destination drawn uniformly among `pool` without `src` (which may or may not be in it).
pub fn uniform_other(pool: &Active, src: usize, rng: &mut Rng) -> usize {
    use rand::Rng as _;
    if pool.len() == 1 {
        return pool.at(0) as usize;
    }
    loop {
        let d = pool.at(rng.gen_range(0..pool.len())) as usize;
        if d != src {
            return d;
        }
    }
}

/// A pattern that maps every switch to one target switch by its coordinates (shift,
/// transpose, bit complement, tornado); servers keep their local index.
pub struct SwitchPermutation {
    name: &'static str,
    target: Vec<u32>,
    servers: ServerMap,
}

impl SwitchPermutation {
    pub fn from_coords(ctx: &PatternCtx, name: &'static str, f: impl Fn(&Cartesian, &[usize]) -> Vec<usize>) -> SpecResult<Self> {
        let grid = ctx.grid()?;
        let target = (0..grid.size()).map(|s| grid.switch_at(&f(grid, &grid.coords(s))) as u32).collect();
        Ok(SwitchPermutation { name, target, servers: ctx.servers.clone() })
    }
}

impl TrafficPattern for SwitchPermutation {
    fn name(&self) -> &'static str {
        self.name
    }
    fn destination(&self, src: usize, _rng: &mut Rng) -> usize {
        same_local(&self.servers, src, self.target[self.servers.switch_of(src)] as usize)
    }
}
