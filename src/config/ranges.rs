//! The allowed values of every numeric setting, in one table. The flags'
//! value parsers and the settings table (which reads the environment and
//! `stepwise.toml`) both check against these constants, so a value is in
//! range whichever source it came from.
//!
//! What must stay true: each setting has exactly one range here; a value is
//! converted to its stored type only after the check, never with `as` (a
//! number too big for the type is out of range, not truncated).

use std::fmt;
use std::marker::PhantomData;

/// Most steps (tool calls and answers) per task.
pub const MAX_STEPS: Whole<u32> = Whole::new(1, 10_000);
/// Seconds a test run may take.
pub const TEST_TIMEOUT: Whole<u64> = Whole::new(1, 86_400);
/// Retries of a failed model request.
pub const MAX_RETRIES: Whole<u32> = Whole::new(0, 20);
/// The same call with the same result this many times in a row stops a task (0: never).
pub const MAX_REPEATS: Whole<u32> = Whole::new(0, 1000);
/// Seconds the model server may stay silent.
pub const STREAM_IDLE_TIMEOUT: Whole<u64> = Whole::new(1, 3600);
/// Seconds a stream kept alive may go without a token of the reply.
pub const STREAM_TOKEN_TIMEOUT: Whole<u64> = Whole::new(1, 86_400);
/// Percentage of the context window a request may fill before compaction.
pub const CONTEXT_BUDGET: Whole<u8> = Whole::new(10, 95);
/// Context window in tokens (no upper bound).
pub const CONTEXT_WINDOW: Whole<u64> = Whole::new(1024, u64::MAX);
/// US dollars a task may cost.
pub const MAX_COST: Positive = Positive;

/// `[sandbox] memory_mb`: memory each test process may write (its data: heap and private mappings), in MiB.
pub const SANDBOX_MEMORY_MB: Whole<u64> = Whole::new(64, 1 << 30);
/// `[sandbox] cpu_seconds`: CPU time per test process.
pub const SANDBOX_CPU_SECONDS: Whole<u64> = Whole::new(1, 1 << 32);
/// `[sandbox] file_size_mb`: largest file a test run may write, in MiB.
pub const SANDBOX_FILE_SIZE_MB: Whole<u64> = Whole::new(1, 1 << 30);
/// `[sandbox] open_files`: open files per test process.
pub const SANDBOX_OPEN_FILES: Whole<u64> = Whole::new(16, 1 << 20);
/// `[sandbox] disk_mb`: disk one test run may use in all, in MiB.
pub const SANDBOX_DISK_MB: Whole<u64> = Whole::new(1, 1 << 30);
/// `[sandbox] processes`: processes alive at once in one test run.
pub const SANDBOX_PROCESSES: Whole<u64> = Whole::new(1, 1 << 22);

/// `[mcp.servers.NAME] timeout_secs`: seconds one MCP call (or a server's start) may take.
pub const MCP_TIMEOUT: Whole<u64> = Whole::new(1, 3600);

/// A whole number in `min..=max`, stored as `T`.
#[derive(Debug)]
pub struct Whole<T> {
    pub min: u64,
    pub max: u64,
    stored_as: PhantomData<fn() -> T>,
}

// Derived `Clone`/`Copy` would require `T: Copy`; the marker holds no `T`.
impl<T> Clone for Whole<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Whole<T> {}

impl<T: TryFrom<u64>> Whole<T> {
    pub const fn new(min: u64, max: u64) -> Self {
        Whole {
            min,
            max,
            stored_as: PhantomData,
        }
    }

    /// Check a number, and convert it to the stored type.
    pub fn check(&self, n: i128) -> Result<T, String> {
        u64::try_from(n)
            .ok()
            .filter(|n| (self.min..=self.max).contains(n))
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| format!("is out of range ({self})"))
    }

    /// Parse text (a flag, an environment variable).
    pub fn parse(&self, text: &str) -> Result<T, String> {
        let n = text
            .trim()
            .parse::<i128>()
            .map_err(|_| format!("is not a whole number ({self})"))?;
        self.check(n)
    }

    /// Read a `stepwise.toml` value.
    pub fn from_toml(&self, value: &toml::Value) -> Result<T, String> {
        match value {
            toml::Value::Integer(n) => self.check(i128::from(*n)),
            _ => Err(format!("is not a whole number ({self})")),
        }
    }

    /// A clap value parser for the flag of this setting.
    pub fn flag_parser(self) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
    where
        T: 'static,
    {
        move |text| self.parse(text).map_err(|why| format!("{text} {why}"))
    }
}

impl<T> fmt::Display for Whole<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.max == u64::MAX {
            write!(f, "{}..", self.min)
        } else {
            write!(f, "{}..={}", self.min, self.max)
        }
    }
}

/// A finite number above 0 (an amount of money: 0 would stop every task at
/// its first request, NaN would never stop one).
#[derive(Debug, Clone, Copy)]
pub struct Positive;

