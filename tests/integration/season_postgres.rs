//! A season whose state is in a real PostgreSQL (`season init --db`): each
//! test starts a throwaway cluster of its own (Debian's `postgresql`, which
//! `scripts/test` installs; as the `postgres` user when the tests run as
//! root, which PostgreSQL refuses to run as), with a password (SCRAM) on its
//! TCP port, and gives each season a database of its own.
//!
//! - The same season on SQLite and on PostgreSQL (same submissions, seed,
//!   seed secret, one set at a time) gives byte-identical transcripts and
//!   equal standings; every season command works on it, and the password is
//!   written nowhere.
//! - A run killed with SIGKILL mid-set resumes on PostgreSQL; `verify` ok;
//!   its final is played and verified.
//! - Writers at once (entrants and versions added by a dozen processes):
//!   every one lands, numbered once (SERIALIZABLE, tried again).
//! - An unreachable server, a URL with a password, a database that holds
//!   something else: clear errors naming the URL, never the password.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{referee, root, scratch, stderr, stdout, succeeds, wait_while_running};

/// The password of every test cluster's user `referee`.
pub(crate) const PASSWORD: &str = "pg47-Secret-Word";

/// The PostgreSQL programs (`initdb`, `pg_ctl`), newest version first.
fn bindir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
        .collect();
    dirs.sort_by_key(|d| {
        let v = d.parent().and_then(|p| p.file_name());
        v.and_then(|v| v.to_str()?.parse::<u32>().ok())
    });
    dirs.pop()
}

/// True when the test may run; otherwise says loudly why not, or fails where
/// PostgreSQL is required (`scripts/test` as root requires it).
pub(crate) fn runnable() -> Option<PathBuf> {
    if let Some(bin) = bindir() {
        return Some(bin);
    }
    let reason = "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb; \
                  scripts/test installs Debian's postgresql)";
    if std::env::var_os("SCHMIER_REQUIRE_POSTGRES").is_some() {
        panic!("PostgreSQL is required here (SCHMIER_REQUIRE_POSTGRES) but {reason}");
    }
    crate::support::skip(&format!("{reason}; this test did not run"));
    None
}

/// A throwaway cluster, stopped (immediately) when dropped.
pub(crate) struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Cluster {
    pub(crate) fn start(bin: PathBuf) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let pwfile = dir.path().join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        let root = nix::unistd::geteuid().is_root();
        if root {
            // PostgreSQL refuses to run as root: the cluster is the
            // `postgres` user's.
            let status = Command::new("chown")
                .args(["-R", "postgres:"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown to postgres failed");
        }
        let cluster = Cluster {
            bin,
            dir,
            port: free_port(),
        };
        let data = cluster.dir.path().join("data");
        let out = cluster
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "referee", "-E", "UTF8", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb: {}", stderr(&out));
        let options = format!(
            "-k {} -p {} -h 127.0.0.1 -c fsync=off",
            cluster.dir.path().display(),
            cluster.port
        );
        let out = cluster
            .command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.dir.path().join("log"))
            .args(["-w", "-t", "300", "-o", &options, "start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}",
            stderr(&out),
            std::fs::read_to_string(cluster.dir.path().join("log")).unwrap_or_default()
        );
        cluster
    }

    /// A PostgreSQL program, as the cluster's owner.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if nix::unistd::geteuid().is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// Runs SQL in `database` over the cluster's socket (trusted).
    fn sql(&self, database: &str, sql: &str) {
        self.psql(database, sql, "-q");
    }

    /// The rows `sql` returns in `database`, one line each.
    pub(crate) fn query(&self, database: &str, sql: &str) -> String {
        self.psql(database, sql, "-tA")
    }

    /// `psql` as `referee` over the cluster's socket, with `output`'s flag;
    /// its stdout.
    fn psql(&self, database: &str, sql: &str, output: &str) -> String {
        let out = Command::new("psql")
            .arg("-h")
            .arg(self.dir.path())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "referee",
                "-d",
                database,
            ])
            .args(["-v", "ON_ERROR_STOP=1", output, "-c", sql])
            .output()
            .unwrap();
        assert!(out.status.success(), "psql {sql:?}: {}", stderr(&out));
        stdout(&out)
    }

    /// A new, empty database; the URL of it (no password).
    pub(crate) fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    fn url(&self, name: &str) -> String {
        format!(
            "postgres://referee@127.0.0.1:{}/{name}?sslmode=disable",
            self.port
        )
    }

    fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `referee season` command with the cluster's password in `PGPASSWORD`.
