//! The fair clock of a remote seat. The referee times every decision itself;
//! over a network that time includes the link's round trip, which is not the
//! bot's. The link sends a heartbeat every [`PERIOD`], answered by the
//! connector (never the bot), and keeps the last round trips; each decision
//! is credited the median of them, at most the cap (`--latency-cap-ms`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// How often the link measures its round trip.
pub const PERIOD: Duration = Duration::from_millis(200);
/// How many heartbeats' silence drop a connection as dead (it may reconnect).
pub const SILENT_BEATS: u32 = 15;
/// How many round trips the median is taken over.
const KEPT: usize = 9;

/// A seat's measured round trip and the credit it earns.
#[derive(Debug)]
pub struct Latency {
    cap: Duration,
    samples: Mutex<VecDeque<Duration>>,
}

impl Latency {
    pub fn new(cap: Duration) -> Latency {
        Latency {
            cap,
            samples: Mutex::new(VecDeque::new()),
        }
    }

    /// A heartbeat came back after `rtt`.
    pub fn sample(&self, rtt: Duration) {
        let mut s = self.samples.lock().expect("not poisoned");
        if s.len() == KEPT {
            s.pop_front();
        }
        s.push_back(rtt);
    }

    /// The median round trip so far (zero before the first).
    pub fn round_trip(&self) -> Duration {
        let s = self.samples.lock().expect("not poisoned");
        let mut sorted: Vec<Duration> = s.iter().copied().collect();
        sorted.sort();
        sorted.get(sorted.len() / 2).copied().unwrap_or_default()
    }

    /// What a decision is credited: min(round trip, cap).
    pub fn credit(&self) -> Duration {
        self.round_trip().min(self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credit_is_the_median_round_trip_and_never_above_the_cap() {
        let l = Latency::new(Duration::from_millis(100));
        assert_eq!(l.credit(), Duration::ZERO);
        for ms in [50, 52, 400, 51, 49] {
            l.sample(Duration::from_millis(ms));
        }
        assert_eq!(
            l.credit(),
            Duration::from_millis(51),
            "one slow beat does not count"
        );
        for _ in 0..KEPT {
            l.sample(Duration::from_millis(300));
        }
        assert_eq!(l.round_trip(), Duration::from_millis(300));
        assert_eq!(l.credit(), Duration::from_millis(100));
    }
}
