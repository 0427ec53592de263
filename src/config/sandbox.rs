//! The `[sandbox]` table of `stepwise.toml` and the `test_env` list: how test
//! runs are confined (mode, network, extra writable and hidden paths) and
//! the resource limits of each run.
//!
//! What must stay true: every number passes `ranges`; an unknown key in the
//! table is an error naming it; paths are kept as written (`~/` expanded
//! later, by the sandbox, against `HOME`).

use super::ranges;
use serde::Deserialize;

/// How strictly test runs are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Use what the kernel offers and say what is missing.
    #[default]
    Auto,
    /// Refuse to run tests without full isolation.
    Require,
    /// Run tests unconfined (still with the minimal environment).
    Off,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Require => "require",
            SandboxMode::Off => "off",
        }
    }
}

/// The `[sandbox]` table, with the built-in defaults for what it leaves out.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Let test runs use the network.
    pub network: bool,
    /// Extra folders a test run may write (tool caches), besides the built-in ones.
    pub writable: Vec<String>,
    /// Paths a test run may not read; replaces the built-in list when set.
    pub hidden: Option<Vec<String>>,
    /// Build output folders of the workspace (relative), kept in the
    /// workspace's build layer between runs and never merged into the
    /// project (`target/` of a Cargo project is one without saying).
    pub build_outputs: Vec<String>,
    /// Memory each process may write (heap and private mappings), in MiB.
    pub memory_mb: u64,
    /// CPU time per process, in seconds.
    pub cpu_seconds: u64,
    /// Largest file a test run may write, in MiB.
    pub file_size_mb: u64,
    /// Open files per process.
    pub open_files: u64,
    /// Processes alive at once in one run.
    pub processes: u64,
    /// Disk one run may use in all (every file it writes, on every file
    /// system it may write), in MiB.
    pub disk_mb: u64,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            mode: SandboxMode::Auto,
            network: false,
            writable: Vec::new(),
            hidden: None,
            build_outputs: Vec::new(),
            memory_mb: 16 * 1024,
            cpu_seconds: 3600,
            file_size_mb: 4 * 1024,
            open_files: 4096,
            processes: 2048,
            disk_mb: 16 * 1024,
        }
    }
}

impl SandboxSettings {
    /// Read the table and check every number against its range.
    pub fn from_toml(value: &toml::Value) -> Result<Self, String> {
        let settings: SandboxSettings = value
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| format!("is not valid: {}", e.message()))?;
        let checks = [
            ("memory_mb", settings.memory_mb, ranges::SANDBOX_MEMORY_MB),
            (
                "cpu_seconds",
                settings.cpu_seconds,
                ranges::SANDBOX_CPU_SECONDS,
            ),
            (
                "file_size_mb",
                settings.file_size_mb,
                ranges::SANDBOX_FILE_SIZE_MB,
            ),
            (
                "open_files",
                settings.open_files,
                ranges::SANDBOX_OPEN_FILES,
            ),
            ("processes", settings.processes, ranges::SANDBOX_PROCESSES),
            ("disk_mb", settings.disk_mb, ranges::SANDBOX_DISK_MB),
        ];
        for (name, value, range) in checks {
            range
                .check(i128::from(value))
                .map_err(|why| format!("has {name} = {value}, which {why}"))?;
        }
        Ok(settings)
    }

    /// One line for `--print-config`.
    pub fn shown(&self) -> String {
        format!(
            "mode {}, network {}, memory {} MiB, cpu {}s, file size {} MiB, open files {}, processes {}, disk {} MiB",
            self.mode.as_str(),
            if self.network { "on" } else { "off" },
            self.memory_mb,
            self.cpu_seconds,
            self.file_size_mb,
            self.open_files,
            self.processes,
            self.disk_mb
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Value {
        toml::Value::Table(toml::from_str(text).unwrap())
    }

    #[test]
    fn the_table_fills_in_defaults_and_checks_ranges() {
        let s = SandboxSettings::from_toml(&table("mode = \"require\"\nprocesses = 64\n")).unwrap();
        assert_eq!(s.mode, SandboxMode::Require);
        assert_eq!(s.processes, 64);
        assert_eq!(s.memory_mb, SandboxSettings::default().memory_mb);
        let bad = SandboxSettings::from_toml(&table("processes = 0\n")).unwrap_err();
        assert!(bad.contains("processes = 0"), "{bad}");
        let unknown = SandboxSettings::from_toml(&table("netwrok = true\n")).unwrap_err();
        assert!(unknown.contains("netwrok"), "{unknown}");
        let mode = SandboxSettings::from_toml(&table("mode = \"maybe\"\n")).unwrap_err();
        assert!(mode.contains("maybe"), "{mode}");
    }
}
