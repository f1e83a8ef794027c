//! `referee bench`: the referee's cost per decision, measured against the physical
//! floor in the same run and process tree.
//!
//! 1. The floor: a request-sized line written to a trivial child (`referee
//!    bench-echo`, which answers each line with a reply-sized one) and the answer
//!    read back, through the same kind of pipes a bot gets. Measured before and
//!    after the games, so a host that got busier in between shows.
//! 2. Complete games among six built-in bot processes, once per `--jobs` value:
//!    that many tables play at once, each with its own six processes, on its own
//!    thread with a single-threaded runtime. The tables' own timers
//!    ([`TableStats`]) say where each decision's time went.
//! 3. The bot's side, in process: the built-in bot's handling of the lines one
//!    seat receives in a game, timed without any pipe.
//!
//! Wall-clock figures live here and in BENCHMARKS.md, never in a test.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use schmier_protocol::rules::{first_legal, Game, RulesConfig};
use schmier_protocol::shuffle::derive_seed;
use schmier_protocol::wire::{Request, ToBot};

use crate::config::{BotSpec, Delivery, Output, PlayConfig};
use crate::stats::TableStats;
use crate::summary::MatchSummary;

/// What `referee bench` runs.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Games per `jobs` value, shared out among the tables.
    pub games: u32,
    /// Tables playing at once; one games phase per value.
    pub jobs: Vec<usize>,
    pub events: Delivery,
    /// The built-in bot in all six seats.
    pub bot: String,
    pub seed: u64,
    /// Round trips per baseline measurement.
    pub trips: usize,
    /// A template for each phase's play configuration (time control, policy).
    pub play: PlayConfig,
}

/// Median, 99th percentile and mean of a sample, in microseconds.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Spread {
    pub median_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
}

impl Spread {
    fn of(mut ns: Vec<u64>) -> Spread {
        assert!(!ns.is_empty(), "a spread of nothing");
        ns.sort_unstable();
        let at = |q: f64| ns[((ns.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
        Spread {
            median_us: at(0.5),
            p99_us: at(0.99),
            mean_us: ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1000.0,
        }
    }
}

/// The raw pipe round trip.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Baseline {
    pub request_bytes: usize,
    pub reply_bytes: usize,
    pub trips: usize,
    pub round_trip: Spread,
}

/// Mean microseconds per decision spent in each step of the table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Breakdown {
    pub request_us: f64,
    pub write_us: f64,
    pub wait_us: f64,
    pub handoff_us: f64,
    pub reply_us: f64,
    pub apply_us: f64,
    pub fanout_us: f64,
    pub transcript_us: f64,
    /// Everything the timers above do not cover: the loop, the runtime's
    /// scheduling, the clock, reading the reader task's channel.
    pub rest_us: f64,
}

/// One games phase: `jobs` tables at once.
#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    pub jobs: usize,
    /// Each table's match seed and number of games, to replay it with `play`.
    pub tables: Vec<TableRun>,
    pub games: u32,
    pub decisions: u64,
    pub answered: u64,
    /// Wall time of the phase: bots started, games played, bots ended.
    pub wall_s: f64,
    pub games_per_s: f64,
    pub decisions_per_s: f64,
    /// Bytes through the bots' pipes (both ways) per second.
    pub bytes_per_s: f64,
    pub bytes_per_decision: f64,
    /// One decision at one table: from asking to its events queued.
    pub per_decision: Spread,
    /// Median per decision over the mean of the two baselines' medians.
    pub ratio: f64,
    pub breakdown: Breakdown,
    /// The referee's peak resident memory during the phase (`VmHWM`), and its
    /// growth over the resident memory before the phase, per table.
    pub peak_rss_kib: Option<u64>,
    pub rss_growth_per_table_kib: Option<f64>,
    /// Decisions per second over those of the `--jobs 1` phase of the same run,
    /// if there is one. Decisions rather than games: the tables of different
    /// phases play different games (each table its own seed), and games among
    /// random bots vary a lot in length.
    pub scaling: Option<f64>,
}

/// One table of a phase.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TableRun {
    pub seed: u64,
    pub games: u32,
}

/// The built-in bot's handling of one seat's lines, in process.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BotSide {
    pub requests: usize,
    pub events: usize,
    /// Per request line: parse, decide, serialise the reply (CPU time).
    pub request_us: f64,
    /// Per event line: recognise and skip (CPU time).
    pub event_us: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub bot: String,
    pub events: &'static str,
    pub before: Baseline,
    pub after: Baseline,
    pub bot_side: BotSide,
    pub phases: Vec<Phase>,
}