pub(crate) fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args).env("PGPASSWORD", PASSWORD);
    c
}

/// A season of four in `dir`: two built-ins, the Python sample bot, and a bot
/// that forfeits every game; `extra` adds `--db`.
fn init(dir: &Path, extra: &[&str]) -> String {
    let py = format!(
        "python3 {} simple",
        root().join("sample-bots/python/bot.py").display()
    );
    let forfeit = format!(
        "python3 {} garbage",
        root().join("tests/hostile/bot.py").display()
    );
    let mut c = season(&["init"]);
    c.arg(dir)
        .args(["--seed", "47", "--unchecked", "--min-sets", "1"])
        // Limits no busy host reaches: a fault on time would make the two
        // seasons' games differ for the host's sake, not the database's.
        .args(["--time-scale", "20"])
        .args(["--entrant", "heur=builtin:heuristic"])
        .args(["--entrant", "rand=builtin:random"])
        .args(["--entrant", &format!("py={py}")])
        .args(["--entrant", &format!("forfeit={forfeit}")])
        .args(extra);
    stdout(&succeeds(&mut c))
}

fn transcripts(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    (std::fs::read_dir(dir.join("games")).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .map(|n| {
            (
                n.clone(),
                std::fs::read(dir.join("games").join(&n)).unwrap(),
            )
        })
        .collect()
}

fn standings_json(dir: &Path) -> String {
    stdout(&succeeds(season(&["standings", "--json"]).arg(dir)))
}

fn verify_ok(dir: &Path) -> String {
    let out = succeeds(referee().arg("verify").arg(dir).env("PGPASSWORD", PASSWORD));
    stdout(&out)
}

/// Every file under `dir`, as bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all.extend(files(&p));
        } else {
            all.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
        }
    }
    all
}

/// Runs `cmd`, which must fail (any status but success, no panic); its
/// stderr.
fn fails(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{cmd:?} succeeded: {}", stdout(&out));
    assert!(!err.contains("panicked"), "{cmd:?} panicked: {err}");
    assert!(
        !err.contains(PASSWORD),
        "{cmd:?} showed the password: {err}"
    );
    err
}

#[test]
fn a_season_on_postgres_plays_as_on_sqlite() {
    let Some(bin) = runnable() else { return };
    let pg = Cluster::start(bin);
    let url = pg.database("same_season");
    let lite = scratch("season_postgres", "same-sqlite");
    let post = scratch("season_postgres", "same-postgres");
    init(&lite, &[]);
    let said = init(&post, &["--db", &url]);
    assert!(!said.contains(PASSWORD));
    assert!(post.join("season.postgres").is_file() && !post.join("season.db").exists());
    // The same secret: the same deals.
    std::fs::copy(lite.join("seed-secret"), post.join("seed-secret")).unwrap();
    for dir in [&lite, &post] {
        // The same submission on both, then one set at a time.
        succeeds(season(&["submit", "--unchecked"]).arg(dir).args([
            "rand",
            "--",
            "builtin:heuristic",
        ]));
        succeeds(season(&["run", "--jobs", "1", "-q", "--sets", "6"]).arg(dir));
    }
    let (a, b) = (transcripts(&lite), transcripts(&post));
    assert_eq!(a.len(), 36, "six sets of six games");
    assert!(
        a == b,
        "the transcripts differ between SQLite and PostgreSQL"
    );
    assert_eq!(standings_json(&lite), standings_json(&post));
    assert_eq!(
        stdout(&succeeds(season(&["standings"]).arg(&lite))),
        stdout(&succeeds(season(&["standings"]).arg(&post)))
    );
    let said = verify_ok(&post);
    assert!(said.contains("season.postgres (36 games"), "{said}");
    // Every other command on PostgreSQL: a token, the site, close.
    let token = stdout(&succeeds(season(&["token"]).arg(&post).arg("newcomer")));
    assert!(token.contains("entrant newcomer created"), "{token}");
    site_serves(&pg, "same_season", &post, &standings_json(&post));
    let closed = stdout(&succeeds(season(&["close"]).arg(&post)));
    assert!(closed.contains("closed; its seed secret"), "{closed}");
    let err = fails(season(&["run", "-q"]).arg(&post));
    assert!(err.contains("is closed"), "{err}");
    for (path, bytes) in files(&post) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(PASSWORD),
            "{} holds the password",
            path.display()
        );
    }
}

