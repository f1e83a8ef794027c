//! Workers, their leases and the versions' files by hash (`season/lease.rs`
//! is the server's side, `season/worker/` the worker's): three tables of
//! their own, made by [`Db::ensure_worker_tables`] on every season that
//! plays with workers, old or new.
//!
//! - `workers`: a name and its token's hash (as entrants' are kept,
//!   `tokens.rs`).
//! - `leases`: at most one per set (the key): which worker holds it, the
//!   lease's own random id, and when it runs out (milliseconds since the
//!   epoch). A lease gone or run out is no lease: its holder's results are
//!   refused.
//! - `blobs`: the hash of each version's files as shipped to workers,
//!   fixed the first time they are packed, so every worker gets the same.
//!
//! Plain SQL with numbered parameters through the data layer (`sql.rs`), on
//! SQLite and PostgreSQL alike.

use super::sql::{args, Conn, Sql};
use super::{pg, Db};

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS workers (
    name TEXT PRIMARY KEY, token TEXT NOT NULL UNIQUE, created BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS leases (
    set_id INTEGER PRIMARY KEY REFERENCES sets(id), worker TEXT NOT NULL,
    lease TEXT NOT NULL, granted BIGINT NOT NULL, expires BIGINT NOT NULL,
    instance TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS blobs (
    version INTEGER PRIMARY KEY REFERENCES versions(id), hash TEXT NOT NULL);
";

/// A set's lease as the database holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseRow {
    pub set: i64,
    pub worker: String,
    /// The worker process that holds it (`lease::Ask::instance`).
    pub instance: String,
    /// The lease's own id: a worker's later lease of the same set is
    /// another lease.
    pub lease: String,
    /// Milliseconds since the epoch.
    pub expires: i64,
}

/// Milliseconds since the epoch (a lease's clock; never in a transcript).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Db {
    /// Creates the workers' tables if the season has none yet.
    pub fn ensure_worker_tables(&self) -> anyhow::Result<()> {
        match &self.conn {
            Conn::Sqlite(_) => self.conn.batch(TABLES),
            Conn::Postgres(_) => self.conn.batch(&pg::schema(TABLES)),
        }
    }

    /// Records the worker `name` with the token hash `token`, or gives it
    /// that token instead of its old one; whether it is new.
    pub fn put_worker(&self, name: &str, token: &str) -> anyhow::Result<bool> {
        let changed = self.execute(
            "UPDATE workers SET token = $1 WHERE name = $2",
            args![token, name],
        )?;
        if changed == 0 {
            self.execute(
                "INSERT INTO workers (name, token, created) VALUES ($1, $2, $3)",
                args![name, token, super::now()],
            )?;
        }
        Ok(changed == 0)
    }

    /// The worker whose token hash is `token`, if any.
    pub fn worker_with(&self, token: &str) -> anyhow::Result<Option<String>> {
        self.query_opt(
            "SELECT name FROM workers WHERE token = $1",
            args![token],
            |r| r.get(0),
        )
    }

    /// Every lease, run out or not, by set.
    pub fn leases(&self) -> anyhow::Result<Vec<LeaseRow>> {
        self.query_map(
            "SELECT set_id, worker, lease, expires, instance FROM leases ORDER BY set_id",
            args![],
            |r| {
                Ok(LeaseRow {
                    set: r.get(0)?,
                    worker: r.get(1)?,
                    lease: r.get(2)?,
                    expires: r.get(3)?,
                    instance: r.get(4)?,
                })
            },
        )
    }

    /// Grants `lease` on set `set` to `worker` until `expires`; fails if
    /// the set has a lease already.
    pub fn grant_lease(&self, l: &LeaseRow) -> anyhow::Result<()> {
        self.execute(
            "INSERT INTO leases (set_id, worker, lease, granted, expires, instance)
             VALUES ($1, $2, $3, $4, $5, $6)",
            args![l.set, &l.worker, &l.lease, now_ms(), l.expires, &l.instance],
        )?;
        Ok(())
    }

    /// Moves the end of lease `lease` of set `set` to `expires`; whether
    /// that lease is there to extend.
    pub fn extend_lease(&self, set: i64, lease: &str, expires: i64) -> anyhow::Result<bool> {
        let n = self.execute(
            "UPDATE leases SET expires = $1 WHERE set_id = $2 AND lease = $3",
            args![expires, set, lease],
        )?;
        Ok(n == 1)
    }

    /// Ends set `set`'s lease, whoever holds it.
    pub fn drop_lease(&self, set: i64) -> anyhow::Result<()> {
        self.execute("DELETE FROM leases WHERE set_id = $1", args![set])?;
        Ok(())
    }

    /// Ends every lease (a run that plays without workers).
    pub fn drop_all_leases(&self) -> anyhow::Result<usize> {
        Ok(self.execute("DELETE FROM leases", args![])? as usize)
    }

    /// The hash of version `version`'s files as shipped, if they were.
    pub fn blob_of(&self, version: i64) -> anyhow::Result<Option<String>> {
        self.query_opt(
            "SELECT hash FROM blobs WHERE version = $1",
            args![version],
            |r| r.get(0),
        )
    }

    /// Records the hash of version `version`'s files as shipped.
    pub fn set_blob(&self, version: i64, hash: &str) -> anyhow::Result<()> {
        self.execute(
            "INSERT INTO blobs (version, hash) VALUES ($1, $2)",
            args![version, hash],
        )?;
        Ok(())
    }

    /// Whether some version's files are the blob `hash`.
    pub fn has_blob(&self, hash: &str) -> anyhow::Result<bool> {
        let n: i64 = self.query_row(
            "SELECT COUNT(*) FROM blobs WHERE hash = $1",
            args![hash],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_has_one_lease_and_only_its_id_extends_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::create(&dir.path().join("season.db"), None).unwrap();
        db.ensure_worker_tables().unwrap();
        db.ensure_worker_tables().unwrap();
        assert!(db.put_worker("w1", "sha256:aa").unwrap());
        assert!(!db.put_worker("w1", "sha256:bb").unwrap());
        assert_eq!(db.worker_with("sha256:aa").unwrap(), None);
        assert_eq!(db.worker_with("sha256:bb").unwrap().as_deref(), Some("w1"));
        let e = db.add_entrant("e", "sha256:cc").unwrap();
        let v = db
            .add_version(&super::super::NewVersion {
                entrant: e,
                command: "builtin:random",
                dir: None,
                admitted: true,
                checked: "unchecked",
                report: "",
            })
            .unwrap();
        let set = db.plan_set([v, v, v], |_| 7).unwrap();
        let l = LeaseRow {
            set,
            worker: "w1".into(),
            instance: String::new(),
            lease: "L1".into(),
            expires: 1000,
        };
        db.grant_lease(&l).unwrap();
        assert!(db.grant_lease(&l).is_err(), "a second lease of one set");
        assert!(db.extend_lease(set, "L1", 5000).unwrap());
        assert!(!db.extend_lease(set, "L2", 9000).unwrap());
        assert_eq!(db.leases().unwrap()[0].expires, 5000);
        db.drop_lease(set).unwrap();
        assert!(db.leases().unwrap().is_empty());
        db.set_blob(v, "abc").unwrap();
        assert_eq!(db.blob_of(v).unwrap().as_deref(), Some("abc"));
        assert!(db.has_blob("abc").unwrap() && !db.has_blob("abd").unwrap());
    }
}
