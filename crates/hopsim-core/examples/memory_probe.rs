//! What a cache miss costs on this machine: the numbers that bound a network far larger than
//! the cache (docs/benchmark-log.md, "What a hop of the million-node torus costs in memory").
//!
//! `cargo run --release -p hopsim-core --example memory_probe [MiB] [switches]` prints, for a
//! working set of MiB (3,000 by default, the million-node torus's size):
//! - how long one load waits when each address depends on the load before (latency);
//! - how many independent random lines a core reads per second, alone and in runs of
//!   adjacent lines, and four lines from one 4 KB page;
//! - a switch hop's lines, spread over six record arrays as the engine keeps them, against
//!   the same lines in one record per switch;
//! - a cycle's switch steps as the engine makes them (ascending switch numbers, each switch's
//!   records asked for four steps ahead) with the records of today's torus switch, and with a
//!   compact record per switch asked for whole or only where the step reads, on a network of
//!   `switches` (a million by default; 32,768, the 32x32x32 torus, keeps its records in this
//!   machine's last-level cache).

use hopsim_core::prefetch::{line, slice};
use hopsim_core::router::{Port, Vc};
use std::mem::size_of;
use std::hint::black_box;
use std::time::Instant;

const LINE: usize = 64;

/// xorshift64: the probe must not spend its time drawing addresses.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `bytes` of memory on huge pages where the kernel gives them, as the engine asks for them.
fn memory(bytes: usize) -> Vec<u8> {
    let mut v = vec![0u8; bytes];
    #[cfg(target_os = "linux")]
    // SAFETY: advice on memory this function owns; it changes no contents.
    unsafe {
        libc::madvise(v.as_mut_ptr() as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
    }
    for i in (0..bytes).step_by(4096) {
        v[i] = i as u8;
    }
    v
}

/// Nanoseconds per place when each of `places` reads `lines` lines at `offsets(place)`,
/// asking for the place 8 ahead before reading this one.
fn read_places(mem: &[u8], places: &[usize], lines: impl Fn(usize, usize) -> usize, per_place: usize) -> f64 {
    let start = Instant::now();
    let mut sum = 0u64;
    for i in 0..places.len() {
        if let Some(&ahead) = places.get(i + 8) {
            for l in 0..per_place {
                line(&mem[lines(ahead, l)]);
            }
        }
        for l in 0..per_place {
            sum = sum.wrapping_add(mem[lines(places[i], l)] as u64);
        }
    }
    black_box(sum);
    start.elapsed().as_secs_f64() * 1e9 / places.len() as f64
}

fn main() {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let bytes = mib << 20;
    let mem = memory(bytes);
    let lines = bytes / LINE;
    let mut draw = Draw(0x9E37_79B9_7F4A_7C15);

    // Latency: the next address depends on the value just read.
    let chase = 1_000_000;
    let start = Instant::now();
    let mut at = 0usize;
    for _ in 0..chase {
        let r = draw.next() as usize % lines;
        at = mem[(r ^ (at & 1)) * LINE] as usize & 1;
    }
    black_box(at);
    println!("{mib} MiB: a dependent load waits {:.0} ns", start.elapsed().as_secs_f64() * 1e9 / chase as f64);

    // Throughput: independent places of 1, 2, 4, 8 and 20 adjacent lines.
    for run in [1usize, 2, 4, 8, 20] {
        let places: Vec<usize> = (0..10_000_000 / run).map(|_| draw.next() as usize % (lines - run)).collect();
        let ns = read_places(&mem, &places, |p, l| (p + l) * LINE, run);
        println!("  {run:>2} adjacent line(s) at random: {ns:6.1} ns a place, {:5.1} ns a line", ns / run as f64);
    }
    // Four random lines of one random 4 KB page.
    let pages = bytes / 4096;
    let places: Vec<usize> = (0..2_500_000).map(|_| draw.next() as usize % pages).collect();
    let ns = read_places(&mem, &places, |p, l| p * 4096 + ((p * 7 + l * 23) % 64) * LINE, 4);
    println!("   4 lines of one 4 KB page:       {ns:6.1} ns a place, {:5.1} ns a line", ns / 4.0);

    hop_layouts(&mut draw);
    let switches: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    swept_steps(&mut draw, switches);
}

/// A hop on a torus switch of 7 ports and 2 VCs touches, besides its packet, 4 port lines, 6
/// VC lines, a ring line of each buffer, a phit counter and the port bit sets. Kept as six
/// arrays (ports, VCs, input slots, output slots, phit counters, port sets: 448, 784, 588,
/// 196, 28 and 32 bytes a switch) or as one 2,112-byte record per switch.
fn hop_layouts(draw: &mut Draw) {
    const SWITCHES: usize = 1_000_000;
    const PACKETS: usize = 1_250_000;
    let sizes = [448usize, 784, 588, 196, 28, 32];
    let touched = [4usize, 6, 1, 1, 1, 1];
    let record: usize = sizes.iter().sum();
    let arrays: Vec<Vec<u8>> = sizes.iter().map(|&b| memory(b * SWITCHES)).collect();
    let one = memory(record * SWITCHES);
    let packets = memory(PACKETS * 128);
    let hops: Vec<(usize, usize, usize)> = (0..5_000_000)
        .map(|_| {
            let r = draw.next() as usize;
            (r % SWITCHES, (r >> 20) % PACKETS, (r >> 40) % 7)
        })
        .collect();
    for apart in [true, false] {
        let start = Instant::now();
        let mut sum = 0u64;
        for &(s, pkt, port) in &hops {
            sum = sum.wrapping_add(packets[pkt * 128] as u64);
            if apart {
                for ((a, &b), &n) in arrays.iter().zip(&sizes).zip(&touched) {
                    for l in 0..n {
                        sum = sum.wrapping_add(a[s * b + (port + l) * LINE % b] as u64);
                    }
                }
            } else {
                for l in 0..touched.iter().sum::<usize>() {
                    sum = sum.wrapping_add(one[s * record + (port * LINE + l * LINE) % record] as u64);
                }
            }
        }
        black_box(sum);
        let ns = start.elapsed().as_secs_f64() * 1e9 / hops.len() as f64;
        println!("a hop's 14 switch lines and its packet, {}: {ns:.0} ns", if apart { "in six arrays" } else { "in one record per switch" });
    }
}

/// Ask for the lines of `bytes` bytes from byte `at` of `mem`, as the engine asks for a
/// switch's records.
fn ask(mem: &[u8], at: usize, bytes: usize) {
    slice(&mem[at..at + bytes]);
}

/// A switch step of `swept_steps`: the switch, the input and output ports it serves, the head's
/// packet.
#[derive(Clone, Copy)]
struct Step {
    switch: usize,
    input: usize,
    output: usize,
    packet: usize,
}

/// A swept cycle steps three switches in ten, drawn at random, in ascending number, as a cycle
/// of the million-node torus at load 0.05 does (docs/benchmark-log.md has the count), and asks
/// for each switch's records four steps before stepping it. A step with one head reads the
/// port sets, an input and an output port with their two VCs each (the output port's line
/// holds its phit counter), and the head's packet. Three layouts:
/// - today's, sized from the engine's own records (`Port`, `Vc`): ports (7 x 64 bytes, each
///   holding its link's phit counter), VCs (14 x 48) and port sets (32) in arrays of their
///   own, the switch's ports and VCs asked for whole, or only where read;
/// - one record of 960 bytes per switch (15 lines: a line of port sets and counters, then 7
///   ports of 128 bytes, each holding its two VCs), asked for whole;
/// - the same record, asked for only at the 5 lines the step reads.
fn swept_steps(draw: &mut Draw, switches: usize) {
    let packets_held = switches + switches / 4;
    println!("swept steps on {switches} switches:");
    const AHEAD: usize = 4;
    const COMPACT: usize = 960;
    // A torus switch of the engine: 7 ports with 2 VCs each.
    let (port, vc_pair) = (size_of::<Port>(), 2 * size_of::<Vc>());
    let (port_bytes, vc_bytes) = (7 * port, 7 * vc_pair);
    let (ports, vcs, sets) = (memory(port_bytes * switches), memory(vc_bytes * switches), memory(32 * switches));
    let compact = memory(COMPACT * switches);
    let packets = memory(packets_held * 128);
    // Four cycles' due switches, and for each step its input port, output port and packet.
    let mut steps: Vec<Step> = Vec::new();
    for _ in 0..4 {
        for s in 0..switches {
            let r = draw.next() as usize;
            if r % 10 < 3 {
                let (i, o) = ((r >> 8) % 7, (r >> 16) % 7);
                steps.push(Step { switch: s, input: i, output: o, packet: (r >> 24) % packets_held });
            }
        }
    }
    let time = |name: &str, ask_for: &dyn Fn(&Step), read: &dyn Fn(&Step) -> u64| {
        let start = Instant::now();
        let mut sum = 0u64;
        for k in 0..steps.len() {
            if let Some(ahead) = steps.get(k + AHEAD) {
                ask_for(ahead);
            }
            sum = sum.wrapping_add(read(&steps[k]));
        }
        black_box(sum);
        println!("  a swept step, {name}: {:.0} ns", start.elapsed().as_secs_f64() * 1e9 / steps.len() as f64);
    };
    let read_today = |&Step { switch: s, input: i, output: o, packet: pkt }: &Step| {
        let mut t = sets[s * 32] as u64 + packets[pkt * 128] as u64;
        for p in [i, o] {
            let v = s * vc_bytes + p * vc_pair;
            t += ports[s * port_bytes + p * port] as u64 + vcs[v] as u64 + vcs[v + vc_pair - 1] as u64;
        }
        t
    };
    time(
        "today's records, asked for whole (20-21 lines)",
        &|&Step { switch: s, packet: pkt, .. }| {
            ask(&sets, s * 32, 32);
            ask(&ports, s * port_bytes, port_bytes);
            ask(&vcs, s * vc_bytes, vc_bytes);
            ask(&packets, pkt * 128, 1);
        },
        &read_today,
    );
    time(
        "today's records, asked for where read (7-9 lines)",
        &|&Step { switch: s, input: i, output: o, packet: pkt }| {
            ask(&sets, s * 32, 1);
            for p in [i, o] {
                ask(&ports, s * port_bytes + p * port, 1);
                ask(&vcs, s * vc_bytes + p * vc_pair, vc_pair);
            }
            ask(&packets, pkt * 128, 1);
        },
        &read_today,
    );
    let read_compact = |&Step { switch: s, input: i, output: o, packet: pkt }: &Step| {
        let port = |p: usize| compact[s * COMPACT + 64 + p * 128] as u64 + compact[s * COMPACT + 64 + p * 128 + 127] as u64;
        compact[s * COMPACT] as u64 + port(i) + port(o) + packets[pkt * 128] as u64
    };
    time(
        "one 960-byte record, asked for whole (16 lines)",
        &|&Step { switch: s, packet: pkt, .. }| {
            ask(&compact, s * COMPACT, COMPACT);
            ask(&packets, pkt * 128, 1);
        },
        &read_compact,
    );
    time(
        "one 960-byte record, asked for where read (6 lines)",
        &|&Step { switch: s, input: i, output: o, packet: pkt }| {
            ask(&compact, s * COMPACT, 1);
            for p in [i, o] {
                ask(&compact, s * COMPACT + 64 + p * 128, 128);
            }
            ask(&packets, pkt * 128, 1);
        },
        &read_compact,
    );
}
