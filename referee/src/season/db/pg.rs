//! A season's store on PostgreSQL (`referee season init DIR --db
//! postgres://USER@HOST[:PORT]/DATABASE`): where the folder records it, where
//! the password comes from, and the client.
//!
//! The folder records its store in `DIR/season.postgres` (TOML: the URL, and
//! the password file if `--db-password-file` named one), never a password:
//! a URL with one is refused. The password is read, at each connection, from
//! the recorded password file, else `PGPASSWORD`, else the line of
//! `PGPASSFILE` (default `~/.pgpass`) that matches the host, port, database
//! and user, as libpq reads it; none at all suits a server that trusts the
//! connection. No TLS: `sslmode=require` is refused; PostgreSQL on loopback
//! or a cluster's private network is what this is for.
//!
//! The client is the synchronous `postgres` crate, on a thread of its own
//! ([`Client`]): that crate blocks on a tokio runtime of its own and panics
//! when called from a thread inside another runtime, which `season run`'s
//! coordinator and the site's handlers are. On its own thread it is called
//! from anywhere, and the layer above stays synchronous, as it is on SQLite
//! (whose calls block their caller too); the coordinator's runtime is a
//! current-thread one, so `block_in_place` is no way out, and an async layer
//! would make every caller of `db.rs` async for one backend's sake.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;
use postgres::config::{Host, SslMode};
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::value::{Row, Value};

/// The file in a season's folder that names its PostgreSQL store.
pub const STORE: &str = crate::layout::season::POSTGRES;

/// How long a connection may take to open.
const CONNECT: Duration = Duration::from_secs(15);

/// What `DIR/season.postgres` holds.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Store {
    /// `postgres://USER@HOST[:PORT]/DATABASE[?OPTIONS]`, no password.
    pub url: String,
    /// A file whose first line is the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
}

impl Store {
    /// The store `--db URL` names, checked: a user, a database, no password
    /// and no TLS required.
    pub fn new(url: &str, password_file: Option<&Path>) -> anyhow::Result<Store> {
        let store = Store {
            url: url.to_owned(),
            password_file: password_file.map(Path::to_path_buf),
        };
        store.config()?;
        Ok(store)
    }

    /// The store recorded in the season folder `dir`, if there is one.
    pub fn recorded(dir: &Path) -> anyhow::Result<Option<Store>> {
        let path = dir.join(STORE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let store: Store =
            toml::from_str(&text).with_context(|| format!("{} does not read", path.display()))?;
        store
            .config()
            .with_context(|| format!("{}: its url", path.display()))?;
        Ok(Some(store))
    }

    /// Writes `DIR/season.postgres`.
    pub fn record(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(STORE);
        let text = format!(
            "# This season's state is in PostgreSQL (`referee season init --db`); the password\n\
             # is never kept here: see docs/organisers.md, \"A season on PostgreSQL\".\n{}",
            toml::to_string(self)?
        );
        std::fs::write(&path, text).with_context(|| format!("failed to write {}", path.display()))
    }

    /// The URL parsed, without its password.
    fn config(&self) -> anyhow::Result<postgres::Config> {
        let url = &self.url;
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            anyhow::bail!("--db {url:?}: expected a URL postgres://USER@HOST[:PORT]/DATABASE");
        }
        let config = postgres::Config::from_str(url)
            .map_err(|e| anyhow::anyhow!("--db {}: {e}", redacted(url)))?;
        if config.get_password().is_some() {
            anyhow::bail!(
                "--db {}: the URL holds a password, which would be written into the season's \
                 folder and shown in process lists; give it in a file (--db-password-file), \
                 PGPASSWORD or ~/.pgpass instead",
                redacted(url)
            );
        }
        if config.get_user().is_none() || config.get_dbname().is_none() {
            anyhow::bail!(
                "--db {url}: name the user and the database: postgres://USER@HOST/DATABASE"
            );
        }
        if config.get_ssl_mode() == SslMode::Require {
            anyhow::bail!(
                "--db {url}: sslmode=require, but this referee speaks to PostgreSQL without \
                 TLS; use it on loopback or a private network (sslmode=disable)"
            );
        }
        Ok(config)
    }

    /// The URL parsed, with the password from where it is kept.
    fn connect_config(&self) -> anyhow::Result<postgres::Config> {
        let mut config = self.config()?;
        if let Some(password) = self.password(&config)? {
            config.password(password);
        }
        config
            .connect_timeout(CONNECT)
            .application_name("referee season");
        Ok(config)
    }