/// `season serve` on `dir` (database `db` of `pg`) answers
/// `/api/standings` with `expected`, and serves forty pages on a handful of
/// connections, not one each.
fn site_serves(pg: &Cluster, db: &str, dir: &Path, expected: &str) {
    use std::io::{Read, Write};
    let mut c = season(&["serve", "--addr", "127.0.0.1:0"]);
    c.arg(dir);
    // Killed when dropped, an assertion failing included.
    let serve = crate::season_workers::Proc::start(c, "season serve");
    let line = serve.wait_for(|l| l.starts_with("referee: season site at http://"));
    let addr = (line.strip_prefix("referee: season site at http://"))
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let get = |path: &str| {
        let mut s = std::net::TcpStream::connect(&addr).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut reply = String::new();
        s.read_to_string(&mut reply).unwrap();
        reply
    };
    let reply = get("/api/standings");
    let sessions = || -> u64 {
        let sql = format!("SELECT sessions FROM pg_stat_database WHERE datname = '{db}'");
        pg.query("postgres", &sql).trim().parse().unwrap()
    };
    let before = sessions();
    for i in 0..20 {
        let game = get(&format!("/games/1/{}", i % 6 + 1));
        assert!(game.starts_with("HTTP/1.1 200"), "{game}");
        let page = get("/entrants/heur");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    }
    let opened = sessions() - before;
    assert!(opened <= 5, "forty pages opened {opened} connections");
    drop(serve);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    let body = reply.split_once("\r\n\r\n").unwrap().1;
    let got: serde_json::Value = serde_json::from_str(body).unwrap();
    let want: serde_json::Value = serde_json::from_str(expected).unwrap();
    assert_eq!(got["sets"], want["sets"]);
    assert_eq!(got["entrants"], want["entrants"]);
}

#[test]
fn a_season_on_postgres_resumes_after_kill_9() {
    let Some(bin) = runnable() else { return };
    let pg = Cluster::start(bin);
    let url = pg.database("killed_season");
    let dir = scratch("season_postgres", "killed");
    // The password from a file the folder names (not from PGPASSWORD).
    let pwfile = scratch("season_postgres", "password");
    std::fs::write(&pwfile, format!("{PASSWORD}\n")).unwrap();
    let pw = pwfile.to_str().unwrap();
    init(&dir, &["--db", &url, "--db-password-file", pw]);
    let mut run = season(&["run", "--jobs", "2", "-q", "--sets", "40"])
        .arg(&dir)
        .env_remove("PGPASSWORD")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_while_running(&mut run, "two sets finished", || {
        let s: serde_json::Value = serde_json::from_str(&standings_json(&dir)).unwrap();
        s["sets"].as_u64() >= Some(2)
    });
    run.kill().unwrap(); // SIGKILL, mid-set: two tables are always busy
    run.wait().unwrap();
    let before = transcripts(&dir);
    let s: serde_json::Value = serde_json::from_str(&standings_json(&dir)).unwrap();
    let finished = s["sets"].as_u64().unwrap();
    assert!(finished < 40, "the run was killed before its end");
    verify_ok(&dir);
    let target = finished + 2;
    let mut resume = season(&["run", "--jobs", "2", "-q", "--sets", &target.to_string()]);
    succeeds(resume.arg(&dir).env_remove("PGPASSWORD"));
    let s: serde_json::Value = serde_json::from_str(&standings_json(&dir)).unwrap();
    assert_eq!(s["sets"].as_u64(), Some(target));
    assert_eq!(
        s["games"].as_u64(),
        Some(6 * target),
        "no game lost or counted twice"
    );
    let after = transcripts(&dir);
    assert_eq!(
        after.len() as u64,
        6 * target,
        "a transcript per counted game"
    );
    for (name, bytes) in &before {
        assert!(after.get(name) == Some(bytes), "{name} changed on resume");
    }
    let said = verify_ok(&dir);
    assert!(said.contains(&format!("({} games", 6 * target)), "{said}");
    // Its final, on PostgreSQL too: submissions frozen, the season closed.
    let mut fin = season(&["final", "--top", "3", "--sets", "1", "--jobs", "2"]);
    let said = stdout(&succeeds(fin.arg(&dir).env_remove("PGPASSWORD")));
    assert!(said.contains("the final is over"), "{said}");
    let err =
        fails(
            season(&["submit", "--unchecked"])
                .arg(&dir)
                .args(["heur", "--", "builtin:random"]),
        );
    assert!(err.contains("the season's final was called"), "{err}");
    let said = verify_ok(&dir);
    assert!(said.contains("the season's final, among the top"), "{said}");
}

