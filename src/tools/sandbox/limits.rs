//! The resource limits of one test run (the memory each process writes, CPU time, file size,
//! open files, processes, disk use) and naming the limit that stopped a run.
//!
//! What must stay true: a limit is named from evidence stepwise has (the
//! signal the kernel sent, its own process count), or, marked as such, from
//! the error text a runtime prints when a limit refused it; a run that passed
//! is never said to have hit a limit.

use crate::config::sandbox::SandboxSettings;

const MIB: u64 = 1024 * 1024;

/// A file system never left with less than this free by a run (its own
/// budget aside): the machine's disk is not filled to the last block.
pub const DISK_FLOOR: u64 = 256 * MIB;

/// New files (inodes) a run may make in all: empty files take no space, but
/// enough of them leave a disk unable to hold another.
pub const DISK_FILES: u64 = 1_000_000;

/// The limits that apply to each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub memory_bytes: u64,
    pub cpu_seconds: u64,
    pub file_size_bytes: u64,
    pub open_files: u64,
    pub processes: u64,
    /// Disk the whole run may use (see `disk`).
    pub disk_bytes: u64,
    /// `disk_bytes` was lowered to half the machine's memory (see
    /// [`Limits::within_memory`]).
    pub disk_within_memory: bool,
    /// Memory and processes are bounded for the whole run too (a control
    /// group), not only per process.
    pub whole_run: bool,
}

impl Limits {
    pub fn from_settings(s: &SandboxSettings) -> Self {
        Limits {
            memory_bytes: s.memory_mb.saturating_mul(MIB),
            cpu_seconds: s.cpu_seconds,
            file_size_bytes: s.file_size_mb.saturating_mul(MIB),
            open_files: s.open_files,
            processes: s.processes,
            disk_bytes: s.disk_mb.saturating_mul(MIB),
            disk_within_memory: false,
            whole_run: false,
        }
    }

    /// Where what a run writes is held in memory (its layer and temporary
    /// folders on a tmpfs), its disk budget is at most half of the
    /// machine's `memory`, as the kernel's own tmpfs default: a run that
    /// fills its budget must not leave the machine without memory.
    pub fn within_memory(&mut self, memory: u64) {
        let half = memory / 2;
        if half > 0 && self.disk_bytes > half {
            self.disk_bytes = half;
            self.disk_within_memory = true;
        }
    }
}

/// The machine's memory (`MemTotal`), where the system says; read once.
pub fn machine_memory() -> Option<u64> {
    static MEMORY: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib.saturating_mul(1024))
    })
}

/// Which limit stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Memory,
    CpuTime,
    FileSize,
    OpenFiles,
    Processes,
    /// More disk than the run's budget, in bytes or new files.
    Disk,
    /// A file system the run writes came down to its last free space.
    DiskFloor,
}

/// How stepwise knows a limit was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// The kernel's signal, or stepwise's own count.
    Measured,
    /// The runtime's error text (a test could print it too).
    Reported,
}

impl Limit {
    /// E.g. `memory limit (1024 MiB per process)`.
    pub fn describe(self, limits: &Limits) -> String {
        let mib = limits.memory_bytes / MIB;
        match self {
            Limit::Memory if limits.whole_run => {
                format!("memory limit ({mib} MiB for the whole run, and per process)")
            }
            Limit::Memory => format!("memory limit ({mib} MiB per process)"),
            Limit::CpuTime => format!("CPU time limit ({}s per process)", limits.cpu_seconds),
            Limit::FileSize => format!(
                "file size limit ({} MiB per file)",
                limits.file_size_bytes / MIB
            ),
            Limit::OpenFiles => format!("open files limit ({} per process)", limits.open_files),
            Limit::Processes if limits.whole_run => {
                format!(
                    "process limit ({} processes and threads at once in the whole run)",
                    limits.processes
                )
            }
            Limit::Processes => format!("process limit ({} at once)", limits.processes),
            Limit::Disk if limits.disk_within_memory => format!(
                "disk limit ({} MiB, half this machine's memory, or {} new files for the whole run)",
                limits.disk_bytes / MIB,
                DISK_FILES
            ),
            Limit::Disk => format!(
                "disk limit ({} MiB or {} new files for the whole run)",
                limits.disk_bytes / MIB,
                DISK_FILES
            ),
            Limit::DiskFloor => format!(
                "disk limit (a run leaves every disk it writes {} MiB free)",
                DISK_FLOOR / MIB
            ),
        }
    }
}

/// The limit behind a failed run: the signal first, then the runtimes'
/// own words for a refused allocation, file write, open or fork.
pub fn detect(signal: Option<i32>, output: &str) -> Option<(Limit, Evidence)> {
    if let Some(limit) = signal.and_then(by_signal) {
        return Some((limit, Evidence::Measured));
    }
    const WORDS: &[(&str, Limit)] = &[
        ("MemoryError", Limit::Memory),
        ("Cannot allocate memory", Limit::Memory),
        ("memory allocation of", Limit::Memory),
        ("std::bad_alloc", Limit::Memory),
        ("out of memory", Limit::Memory),
        ("File too large", Limit::FileSize),
        ("Too many open files", Limit::OpenFiles),
        ("Resource temporarily unavailable", Limit::Processes),
        ("No space left on device", Limit::Disk),
    ];
    WORDS
        .iter()
        .find(|(word, _)| output.contains(word))
        .map(|(_, limit)| (*limit, Evidence::Reported))
}

fn by_signal(signal: i32) -> Option<Limit> {
    // SIGXCPU and SIGXFSZ are 24 and 25 on every Linux architecture stepwise
    // builds for (and on macOS).
    match signal {
        24 => Some(Limit::CpuTime),
        25 => Some(Limit::FileSize),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_named_from_signals_then_from_runtime_errors() {
        assert_eq!(
            detect(Some(25), ""),
            Some((Limit::FileSize, Evidence::Measured))
        );
        assert_eq!(
            detect(Some(24), ""),
            Some((Limit::CpuTime, Evidence::Measured))
        );
        assert_eq!(
            detect(None, "E   MemoryError\n"),
            Some((Limit::Memory, Evidence::Reported))
        );
        assert_eq!(detect(Some(9), "all fine"), None);
        assert_eq!(
            detect(None, "OSError: [Errno 28] No space left on device"),
            Some((Limit::Disk, Evidence::Reported))
        );
        let limits = Limits::from_settings(&SandboxSettings::default());
        assert!(Limit::Processes.describe(&limits).contains("2048"));
    }

    #[test]
    fn a_disk_held_in_memory_is_at_most_half_of_it() {
        let mut limits = Limits::from_settings(&SandboxSettings::default());
        limits.within_memory(64 * 1024 * MIB);
        assert_eq!(limits.disk_bytes, 16 * 1024 * MIB);
        assert!(
            Limit::Disk
                .describe(&limits)
                .starts_with("disk limit (16384 MiB or")
        );
        limits.within_memory(8 * 1024 * MIB);
        assert_eq!(limits.disk_bytes, 4 * 1024 * MIB);
        assert_eq!(
            Limit::Disk.describe(&limits),
            "disk limit (4096 MiB, half this machine's memory, or 1000000 new files for the whole run)"
        );
        assert!(machine_memory().is_none_or(|m| m > 0));
    }
}
