//! The data layer under `db.rs`: one connection to SQLite or PostgreSQL
//! ([`Conn`]), the same SQL text for both, parameters as [`Value`]s (the
//! [`args!`] macro) and rows as [`Row`]s read by column number.
//!
//! Only what both engines read alike goes through it: `$1, $2…` numbered
//! parameters (turned into SQLite's `?1, ?2…` here, since SQLite numbers
//! `$NAME` parameters by first appearance, not by their digits), integers,
//! doubles, text and NULL. A boolean is stored as an integer, 0 or 1, as the
//! SQLite schema always did.

use anyhow::Context;

use super::pg;
pub(crate) use super::value::args;
pub use super::value::{Row, Value};

/// Statements, on a connection or in a transaction: two primitives, and the
/// rusqlite-like helpers over them.
pub trait Sql {
    /// Every row `sql` returns.
    fn rows(&self, sql: &str, args: &[Value]) -> anyhow::Result<Vec<Row>>;

    /// Runs `sql`; how many rows it changed.
    fn execute(&self, sql: &str, args: &[Value]) -> anyhow::Result<u64>;

    /// The first row, read by `f`; an error if there is none.
    fn query_row<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        self.query_opt(sql, args, f)?
            .with_context(|| format!("no row from {}", first_line(sql)))
    }

    /// The first row, if any, read by `f`.
    fn query_opt<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnOnce(&Row) -> anyhow::Result<T>,
    ) -> anyhow::Result<Option<T>> {
        self.rows(sql, args)?.first().map(f).transpose()
    }

    /// Every row, each read by `f`.
    fn query_map<T>(
        &self,
        sql: &str,
        args: &[Value],
        f: impl FnMut(&Row) -> anyhow::Result<T>,
    ) -> anyhow::Result<Vec<T>> {
        self.rows(sql, args)?.iter().map(f).collect()
    }
}

fn first_line(sql: &str) -> &str {
    sql.trim().lines().next().unwrap_or("")
}

/// An open connection.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(pg::Client),
}

/// How many times a PostgreSQL transaction that lost a race with another
/// (a serialization failure or a deadlock) is tried in all.
const TRIES: usize = 20;

impl Conn {
    /// Runs statements with no parameters and no rows, one after another
    /// (a schema).
    pub fn batch(&self, sql: &str) -> anyhow::Result<()> {
        match self {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(c) => c.batch(sql),
        }
    }

    /// Runs `f` in one transaction: committed if `f` returns `Ok`, rolled
    /// back otherwise. On SQLite it starts `IMMEDIATE` (the write lock is
    /// taken first, so what `f` reads stays true until it commits); on
    /// PostgreSQL it is `SERIALIZABLE`, and `f` runs again, from the start,
    /// when the server aborts it for a concurrent writer's sake, so `f` must
    /// do nothing but its statements.
    pub fn transaction<T>(
        &self,
        mut f: impl FnMut(&Tx<'_>) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let begin = match self {
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            Conn::Postgres(_) => "BEGIN ISOLATION LEVEL SERIALIZABLE",
        };
        let mut tries = 0;
        loop {
            tries += 1;
            self.batch(begin)?;
            let done = f(&Tx { conn: self }).and_then(|t| self.batch("COMMIT").map(|()| t));
            match done {
                Ok(t) => return Ok(t),
                Err(e) => {
                    // Rolled back whatever failed, the commit included (a
                    // PostgreSQL commit that failed has ended the transaction
                    // already; the rollback then only warns).
                    let _ = self.batch("ROLLBACK");
                    if !(tries < TRIES && pg::is_retryable(&e)) {
                        return Err(e);
                    }
                }
            }
        }
    }
}

impl Sql for Conn {
    fn rows(&self, sql: &str, args: &[Value]) -> anyhow::Result<Vec<Row>> {
        match self {
            Conn::Sqlite(c) => sqlite_rows(c, sql, args),
            Conn::Postgres(c) => c.rows(sql, args),
        }
    }

    fn execute(&self, sql: &str, args: &[Value]) -> anyhow::Result<u64> {
        match self {
            Conn::Sqlite(c) => {
                let mut st = c.prepare(&sqlite_text(sql))?;
                Ok(st.execute(rusqlite::params_from_iter(args.iter().map(to_sqlite)))? as u64)
            }
            Conn::Postgres(c) => c.execute(sql, args),
        }
    }
}

/// An open transaction ([`Conn::transaction`]).
pub struct Tx<'a> {
    conn: &'a Conn,
}

impl Sql for Tx<'_> {
    fn rows(&self, sql: &str, args: &[Value]) -> anyhow::Result<Vec<Row>> {
        self.conn.rows(sql, args)
    }

    fn execute(&self, sql: &str, args: &[Value]) -> anyhow::Result<u64> {
        self.conn.execute(sql, args)
    }
}

fn to_sqlite(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Int(i) => V::Integer(*i),
        Value::Real(f) => V::Real(*f),
        Value::Text(s) => V::Text(s.clone()),
    }
}

fn sqlite_rows(c: &rusqlite::Connection, sql: &str, args: &[Value]) -> anyhow::Result<Vec<Row>> {
    use rusqlite::types::ValueRef;
    let mut st = c.prepare(&sqlite_text(sql))?;
    let n = st.column_count();
    let mut rows = st.query(rusqlite::params_from_iter(args.iter().map(to_sqlite)))?;
    let mut all = Vec::new();
    while let Some(r) = rows.next()? {
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Int(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(_) => anyhow::bail!("column {i} is a blob, which no table holds"),
            });
        }
        all.push(Row(row));
    }
    Ok(all)
}

/// `sql` with each `$N` parameter outside quotes written `?N`, which SQLite
/// numbers by its digits.
fn sqlite_text(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('?');
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_parameters_become_sqlites_own() {
        assert_eq!(
            sqlite_text("UPDATE t SET a = $2 WHERE b = $1 AND c = '$1' AND \"$3\" = $10"),
            "UPDATE t SET a = ?2 WHERE b = ?1 AND c = '$1' AND \"$3\" = ?10"
        );
    }

    #[test]
    fn parameters_bind_by_their_digits_on_sqlite() {
        let c = Conn::Sqlite(rusqlite::Connection::open_in_memory().unwrap());
        c.batch("CREATE TABLE t (a TEXT, b INTEGER)").unwrap();
        c.execute("INSERT INTO t (b, a) VALUES ($2, $1)", args!["x", 7_i64])
            .unwrap();
        let row = c
            .query_row("SELECT a, b FROM t", args![], |r| {
                Ok((r.get::<String>(0)?, r.get::<i64>(1)?))
            })
            .unwrap();
        assert_eq!(row, ("x".to_owned(), 7));
    }

    #[test]
    fn a_failed_transaction_leaves_nothing() {
        let c = Conn::Sqlite(rusqlite::Connection::open_in_memory().unwrap());
        c.batch("CREATE TABLE t (a INTEGER PRIMARY KEY)").unwrap();
        let failed = c.transaction(|tx| {
            tx.execute("INSERT INTO t (a) VALUES ($1)", args![1_i64])?;
            tx.execute("INSERT INTO t (a) VALUES ($1)", args![1_i64])
        });
        assert!(failed.is_err());
        let n: i64 = c
            .query_row("SELECT COUNT(*) FROM t", args![], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }
}