/// Runs the whole benchmark.
pub fn run(cfg: &BenchConfig) -> anyhow::Result<BenchReport> {
    let sample = sample_lines(cfg.seed, cfg.play.table.rules);
    let request_bytes = median_len(&sample.requests);
    let before = baseline(request_bytes, cfg.trips)?;
    let bot_side = bot_side(&cfg.bot, &sample)?;
    let mut phases = Vec::new();
    for &jobs in &cfg.jobs {
        phases.push(phase(cfg, jobs)?);
    }
    let after = baseline(request_bytes, cfg.trips)?;
    let floor = (before.round_trip.median_us + after.round_trip.median_us) / 2.0;
    let one = (phases.iter().find(|p| p.jobs == 1)).map(|p| p.decisions_per_s);
    for p in &mut phases {
        p.ratio = p.per_decision.median_us / floor;
        p.scaling = one
            .filter(|_| p.jobs != 1)
            .map(|one| p.decisions_per_s / one);
    }
    Ok(BenchReport {
        bot: cfg.bot.clone(),
        events: match cfg.events {
            Delivery::Live => "live",
            Delivery::Batched => "batched",
        },
        before,
        after,
        bot_side,
        phases,
    })
}

/// The reply the echo child sends: the size of a bot's reply to a play request.
const ECHO_REPLY: &[u8] = b"{\"type\":\"reply\",\"id\":123456,\"action\":\"QH\"}\n";

/// `referee bench-echo`: answers every line on stdin with one reply-sized line,
/// one write per line, until end of input.
pub fn echo() -> std::io::Result<()> {
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if stdin.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        stdout.write_all(ECHO_REPLY)?;
        stdout.flush()?;
    }
}

