//! Reads for the season's site (`season/site/`): a connection that never
//! writes, and the few queries the site needs beyond the run's.

use std::path::Path;

use anyhow::Context;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use super::{Db, BUSY, FORMAT};
use crate::tournament::outcome::GameOutcome;

impl Db {
    /// Opens an existing season's database to read only: the connection
    /// refuses every write (`query_only`), and WAL (set at `init`) lets it
    /// read while `season run` writes, never blocking the writer.
    pub fn open_read_only(path: &Path) -> anyhow::Result<Db> {
        if !path.is_file() {
            anyhow::bail!("{} is missing: no season there", path.display());
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .with_context(|| format!("failed to open {}", path.display()))?;
        conn.busy_timeout(BUSY)?;
        conn.pragma_update(None, "query_only", "ON")?;
        let db = Db { conn };
        match db.get("format")?.as_deref() {
            Some(FORMAT) => Ok(db),
            other => anyhow::bail!(
                "{} is not a season this referee reads (format {other:?})",
                path.display()
            ),
        }
    }

    /// The token recorded for the entrant named `name`.
    pub fn token_of(&self, name: &str) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn
            .query_row(
                "SELECT token FROM entrants WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// SQLite's `data_version`: changes when another connection commits.
    pub fn data_version(&self) -> anyhow::Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// How many sets are finished.
    pub fn finished_count(&self) -> anyhow::Result<i64> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*) FROM sets WHERE finished IS NOT NULL",
            [],
            |r| r.get(0),
        )?)
    }

    /// The recorded outcome of game `game` of set `set`, if there is one.
    pub fn game(&self, set: i64, game: u32) -> anyhow::Result<Option<GameOutcome>> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT outcome FROM games WHERE set_id = ?1 AND game = ?2",
                params![set, game],
                |r| r.get(0),
            )
            .optional()?;
        text.map(|t| {
            serde_json::from_str(&t).with_context(|| format!("set {set} game {game}: its outcome"))
        })
        .transpose()
    }
}
