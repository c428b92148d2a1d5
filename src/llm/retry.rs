//! Retry policy, pure: which failures are worth another attempt and how long
//! to wait. Invariant: the number of attempts is bounded and a server's
//! `retry-after` is honoured (up to `max_delay`).

use std::time::Duration;

#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

/// HTTP statuses that mean "try again later".
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based), or `None` when the
    /// budget is spent. `retry_after` is the server's hint, if any.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry == 0 || retry > self.max_retries {
            return None;
        }
        let backoff = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retry - 1).unwrap_or(u32::MAX));
        Some(retry_after.unwrap_or(backoff).min(self.max_delay))
    }
}

/// Parses a `retry-after` header value given in seconds (fractions allowed).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_backoff_is_bounded() {
        let p = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
        };
        assert_eq!(p.delay(1, None), Some(Duration::from_millis(100)));
        assert_eq!(p.delay(2, None), Some(Duration::from_millis(200)));
        assert_eq!(p.delay(3, None), Some(Duration::from_millis(250)));
        assert_eq!(p.delay(4, None), None);
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(900))),
            Some(p.max_delay)
        );
    }

    #[test]
    fn parses_retry_after_and_classifies_statuses() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
        for s in [429, 500, 502, 503, 529] {
            assert!(is_retryable_status(s));
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(!is_retryable_status(s));
        }
    }
}