/// Round trips of a `request_bytes` line to `referee bench-echo` and back.
fn baseline(request_bytes: usize, trips: usize) -> anyhow::Result<Baseline> {
    let exe = crate::os::own_exe::path().context("failed to find the referee's own executable")?;
    let mut child = crate::os::own_exe::command(&exe)
        .arg("bench-echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("failed to start the echo child")?;
    let mut to = child.stdin.take().expect("piped");
    let mut from = BufReader::new(child.stdout.take().expect("piped"));
    let mut line = vec![b'x'; request_bytes.max(1) - 1];
    line.push(b'\n');
    let mut got = Vec::with_capacity(256);
    let warmup = trips / 10 + 10;
    let mut ns = Vec::with_capacity(trips);
    for i in 0..warmup + trips {
        let start = Instant::now();
        to.write_all(&line)
            .context("failed to write to the echo child")?;
        got.clear();
        from.read_until(b'\n', &mut got)
            .context("failed to read from the echo child")?;
        let took = start.elapsed();
        anyhow::ensure!(got == ECHO_REPLY, "failed to read the echo child's reply");
        if i >= warmup {
            ns.push(took.as_nanos() as u64);
        }
    }
    drop(to);
    child.wait().context("failed to wait for the echo child")?;
    Ok(Baseline {
        request_bytes,
        reply_bytes: ECHO_REPLY.len(),
        trips,
        round_trip: Spread::of(ns),
    })
}

/// One games phase: `jobs` tables, each with six bot processes on its own thread.
fn phase(cfg: &BenchConfig, jobs: usize) -> anyhow::Result<Phase> {
    anyhow::ensure!(jobs >= 1, "--jobs must be at least 1");
    let dir = tempfile::tempdir().context("failed to create a scratch directory")?;
    let configs = table_configs(cfg, jobs, dir.path());
    let rss_before = proc_status_kib("VmRSS");
    // Resets VmHWM to the current RSS (Linux 4.0+), so the peak is this phase's.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let start = Instant::now();
    let summaries = play_tables(&configs);
    let wall = start.elapsed();
    let peak = proc_status_kib("VmHWM");
    let (stats, games) = totals(summaries)?;
    let d = stats.decisions as f64;
    let bytes = (stats.bytes_out + stats.bytes_in) as f64;
    let secs = wall.as_secs_f64();
    Ok(Phase {
        jobs,
        tables: configs
            .iter()
            .map(|c| TableRun {
                seed: c.seed,
                games: c.games,
            })
            .collect(),
        games,
        decisions: stats.decisions,
        answered: stats.answered,
        wall_s: secs,
        games_per_s: f64::from(games) / secs,
        decisions_per_s: d / secs,
        bytes_per_s: bytes / secs,
        bytes_per_decision: bytes / d,
        per_decision: Spread::of(stats.cycle_ns.iter().map(|&n| u64::from(n)).collect()),
        ratio: 0.0,
        breakdown: Breakdown::of(&stats),
        peak_rss_kib: peak.filter(|_| reset),
        rss_growth_per_table_kib: match (reset, peak, rss_before) {
            (true, Some(p), Some(b)) => Some(p.saturating_sub(b) as f64 / jobs as f64),
            _ => None,
        },
        scaling: None,
    })
}

/// Each table's play configuration: its share of the games (the first tables
/// take the remainder), a seed of its own, a folder under `dir`.
fn table_configs(cfg: &BenchConfig, jobs: usize, dir: &std::path::Path) -> Vec<PlayConfig> {
    let share =
        |k: usize| cfg.games / jobs as u32 + u32::from((k as u32) < cfg.games % jobs as u32);
    (0..jobs)
        .filter(|&k| share(k) > 0)
        .map(|k| {
            let mut play = cfg.play.clone();
            play.table.lineup = std::array::from_fn(|_| BotSpec::Builtin(cfg.bot.clone()));
            play.games = share(k);
            play.seed = derive_seed(cfg.seed, k as u64);
            play.table.events = cfg.events;
            play.output = Output::Dir(dir.join(format!("table-{k}")));
            play.quiet = true;
            play
        })
        .collect()
}

/// Plays each configuration's match at once, each on a thread of its own with a
/// single-threaded runtime. Only what goes wrong at a table is printed (a bot
/// that fails to start, a lost game); the results come back here.
fn play_tables(configs: &[PlayConfig]) -> Vec<anyhow::Result<MatchSummary>> {
    let table = |play: &PlayConfig| -> anyhow::Result<MatchSummary> {
        let console = std::sync::Arc::new(crate::report::Troubles);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("failed to start a runtime")?;
        // Never cancelled: a benchmark runs to its end (or is killed).
        match runtime.block_on(crate::play::run(play, &CancellationToken::new(), console))? {
            crate::play::Ended::Complete(summary) => Ok(summary),
            crate::play::Ended::Interrupted(_) => anyhow::bail!("interrupted"),
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = configs
            .iter()
            .map(|play| s.spawn(move || table(play)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a table thread panicked"))
            .collect()
    })
}

/// The tables' timers added up, and the games they played; a game with a fault
/// spoils the measurement.
fn totals(summaries: Vec<anyhow::Result<MatchSummary>>) -> anyhow::Result<(TableStats, u32)> {
    let mut stats = TableStats::default();
    let mut games = 0;
    for r in summaries {
        let summary = r.context("failed to play the benchmark games")?;
        for g in &summary.games {
            anyhow::ensure!(
                g.faults == 0,
                "failed to benchmark cleanly: game {} had {} fault(s) (transcripts in {})",
                g.game,
                g.faults,
                g.transcript
            );
            stats += &g.stats;
            games += 1;
        }
    }
    anyhow::ensure!(stats.decisions > 0, "failed to play any decision");
    Ok((stats, games))
}

impl Breakdown {
    /// Mean microseconds per decision of each of the table's timers.
    fn of(stats: &TableStats) -> Breakdown {
        let d = stats.decisions as f64;
        let us = |x: Duration| x.as_secs_f64() * 1e6 / d;
        let rest = stats.total().saturating_sub(stats.attributed());
        Breakdown {
            request_us: us(stats.request),
            write_us: us(stats.write),
            wait_us: us(stats.wait),
            handoff_us: us(stats.handoff),
            reply_us: us(stats.reply),
            apply_us: us(stats.apply),
            fanout_us: us(stats.fanout),
            transcript_us: us(stats.transcript),
            rest_us: us(rest),
        }
    }
}

/// A field of `/proc/self/status` in KiB (Linux).
fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The lines one seat receives in a game (requests and events), played by the
/// referee's fallback so no bot is needed.
struct Sample {
    requests: Vec<Vec<u8>>,
    events: Vec<Vec<u8>>,
}

fn sample_lines(seed: u64, rules: RulesConfig) -> Sample {
    let (mut game, first) = Game::new(seed, rules);
    let seat = schmier_protocol::Seat::new(0);
    let line = |msg: &ToBot| {
        let mut l = serde_json::to_vec(msg).expect("messages serialize");
        l.push(b'\n');
        l
    };
    let mut sample = Sample {
        requests: Vec::new(),
        events: first
            .iter()
            .map(|e| line(&ToBot::Event(e.seen_by(seat))))
            .collect(),
    };
    let mut events = Vec::new();
    let mut id = 1;
    while let Some(to_act) = game.to_act() {
        if to_act == seat {
            let req = Request::for_decision(&game, id, Some(1000)).expect("a decision is due");
            sample.requests.push(line(&ToBot::Request(req)));
            id += 1;
        }
        events.clear();
        game.apply_into(first_legal(&game), &mut events)
            .expect("the fallback is legal");
        sample
            .events
            .extend(events.iter().map(|e| line(&ToBot::Event(e.seen_by(seat)))));
    }
    sample
}

fn median_len(lines: &[Vec<u8>]) -> usize {
    let mut lens: Vec<usize> = lines.iter().map(Vec::len).collect();
    lens.sort_unstable();
    lens.get(lens.len() / 2).copied().unwrap_or(512)
}

/// Times the built-in bot's line handler on a game's worth of one seat's lines.
fn bot_side(bot: &str, sample: &Sample) -> anyhow::Result<BotSide> {
    let mut strategy = schmier_sample_bots::by_name(bot)
        .with_context(|| format!("failed to find the built-in bot {bot:?}"))?;
    let mut out = Vec::with_capacity(256);
    let rounds = 200;
    // On this thread's CPU clock: the figure is the work, not the host's load.
    let cpu = || crate::os::sys::thread_cpu_time().context("failed to read this thread's CPU time");
    let mut time = |lines: &[Vec<u8>]| -> anyhow::Result<f64> {
        let start = cpu()?;
        for _ in 0..rounds {
            for l in lines {
                out.clear();
                let _ = schmier_sample_bots::respond(strategy.as_mut(), l, &mut out);
            }
        }
        let used = cpu()?.saturating_sub(start);
        Ok(used.as_secs_f64() * 1e6 / (rounds * lines.len().max(1)) as f64)
    };
    let request_us = time(&sample.requests)?;
    let event_us = time(&sample.events)?;
    Ok(BotSide {
        requests: sample.requests.len(),
        events: sample.events.len(),
        request_us,
        event_us,
    })
}

impl BenchReport {
    /// The human-readable report.
    pub fn text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let b = |x: &Baseline| {
            format!(
                "median {:.1} µs, p99 {:.1} µs ({} round trips, {} bytes out, {} back)",
                x.round_trip.median_us,
                x.round_trip.p99_us,
                x.trips,
                x.request_bytes,
                x.reply_bytes
            )
        };
        let _ = writeln!(s, "pipe round trip before: {}", b(&self.before));
        let _ = writeln!(s, "pipe round trip after:  {}", b(&self.after));
        let _ = writeln!(
            s,
            "bot side ({}, in process, CPU time): {:.2} µs per request, {:.3} µs per event line",
            self.bot, self.bot_side.request_us, self.bot_side.event_us
        );
        for p in &self.phases {
            let _ = writeln!(
                s,
                "\njobs {}: {} games, {} decisions in {:.2} s ({} bots, events {})",
                p.jobs, p.games, p.decisions, p.wall_s, self.bot, self.events
            );
            let _ = writeln!(
                s,
                "  {:.1} games/s, {:.0} decisions/s, {:.2} MB/s through the pipes ({:.0} bytes per decision)",
                p.games_per_s,
                p.decisions_per_s,
                p.bytes_per_s / 1e6,
                p.bytes_per_decision
            );
            let _ = writeln!(
                s,
                "  per decision: median {:.1} µs, p99 {:.1} µs, mean {:.1} µs; median / pipe round trip = {:.2}",
                p.per_decision.median_us, p.per_decision.p99_us, p.per_decision.mean_us, p.ratio
            );
            let k = &p.breakdown;
            let _ = writeln!(
                s,
                "  mean µs per decision: request {:.2}, write {:.2}, wait for reply {:.2}, handoff {:.2}, \
                 reply {:.2}, apply {:.2}, fan-out {:.2}, transcript {:.2}, rest {:.2}",
                k.request_us,
                k.write_us,
                k.wait_us,
                k.handoff_us,
                k.reply_us,
                k.apply_us,
                k.fanout_us,
                k.transcript_us,
                k.rest_us
            );
            if let Some(x) = p.scaling {
                let _ = writeln!(
                    s,
                    "  scaling: {x:.2}× the decisions per second of jobs 1 (in this run)"
                );
            }
            if let (Some(peak), Some(per)) = (p.peak_rss_kib, p.rss_growth_per_table_kib) {
                let _ = writeln!(
                    s,
                    "  referee peak RSS {:.1} MiB; growth over the start {:.2} MiB per table",
                    peak as f64 / 1024.0,
                    per / 1024.0
                );
            }
        }
        s
    }
}
