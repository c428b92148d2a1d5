//! Retry policy, pure: which failures are worth another attempt and how long
//! to wait. Invariant: the number of attempts is bounded, the backoff is
//! jittered (so clients that failed together do not retry together) and a
//! server's `retry-after`, in seconds or as an HTTP date, is honoured as
//! given (up to `max_delay`).

use std::time::{Duration, SystemTime};

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

/// The longest `retry-after` taken from a server, in either form.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// HTTP statuses that mean "try again later".
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1-based), or `None` when the
    /// budget is spent. `retry_after` is the server's hint, if any.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        self.delay_with(retry, retry_after, &mut fastrand::Rng::new())
    }

    /// [`RetryPolicy::delay`] with the jitter drawn from `rng`: the
    /// exponential backoff, capped at `max_delay`, is shortened by up to
    /// half at random; the server's `retry-after` is kept as it is.
    pub fn delay_with(
        &self,
        retry: u32,
        retry_after: Option<Duration>,
        rng: &mut fastrand::Rng,
    ) -> Option<Duration> {
        if retry == 0 || retry > self.max_retries {
            return None;
        }
        if let Some(wait) = retry_after {
            return Some(wait.min(self.max_delay));
        }
        let backoff = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retry - 1).unwrap_or(u32::MAX))
            .min(self.max_delay);
        Some(backoff.saturating_sub((backoff / 2).mul_f64(rng.f64())))
    }
}

/// Parses a `retry-after` header value: seconds (fractions allowed) or an
/// HTTP date, at most an hour; a date in the past is no wait.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    parse_retry_after_at(value, SystemTime::now())
}

/// [`parse_retry_after`] with the time it is `now`.
fn parse_retry_after_at(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let wait = match value.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => {
            Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER.as_secs_f64()))
        }
        Ok(_) => return None,
        Err(_) => {
            let at = httpdate::parse_http_date(value).ok()?;
            at.duration_since(now).unwrap_or(Duration::ZERO)
        }
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_backoff_is_bounded_and_jittered() {
        let p = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
        };
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis());
        for seed in 0..200 {
            let rng = &mut fastrand::Rng::with_seed(seed);
            // Between half the backoff and all of it, never past the cap.
            let first = ms(p.delay_with(1, None, rng)).unwrap();
            assert!((50..=100).contains(&first), "{first}");
            let second = ms(p.delay_with(2, None, rng)).unwrap();
            assert!((100..=200).contains(&second), "{second}");
            let third = ms(p.delay_with(3, None, rng)).unwrap();
            assert!((125..=250).contains(&third), "{third}");
            assert_eq!(p.delay_with(4, None, rng), None);
            assert_eq!(p.delay_with(0, None, rng), None);
        }
        // The jitter spreads the waits: not all alike.
        let waits: std::collections::BTreeSet<_> = (0..50)
            .map(|seed| p.delay_with(2, None, &mut fastrand::Rng::with_seed(seed)))
            .collect();
        assert!(waits.len() > 10, "{waits:?}");
        assert!(p.delay(3, None).is_some_and(|d| d <= p.max_delay));
        // Huge settings neither overflow nor panic.
        let huge = RetryPolicy {
            max_retries: 40,
            base_delay: Duration::MAX,
            max_delay: Duration::MAX,
        };
        assert!(huge.delay(40, None).is_some_and(|d| d >= Duration::MAX / 2));
    }

    #[test]
    fn retry_after_wins_as_it_is_but_is_capped() {
        let p = RetryPolicy::default();
        for _ in 0..20 {
            assert_eq!(
                p.delay(1, Some(Duration::from_secs(2))),
                Some(Duration::from_secs(2))
            );
        }
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(900))),
            Some(p.max_delay)
        );
        assert_eq!(p.delay(1, Some(Duration::ZERO)), Some(Duration::ZERO));
    }

    #[test]
    fn parses_retry_after_and_classifies_statuses() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("86400"), Some(MAX_RETRY_AFTER));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("NaN"), None);
        assert_eq!(parse_retry_after("soon"), None);
        for s in [429, 500, 502, 503, 529] {
            assert!(is_retryable_status(s));
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(!is_retryable_status(s));
        }
    }

    #[test]
    fn retry_after_as_an_http_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let at = |v: &str| parse_retry_after_at(v, now);
        assert_eq!(
            at("Wed, 21 Oct 2015 07:28:30 GMT"),
            Some(Duration::from_secs(30))
        );
        // The two obsolete forms HTTP still allows.
        assert_eq!(
            at("Wednesday, 21-Oct-15 07:29:00 GMT"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(at("Wed Oct 21 07:28:05 2015"), Some(Duration::from_secs(5)));
        // A date in the past: no wait.
        assert_eq!(at("Tue, 20 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        assert_eq!(at(" Wed, 21 Oct 2015 07:28:00 GMT "), Some(Duration::ZERO));
        // A far date: an hour, which is past the policy's cap, so the
        // client gives up rather than wait (see `http.rs`).
        assert_eq!(at("Fri, 01 Jan 2100 00:00:00 GMT"), Some(MAX_RETRY_AFTER));
        assert!(MAX_RETRY_AFTER > RetryPolicy::default().max_delay);
        assert_eq!(at("Wed, 32 Oct 2015 07:28:00 GMT"), None);
        // From the real clock: a date long past is no wait.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
    }
}
