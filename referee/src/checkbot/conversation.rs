//! One bot process under test and the checker's side of the conversation: every
//! line the bot sends is judged at once, and anything wrong becomes a [`Failure`]
//! that names the offending line and what was expected instead.

use std::path::PathBuf;
use std::time::Duration;

use tokio::time::Instant;

use schmier_protocol::excerpt::bounded_name;
use schmier_protocol::rules::{Action, Game, RulesConfig};
use schmier_protocol::wire::{parse_action, Clock, FromBot, Limits, Request, ToBot, PROTOCOL};
use schmier_protocol::Seat;

use crate::bot::{Incoming, ResourceLimits, Spawn};
use crate::fault::quote;
use crate::player::{Closed, Player};
use crate::REFEREE;

/// What went wrong, where, and what the protocol wanted instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub problem: String,
    /// The bot's offending output, quoted (if a line was at fault).
    pub line: Option<String>,
    pub expected: String,
    /// The end of what the bot wrote to stderr, and where all of it is.
    pub stderr: Option<StderrTail>,
}

/// The last lines of a bot's stderr log, and the log's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StderrTail {
    pub log: PathBuf,
    pub tail: String,
}

/// How much of a bot's stderr a failure shows: its last lines, up to this
/// many bytes (a traceback's end).
const TAIL_BYTES: usize = 2048;
const TAIL_LINES: usize = 15;

/// The most of a bot's stderr a check run keeps, per bot process.
const LOG_CAP: u64 = 1 << 20;

/// Set to `1` in the environment of a bot under check (PROTOCOL.md, "Where
/// your process runs"): a library that stands in for its author's mistakes
/// in a game (Python's `schmier.run_bot` answers the first legal action when
/// the policy raises) fails loudly instead, so that the check sees them.
pub const CHECK_VAR: &str = "SCHMIER_CHECK_BOT";

impl Failure {
    fn new(problem: impl Into<String>, line: Option<String>, expected: impl Into<String>) -> Self {
        Failure {
            problem: problem.into(),
            line,
            expected: expected.into(),
            stderr: None,
        }
    }
}

/// Time limits of a check run.
#[derive(Clone, Copy, Debug)]
pub struct CheckLimits {
    pub startup: Duration,
    pub decision: Duration,
    pub max_line: usize,
}

/// Where and how the bot under check runs (`referee check-bot`: as typed,
/// from the working directory, unsandboxed; a season's submission: as the
/// season's tables would run it).
#[derive(Clone, Debug, Default)]
pub struct Confinement {
    /// The bot's command resolved as a table resolves it (its folder, its
    /// program); `None`: the argv resolved from the working directory.
    pub launch: Option<crate::os::Launch>,
    /// The sandbox every start of the bot runs in.
    pub sandbox: Option<std::sync::Arc<crate::sandbox::Sandbox>>,
    pub limits: ResourceLimits,
}

/// The referee's allowance for pipe latency, as in `referee play`.
const GRACE: Duration = Duration::from_millis(50);

pub struct Conversation {
    argv: Vec<String>,
    limits: CheckLimits,
    confinement: Confinement,
    bot: Option<Player>,
    next_id: u64,
    games: u32,
    /// How long each answered request took, request's last byte to reply's newline.
    pub times: Vec<Duration>,
    /// The name from the bot's last `hello`.
    pub name: Option<String>,
    /// Messages given an unknown field, and unknown messages sent between them.
    pub add_unknowns: bool,
    /// The folder of the bot processes' stderr logs (`None`: none could be
    /// made, and the bots' stderr is dropped).
    logs: Option<tempfile::TempDir>,
    /// The log of the bot process started last.
    log: Option<PathBuf>,
    starts: u32,
}

impl Conversation {
    pub fn new(argv: Vec<String>, limits: CheckLimits, confinement: Confinement) -> Conversation {
        Conversation {
            argv,
            limits,
            confinement,
            bot: None,
            next_id: 1,
            games: 0,
            times: Vec::new(),
            name: None,
            add_unknowns: false,
            logs: tempfile::Builder::new()
                .prefix("schmier-check-bot-")
                .tempdir()
                .ok(),
            log: None,
            starts: 0,
        }
    }

    /// Keeps the stderr logs past the run (a check failed and names one);
    /// else they are removed with the conversation.
    pub fn keep_logs(&mut self) {
        if let Some(dir) = self.logs.take() {
            let _ = dir.keep();
        }
    }

