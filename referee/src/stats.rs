//! Where a table's time goes: counters and timers the table keeps as it plays,
//! read by `referee bench`. Measured with the monotonic clock around each step of
//! a decision, so the breakdown is observed, not estimated. Nothing here reaches
//! a transcript.

use std::ops::AddAssign;
use std::time::Duration;

/// Totals for one or more games at one table.
#[derive(Clone, Debug, Default)]
pub struct TableStats {
    /// Decisions made (by bots or the fallback).
    pub decisions: u64,
    /// Decisions a bot process was asked for and answered in time.
    pub answered: u64,
    /// Wall time of each decision, from asking to the last event of its action
    /// queued or written, in nanoseconds.
    pub cycle_ns: Vec<u32>,
    /// Building the request from the seat's view and serialising it.
    pub request: Duration,
    /// Writing to bots' stdin (the request with any held-back events; live events).
    pub write: Duration,
    /// From the request's last byte written to the reply's newline read: the pipe
    /// both ways, the bot's parse, decision and reply, and the host's scheduling.
    pub wait: Duration,
    /// From the reply's newline read to the table holding the line.
    pub handoff: Duration,
    /// Parsing the reply and checking it with the rules engine.
    pub reply: Duration,
    /// Applying the action to the game.
    pub apply: Duration,
    /// Telling every seat what it may see of the events, serialised into its queue.
    pub fanout: Duration,
    /// Writing the transcript and the timings sidecar.
    pub transcript: Duration,
    /// Bytes written to bots and read from them.
    pub bytes_out: u64,
    pub bytes_in: u64,
}

/// The timed steps of [`TableStats`], in field order: request, write, wait,
/// handoff, reply, apply, fanout, transcript.
pub type Steps = [Duration; 8];

impl TableStats {
    /// The timed steps as they stand.
    pub fn steps(&self) -> Steps {
        [
            self.request,
            self.write,
            self.wait,
            self.handoff,
            self.reply,
            self.apply,
            self.fanout,
            self.transcript,
        ]
    }

    /// Puts back the timed steps of [`Self::steps`]: the table keeps only the
    /// steps timed inside a decision's cycle, so that they and the unattributed
    /// rest add up to the cycles' wall time (publishing a new deal, or a game's
    /// end, happens between decisions and would otherwise be counted in the
    /// steps but not in any cycle).
    pub fn set_steps(&mut self, steps: Steps) {
        [
            self.request,
            self.write,
            self.wait,
            self.handoff,
            self.reply,
            self.apply,
            self.fanout,
            self.transcript,
        ] = steps;
    }

    /// The sum of the timed steps (everything but the unattributed rest).
    pub fn attributed(&self) -> Duration {
        self.steps().iter().sum()
    }

    /// The wall time of all decisions.
    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.cycle_ns.iter().map(|&n| u64::from(n)).sum())
    }
}

impl AddAssign<&TableStats> for TableStats {
    fn add_assign(&mut self, o: &TableStats) {
        self.decisions += o.decisions;
        self.answered += o.answered;
        self.cycle_ns.extend_from_slice(&o.cycle_ns);
        self.request += o.request;
        self.write += o.write;
        self.wait += o.wait;
        self.handoff += o.handoff;
        self.reply += o.reply;
        self.apply += o.apply;
        self.fanout += o.fanout;
        self.transcript += o.transcript;
        self.bytes_out += o.bytes_out;
        self.bytes_in += o.bytes_in;
    }
}

/// A duration in nanoseconds for [`TableStats::cycle_ns`], saturating.
pub fn nanos(d: Duration) -> u32 {
    u32::try_from(d.as_nanos()).unwrap_or(u32::MAX)
}
