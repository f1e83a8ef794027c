//! The clock of one decision, and the per-game time bank: how much a seat may use,
//! when its one fixed deadline falls, and how much it used — on the wall clock or
//! on the CPU time of its processes (`crate::bot::CpuSource`: every task of
//! its cgroup, exited ones included, where the host allows).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::bot::CpuSource;
use crate::config::{Clock, TimeControl};
use crate::remote::downtime::Downtime;

/// Each seat's time bank for the current game: a decision that takes longer than
/// the per-decision limit draws the excess from it; a timeout empties it.
pub struct TimeBank {
    left: [Duration; 6],
}

impl TimeBank {
    pub fn new(time: &TimeControl) -> TimeBank {
        TimeBank {
            left: [time.bank; 6],
        }
    }

    /// What seat `i` may use for its next decision: the limit plus its bank.
    pub fn allowed(&self, i: usize, time: &TimeControl) -> Option<Duration> {
        time.decision.map(|d| d + self.left[i])
    }

    /// Charges an answered decision that took `took`.
    pub fn charge(&mut self, i: usize, took: Duration, time: &TimeControl) {
        if let Some(d) = time.decision {
            self.left[i] = self.left[i].saturating_sub(took.saturating_sub(d));
        }
    }

    pub fn empty(&mut self, i: usize) {
        self.left[i] = Duration::ZERO;
    }
}

/// How often a decision whose seat's link is down looks at its moving deadline.
const LINK_DOWN_TICK: Duration = Duration::from_millis(50);

/// The clock of one pending decision, started once the request's last byte is
/// written. One fixed deadline; partial output never extends it.
pub struct DecisionClock {
    clock: Clock,
    start: Instant,
    cpu: Option<CpuSource>,
    cpu_start: Option<Duration>,
    allowed: Option<Duration>,
    grace: Duration,
    /// The wall-clock deadline (on the CPU clock, a backstop of ten times the
    /// limit, at least the limit plus one second).
    deadline: Option<Instant>,
    /// On the CPU clock, how often the CPU time is checked before the backstop.
    tick: Option<Duration>,
    /// The part of the wall time that is a network link's, not the bot's
    /// (`remote/heartbeat.rs`): taken off what it used, added to the deadline.
    credit: Option<Duration>,
    /// A network link's down time, and its reading at the start: what it
    /// stops of this decision is taken off what the bot used and added to
    /// the deadline (`remote/downtime.rs`).
    down: Option<(Arc<Downtime>, Duration)>,
}

impl DecisionClock {
    /// Starts now, for a player that may use `allowed` and whose CPU time (on
    /// the CPU clock) is read from `cpu`.
    pub fn start(
        time: &TimeControl,
        allowed: Option<Duration>,
        cpu: Option<CpuSource>,
    ) -> DecisionClock {
        let start = Instant::now();
        let cpu_start = match time.clock {
            Clock::Cpu => cpu.as_ref().and_then(CpuSource::read),
            Clock::Wall => None,
        };
        let (deadline, tick) = match (allowed, time.clock) {
            (None, _) => (None, None),
            (Some(a), Clock::Wall) => (Some(start + a + time.grace), None),
            (Some(a), Clock::Cpu) => (
                Some(start + (a * 10).max(a + Duration::from_secs(1)) + time.grace),
                Some((a / 4).max(Duration::from_millis(5))),
            ),
        };
        DecisionClock {
            clock: time.clock,
            start,
            cpu,
            cpu_start,
            allowed,
            grace: time.grace,
            deadline,
            tick,
            credit: None,
            down: None,
        }
    }

    /// The same clock for a seat whose link's down time `down` stops it
    /// (`None`: no link).
    pub fn with_link_down(mut self, down: Option<Arc<Downtime>>) -> DecisionClock {
        self.down = down.map(|d| {
            let at = d.stopped(self.start);
            (d, at)
        });
        self
    }

    /// How much of this decision, up to `at`, its clock was stopped for a
    /// link that was down.
    pub fn stopped(&self, at: Instant) -> Duration {
        (self.down.as_ref()).map_or(Duration::ZERO, |(d, from)| {
            d.stopped(at).saturating_sub(*from)
        })
    }

    /// [`DecisionClock::stopped`] in microseconds, for the timings sidecar
    /// (`None` when nothing was stopped).
    pub fn stopped_micros(&self, at: Instant) -> Option<u64> {
        Some(self.stopped(at).as_micros() as u64).filter(|&m| m > 0)
    }

    /// The deadline, moved out by what was stopped up to `now`.
    fn deadline_at(&self, now: Instant) -> Option<Instant> {
        self.deadline.map(|d| d + self.stopped(now))
    }

    /// The same clock for a seat whose replies cross a network link with
    /// round trip `credit` (capped; `None`: no link): the deadline moves out
    /// by it and each decision is charged its time less it.
    pub fn with_credit(mut self, credit: Option<Duration>) -> DecisionClock {
        if let Some(c) = credit {
            self.deadline = self.deadline.map(|d| d + c);
        }
        self.credit = credit;
        self
    }