    fn password(&self, config: &postgres::Config) -> anyhow::Result<Option<String>> {
        if let Some(file) = &self.password_file {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the password file {}", file.display()))?;
            return Ok(Some(text.lines().next().unwrap_or("").to_owned()));
        }
        if let Some(p) = std::env::var_os("PGPASSWORD") {
            return Ok(Some(p.to_string_lossy().into_owned()));
        }
        let pgpass = match std::env::var_os("PGPASSFILE") {
            Some(f) => PathBuf::from(f),
            None => match std::env::var_os("HOME") {
                Some(home) => Path::new(&home).join(".pgpass"),
                None => return Ok(None),
            },
        };
        Ok(std::fs::read_to_string(pgpass)
            .ok()
            .and_then(|text| pgpass_lookup(&text, config)))
    }
}

/// `url` with any password in it replaced by `***`, to be shown.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => match rest[..at].split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***{}", &rest[at..]),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The password of the first `~/.pgpass` line (`host:port:database:user:
/// password`, `*` matching anything, `\` quoting `:` and `\`) that matches.
fn pgpass_lookup(text: &str, config: &postgres::Config) -> Option<String> {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        // libpq matches a socket's connection as `localhost`.
        _ => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let wanted = [
        host.as_str(),
        port.as_str(),
        config.get_dbname()?,
        config.get_user()?,
    ];
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let fields = pgpass_fields(line);
        if fields.len() != 5 {
            continue;
        }
        if (fields.iter().zip(wanted)).all(|(f, w)| f == "*" || f == w) {
            return fields.into_iter().nth(4);
        }
    }
    None
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.push(chars.next().unwrap_or('\\')),
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// Work for the client's thread.
type Job = Box<dyn FnOnce(&mut postgres::Client) + Send>;

/// A connection to PostgreSQL, owned by a thread of its own that runs each
/// call in turn; it closes when this is dropped.
pub struct Client {
    jobs: mpsc::Sender<Job>,
}

impl Client {
    /// Connects to `store`'s database (`read_only`: a session that refuses
    /// every write).
    pub fn connect(store: &Store, read_only: bool) -> anyhow::Result<Client> {
        let config = store.connect_config()?;
        let (jobs, next) = mpsc::channel::<Job>();
        let (ready, connected) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("season-postgres".into())
            .spawn(move || {
                let mut client = match config.connect(postgres::NoTls) {
                    Ok(c) => c,
                    Err(e) => return drop(ready.send(Err(e))),
                };
                let session = match read_only {
                    true => "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
                    false => "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
                };
                if ready.send(client.batch_execute(session)).is_err() {
                    return;
                }
                for job in next {
                    job(&mut client);
                }
            })
            .context("failed to start the PostgreSQL client's thread")?;
        connected
            .recv()
            .context("the PostgreSQL client's thread ended")?
            .map_err(|e| {
                let e = anyhow::Error::new(e);
                let hint = match format!("{e:#}").contains("password missing") {
                    true => {
                        " (the server wants a password: give it by --db-password-file at \
                             init, PGPASSWORD or ~/.pgpass)"
                    }
                    false => "",
                };
                e.context(format!("cannot reach PostgreSQL at {}{hint}", store.url))
            })?;
        Ok(Client { jobs })
    }

    /// Runs `f` on the client's thread; what it returns.
    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |c| drop(tx.send(f(c)))))
            .ok()
            .context("the PostgreSQL client's thread ended")?;
        rx.recv().context("the PostgreSQL client's thread ended")
    }

    pub fn batch(&self, sql: &str) -> anyhow::Result<()> {
        let sql = sql.to_owned();
        Ok(self.call(move |c| c.batch_execute(&sql))??)
    }

    pub fn execute(&self, sql: &str, args: &[Value]) -> anyhow::Result<u64> {
        let (sql, args) = (sql.to_owned(), args.to_vec());
        Ok(self.call(move |c| c.execute(sql.as_str(), &refs(&args)))??)
    }

    pub fn rows(&self, sql: &str, args: &[Value]) -> anyhow::Result<Vec<Row>> {
        let (sql, args) = (sql.to_owned(), args.to_vec());
        self.call(move |c| -> anyhow::Result<Vec<Row>> {
            let rows = c.query(sql.as_str(), &refs(&args))?;
            rows.iter().map(row).collect()
        })?
    }
}

fn refs(args: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|a| a as &(dyn ToSql + Sync)).collect()
}