impl Positive {
    pub fn check(&self, n: f64) -> Result<f64, String> {
        if n.is_finite() && n > 0.0 {
            Ok(n)
        } else {
            Err(format!("is out of range ({self})"))
        }
    }

    pub fn parse(&self, text: &str) -> Result<f64, String> {
        let n = text
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("is not a number ({self})"))?;
        self.check(n)
    }

    pub fn from_toml(&self, value: &toml::Value) -> Result<f64, String> {
        match value {
            toml::Value::Float(n) => self.check(*n),
            // Exact for every amount below 2^53 dollars; larger ones are still finite.
            toml::Value::Integer(n) => self.check(*n as f64),
            _ => Err(format!("is not a number ({self})")),
        }
    }

    pub fn flag_parser(self) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync {
        move |text| self.parse(text).map_err(|why| format!("{text} {why}"))
    }
}

impl fmt::Display for Positive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a finite number above 0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both ends are accepted, one past either end is not.
    fn bounds<T: TryFrom<u64> + PartialEq + std::fmt::Debug>(range: Whole<T>) {
        assert!(range.check(i128::from(range.min)).is_ok(), "{range}");
        assert!(range.check(i128::from(range.max)).is_ok(), "{range}");
        assert!(range.check(i128::from(range.min) - 1).is_err(), "{range}");
        assert!(range.check(i128::from(range.max) + 1).is_err(), "{range}");
    }

    #[test]
    fn every_range_holds_its_ends_and_fits_its_type() {
        bounds(MAX_STEPS);
        bounds(TEST_TIMEOUT);
        bounds(MAX_RETRIES);
        bounds(MAX_REPEATS);
        bounds(STREAM_IDLE_TIMEOUT);
        bounds(STREAM_TOKEN_TIMEOUT);
        bounds(CONTEXT_BUDGET);
        bounds(CONTEXT_WINDOW);
    }

    #[test]
    fn the_ranges_are_the_ones_the_flags_always_had() {
        let shown = [
            MAX_STEPS.to_string(),
            TEST_TIMEOUT.to_string(),
            MAX_RETRIES.to_string(),
            STREAM_IDLE_TIMEOUT.to_string(),
            CONTEXT_BUDGET.to_string(),
            CONTEXT_WINDOW.to_string(),
        ];
        assert_eq!(
            shown,
            [
                "1..=10000",
                "1..=86400",
                "0..=20",
                "1..=3600",
                "10..=95",
                "1024.."
            ]
        );
    }

    #[test]
    fn zero_negative_and_too_big_values_are_refused_not_truncated() {
        assert_eq!(
            MAX_STEPS.parse("0"),
            Err("is out of range (1..=10000)".into())
        );
        assert!(STREAM_IDLE_TIMEOUT.parse("0").is_err());
        assert!(TEST_TIMEOUT.parse("0").is_err());
        assert!(MAX_STEPS.parse("-3").is_err());
        // 2^32 + 5 would be 5 after `as u32`.
        assert!(MAX_STEPS.parse("4294967301").is_err());
        assert!(CONTEXT_BUDGET.parse("266").is_err());
        assert_eq!(
            MAX_STEPS.parse("many"),
            Err("is not a whole number (1..=10000)".into())
        );
        assert_eq!(MAX_STEPS.parse(" 20 "), Ok(20));
        assert_eq!(CONTEXT_BUDGET.parse("95"), Ok(95u8));
    }

    #[test]
    fn toml_values_are_checked_against_the_same_ranges() {
        use toml::Value;
        assert!(MAX_STEPS.from_toml(&Value::Integer(0)).is_err());
        assert!(MAX_RETRIES.from_toml(&Value::Integer(-1)).is_err());
        assert_eq!(MAX_RETRIES.from_toml(&Value::Integer(0)), Ok(0));
        assert!(MAX_STEPS.from_toml(&Value::String("5".into())).is_err());
        assert!(MAX_STEPS.from_toml(&Value::Float(5.0)).is_err());
        assert_eq!(MAX_COST.from_toml(&Value::Integer(3)), Ok(3.0));
        assert_eq!(MAX_COST.from_toml(&Value::Float(0.5)), Ok(0.5));
        assert!(MAX_COST.from_toml(&Value::Float(f64::NAN)).is_err());
    }

    #[test]
    fn a_cost_limit_is_a_finite_amount_above_zero() {
        for bad in ["NaN", "nan", "inf", "-1", "0", "-0.0", "dollars"] {
            assert!(MAX_COST.parse(bad).is_err(), "{bad}");
        }
        assert_eq!(MAX_COST.parse("0.25"), Ok(0.25));
        assert_eq!(
            MAX_COST.flag_parser()("-1"),
            Err("-1 is out of range (a finite number above 0)".into())
        );
    }
}