    /// The credit in microseconds, for a seat over a link (the timings sidecar).
    pub fn credit_micros(&self) -> Option<u64> {
        self.credit.map(|c| c.as_micros() as u64)
    }

    /// What the bot used up to `at`: wall time, or the CPU time of its processes.
    pub fn used(&self, at: Instant) -> Duration {
        match (self.clock, self.cpu_start) {
            (Clock::Cpu, Some(c0)) => (self.cpu.as_ref().and_then(CpuSource::read))
                .map_or(at - self.start, |c| c.saturating_sub(c0)),
            _ => (at - self.start)
                .saturating_sub(self.credit.unwrap_or_default())
                .saturating_sub(self.stopped(at)),
        }
    }

    /// On the CPU clock, the wall time up to `at` too (for the timings sidecar).
    pub fn wall_if_cpu(&self, at: Instant) -> Option<Duration> {
        (self.clock == Clock::Cpu).then(|| at - self.start)
    }

    /// Whether `used` is past the limit plus grace.
    pub fn over(&self, used: Duration) -> bool {
        self.allowed.is_some_and(|a| used > a + self.grace)
    }

    /// When to stop waiting for the next line: the deadline, or sooner on the CPU
    /// clock to check the CPU time.
    pub fn wake(&self) -> Option<Instant> {
        let now = Instant::now();
        let deadline = self.deadline_at(now);
        // While the link is down the deadline moves out: look again soon.
        let tick = match &self.down {
            Some((d, _)) if d.running() => Some(LINK_DOWN_TICK),
            _ => self.tick,
        };
        match (deadline, tick) {
            (Some(d), Some(t)) => Some(d.min(now + t)),
            (d, _) => d,
        }
    }

    /// Whether the decision has run out of time at `now` (with `used` spent).
    pub fn expired(&self, now: Instant, used: Duration) -> bool {
        self.deadline_at(now).is_some_and(|d| now >= d) || self.over(used)
    }

    /// By when a bot whose pipe closed must have exited to count as a crash.
    pub fn exit_by(&self, otherwise: Duration) -> Instant {
        self.deadline.unwrap_or_else(|| Instant::now() + otherwise)
    }

    /// The timeout reason. It names the limit that was missed, never by how much:
    /// that is the host's timing, kept in the sidecar, so the transcript stays a
    /// function of the bot's behaviour.
    pub fn timeout_reason(&self) -> String {
        format!(
            "no reply within {} ms ({} clock)",
            self.allowed.unwrap_or_default().as_millis(),
            match self.clock {
                Clock::Wall => "wall",
                Clock::Cpu => "CPU",
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn time(decision_ms: u64, bank_ms: u64) -> TimeControl {
        TimeControl {
            clock: Clock::Wall,
            startup: None,
            decision: Some(Duration::from_millis(decision_ms)),
            bank: Duration::from_millis(bank_ms),
            grace: Duration::from_millis(50),
            max_line: 1 << 16,
            write: Duration::from_secs(1),
            shutdown: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_bank_pays_only_the_overrun_and_a_timeout_empties_it() {
        let t = time(100, 1000);
        let mut bank = TimeBank::new(&t);
        assert_eq!(bank.allowed(2, &t), Some(Duration::from_millis(1100)));
        bank.charge(2, Duration::from_millis(80), &t); // inside the limit: free
        assert_eq!(bank.allowed(2, &t), Some(Duration::from_millis(1100)));
        bank.charge(2, Duration::from_millis(400), &t); // 300 ms over
        assert_eq!(bank.allowed(2, &t), Some(Duration::from_millis(800)));
        assert_eq!(bank.allowed(3, &t), Some(Duration::from_millis(1100)));
        bank.empty(2);
        assert_eq!(bank.allowed(2, &t), Some(Duration::from_millis(100)));
    }

    #[test]
    fn the_wall_clock_deadline_is_the_limit_plus_grace() {
        let t = time(100, 0);
        let c = DecisionClock::start(&t, Some(Duration::from_millis(100)), None);
        assert!(!c.over(Duration::from_millis(150)));
        assert!(c.over(Duration::from_millis(151)));
        let d = c.wake().unwrap();
        assert_eq!(d - c.start, Duration::from_millis(150));
        assert_eq!(c.timeout_reason(), "no reply within 100 ms (wall clock)");
        let unlimited = DecisionClock::start(&t, None, None);
        assert!(unlimited.wake().is_none());
        assert!(!unlimited.over(Duration::from_secs(3600)));
    }

    #[test]
    fn a_credit_moves_the_deadline_out_and_is_not_charged() {
        let t = time(100, 0);
        let c = DecisionClock::start(&t, Some(Duration::from_millis(100)), None)
            .with_credit(Some(Duration::from_millis(40)));
        assert_eq!(c.wake().unwrap() - c.start, Duration::from_millis(190));
        assert_eq!(
            c.used(c.start + Duration::from_millis(70)),
            Duration::from_millis(30)
        );
        assert_eq!(c.used(c.start + Duration::from_millis(10)), Duration::ZERO);
        assert_eq!(c.credit_micros(), Some(40_000));
        let local = DecisionClock::start(&t, Some(Duration::from_millis(100)), None);
        assert_eq!(local.credit_micros(), None);
    }
}
