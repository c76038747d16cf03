//! Tells the extension whether it was compiled from the profile of pgo/ (the build backend,
//! pgo/pgo_backend.py, adds `-Cprofile-use`), and which engine that profile was counted on:
//! `hopsim --version` says so, and the benchmark notes a profile older than the engine.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let mut profile = None;
    let mut flags = flags.split('\x1f').peekable();
    while let Some(flag) = flags.next() {
        // `-Cprofile-use=P`, or `-C` then `profile-use=P`.
        let option = if flag == "-C" { flags.peek().copied().unwrap_or("") } else { flag.strip_prefix("-C").unwrap_or("") };
        if let Some(path) = option.strip_prefix("profile-use=") {
            profile = Some(std::path::PathBuf::from(path));
        }
    }
    // The git tree of the engine's code the profile was counted on, from the record beside
    // it (pgo/train.py writes both).
    let tree = profile.map(|p| {
        let about = p.with_file_name("profile.json");
        println!("cargo:rerun-if-changed={}", about.display());
        let record: Option<serde_json::Value> = std::fs::read_to_string(&about).ok().and_then(|t| serde_json::from_str(&t).ok());
        record.as_ref().and_then(|r| r["engine_tree"].as_str()).unwrap_or("unknown").to_owned()
    });
    println!("cargo:rustc-env=HOPSIM_PROFILE_TREE={}", tree.unwrap_or_default());
}
