//! How much memory this process may still take: the machine's available memory, the limit of
//! the process's own cgroup and of every cgroup above it (a Slurm job's, a container's), and
//! `HOPSIM_MAX_MEMORY`. And the one grammar of memory sizes, shared with `[cluster] memory`.

use crate::error::{SpecError, SpecResult};
use std::path::{Path, PathBuf};

/// The environment variable that lowers the memory a run may take.
pub const MAX_MEMORY_VAR: &str = "HOPSIM_MAX_MEMORY";

/// The environment variable that turns the refusal of a run larger than the memory
/// available into a warning (`refuses`): the estimate is made for a saturated network, and a
/// run at a load far below saturation takes a fraction of it.
pub const MEMORY_CHECK_VAR: &str = "HOPSIM_MEMORY_CHECK";

/// Whether a run the estimate says does not fit is refused (`HOPSIM_MEMORY_CHECK` unset or
/// `refuse`) or only warned about (`warn`); an error naming the variable for any other value.
pub fn refuses() -> SpecResult<bool> {
    match std::env::var(MEMORY_CHECK_VAR).as_deref() {
        Err(_) | Ok("refuse") => Ok(true),
        Ok("warn") => Ok(false),
        Ok(other) => Err(SpecError::new(MEMORY_CHECK_VAR, format!("{other:?}"), "must be \"refuse\" (the default) or \"warn\"")),
    }
}

/// What a memory size may be, for error messages.
pub const SIZE_FORMS: &str = "a size in bytes: a number (decimals allowed) and an optional unit, \
B, kB, MB, GB, TB, PB (powers of 1000; K, M, G, T, P alike) or KiB, MiB, GiB, TiB, PiB (powers of 1024), \
case ignored, such as 100MB, 0.5GiB or 4G";

/// Units as Dask's `parse_bytes` reads them (`[cluster] memory` goes to dask-jobqueue, which
/// calls it): a letter or a letter and B is decimal, with `i` binary.
const UNITS: [(&str, u64); 16] = [
    ("", 1),
    ("b", 1),
    ("k", 1_000),
    ("kb", 1_000),
    ("m", 1_000_000),
    ("mb", 1_000_000),
    ("g", 1_000_000_000),
    ("gb", 1_000_000_000),
    ("t", 1_000_000_000_000),
    ("tb", 1_000_000_000_000),
    ("p", 1_000_000_000_000_000),
    ("pb", 1_000_000_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
];
/// Dask also reads `ki`, `mi`, ... and `pib` as binary.
const BINARY_SHORT: [(&str, u64); 6] = [("ki", 1 << 10), ("mi", 1 << 20), ("gi", 1 << 30), ("ti", 1 << 40), ("pi", 1 << 50), ("pib", 1 << 50)];

/// A memory size in bytes, read as Dask's `parse_bytes` reads it (whatever this accepts, Dask
/// accepts with the same value); `None` if it is not one. Sizes are whole bytes, rounded down,
/// and at least one.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    // The unit is the trailing run of letters; an `e` inside the number (1e9) is not one.
    let at = t.len() - t.bytes().rev().take_while(|c| c.is_ascii_alphabetic()).count();
    let (number, unit) = (t[..at].trim_end(), t[at..].to_ascii_lowercase());
    let multiplier = UNITS.iter().chain(BINARY_SHORT.iter()).find(|(u, _)| *u == unit)?.1;
    // Digits first: Rust would also read `inf`, `nan` and a sign, which are no sizes.
    if !number.bytes().next().is_some_and(|c| c.is_ascii_digit() || c == b'.')
        || !number.bytes().all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let bytes = number.parse::<f64>().ok()? * multiplier as f64;
    // u64::MAX as f64 rounds up to 2^64, which does not fit.
    if !bytes.is_finite() || bytes >= u64::MAX as f64 || bytes < 1.0 {
        return None;
    }
    Some(bytes as u64)
}

/// `parse_size`, or the error naming `key`, the value and the forms allowed.
pub fn parse_size_for(key: &str, text: &str) -> SpecResult<u64> {
    parse_size(text).ok_or_else(|| SpecError::new(key, format!("{text:?}"), format!("must be {SIZE_FORMS}")))
}

/// Where the files that tell the memory available are: `/` on a real machine, a directory
/// holding a fake `proc/` and `sys/fs/cgroup/` in tests.
#[derive(Debug, Clone)]
pub struct Root(pub PathBuf);

impl Default for Root {
    fn default() -> Self {
        Root(PathBuf::from("/"))
    }
}

