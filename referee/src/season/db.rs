//! A season's state: entrants, versions, sets, games, ratings. By default
//! one SQLite file, `DIR/season.db` (WAL, so `season submit` writes while
//! `season run` reads; a busy timeout, so neither fails when the other holds
//! the lock for a moment); or, made by `season init DIR --db postgres://…`, a
//! PostgreSQL database that `DIR/season.postgres` names (`db/pg.rs`). Every
//! write that must agree with another is one transaction: a game's result
//! and, when it completes its set, the set's end and the refitted ratings
//! land together or not at all, so a `kill -9` at any moment leaves the
//! database as it was after some write.
//!
//! Transcripts stay files (`games/`), as a tournament's do; a game row names
//! its transcript and holds the outcome read from it (`tournament/outcome.rs`),
//! which `referee verify DIR` derives again.
//!
//! # The layer (`db/sql.rs`), and how to add a query
//! Both engines get the same schema ([`SCHEMA`], SQLite's text; `pg::schema`
//! widens its types for PostgreSQL) and the same SQL text, through
//! [`sql::Sql`]: `execute`, `query_row`, `query_opt`, `query_map` on a
//! [`Db`] (or its `conn`) or in a transaction, with parameters numbered
//! `$1, $2…` and given by `args![…]`, and rows read by `r.get(i)`. A method
//! in rusqlite's style ports mechanically:
//!
//! - `params![a, b]` → `args![a, b]`; `?1` → `$1`;
//! - `conn.query_row(q, p, f).optional()` → `conn.query_opt(q, p, f)`;
//!   `conn.prepare(q)?.query_map(p, f)?.collect()` → `conn.query_map(q, p, f)`;
//!   `r.get::<_, T>(i)` → `r.get::<T>(i)`; closures return `anyhow::Result`;
//! - `conn.last_insert_rowid()` → `INSERT … RETURNING id` read by `query_row`;
//! - `let tx = conn.transaction()?; …; tx.commit()` →
//!   `conn.transaction(|tx| { …; Ok(x) })`. The closure may run more than
//!   once (PostgreSQL retries a transaction a concurrent writer aborted), so
//!   it does nothing but its statements. SQLite's starts `IMMEDIATE`,
//!   PostgreSQL's is `SERIALIZABLE`: a read-then-write in one is safe
//!   against other writers on both;
//! - a new table: in [`SCHEMA`] style (`INTEGER`, `REAL`, `TEXT`; booleans
//!   as 0/1 integers), created with `IF NOT EXISTS` by `create`, and by `open`
//!   too for seasons made before it (run through `pg::schema` on
//!   PostgreSQL); plain SQL both engines read (no SQLite-only functions or
//!   pragmas, no PostgreSQL-only types); `COUNT(*)`, `MAX`, `COALESCE` are
//!   fine, `SUM` of integers is NUMERIC on PostgreSQL (cast it to BIGINT).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;

use crate::tournament::outcome::GameOutcome;

/// Workers, leases and shipped files (`season/lease.rs`).
pub mod lease;
/// The PostgreSQL backend: the folder's record of it, the client.
pub mod pg;
/// The site's reads (`season/site/`).
mod read;
/// The layer: one connection, either engine.
pub mod sql;
/// The layer's parameters and rows.
pub mod value;

pub use sql::Sql;
use sql::{args, Conn};

/// What `season.db`'s `format` setting says: the schema below.
pub const FORMAT: &str = "schmier-season/1";

/// The setting that records the season's final (`final_bracket.rs`), whose
/// presence freezes submissions.
pub const FINAL: &str = "final";

/// How long a write waits for the other process's (a submission during a run).
const BUSY: Duration = Duration::from_secs(30);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entrants (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token TEXT NOT NULL,
    created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    id INTEGER PRIMARY KEY, entrant INTEGER NOT NULL REFERENCES entrants(id),
    number INTEGER NOT NULL, command TEXT NOT NULL, dir TEXT,
    parent INTEGER REFERENCES versions(id), submitted INTEGER NOT NULL,
    admitted INTEGER NOT NULL, checked TEXT NOT NULL, report TEXT NOT NULL,
    UNIQUE (entrant, number));
