//! How many of this machine's cores no other process is using now, for the automatic number
//! of threads of a run (`run.threads` not given).
//!
//! Measured from the processor time the kernel counts (`/proc/stat`) over a short window,
//! not read from the load average. The one-minute load average trails what the machine does
//! by a minute or more: a run started just after another one ended found both cores "busy"
//! and took one thread (the 510,000-cycle HyperX then took 4 min 9 s instead of about 2), and
//! one started just after another one began found them free and took both.

use std::time::Duration;

/// How long the processor time is watched. The kernel counts it in hundredths of a second, so
/// on 2 cores the window sees 20 counts; a run that is split across threads runs for seconds
/// at least (8,192 ports or more).
pub const WINDOW: Duration = Duration::from_millis(100);

/// Processor time counted by the kernel, in its units, summed over every processor it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    /// Idle, waiting for a disk included (the processor could run a thread then).
    idle: u64,
    total: u64,
    /// Processors the counts cover (the `cpuN` lines).
    cpus: usize,
}

impl Times {
    /// The first line of `/proc/stat` ("cpu  user nice system idle iowait irq softirq steal
    /// ..."), and its count of `cpuN` lines. Time a hypervisor gave to another machine
    /// (steal) is busy: it was not ours to use. Guest time is already in user time.
    pub fn parse(stat: &str) -> Option<Times> {
        let mut lines = stat.lines();
        let first = lines.next()?;
        let mut fields = first.strip_prefix("cpu ")?.split_whitespace().map(|f| f.parse::<u64>());
        let mut next = || fields.next().and_then(Result::ok);
        let (user, nice, system, idle, iowait) = (next()?, next()?, next()?, next()?, next()?);
        let (irq, softirq, steal) = (next().unwrap_or(0), next().unwrap_or(0), next().unwrap_or(0));
        let cpus = lines.filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)).count();
        Some(Times { idle: idle + iowait, total: user + nice + system + idle + iowait + irq + softirq + steal, cpus: cpus.max(1) })
    }

    fn now() -> Option<Times> {
        Times::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Processors idle on average between `self` and the later `after`, rounded to the
    /// nearest; `None` when no time was counted in between.
    pub fn idle_until(self, after: Times) -> Option<usize> {
        let total = after.total.checked_sub(self.total).filter(|&t| t > 0)?;
        let idle = after.idle.saturating_sub(self.idle).min(total);
        Some(((idle * after.cpus as u64 + total / 2) / total) as usize)
    }
}

/// Cores, among the `cores` this process may use, that were idle over the last `WINDOW`: at
/// least 1, and all of them where the kernel does not say (not Linux).
pub fn free_cores(cores: usize) -> usize {
    let cores = cores.max(1);
    let Some(before) = Times::now() else { return cores };
    std::thread::sleep(WINDOW);
    let idle = Times::now().and_then(|after| before.idle_until(after));
    idle.map_or(cores, |idle| idle.clamp(1, cores))
}

#[cfg(test)]
mod tests {
    use super::Times;

    const STAT: &str = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1 2 3\nctxt 7\n";

    #[test]
    fn reads_the_summary_line_and_counts_the_processors() {
        assert_eq!(Times::parse(STAT), Some(Times { idle: 850, total: 1000, cpus: 2 }));
        assert_eq!(Times::parse("cpu0 1 2 3 4 5\n"), None, "no summary line");
        assert_eq!(Times::parse("cpu  1 2 x 4 5\n"), None, "a field that is not a count");
    }

    #[test]
    fn idle_processors_are_the_idle_share_of_the_time_counted() {
        let at = |idle, total| Times { idle, total, cpus: 2 };
        // One core busy all the window, the other idle: one free.
        assert_eq!(at(1000, 2000).idle_until(at(1010, 2020)), Some(1));
        // Both busy, both idle, and another process keeping a core busy 70 % of the time.
        assert_eq!(at(1000, 2000).idle_until(at(1000, 2020)), Some(0));
        assert_eq!(at(1000, 2000).idle_until(at(1020, 2020)), Some(2));
        assert_eq!(at(1000, 2000).idle_until(at(1013, 2020)), Some(1));
        // Nothing counted in between (a clock that did not move): no reading.
        assert_eq!(at(1000, 2000).idle_until(at(1000, 2000)), None);
        // On a host of 64 processors of which this process may use 2, with 30 idle.
        let host = |idle, total| Times { idle, total, cpus: 64 };
        assert_eq!(host(0, 0).idle_until(host(300, 640)), Some(30));
    }
}