impl Root {
    fn path(&self, absolute: &str) -> PathBuf {
        self.0.join(absolute.trim_start_matches('/'))
    }

    fn read(&self, absolute: &str) -> Option<String> {
        std::fs::read_to_string(self.path(absolute)).ok()
    }
}

/// Memory the process may still take: the smallest of the system's available memory, what
/// every cgroup it is in (its own and their ancestors) still allows, and `max_memory` (the
/// value of `HOPSIM_MAX_MEMORY`, if set). `Ok(None)` when none of them can be read; an error
/// naming `HOPSIM_MAX_MEMORY` when its value is not a size.
pub fn available_in(root: &Root, max_memory: Option<&str>) -> SpecResult<Option<u64>> {
    let user = max_memory.map(|v| parse_size_for(MAX_MEMORY_VAR, v)).transpose()?;
    let meminfo = root.read("/proc/meminfo").and_then(|t| {
        let line = t.lines().find(|l| l.starts_with("MemAvailable:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb.saturating_mul(1024))
    });
    Ok([meminfo, cgroup_headroom(root), user].into_iter().flatten().min())
}

/// `available_in` of this machine and this process's environment.
pub fn available() -> SpecResult<Option<u64>> {
    let var = std::env::var_os(MAX_MEMORY_VAR).map(|v| v.to_string_lossy().into_owned());
    available_in(&Root::default(), var.as_deref())
}

/// Which cgroup hierarchy holds the memory controller.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Version {
    /// The unified hierarchy: `memory.max`, `memory.current`.
    V2,
    /// The memory controller's own hierarchy: `memory.limit_in_bytes`, `memory.usage_in_bytes`.
    V1,
}

impl Version {
    fn limit_file(self) -> &'static str {
        match self {
            Version::V2 => "memory.max",
            Version::V1 => "memory.limit_in_bytes",
        }
    }
    fn usage_file(self) -> &'static str {
        match self {
            Version::V2 => "memory.current",
            Version::V1 => "memory.usage_in_bytes",
        }
    }
    /// The page cache the kernel drops before it kills: not memory a run competes with.
    fn inactive_file_stat(self) -> &'static str {
        match self {
            Version::V2 => "inactive_file",
            Version::V1 => "total_inactive_file",
        }
    }
}

/// The cgroup the process is in for memory, from `/proc/self/cgroup`: the v1 `memory`
/// controller's line if there is one (then the unified hierarchy does not control memory),
/// else the unified `0::` line.
fn own_cgroup(root: &Root) -> Option<(Version, String)> {
    let text = root.read("/proc/self/cgroup")?;
    let mut unified = None;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else { continue };
        if controllers.split(',').any(|c| c == "memory") {
            return Some((Version::V1, path.to_string()));
        }
        if controllers.is_empty() {
            unified = Some((Version::V2, path.to_string()));
        }
    }
    unified
}