CREATE TABLE IF NOT EXISTS sets (
    id INTEGER PRIMARY KEY, a INTEGER NOT NULL REFERENCES versions(id),
    b INTEGER NOT NULL REFERENCES versions(id), c INTEGER NOT NULL REFERENCES versions(id),
    seed TEXT NOT NULL, planned INTEGER NOT NULL, finished INTEGER);
CREATE TABLE IF NOT EXISTS games (
    set_id INTEGER NOT NULL REFERENCES sets(id), game INTEGER NOT NULL,
    transcript TEXT NOT NULL, outcome TEXT NOT NULL, PRIMARY KEY (set_id, game));
CREATE TABLE IF NOT EXISTS ratings (
    after_sets INTEGER NOT NULL, version INTEGER NOT NULL REFERENCES versions(id),
    rating REAL NOT NULL, low REAL NOT NULL, high REAL NOT NULL, games INTEGER NOT NULL,
    PRIMARY KEY (after_sets, version));
";

/// How a stored token starts: its SHA-256 follows (`tokens.rs`); a stored
/// token without it is a clear one, left by an older referee.
pub const TOKEN_HASH: &str = "sha256:";

/// What the database keeps of the token `clear`: `sha256:` and 64 hex digits.
pub fn stored_token(clear: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, clear.as_bytes());
    format!("{TOKEN_HASH}{}", hex(digest.as_ref()))
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The open database of a season.
pub struct Db {
    conn: Conn,
    /// What messages call it: `DIR/season.db`, or the PostgreSQL URL and the
    /// file that names it.
    name: String,
}

impl Sql for Db {
    fn rows(&self, sql: &str, args: &[sql::Value]) -> anyhow::Result<Vec<sql::Row>> {
        self.conn.rows(sql, args)
    }

    fn execute(&self, sql: &str, args: &[sql::Value]) -> anyhow::Result<u64> {
        self.conn.execute(sql, args)
    }
}
/// A version as the database holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Version {
    pub id: i64,
    pub entrant: i64,
    pub name: String,
    /// From 1, per entrant.
    pub number: i64,
    pub command: String,
    pub dir: Option<String>,
    /// The entrant's version before this one: its lineage.
    pub parent: Option<i64>,
    pub submitted: i64,
    /// Passed its check (or joined unchecked): it may play.
    pub admitted: bool,
    /// `passed`, `failed`, or why it was not checked.
    pub checked: String,
}

/// A set as the database holds it: three versions on one deal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetRow {
    pub id: i64,
    pub versions: [i64; 3],
    pub seed: u64,
    pub finished: bool,
}

/// A rating of one version after some number of finished sets.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RatingRow {
    pub after_sets: i64,
    pub version: i64,
    pub rating: f64,
    pub low: f64,
    pub high: f64,
    pub games: i64,
}