#[test]
fn postgres_troubles_are_said_clearly() {
    let Some(bin) = runnable() else { return };
    let pg = Cluster::start(bin);
    // Nobody listens there.
    let nobody = format!(
        "postgres://referee@127.0.0.1:{}/x?sslmode=disable",
        free_port()
    );
    let dir = scratch("season_postgres", "unreachable");
    let err = fails(season(&["init"]).arg(&dir).args(["--db", &nobody]));
    assert!(
        err.contains(&format!("cannot reach PostgreSQL at {nobody}")),
        "{err}"
    );
    assert!(!dir.exists(), "a failed init left {}", dir.display());
    // A password in the URL: refused, and not shown.
    let with = format!("postgres://referee:{PASSWORD}@127.0.0.1:{}/x", pg.port);
    let err = fails(season(&["init"]).arg(&dir).args(["--db", &with]));
    assert!(err.contains("holds a password"), "{err}");
    // A database that does not exist, one that holds something else.
    let err = fails(
        season(&["init"])
            .arg(&dir)
            .args(["--db", &pg.url("nosuch")]),
    );
    assert!(
        err.contains(&pg.url("nosuch")) && err.contains("does not exist"),
        "{err}"
    );
    let other = pg.database("other_things");
    pg.sql("other_things", "CREATE TABLE invoices (id BIGINT)");
    let err = fails(season(&["init"]).arg(&dir).args(["--db", &other]));
    assert!(
        err.contains(&format!("{other} holds 1 table(s) already")),
        "{err}"
    );
    // No password, the wrong password.
    let mut none = season(&["init"]);
    none.arg(&dir)
        .args(["--db", &pg.database("no_pw")])
        .env_remove("PGPASSWORD");
    let err = fails(none.env("PGPASSFILE", "/nonexistent"));
    assert!(err.contains("the server wants a password"), "{err}");
    let mut wrong = season(&["init"]);
    wrong
        .arg(&dir)
        .args(["--db", &pg.database("wrong_pw")])
        .env("PGPASSWORD", "nope");
    let err = fails(&mut wrong);
    assert!(err.contains("password authentication failed"), "{err}");
    // A season whose folder names a database that holds something else, then
    // a server gone.
    init(&dir, &["--db", &pg.database("a_season")]);
    let named = dir.join("season.postgres");
    let text = std::fs::read_to_string(&named).unwrap();
    std::fs::write(&named, text.replace("/a_season?", "/other_things?")).unwrap();
    let err = fails(season(&["standings"]).arg(&dir));
    assert!(
        err.contains(&format!(
            "{other} (named in {}) is not a season's database",
            named.display()
        )),
        "{err}"
    );
    std::fs::write(&named, text).unwrap();
    succeeds(season(&["standings"]).arg(&dir));
    pg.stop();
    let err = fails(season(&["standings"]).arg(&dir));
    assert!(
        err.contains(&format!(
            "cannot reach PostgreSQL at {}",
            pg.url("a_season")
        )),
        "{err}"
    );
    assert!(err.contains(&named.display().to_string()), "{err}");
}

#[test]
fn concurrent_writers_on_postgres_all_land() {
    let Some(bin) = runnable() else { return };
    let pg = Cluster::start(bin);
    let url = pg.database("busy_season");
    let dir = scratch("season_postgres", "busy");
    init(&dir, &["--db", &url]);
    // A dozen writers at once, each an entrant and its version in
    // transactions that read before they write: PostgreSQL aborts some for
    // the others' sake, and each is tried again.
    let writers: Vec<_> = (0..12)
        .map(|i| {
            season(&["submit", "--unchecked"])
                .arg(&dir)
                .arg(format!("w{i}"))
                .args(["--", "builtin:random"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(out.status.success(), "a writer failed: {}", stderr(&out));
    }
    let counts = pg.query(
        "busy_season",
        "SELECT COUNT(*), COUNT(DISTINCT name) FROM entrants WHERE name LIKE 'w%'",
    );
    assert_eq!(counts.trim(), "12|12");
    let numbers = pg.query(
        "busy_season",
        "SELECT COUNT(*) FROM versions v JOIN entrants e ON e.id = v.entrant \
         WHERE e.name LIKE 'w%' AND v.number = 1",
    );
    assert_eq!(numbers.trim(), "12");
}