/// A PostgreSQL row as [`Value`]s, by each column's type.
fn row(r: &postgres::Row) -> anyhow::Result<Row> {
    let mut out = Vec::with_capacity(r.len());
    for (i, column) in r.columns().iter().enumerate() {
        let ty = column.type_();
        let v = if *ty == Type::INT8 {
            r.try_get::<_, Option<i64>>(i)?.map(Value::Int)
        } else if *ty == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Int(v.into()))
        } else if *ty == Type::INT2 {
            r.try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Int(v.into()))
        } else if *ty == Type::BOOL {
            r.try_get::<_, Option<bool>>(i)?
                .map(|v| Value::Int(v.into()))
        } else if *ty == Type::FLOAT8 {
            r.try_get::<_, Option<f64>>(i)?.map(Value::Real)
        } else if *ty == Type::FLOAT4 {
            r.try_get::<_, Option<f32>>(i)?
                .map(|v| Value::Real(v.into()))
        } else if [Type::TEXT, Type::VARCHAR, Type::NAME, Type::BPCHAR].contains(ty) {
            r.try_get::<_, Option<String>>(i)?.map(Value::Text)
        } else {
            anyhow::bail!(
                "column {} is of type {ty}, which the season's layer does not read \
                 (cast it to BIGINT, DOUBLE PRECISION or TEXT)",
                column.name()
            );
        };
        out.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(out))
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) if *ty == Type::INT8 => i.to_sql(ty, out),
            Value::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) if *ty == Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
            Value::Int(i) if *ty == Type::BOOL => (*i != 0).to_sql(ty, out),
            Value::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Value::Real(f) if *ty == Type::FLOAT8 => f.to_sql(ty, out),
            Value::Real(f) if *ty == Type::FLOAT4 => (*f as f32).to_sql(ty, out),
            Value::Text(s) if <&str as ToSql>::accepts(ty) => s.as_str().to_sql(ty, out),
            v => Err(format!("{v:?} given for a parameter of type {ty}").into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// Whether `e` is PostgreSQL aborting a transaction for a concurrent one's
/// sake (a serialization failure or a deadlock): one that succeeds if tried
/// again.
pub fn is_retryable(e: &anyhow::Error) -> bool {
    use postgres::error::SqlState;
    e.chain().any(|cause| {
        cause
            .downcast_ref::<postgres::Error>()
            .and_then(postgres::Error::code)
            .is_some_and(|c| {
                *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
            })
    })
}

/// The SQLite schema `sqlite` as PostgreSQL's: a row id (`INTEGER PRIMARY
/// KEY`) becomes an identity column, every other `INTEGER` a `BIGINT` (64
/// bits, as SQLite's are) and `REAL` a `DOUBLE PRECISION`.
pub fn schema(sqlite: &str) -> String {
    sqlite
        .replace(
            "INTEGER PRIMARY KEY",
            "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        )
        .replace(" INTEGER", " BIGINT")
        .replace(" REAL", " DOUBLE PRECISION")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> postgres::Config {
        postgres::Config::from_str(url).unwrap()
    }

    #[test]
    fn pgpass_matches_by_host_port_database_and_user() {
        let text = "# comment\n\
                    other:5432:db:u:wrong\n\
                    h:*:db:u:p\\:ss\\\\word\n\
                    *:*:*:*:fallback\n";
        let got = pgpass_lookup(text, &config("postgres://u@h:6000/db"));
        assert_eq!(got.as_deref(), Some("p:ss\\word"));
        let got = pgpass_lookup(text, &config("postgres://x@elsewhere/db"));
        assert_eq!(got.as_deref(), Some("fallback"));
    }

    #[test]
    fn a_url_with_a_password_is_refused_and_not_shown() {
        let e = Store::new("postgres://u:s3cret@h/db", None).unwrap_err();
        let said = format!("{e:#}");
        assert!(said.contains("holds a password"), "{said}");
        assert!(!said.contains("s3cret"), "{said}");
        assert_eq!(
            redacted("postgres://u:s3cret@h/db"),
            "postgres://u:***@h/db"
        );
        assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
    }

    #[test]
    fn a_url_must_name_user_and_database_and_want_no_tls() {
        assert!(Store::new("postgres://h/db", None).is_err());
        assert!(Store::new("postgres://u@h", None).is_err());
        assert!(Store::new("postgres://u@h/db?sslmode=require", None).is_err());
        assert!(Store::new("host=h user=u dbname=db", None).is_err());
        assert!(Store::new("postgres://u@h:5433/db?sslmode=disable", None).is_ok());
    }

    #[test]
    fn the_schema_widens_integers_for_postgres() {
        let s = schema("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, r REAL);");
        assert_eq!(
            s,
            "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, \
             n BIGINT NOT NULL, r DOUBLE PRECISION);"
        );
    }
}