    /// The end of the current bot's stderr log, if it wrote anything.
    fn stderr_tail(&self) -> Option<StderrTail> {
        let log = self.log.clone()?;
        let bytes = std::fs::read(&log).ok()?;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim_end();
        if text.is_empty() {
            return None;
        }
        let lines: Vec<&str> = text.lines().collect();
        let mut tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
        if tail.len() > TAIL_BYTES {
            let mut cut = tail.len() - TAIL_BYTES;
            while !tail.is_char_boundary(cut) {
                cut += 1;
            }
            tail = format!("…{}", &tail[cut..]);
        }
        Some(StderrTail { log, tail })
    }

    /// `failure` with the end of the bot's stderr, once the bot is stopped
    /// (its stderr then drained to the log).
    async fn with_stderr(&mut self, mut failure: Failure) -> Failure {
        self.stop().await;
        failure.stderr = self.stderr_tail();
        failure
    }

    pub fn is_running(&self) -> bool {
        self.bot.is_some()
    }

    /// The `hello` the bot is sent: this check's limits, the wall clock.
    fn hello(&self) -> ToBot {
        ToBot::Hello {
            protocol: PROTOCOL.to_owned(),
            referee: REFEREE.to_owned(),
            limits: Limits {
                startup_ms: Some(self.limits.startup.as_millis() as u64),
                decision_ms: Some(self.limits.decision.as_millis() as u64),
                time_bank_ms: 0,
                clock: Clock::Wall,
                max_line_bytes: self.limits.max_line,
            },
        }
    }

    /// Starts the bot and runs the handshake; on success says how it went.
    /// What the bot's command runs, from the working directory: a
    /// built-in bot (`builtin:NAME`, one word) as a table runs it (this very
    /// executable), anything else resolved as `referee play` resolves it.
    fn resolve(&self, path: &str) -> anyhow::Result<crate::bot::Launch> {
        let cwd = std::env::current_dir().unwrap_or_default();
        if let [one] = self.argv.as_slice() {
            if one.starts_with("builtin:") {
                let spec = crate::settings::parse_bot(one, "check-bot")?;
                return Ok(spec.launch(&cwd, path)?);
            }
        }
        Ok(crate::bot::Launch::resolve(&self.argv, &cwd, path)?)
    }

    pub async fn start(&mut self) -> Result<String, Failure> {
        self.stop().await;
        // The bot runs as `referee play` would run it: its path resolved the same
        // way, the same cleared environment (PATH), and [`CHECK_VAR`].
        let env = crate::config::Isolation::env(&[(CHECK_VAR.to_owned(), "1".to_owned())]);
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map_or(crate::bot::DEFAULT_PATH.to_owned(), |(_, v)| v.clone());
        let launch = match &self.confinement.launch {
            Some(launch) => launch.clone(),
            None => self.resolve(&path).map_err(|e| {
                Failure::new(
                    e.to_string(),
                    None,
                    "a command that starts (check the path and the execute bit)",
                )
            })?,
        };
        self.starts += 1;
        self.log = (self.logs.as_ref()).map(|d| d.path().join(format!("bot-{}.log", self.starts)));
        let spawn = Spawn {
            launch,
            env,
            sandbox: self.confinement.sandbox.clone(),
            max_line: self.limits.max_line,
            limits: self.confinement.limits,
            stderr_log: self.log.clone(),
            stderr_cap: LOG_CAP,
            hold: false,
            before_any_game: false,
        };
        let program = self.argv[0].clone();
        let mut bot = Player::spawn(&spawn).map_err(|e| {
            Failure::new(
                format!("failed to start {program:?}: {e}"),
                None,
                "a command that starts (check the path and the execute bit)",
            )
        })?;
        bot.queue_line(&serde_json::to_vec(&self.hello()).expect("messages serialize"));
        let sent = Instant::now();
        self.bot = Some(bot);
        self.flush().await?;
        let expected = format!(
            r#"{{"type":"hello","name":...,"protocol":"{PROTOCOL}"}} within {} ms"#,
            self.limits.startup.as_millis()
        );
        let line = self
            .read(sent + self.limits.startup + GRACE, &expected)
            .await?;
        match serde_json::from_slice::<FromBot>(&line) {
            Ok(FromBot::Hello { name, protocol, .. }) if protocol == PROTOCOL => {
                let name = bounded_name(name);
                let note = format!(
                    "answered hello as {name:?} in {} ms",
                    sent.elapsed().as_millis()
                );
                self.name = Some(name);
                Ok(note)
            }
            Ok(FromBot::Hello { protocol, .. }) => Err(self
                .fail(
                    format!(
                        "protocol mismatch: the bot speaks {}",
                        quote(protocol.as_bytes())
                    ),
                    &line,
                    expected,
                )
                .await),
            _ => Err(self.fail("not a hello".to_owned(), &line, expected).await),
        }
    }

