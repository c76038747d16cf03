//! Run one experiment file and print its metrics: `cargo run --release --example run -- FILE.toml`.
#[global_allocator]
static ALLOC: hopsim_core::huge_pages::HugePageAlloc = hopsim_core::huge_pages::HugePageAlloc;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run FILE.toml");
    let text = std::fs::read_to_string(&path).expect("readable file");
    match hopsim_core::spec::from_toml_str(&text).and_then(|s| hopsim_core::simulate(&s)) {
        Ok(r) => println!("{}", serde_json::to_string_pretty(&r.metrics).unwrap()),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