/// Where the hierarchy is mounted and which of its cgroups the mount shows as its top, from
/// `/proc/self/mountinfo` (inside a container the mount's top is the container's cgroup);
/// the usual places when it cannot be read.
fn mount_of(root: &Root, version: Version) -> (PathBuf, String) {
    let found = root.read("/proc/self/mountinfo").and_then(|text| {
        text.lines().find_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split_whitespace().collect();
            let after: Vec<&str> = after.split_whitespace().collect();
            let (top, point) = (fields.get(3)?, fields.get(4)?);
            let fstype = *after.first()?;
            let is_it = match version {
                Version::V2 => fstype == "cgroup2",
                Version::V1 => fstype == "cgroup" && after.get(2)?.split(',').any(|o| o == "memory"),
            };
            is_it.then(|| (root.path(point), top.to_string()))
        })
    });
    found.unwrap_or_else(|| {
        let point = match version {
            Version::V2 => "/sys/fs/cgroup",
            Version::V1 => "/sys/fs/cgroup/memory",
        };
        (root.path(point), "/".to_string())
    })
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// What the tightest of the process's cgroup and its ancestors still allows: for each with a
/// limit, the limit less its usage (not counting page cache the kernel would drop first).
/// A cgroup without a limit (`max`), or whose files cannot be read, binds nothing.
fn cgroup_headroom(root: &Root) -> Option<u64> {
    let (version, own) = own_cgroup(root)?;
    let (point, top) = mount_of(root, version);
    // The process's path as seen below the mount's top (a container sees only its part).
    let below = own.strip_prefix(top.trim_end_matches('/')).unwrap_or(&own);
    let mut dir = point.join(below.trim_start_matches('/'));
    if !dir.starts_with(&point) {
        return None;
    }
    let mut tightest: Option<u64> = None;
    loop {
        if let Some(limit) = read_u64(&dir.join(version.limit_file())) {
            let usage = read_u64(&dir.join(version.usage_file())).unwrap_or(0);
            let cache = std::fs::read_to_string(dir.join("memory.stat")).ok().and_then(|t| {
                t.lines().find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == version.inactive_file_stat()).then(|| v.trim().parse::<u64>().ok()).flatten()
                })
            });
            let used = usage.saturating_sub(cache.unwrap_or(0));
            let room = limit.saturating_sub(used);
            tightest = Some(tightest.map_or(room, |t| t.min(room)));
        }
        if dir == point || !dir.pop() || !dir.starts_with(&point) {
            break;
        }
    }
    tightest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_dask_reads_them() {
        assert_eq!(parse_size("100MB"), Some(100_000_000));
        assert_eq!(parse_size("100 MB"), Some(100_000_000));
        assert_eq!(parse_size("0.1G"), Some(100_000_000));
        assert_eq!(parse_size("0.1GB"), Some(100_000_000));
        assert_eq!(parse_size("4GiB"), Some(4 << 30));
        assert_eq!(parse_size("512Mi"), Some(512 << 20));
        assert_eq!(parse_size("512mib"), Some(512 << 20));
        assert_eq!(parse_size("8gb"), Some(8_000_000_000));
        assert_eq!(parse_size("64k"), Some(64_000));
        assert_eq!(parse_size("64KiB"), Some(65_536));
        assert_eq!(parse_size("1500000"), Some(1_500_000));
        assert_eq!(parse_size("1500000B"), Some(1_500_000));
        assert_eq!(parse_size("1e9"), Some(1_000_000_000));
        assert_eq!(parse_size("1.5e3 MB"), Some(1_500_000_000));
        assert_eq!(parse_size(".5GB"), Some(500_000_000));
        assert_eq!(parse_size("2PiB"), Some(2 << 50));
        assert_eq!(parse_size("1.9"), Some(1));
    }

    #[test]
    fn not_sizes() {
        for bad in ["", "abc", "MB", "-1GB", "0", "0.1", "1 0GB", "12XB", "1e", "inf", "nan", "1e30GB", "18446744073709551616", "1,5GB", "GB5", "5 G B", "0x10", "+5GB", "1..2GB"] {
            assert_eq!(parse_size(bad), None, "{bad:?} should not be a size");
        }
        let e = parse_size_for(MAX_MEMORY_VAR, "abc").unwrap_err();
        assert_eq!(e.key, MAX_MEMORY_VAR);
        assert!(e.to_string().contains("\"abc\"") && e.to_string().contains("MiB"), "{e}");
    }

    /// A fake `/` in a fresh temporary directory, removed when dropped.
    struct Fake(PathBuf);

    impl Fake {
        fn new(name: &str) -> Fake {
            let dir = std::env::temp_dir().join(format!("hopsim-memory-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Fake(dir)
        }
        fn file(&self, path: &str, text: &str) -> &Fake {
            let p = self.0.join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
            self
        }
        fn root(&self) -> Root {
            Root(self.0.clone())
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const MEMINFO: &str = "MemTotal:       24000000 kB\nMemAvailable:   20000000 kB\n";
    const GB: u64 = 1_000_000_000;

    #[test]
    fn v2_own_cgroup_not_the_root() {
        let f = Fake::new("v2");
        f.file("/proc/meminfo", MEMINFO)
            .file("/proc/self/cgroup", "0::/slurm/job_7/step_0\n")
            .file("/proc/self/mountinfo", "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n")
            // The machine's root has no limit file; the job's cgroup has 100 MB, 30 MB used.
            .file("/sys/fs/cgroup/slurm/job_7/step_0/memory.max", "100000000\n")
            .file("/sys/fs/cgroup/slurm/job_7/step_0/memory.current", "30000000\n");
        assert_eq!(available_in(&f.root(), None).unwrap(), Some(70_000_000));
    }

    #[test]
    fn v2_a_parent_binds_and_max_does_not() {
        let f = Fake::new("v2-nested");
        f.file("/proc/meminfo", MEMINFO)
            .file("/proc/self/cgroup", "0::/slurm/job_7/step_0\n")
            .file("/proc/self/mountinfo", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
            .file("/sys/fs/cgroup/slurm/job_7/step_0/memory.max", "max\n")
            .file("/sys/fs/cgroup/slurm/job_7/step_0/memory.current", "5000000\n")
            .file("/sys/fs/cgroup/slurm/job_7/memory.max", "2000000000\n")
            .file("/sys/fs/cgroup/slurm/job_7/memory.current", "1500000000\n")
            // Page cache the kernel drops first is not in the way.
            .file("/sys/fs/cgroup/slurm/job_7/memory.stat", "anon 1000000000\nfile 500000000\ninactive_file 400000000\n")
            .file("/sys/fs/cgroup/slurm/memory.max", "max\n");
        assert_eq!(available_in(&f.root(), None).unwrap(), Some(900_000_000));
    }

    #[test]
    fn v1_memory_controller_line() {
        let f = Fake::new("v1");
        f.file("/proc/meminfo", MEMINFO)
            .file("/proc/self/cgroup", "9:name=systemd:/\n4:memory:/batch/job1\n3:cpu,cpuacct:/\n0::/\n")
            .file("/proc/self/mountinfo", "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n")
            .file("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n")
            .file("/sys/fs/cgroup/memory/memory.usage_in_bytes", "9000000000\n")
            .file("/sys/fs/cgroup/memory/batch/memory.limit_in_bytes", "9223372036854771712\n")
            .file("/sys/fs/cgroup/memory/batch/job1/memory.limit_in_bytes", "104857600\n")
            .file("/sys/fs/cgroup/memory/batch/job1/memory.usage_in_bytes", "4857600\n");
        assert_eq!(available_in(&f.root(), None).unwrap(), Some(100_000_000));
    }

    #[test]
    fn a_container_sees_its_cgroup_as_the_mount_top() {
        let f = Fake::new("container");
        f.file("/proc/meminfo", MEMINFO)
            .file("/proc/self/cgroup", "4:memory:/docker/abc\n")
            .file("/proc/self/mountinfo", "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n")
            .file("/sys/fs/cgroup/memory/memory.limit_in_bytes", "500000000\n")
            .file("/sys/fs/cgroup/memory/memory.usage_in_bytes", "100000000\n");
        assert_eq!(available_in(&f.root(), None).unwrap(), Some(400_000_000));
    }

    #[test]
    fn without_mountinfo_the_usual_places() {
        let f = Fake::new("no-mountinfo");
        f.file("/proc/meminfo", MEMINFO)
            .file("/proc/self/cgroup", "0::/user.slice\n")
            .file("/sys/fs/cgroup/user.slice/memory.max", "3000000000\n")
            .file("/sys/fs/cgroup/user.slice/memory.current", "1000000000\n");
        assert_eq!(available_in(&f.root(), None).unwrap(), Some(2 * GB));
    }

    #[test]
    fn unreadable_or_unlimited_cgroups_leave_meminfo() {
        let f = Fake::new("unreadable");
        f.file("/proc/meminfo", MEMINFO).file("/proc/self/cgroup", "0::/gone/away\n");
        assert_eq!(available_in(&f.root(), None).unwrap(), Some(20_000_000 * 1024));
        let g = Fake::new("garbled");
        g.file("/proc/meminfo", MEMINFO)
            .file("/proc/self/cgroup", "0::/a\n")
            .file("/sys/fs/cgroup/a/memory.max", "max\n")
            .file("/sys/fs/cgroup/memory.max", "lots\n");
        assert_eq!(available_in(&g.root(), None).unwrap(), Some(20_000_000 * 1024));
        // Nothing readable at all: no limit known, no check.
        let h = Fake::new("nothing");
        assert_eq!(available_in(&h.root(), None).unwrap(), None);
        // A path that would climb out of the hierarchy is ignored.
        let i = Fake::new("escape");
        i.file("/proc/self/cgroup", "0::/../../etc\n");
        assert_eq!(available_in(&i.root(), None).unwrap(), None);
    }

    #[test]
    fn max_memory_lowers_and_must_be_a_size() {
        let f = Fake::new("user");
        f.file("/proc/meminfo", MEMINFO);
        assert_eq!(available_in(&f.root(), Some("100MB")).unwrap(), Some(100_000_000));
        assert_eq!(available_in(&f.root(), Some("0.1G")).unwrap(), Some(100_000_000));
        assert_eq!(available_in(&f.root(), Some("1TB")).unwrap(), Some(20_000_000 * 1024));
        for bad in ["abc", "", "100 MBs", "-5G"] {
            let e = available_in(&f.root(), Some(bad)).unwrap_err();
            assert_eq!(e.key, MAX_MEMORY_VAR, "{bad:?}");
        }
    }
}