    /// Ends the bot process, if any.
    pub async fn stop(&mut self) {
        if let Some(bot) = self.bot.take() {
            bot.shutdown(Duration::from_millis(200)).await;
        }
    }

    /// Says `bye` and waits briefly for the bot to exit.
    pub async fn bye(&mut self) {
        if let Some(bot) = self.bot.as_mut() {
            let bye = ToBot::Bye {
                reason: "check over".into(),
            };
            bot.queue_line(&serde_json::to_vec(&bye).expect("messages serialize"));
        }
        self.stop().await;
    }

    /// Starts game number `n` of the session for `seat`.
    pub fn game_start(&mut self, seat: Seat, rules: RulesConfig) {
        self.games += 1;
        let players = (0..6)
            .map(|s| {
                if s == seat.index() {
                    self.name.clone().unwrap_or_default()
                } else {
                    "random".to_owned()
                }
            })
            .collect();
        if self.add_unknowns {
            self.queue_json(serde_json::json!({
                "type": "x_announcement",
                "text": "a message type from a later protocol revision",
                "x_data": {"nested": [1, 2, 3]}
            }));
        }
        let msg = ToBot::GameStart {
            game: self.games,
            seat,
            team: seat.team(),
            partner: seat.partner(),
            players,
            rules,
        };
        self.queue(&msg);
    }

    /// Queues a message (with an unknown field when `add_unknowns`).
    pub fn queue(&mut self, msg: &ToBot) {
        let value = serde_json::to_value(msg).expect("messages serialize");
        self.queue_json(value);
    }

    fn queue_json(&mut self, mut value: serde_json::Value) {
        if self.add_unknowns {
            if let Some(obj) = value.as_object_mut() {
                obj.insert("x_unknown_field".into(), serde_json::json!({"later": true}));
            }
        }
        if let Some(bot) = self.bot.as_mut() {
            bot.queue_line(&serde_json::to_vec(&value).expect("JSON serializes"));
        }
    }

    pub async fn flush(&mut self) -> Result<(), Failure> {
        let Some(bot) = self.bot.as_mut() else {
            return Ok(());
        };
        if bot.flush(Some(Duration::from_secs(2))).await.is_err() {
            // A bot that died on import is seen here when it was gone
            // before `hello` was written: its stderr says why.
            let status = self.exit_status().await;
            let f = Failure::new(
                format!("the bot stopped reading its stdin{status}"),
                None,
                "a bot that reads every line until bye",
            );
            return Err(self.with_stderr(f).await);
        }
        Ok(())
    }

    /// Fails if the bot sent a line nobody asked for (read so far).
    pub async fn no_stray_line(&mut self) -> Result<(), Failure> {
        let Some(bot) = self.bot.as_mut() else {
            return Ok(());
        };
        match bot.next_line(Some(Instant::now())).await {
            None => Ok(()),
            Some(Incoming::Line { bytes, .. }) => {
                // Judged by what it is, not by when it came: the same line read
                // as the answer to the next request gets the same words.
                let problem = match serde_json::from_slice::<FromBot>(&bytes) {
                    Ok(FromBot::Reply { id, .. }) => wrong_id(id, self.next_id - 1),
                    _ => "a line nobody asked for".to_owned(),
                };
                let expected = "nothing on stdout but one hello, and one reply per request";
                Err(self.fail(problem, &bytes, expected.to_owned()).await)
            }
            Some(_) => Err(self
                .ended(
                    "the bot's stdout ended or broke".to_owned(),
                    "a reply per request",
                )
                .await),
        }
    }

