//! Reads for the season's site (`season/site/`): a connection that never
//! writes, and the few queries the site needs beyond the run's.

use std::path::Path;

use anyhow::Context;
use rusqlite::{Connection, OpenFlags};

use super::sql::{args, Conn, Sql};
use super::{Db, BUSY};
use crate::tournament::outcome::GameOutcome;

impl Db {
    /// Opens an existing season's database to read only: the connection
    /// refuses every write (SQLite's `query_only`, a PostgreSQL session
    /// `READ ONLY`), and on SQLite WAL (set at `init`) lets it read while
    /// `season run` writes, never blocking the writer.
    pub fn open_read_only(path: &Path) -> anyhow::Result<Db> {
        Self::open_as_is(path, true)
    }

    pub(super) fn sqlite_read_only(path: &Path) -> anyhow::Result<Db> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("failed to open {}", path.display()))?;
        conn.busy_timeout(BUSY)?;
        conn.pragma_update(None, "query_only", "ON")?;
        Ok(Db {
            conn: Conn::Sqlite(conn),
            name: path.display().to_string(),
        })
    }

    /// The token recorded for the entrant named `name`.
    pub fn token_of(&self, name: &str) -> anyhow::Result<Option<String>> {
        self.query_opt(
            "SELECT token FROM entrants WHERE name = $1",
            args![name],
            |r| r.get(0),
        )
    }

    /// A number that changes when another connection commits a change the
    /// site shows: SQLite's `data_version`; on PostgreSQL, which has none,
    /// the tables' row counts and the finished sets', folded into one (the
    /// site's tables only grow, but for a set's end and a token, which it
    /// does not show).
    pub fn data_version(&self) -> anyhow::Result<i64> {
        if !self.is_postgres() {
            return self.query_row("PRAGMA data_version", args![], |r| r.get(0));
        }
        let counts: Vec<i64> = self.query_row(
            "SELECT (SELECT COUNT(*) FROM settings), (SELECT COUNT(*) FROM entrants),
                    (SELECT COUNT(*) FROM versions), (SELECT COUNT(*) FROM sets),
                    (SELECT COUNT(*) FROM sets WHERE finished IS NOT NULL),
                    (SELECT COUNT(*) FROM games), (SELECT COUNT(*) FROM ratings)",
            args![],
            |r| (0..7).map(|i| r.get(i)).collect(),
        )?;
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        counts.hash(&mut h);
        Ok(h.finish() as i64)
    }

    /// How many sets are finished.
    pub fn finished_count(&self) -> anyhow::Result<i64> {
        super::finished_sets(self)
    }

    /// The recorded outcome of game `game` of set `set`, if there is one.
    pub fn game(&self, set: i64, game: u32) -> anyhow::Result<Option<GameOutcome>> {
        let text: Option<String> = self.query_opt(
            "SELECT outcome FROM games WHERE set_id = $1 AND game = $2",
            args![set, game],
            |r| r.get(0),
        )?;
        text.map(|t| {
            serde_json::from_str(&t).with_context(|| format!("set {set} game {game}: its outcome"))
        })
        .transpose()
    }
}