/// Seconds since the epoch: when something was submitted or played (never in
/// a transcript).
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Db {
    /// Creates the store of a new season whose folder holds `path`
    /// (`DIR/season.db`): that SQLite file, which must not exist, or the
    /// PostgreSQL database `store` names, which must hold no tables, then
    /// recorded in `DIR/season.postgres`.
    pub fn create(path: &Path, store: Option<&pg::Store>) -> anyhow::Result<Db> {
        let Some(store) = store else {
            if path.exists() {
                anyhow::bail!("{} exists already", path.display());
            }
            let db = Self::connect(path)?;
            db.conn
                .batch(SCHEMA)
                .with_context(|| format!("failed to create the tables of {}", path.display()))?;
            db.set("format", FORMAT)?;
            return Ok(db);
        };
        let dir = folder(path);
        let db = Self::postgres(store, dir, false)?;
        let tables: i64 = db.query_row(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema()",
            args![],
            |r| r.get(0),
        )?;
        if tables > 0 {
            anyhow::bail!(
                "the PostgreSQL database {} holds {tables} table(s) already; a season needs an \
                 empty database of its own (CREATE DATABASE …)",
                store.url
            );
        }
        // One statement list, one implicit transaction: all the tables or none.
        db.conn
            .batch(&pg::schema(SCHEMA))
            .with_context(|| format!("failed to create the tables in {}", store.url))?;
        db.set("format", FORMAT)?;
        store.record(dir)?;
        Ok(db)
    }

    /// Opens the database of an existing season, whose folder holds `path`
    /// (`DIR/season.db`, or `DIR/season.postgres` naming a PostgreSQL one),
    /// its clear tokens, if an older referee left any, replaced by their
    /// hashes (`tokens.rs`).
    pub fn open(path: &Path) -> anyhow::Result<Db> {
        let mut db = Self::open_as_is(path, false)?;
        db.rewrite_tokens(|token| (!token.starts_with(TOKEN_HASH)).then(|| stored_token(token)))
            .with_context(|| {
                format!(
                    "failed to replace the clear tokens of {} by their hashes",
                    db.name
                )
            })?;
        Ok(db)
    }

    fn open_as_is(path: &Path, read_only: bool) -> anyhow::Result<Db> {
        let dir = folder(path);
        let db = match pg::Store::recorded(dir)? {
            Some(store) => Self::postgres(&store, dir, read_only)?,
            None if !path.is_file() => anyhow::bail!(
                "{} holds no season ({} is missing); `referee season init DIR` makes one",
                dir.display(),
                path.display()
            ),
            None if read_only => Self::sqlite_read_only(path)?,
            None => Self::connect(path)
                .with_context(|| format!("{} is not a season's database", path.display()))?,
        };
        let unreadable = || format!("{} is not a season's database", db.name);
        match db.get("format").with_context(unreadable)?.as_deref() {
            Some(FORMAT) => Ok(db),
            other => anyhow::bail!(
                "{} is not a season this referee reads (format {other:?}, expected {FORMAT:?})",
                db.name
            ),
        }
    }

    fn connect(path: &Path) -> anyhow::Result<Db> {
        let conn = rusqlite::Connection::open(path)
            .with_context(|| format!("failed to open {}", path.display()))?;
        conn.busy_timeout(BUSY)?;
        // WAL: readers never block the writer; FULL: a committed transaction
        // survives a power cut, not only a killed process.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(Db {
            conn: Conn::Sqlite(conn),
            name: path.display().to_string(),
        })
    }

    /// A connection to the PostgreSQL database `store` names (recorded in
    /// `dir`).
    fn postgres(store: &pg::Store, dir: &Path, read_only: bool) -> anyhow::Result<Db> {
        let file = dir.join(pg::STORE);
        let client = pg::Client::connect(store, read_only).with_context(|| {
            format!(
                "the season in {} keeps its state in PostgreSQL ({})",
                dir.display(),
                file.display()
            )
        })?;
        Ok(Db {
            conn: Conn::Postgres(client),
            name: format!(
                "the PostgreSQL database {} (named in {})",
                store.url,
                file.display()
            ),
        })
    }

    /// Whether the season's state is in PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(self.conn, Conn::Postgres(_))
    }

    pub fn set(&self, key: &str, value: &str) -> anyhow::Result<()> {
        self.execute(
            "INSERT INTO settings (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            args![key, value],
        )?;
        Ok(())
    }

    pub fn get(&self, key: &str) -> anyhow::Result<Option<String>> {
        self.query_opt(
            "SELECT value FROM settings WHERE key = $1",
            args![key],
            |r| r.get(0),
        )
    }

    /// A setting that must be there.
    pub fn setting(&self, key: &str) -> anyhow::Result<String> {
        self.get(key)?
            .with_context(|| format!("season.db has no setting {key:?}"))
    }

    /// Fails, saying why, once the season's final was called (`season
    /// final`): that froze submissions and ended the season's sets. `doing`
    /// completes "failed to …".
    pub fn refuse_frozen(&self, doing: &str) -> anyhow::Result<()> {
        refuse_frozen_in(&self.conn, doing)
    }

    /// Marks the season closed and keeps its secret, revealed.
    pub fn close(&self, secret: &crate::tournament::seed_secret::SeedSecret) -> anyhow::Result<()> {
        self.set("closed", &now().to_string())?;
        self.set("seed_secret", &secret.to_string())
    }

    /// Adds an entrant; its id.
    pub fn add_entrant(&self, name: &str, token: &str) -> anyhow::Result<i64> {
        self.conn.transaction(|tx| {
            refuse_frozen_in(tx, &format!("add the entrant {name:?}"))?;
            let taken: Option<i64> = tx.query_opt(
                "SELECT id FROM entrants WHERE name = $1",
                args![name],
                |r| r.get(0),
            )?;
            if taken.is_some() {
                anyhow::bail!("the season has an entrant named {name:?} already");
            }
            tx.query_row(
                "INSERT INTO entrants (name, token, created) VALUES ($1, $2, $3) RETURNING id",
                args![name, token, now()],
                |r| r.get(0),
            )
        })
    }

    /// The stored token of the entrant named `name` (`tokens.rs`).
    pub fn entrant_token(&self, name: &str) -> anyhow::Result<Option<String>> {
        self.query_opt(
            "SELECT token FROM entrants WHERE name = $1",
            args![name],
            |r| r.get(0),
        )
    }

    /// Replaces the stored token of the entrant named `name`; whether there
    /// is one.
    pub fn set_entrant_token(&self, name: &str, token: &str) -> anyhow::Result<bool> {
        let n = self.execute(
            "UPDATE entrants SET token = $2 WHERE name = $1",
            args![name, token],
        )?;
        Ok(n == 1)
    }

    /// Replaces each stored token `new` maps to something, in one
    /// transaction (none when there is nothing to replace); how many were
    /// replaced.
    pub fn rewrite_tokens(
        &mut self,
        new: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<usize> {
        let all = |c: &dyn Fn(&str) -> anyhow::Result<Vec<sql::Row>>| -> anyhow::Result<_> {
            let mut replaced = Vec::new();
            for row in c("SELECT id, token FROM entrants ORDER BY id")? {
                let (id, token): (i64, String) = (row.get(0)?, row.get(1)?);
                if let Some(t) = new(&token) {
                    replaced.push((id, t));
                }
            }
            Ok(replaced)
        };
        if all(&|q| self.rows(q, args![]))?.is_empty() {
            return Ok(0);
        }
        self.conn.transaction(|tx| {
            let replaced = all(&|q| tx.rows(q, args![]))?;
            for (id, t) in &replaced {
                tx.execute(
                    "UPDATE entrants SET token = $2 WHERE id = $1",
                    args![*id, t],
                )?;
            }
            Ok(replaced.len())
        })
    }

    /// The number the next version of `entrant` will be given.
    pub fn next_number(&self, entrant: i64) -> anyhow::Result<i64> {
        self.query_row(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE entrant = $1",
            args![entrant],
            |r| r.get(0),
        )
    }

    /// The id of the entrant named `name`.
    pub fn entrant(&self, name: &str) -> anyhow::Result<Option<i64>> {
        self.query_opt(
            "SELECT id FROM entrants WHERE name = $1",
            args![name],
            |r| r.get(0),
        )
    }

    /// Records a submitted version of `entrant` (numbered after its last),
    /// admitted or not; its id.
    pub fn add_version(&mut self, v: &NewVersion<'_>) -> anyhow::Result<i64> {
        self.conn.transaction(|tx| {
            // In the transaction that adds it: no version slips in after the
            // final is called.
            refuse_frozen_in(tx, "submit a version")?;
            let last: Option<(i64, i64)> = tx.query_opt(
                "SELECT id, number FROM versions WHERE entrant = $1 ORDER BY number DESC LIMIT 1",
                args![v.entrant],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let number = last.map_or(1, |(_, n)| n + 1);
            tx.query_row(
                "INSERT INTO versions (entrant, number, command, dir, parent, submitted, admitted,
                                       checked, report)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                args![
                    v.entrant,
                    number,
                    v.command,
                    v.dir,
                    last.map(|(id, _)| id),
                    now(),
                    v.admitted,
                    v.checked,
                    v.report
                ],
                |r| r.get(0),
            )
        })
    }

    /// Every version, in order of submission.
    pub fn versions(&self) -> anyhow::Result<Vec<Version>> {
        self.query_map(
            "SELECT v.id, v.entrant, e.name, v.number, v.command, v.dir, v.parent, v.submitted,
                    v.admitted, v.checked
             FROM versions v JOIN entrants e ON e.id = v.entrant ORDER BY v.id",
            args![],
            |r| {
                Ok(Version {
                    id: r.get(0)?,
                    entrant: r.get(1)?,
                    name: r.get(2)?,
                    number: r.get(3)?,
                    command: r.get(4)?,
                    dir: r.get(5)?,
                    parent: r.get(6)?,
                    submitted: r.get(7)?,
                    admitted: r.get(8)?,
                    checked: r.get(9)?,
                })
            },
        )
    }

    /// Plans a set of `versions` dealt from `seed(id)`; its id. Its number
    /// is read and taken in one transaction, so two planners never take the
    /// same.
    pub fn plan_set(
        &mut self,
        versions: [i64; 3],
        seed: impl Fn(i64) -> u64,
    ) -> anyhow::Result<i64> {
        self.conn.transaction(|tx| {
            let next: i64 =
                tx.query_row("SELECT COALESCE(MAX(id), 0) + 1 FROM sets", args![], |r| {
                    r.get(0)
                })?;
            tx.execute(
                "INSERT INTO sets (id, a, b, c, seed, planned) VALUES ($1, $2, $3, $4, $5, $6)",
                args![
                    next,
                    versions[0],
                    versions[1],
                    versions[2],
                    seed(next).to_string(),
                    now()
                ],
            )?;
            Ok(next)
        })
    }

    /// Every set, in order.
    pub fn sets(&self) -> anyhow::Result<Vec<SetRow>> {
        self.query_map(
            "SELECT id, a, b, c, seed, finished FROM sets ORDER BY id",
            args![],
            |r| {
                let id: i64 = r.get(0)?;
                let seed: String = r.get(4)?;
                let finished: Option<i64> = r.get(5)?;
                Ok(SetRow {
                    id,
                    versions: [r.get(1)?, r.get(2)?, r.get(3)?],
                    seed: seed
                        .parse()
                        .with_context(|| format!("set {id}'s seed {seed:?} is not a number"))?,
                    finished: finished.is_some(),
                })
            },
        )
    }

    /// The games of set `set` recorded so far.
    pub fn recorded(&self, set: i64) -> anyhow::Result<Vec<u32>> {
        self.query_map(
            "SELECT game FROM games WHERE set_id = $1 ORDER BY game",
            args![set],
            |r| r.get(0),
        )
    }

    /// The latest rating of every version that has played a finished set.
    pub fn latest_ratings(&self) -> anyhow::Result<Vec<RatingRow>> {
        latest_ratings_in(&self.conn)
    }

    /// Every recorded game: set, game number and outcome.
    pub fn games(&self) -> anyhow::Result<Vec<(i64, u32, GameOutcome)>> {
        self.query_map(
            "SELECT set_id, game, outcome FROM games ORDER BY set_id, game",
            args![],
            |r| {
                let (set, game, text): (i64, u32, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
                let outcome: GameOutcome = serde_json::from_str(&text)
                    .with_context(|| format!("set {set} game {game}: its recorded outcome"))?;
                Ok((set, game, outcome))
            },
        )
    }

    /// Records a finished game; if it completes its set, the set's end and
    /// the ratings `refit` returns then, in the same transaction. Whether the
    /// set is complete now.
    pub fn record_game(
        &mut self,
        set: i64,
        o: &GameOutcome,
        refit: impl Fn(&sql::Tx<'_>) -> anyhow::Result<Vec<RatingRow>>,
    ) -> anyhow::Result<bool> {
        let outcome = serde_json::to_string(o)?;
        self.conn.transaction(|tx| {
            tx.execute(
                "INSERT INTO games (set_id, game, transcript, outcome) VALUES ($1, $2, $3, $4)",
                args![set, o.game, &o.transcript, &outcome],
            )
            .with_context(|| format!("failed to record set {set} game {}", o.game))?;
            let played: i64 = tx.query_row(
                "SELECT COUNT(*) FROM games WHERE set_id = $1",
                args![set],
                |r| r.get(0),
            )?;
            let complete = played == i64::from(crate::tournament::schedule::SET);
            if complete {
                tx.execute(
                    "UPDATE sets SET finished = $2 WHERE id = $1",
                    args![set, now()],
                )?;
                for r in refit(tx)? {
                    tx.execute(
                        "INSERT INTO ratings (after_sets, version, rating, low, high, games)
                         VALUES ($1, $2, $3, $4, $5, $6)",
                        args![r.after_sets, r.version, r.rating, r.low, r.high, r.games],
                    )?;
                }
            }
            Ok(complete)
        })
    }

    /// Every rating recorded, in order of sets then version.
    pub fn ratings(&self) -> anyhow::Result<Vec<RatingRow>> {
        self.query_map(
            "SELECT after_sets, version, rating, low, high, games FROM ratings
             ORDER BY after_sets, version",
            args![],
            rating_row,
        )
    }
}

/// The season folder that holds `path` (`DIR/season.db`).
fn folder(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

fn rating_row(r: &sql::Row) -> anyhow::Result<RatingRow> {
    Ok(RatingRow {
        after_sets: r.get(0)?,
        version: r.get(1)?,
        rating: r.get(2)?,
        low: r.get(3)?,
        high: r.get(4)?,
        games: r.get(5)?,
    })
}

/// A version being recorded ([`Db::add_version`]).
pub struct NewVersion<'a> {
    pub entrant: i64,
    pub command: &'a str,
    pub dir: Option<&'a str>,
    pub admitted: bool,
    pub checked: &'a str,
    pub report: &'a str,
}

/// [`Db::refuse_frozen`] on a connection or in a transaction.
fn refuse_frozen_in(conn: &impl Sql, doing: &str) -> anyhow::Result<()> {
    let called: Option<String> = conn.query_opt(
        "SELECT value FROM settings WHERE key = $1",
        args![FINAL],
        |r| r.get(0),
    )?;
    if called.is_some() {
        anyhow::bail!(
            "failed to {doing}: the season's final was called (`season final`), which froze \
             submissions and ended the season's sets"
        );
    }
    Ok(())
}

/// [`Db::latest_ratings`] on a connection or in a transaction: the rows of
/// the last refit alone (by the table's key, not a read of the history).
pub fn latest_ratings_in(conn: &impl Sql) -> anyhow::Result<Vec<RatingRow>> {
    conn.query_map(
        "SELECT after_sets, version, rating, low, high, games FROM ratings
         WHERE after_sets = (SELECT MAX(after_sets) FROM ratings) ORDER BY version",
        args![],
        rating_row,
    )
}

/// The games of the finished sets a transaction sees (for the refit).
pub fn finished_games(tx: &impl Sql) -> anyhow::Result<Vec<GameOutcome>> {
    tx.query_map(
        "SELECT g.outcome FROM games g JOIN sets s ON s.id = g.set_id
         WHERE s.finished IS NOT NULL ORDER BY g.set_id, g.game",
        args![],
        |r| Ok(serde_json::from_str(&r.get::<String>(0)?)?),
    )
}

/// How many sets a transaction sees finished.
pub fn finished_sets(tx: &impl Sql) -> anyhow::Result<i64> {
    tx.query_row(
        "SELECT COUNT(*) FROM sets WHERE finished IS NOT NULL",
        args![],
        |r| r.get(0),
    )
}