    /// Sends the request due in `game` and judges the reply: on time, the right
    /// id, the right shape, legal. Returns the bot's action.
    pub async fn ask(&mut self, game: &Game) -> Result<(Request, Action), Failure> {
        self.no_stray_line().await?;
        let id = self.next_id;
        self.next_id += 1;
        let request =
            Request::for_decision(game, id, Some(self.limits.decision.as_millis() as u64))
                .expect("a decision is due");
        self.queue(&ToBot::Request(request.clone()));
        self.flush().await?;
        let sent = Instant::now();
        let legal = serde_json::to_string(&request.legal).expect("JSON");
        let expected = format!(
            r#"{{"type":"reply","id":{id},"action":...}} within {} ms, the action one of the legal answers {legal}"#,
            self.limits.decision.as_millis()
        );
        let line = self
            .read(sent + self.limits.decision + GRACE, &expected)
            .await?;
        self.times.push(sent.elapsed());
        if let Err(e) = std::str::from_utf8(&line) {
            return Err(self.fail(format!("not UTF-8 ({e})"), &line, expected).await);
        }
        let (other, action) = match serde_json::from_slice::<FromBot>(&line) {
            Ok(FromBot::Reply { id, action }) => (id, action),
            Ok(FromBot::Hello { .. }) => {
                return Err(self
                    .fail("a hello in the middle of a game".into(), &line, expected)
                    .await)
            }
            Err(e) => {
                return Err(self
                    .fail(format!("not a protocol message ({e})"), &line, expected)
                    .await)
            }
        };
        if other != id {
            let problem = format!("{} (request {id} is pending)", wrong_id(other, id));
            return Err(self.fail(problem, &line, expected).await);
        }
        let action = match parse_action(request.decision, &action) {
            Ok(a) => a,
            Err(e) => {
                return Err(self
                    .fail(format!("malformed action: {e}"), &line, expected)
                    .await)
            }
        };
        let mut trial = game.clone();
        if let Err(e) = trial.apply(action) {
            return Err(self
                .fail(format!("illegal action: {e}"), &line, expected)
                .await);
        }
        Ok((request, action))
    }

    /// The next line, or a failure: too late, too long, or the bot ended.
    async fn read(&mut self, deadline: Instant, expected: &str) -> Result<Vec<u8>, Failure> {
        let bot = self.bot.as_mut().expect("a running bot");
        match bot.next_line(Some(deadline)).await {
            Some(Incoming::Line { bytes, .. }) => Ok(bytes.to_vec()),
            // Only once told of a stale reply, which a check never does.
            Some(Incoming::Stale { other, .. }) => {
                let f = Failure::new(
                    format!("a reply to request {other}, unread"),
                    None,
                    expected,
                );
                Err(self.with_stderr(f).await)
            }
            None => {
                let f = Failure::new("no answer in time", None, expected);
                Err(self.with_stderr(f).await)
            }
            Some(Incoming::Oversized { len, .. }) => {
                let f = Failure::new(
                    format!(
                        "a line longer than {} bytes ({len} bytes and counting)",
                        self.limits.max_line
                    ),
                    None,
                    expected,
                );
                Err(self.with_stderr(f).await)
            }
            Some(Incoming::Eof { .. }) | Some(Incoming::Error { .. }) => Err(self
                .ended("the bot's stdout ended".to_owned(), expected)
                .await),
        }
    }

    async fn ended(&mut self, what: String, expected: &str) -> Failure {
        let status = self.exit_status().await;
        let f = Failure::new(format!("{what}{status}"), None, expected);
        self.with_stderr(f).await
    }

    async fn exit_status(&mut self) -> String {
        let Some(bot) = self.bot.as_mut() else {
            return String::new();
        };
        let by = Instant::now() + Duration::from_millis(500);
        match bot.why_closed(Some(by)).await {
            Closed::Exited(s) => format!(": the process exited ({s})"),
            Closed::StillThere | Closed::Dropped(_) => String::new(),
        }
    }

    /// A failure over `line`; the bot is stopped, as its state is unknown now.
    async fn fail(&mut self, problem: String, line: &[u8], expected: String) -> Failure {
        let f = Failure::new(problem, Some(quote(line)), expected);
        self.with_stderr(f).await
    }
}

/// What a reply with id `other` is when requests 1..=`issued` have been sent and
/// all but possibly the last answered.
fn wrong_id(other: u64, issued: u64) -> String {
    if (1..=issued).contains(&other) {
        format!("a second reply to request {other}, which was already answered")
    } else {
        format!("a reply to request {other}, which was never sent")
    }
}
