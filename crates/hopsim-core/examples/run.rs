//! Run one experiment file and print its metrics: `cargo run --release --example run -- FILE.toml`.
//! The memory estimate of the run (docs/model.md) goes to stderr, to compare with the peak.
#[global_allocator]
static ALLOC: hopsim_core::huge_pages::HugePageAlloc = hopsim_core::huge_pages::HugePageAlloc;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run FILE.toml");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let spec = hopsim_core::spec::from_toml_str(&text);
    if let Ok(s) = &spec {
        if let Ok(topo) = hopsim_core::topology::build(s) {
            let est = hopsim_core::engine::memory::estimate(s, topo.as_ref());
            eprintln!("memory estimate: {} bytes", est.total());
            for part in &est.parts {
                eprintln!("  {}: {} bytes ({})", part.what, part.bytes, part.key);
            }
        }
    }
    // Long runs (the million-node torus) say how far they are: the engine stores its cycle
    // count every 64 cycles, read here once a minute.
    let cycles = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = cycles.clone();
    let start = std::time::Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_secs(60));
        let c = seen.load(std::sync::atomic::Ordering::Relaxed);
        eprintln!("progress: {c} cycles after {:.0} s", start.elapsed().as_secs_f64());
    });
    match spec.and_then(|s| hopsim_core::simulate_with_progress(&s, Some(cycles))) {
        Ok(r) => println!("{}", serde_json::to_string_pretty(&r.metrics).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
