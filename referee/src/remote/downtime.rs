//! The time a remote seat's link is down while a decision of the seat is
//! pending: taken off that decision's clock (the bot could not be heard, so
//! the time is not its), but at most the seat's per-game budget
//! (`--link-down-budget-ms`), so that cutting the link cannot buy thinking
//! time beyond it. The link ([`super::link`]) says when the referee sees its
//! connection go and come back (a restarted bot counts as down until its
//! `hello`), when a request goes out and is answered, and when a game
//! starts; the table's clock (`crate::clock::DecisionClock`) reads how much
//! was stopped.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

#[derive(Debug)]
pub struct Downtime {
    budget: Duration,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    down: bool,
    /// A request of the seat's is out and unanswered.
    pending: bool,
    /// Since when the clock has been stopped (down, pending, budget left).
    since: Option<Instant>,
    /// Stopped time so far, in all.
    banked: Duration,
    /// What this game's budget has left.
    left: Duration,
}

impl Downtime {
    pub fn new(budget: Duration) -> Downtime {
        Downtime {
            budget,
            state: Mutex::new(State {
                down: false,
                pending: false,
                since: None,
                banked: Duration::ZERO,
                left: budget,
            }),
        }
    }

    fn change(&self, now: Instant, f: impl FnOnce(&mut State)) {
        let mut s = self.state.lock().expect("not poisoned");
        if let Some(since) = s.since.take() {
            let ran = now.saturating_duration_since(since).min(s.left);
            s.banked += ran;
            s.left -= ran;
        }
        f(&mut s);
        if s.down && s.pending && !s.left.is_zero() {
            s.since = Some(now);
        }
    }

    /// The referee sees the link down (`true`) or up again.
    pub fn set_down(&self, down: bool) {
        self.change(Instant::now(), |s| s.down = down);
    }

    /// A request went out (`true`), or was answered.
    pub fn set_pending(&self, pending: bool) {
        self.change(Instant::now(), |s| s.pending = pending);
    }

    /// A game starts: the budget is whole again, nothing is pending.
    pub fn new_game(&self) {
        let budget = self.budget;
        self.change(Instant::now(), |s| {
            s.left = budget;
            s.pending = false;
        });
    }

    /// The stopped time so far, up to `at`: only differences of it mean
    /// anything (what a decision had off its clock).
    pub fn stopped(&self, at: Instant) -> Duration {
        let s = self.state.lock().expect("not poisoned");
        let running = (s.since).map_or(Duration::ZERO, |since| {
            at.saturating_duration_since(since).min(s.left)
        });
        s.banked + running
    }

    /// Whether the clock is stopped now (and may stay stopped).
    pub fn running(&self) -> bool {
        self.running_at(Instant::now())
    }

    fn running_at(&self, now: Instant) -> bool {
        let s = self.state.lock().expect("not poisoned");
        (s.since).is_some_and(|since| now.saturating_duration_since(since) < s.left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instants of the test's own making: the figures are exact.
    #[test]
    fn only_down_and_pending_time_is_stopped_and_no_more_than_the_budget_a_game() {
        let ms = Duration::from_millis;
        let d = Downtime::new(ms(300));
        let t0 = Instant::now();
        let at = |n: u64| t0 + ms(n);
        d.change(at(0), |s| s.down = true);
        assert_eq!(d.stopped(at(100)), ms(0), "down, nothing pending");
        d.change(at(100), |s| s.pending = true);
        assert!(d.running_at(at(100)));
        assert_eq!(d.stopped(at(300)), ms(200));
        d.change(at(300), |s| s.down = false);
        assert!(!d.running_at(at(300)));
        assert_eq!(d.stopped(at(350)), ms(200), "up again");
        d.change(at(350), |s| s.down = true);
        assert_eq!(d.stopped(at(850)), ms(300), "the budget is spent");
        assert!(!d.running_at(at(850)), "nothing left to stop");
        assert_eq!(
            d.stopped(at(200)),
            ms(200),
            "an earlier time: what was banked"
        );
        d.change(at(850), |s| s.left = d.budget);
        assert_eq!(d.stopped(at(890)), ms(340), "a new game, a new budget");
    }
}
