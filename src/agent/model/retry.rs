//! When and how long to wait before asking the model again after a transient
//! failure: exponential backoff with jitter, or the server's `Retry-After`.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries per request after the first attempt.
    pub max_retries: u32,
    /// Wait before the first retry; doubles each time.
    pub base_delay: Duration,
    /// Longest computed wait (a server's `Retry-After` is honoured as sent).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based).
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait;
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(16))
            .min(self.max_delay);
        exp.mul_f64(jitter_factor())
    }
}

/// A factor in [0.75, 1.25), so many clients do not retry in lockstep.
fn jitter_factor() -> f64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    0.75 + f64::from(nanos % 1000) / 2000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let p = RetryPolicy::default();
        for retry in 1..=4u32 {
            let nominal = Duration::from_secs(1 << (retry - 1));
            let d = p.delay(retry, None);
            assert!(
                d >= nominal.mul_f64(0.75) && d < nominal.mul_f64(1.25),
                "{retry}: {d:?}"
            );
        }
        assert!(p.delay(30, None) < Duration::from_secs(38));
    }

    #[test]
    fn retry_after_wins() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7))),
            Duration::from_secs(7)
        );
    }
}
