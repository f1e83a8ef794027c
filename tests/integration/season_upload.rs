//! Uploads into a season (`referee season submit DIR NAME --archive FILE
//! --token T -- CMD`), with real archives, a real `season.db` and real bot
//! processes: archives crafted header by header that climb out, link out,
//! hold a device, a FIFO, a 10 GB file or too many entries are refused,
//! naming the entry, and leave nothing behind; a good one is checked and
//! plays; a wrong token or another entrant's submits nothing; tokens are
//! kept hashed, and clear ones of an older season are migrated.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{referee, root, scratch, stdout, succeeds};

fn season(args: &[&str]) -> Command {
    let mut c = referee();
    c.arg("season").args(args);
    c
}

/// One entry of a crafted archive: its header as written, then its data.
#[derive(Clone)]
struct Entry {
    header: tar::Header,
    data: Vec<u8>,
}

/// An entry named `path` byte for byte (`..` and `/` kept: the tar crate's
/// own `set_path` would refuse them).
fn entry(path: &str, kind: tar::EntryType, data: &[u8]) -> Entry {
    let mut header = tar::Header::new_gnu();
    header.as_old_mut().name[..path.len()].copy_from_slice(path.as_bytes());
    header.set_entry_type(kind);
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    Entry {
        header,
        data: data.to_vec(),
    }
}

fn file(path: &str, data: &[u8]) -> Entry {
    entry(path, tar::EntryType::Regular, data)
}

fn link(path: &str, kind: tar::EntryType, to: &str) -> Entry {
    let mut e = entry(path, kind, b"");
    e.header.set_link_name_literal(to).unwrap();
    e.header.set_cksum();
    e
}

/// The entries as a .tar.gz, written to `path`.
fn archive(path: &Path, entries: Vec<Entry>) -> PathBuf {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for e in entries {
        gz.write_all(e.header.as_bytes()).unwrap();
        gz.write_all(&e.data).unwrap();
        let pad = (512 - e.data.len() % 512) % 512;
        gz.write_all(&vec![0; pad]).unwrap();
    }
    gz.write_all(&[0; 1024]).unwrap();
    std::fs::write(path, gz.finish().unwrap()).unwrap();
    path.to_path_buf()
}

/// The Python sample bot's two files.
fn sample_bot() -> Vec<Entry> {
    let dir = root().join("sample-bots/python");
    ["bot.py", "schmier_kit.py"]
        .iter()
        .map(|n| file(n, &std::fs::read(dir.join(n)).unwrap()))
        .collect()
}

/// The flag of a season without a sandbox that takes uploads all the same
/// (the tests of what an upload may do, without needing the sandbox).
const UNSANDBOXED: &[&str] = &["--allow-unsandboxed-uploads"];

/// A season of `entrants` (NAME=CMD, admitted unchecked) in `dir`, with
/// `extra` flags; each entrant's token, as printed once.
fn init(dir: &Path, entrants: &[&str], extra: &[&str]) -> Vec<(String, String)> {
    let mut c = season(&["init"]);
    c.arg(dir).args(["--seed", "7", "--unchecked"]).args(extra);
    for e in entrants {
        c.args(["--entrant", e]);
    }
    tokens(&stdout(&succeeds(&mut c)))
}

/// The (entrant, token) pairs a command printed.
fn tokens(out: &str) -> Vec<(String, String)> {
    out.lines()
        .filter_map(|l| {
            let name = l.strip_prefix("entrant ")?.split_whitespace().next()?;
            let token = l.rsplit(": ").next()?;
            (token.len() == 32).then(|| (name.to_owned(), token.to_owned()))
        })
        .collect()
}

/// `season token DIR NAME`: the token it prints.
fn new_token(dir: &Path, name: &str) -> String {
    let out = stdout(&succeeds(season(&["token"]).arg(dir).arg(name)));
    tokens(&out).pop().expect("a token").1
}

fn upload(dir: &Path, name: &str, token: &str, archive: &Path, cmd: &str) -> Output {
    season(&["submit"])
        .arg(dir)
        .arg(name)
        .arg("--archive")
        .arg(archive)
        .args(["--token", token, "--", cmd])
        .output()
        .unwrap()
}

fn db(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("season.db")).unwrap()
}

fn versions(dir: &Path) -> i64 {
    db(dir)
        .query_row("SELECT COUNT(*) FROM versions", [], |r| r.get(0))
        .unwrap()
}

/// Every path under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            all.push(p.strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                todo.push(p);
            }
        }
    }
    all.sort();
    all
}

#[test]
fn unsafe_archives_are_refused_naming_the_entry_and_leave_nothing() {
    use tar::EntryType as T;
    let base = scratch("season_upload", "unsafe");
    let dir = base.join("season");
    let t = init(&dir, &["a=builtin:random"], UNSANDBOXED);
    let token = &t[0].1;
    let before = tree(&dir);
    let outside = format!("escaped-{}", std::process::id());
    let absolute = std::env::temp_dir().join(&outside);
    let bot = || sample_bot();
    let huge = {
        let mut e = file("big.bin", b"");
        e.header.set_size(10 << 30); // 10 GB claimed, a few zeros follow
        e.header.set_cksum();
        e.data = vec![0; 4096];
        e
    };
    let sparse = {
        let mut e = entry("sparse.bin", T::GNUSparse, b"");
        let gnu = e.header.as_gnu_mut().unwrap();
        gnu.sparse[0].set_offset(10 << 30);
        gnu.sparse[0].set_length(0);
        gnu.set_real_size(10 << 30);
        e.header.set_cksum();
        e
    };
    let mut device = entry("null", T::Char, b"");
    device.header.set_device_major(1).unwrap();
    device.header.set_device_minor(3).unwrap();
    device.header.set_cksum();
    let many: Vec<Entry> = (0..4097).map(|i| file(&format!("f{i:04}"), b"")).collect();
    let cases: Vec<(&str, Vec<Entry>, &str)> = vec![
        (
            "climbs",
            [bot(), vec![file(&format!("../../{outside}"), b"x")]].concat(),
            "climbs out of the bot's folder",
        ),
        (
            "absolute",
            [bot(), vec![file(absolute.to_str().unwrap(), b"x")]].concat(),
            "is an absolute path",
        ),
        (
            "symlink",
            [bot(), vec![link("data", T::Symlink, "../../../a")]].concat(),
            "a symbolic link (to \"../../../a\")",
        ),
        (
            "hardlink",
            [bot(), vec![link("copy.py", T::Link, "/etc/passwd")]].concat(),
            "a hard link (to \"/etc/passwd\")",
        ),
        ("device", [bot(), vec![device]].concat(), "a device"),
        (
            "fifo",
            [bot(), vec![entry("pipe", T::Fifo, b"")]].concat(),
            "a FIFO",
        ),
        (
            "huge",
            [bot(), vec![huge]].concat(),
            "a file of 10737418240 bytes; a file is at most",
        ),
        ("sparse", [bot(), vec![sparse]].concat(), "a sparse file"),
        ("many", many, "more than 4096 entries"),
    ];
    for (name, entries, says) in cases {
        let path = archive(&base.join(format!("{name}.tar.gz")), entries);
        let out = upload(&dir, "a", token, &path, "python3 bot.py");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        if !matches!(name, "many") {
            assert!(err.contains("entry \""), "{name} names its entry: {err}");
        }
        assert_eq!(versions(&dir), 1, "{name}: no version recorded");
        // Nothing left in the season's folder but the empty uploads folder.
        let mut after = tree(&dir);
        after.retain(|p| p != "uploads" && !p.starts_with("season.db"));
        let mut was = before.clone();
        was.retain(|p| !p.starts_with("season.db"));
        assert_eq!(after, was, "{name}: the season's folder is as it was");
    }
    // Nothing written outside it either; nothing large anywhere.
    assert!(!base.join(&outside).exists() && !absolute.exists());
    assert!(!base.parent().unwrap().join(&outside).exists());
    let held: u64 = (tree(&dir).iter())
        .map(|p| std::fs::metadata(dir.join(p)).map_or(0, |m| m.len()))
        .sum();
    assert!(held < 4 << 20, "{held} bytes in the season's folder");
}

#[test]
fn a_good_upload_joins_after_check_bot_and_plays_and_only_its_token_submits() {
    let base = scratch("season_upload", "good");
    let dir = base.join("season");
    let t = init(
        &dir,
        &["a=builtin:random", "b=builtin:heuristic"],
        UNSANDBOXED,
    );
    let up = new_token(&dir, "up");
    let good = archive(&base.join("good.tar.gz"), sample_bot());
    // Another entrant's token, a made-up one, a name the season lacks:
    // refused alike, and nothing written.
    for (name, token) in [
        ("up", t[0].1.as_str()),
        ("up", "0123456789abcdef0123456789abcdef"),
        ("nobody", up.as_str()),
    ] {
        let out = upload(&dir, name, token, &good, "python3 bot.py simple");
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("the name and token do not match an entrant of this season"),
            "{err}"
        );
        assert_eq!(versions(&dir), 2);
        assert!(
            !dir.join("uploads").exists(),
            "nothing written for a wrong token"
        );
    }
    // A command that leaves its folder is refused before any unpacking.
    let out = upload(&dir, "up", &up, &good, "python3 ../../a/bot.py");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("climbs out"));
    let out = upload(&dir, "up", &up, &good, "python3 bot.py simple");
    let said = stdout(&out);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("up v1: admitted (passed check-bot); 2 file(s)"),
        "{said}"
    );
    let v1 = dir.join("uploads/up/v1");
    assert!(v1.join("bot.py").is_file() && v1.join("schmier_kit.py").is_file());
    // (Unsandboxed, Python leaves its __pycache__ there too.)
    let uploads = tree(&dir.join("uploads"));
    assert!(
        uploads.iter().all(|p| p == "up" || p.starts_with("up/v1")),
        "{uploads:?}"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(v1.join("bot.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o644);
    }
    // It plays: a set of the three.
    succeeds(season(&["run", "--sets", "1", "--jobs", "1", "-q"]).arg(&dir));
    let s: serde_json::Value = serde_json::from_str(&stdout(&succeeds(
        season(&["standings", "--json"]).arg(&dir),
    )))
    .unwrap();
    let row = (s["entrants"].as_array().unwrap().iter())
        .find(|r| r["entrant"] == "up")
        .expect("up in the standings");
    assert_eq!(row["sets"], 1, "{row}");
    // A new token: the old one submits nothing more.
    let rotated = new_token(&dir, "up");
    let out = upload(&dir, "up", &up, &good, "python3 bot.py");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_ne!(rotated, up);
    assert_eq!(versions(&dir), 3);
}

#[test]
fn an_upload_that_fails_check_bot_is_recorded_with_its_reason_and_never_plays() {
    let base = scratch("season_upload", "failing");
    let dir = base.join("season");
    init(&dir, &["a=builtin:random"], UNSANDBOXED);
    let token = new_token(&dir, "bad");
    let hostile = std::fs::read(root().join("tests/hostile/bot.py")).unwrap();
    let path = archive(&base.join("bad.tar.gz"), vec![file("bot.py", &hostile)]);
    let out = upload(&dir, "bad", &token, &path, "python3 bot.py garbage");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = stdout(&out);
    assert!(said.contains("[FAIL]"), "{said}");
    assert!(
        said.contains("bad v1: not admitted: it failed check-bot"),
        "{said}"
    );
    let (admitted, report): (bool, String) = db(&dir)
        .query_row(
            "SELECT v.admitted, v.report FROM versions v JOIN entrants e ON e.id = v.entrant
             WHERE e.name = 'bad'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(!admitted);
    assert!(
        report.contains("[FAIL] bid, first to speak"),
        "the report its owner is shown: {report}"
    );
    assert_eq!(
        tree(&dir.join("uploads")),
        Vec::<String>::new(),
        "its files were removed"
    );
}

#[test]
fn tokens_are_kept_hashed_and_clear_ones_of_an_older_season_are_migrated() {
    let base = scratch("season_upload", "migrate");
    let dir = base.join("season");
    let t = init(&dir, &["a=builtin:random"], UNSANDBOXED);
    let stored: String = db(&dir)
        .query_row("SELECT token FROM entrants WHERE name = 'a'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(
        stored.starts_with("sha256:") && !stored.contains(&t[0].1),
        "{stored}"
    );
    // A season.db as an older referee wrote it: the token in clear.
    let clear = "00112233445566778899aabbccddeeff";
    db(&dir)
        .execute("UPDATE entrants SET token = ?1 WHERE name = 'a'", [clear])
        .unwrap();
    let good = archive(&base.join("good.tar.gz"), sample_bot());
    // (The flags' form of the same command.)
    let out = season(&["submit"])
        .arg(&dir)
        .args(["--name", "a", "--archive"])
        .arg(&good)
        .args(["--token", clear, "--command", "python3 bot.py"])
        .output()
        .unwrap();
    assert!(out.status.success(), "the clear token still works: {out:?}");
    assert!(
        stdout(&out).contains("a v2: admitted (passed check-bot)"),
        "{out:?}"
    );
    let stored: String = db(&dir)
        .query_row("SELECT token FROM entrants WHERE name = 'a'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA256, clear.as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(stored, format!("sha256:{hex}"), "replaced by its hash");
    assert!(stored.starts_with("sha256:") && !stored.contains(clear));
}

/// A bot that says garbage at once if it can see any of `paths`, and plays
/// as the sample bot otherwise.
fn spy(paths: &[PathBuf]) -> Vec<Entry> {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let script = format!(
        "import os, runpy, sys\n\
         seen = [p for p in {paths:?} if os.path.exists(p)]\n\
         if seen:\n    \
             sys.stderr.write('I can see %s\\n' % seen)\n    \
             print('this is not json', flush=True)\n    \
             sys.exit(1)\n\
         sys.argv = ['bot.py', 'simple']\n\
         runpy.run_path('bot.py', run_name='__main__')\n"
    );
    [sample_bot(), vec![file("spy.py", script.as_bytes())]].concat()
}

/// The spy, uploaded by `bob` into a season where `alice` uploaded first;
/// the season's folder, and what `season submit` said.
fn spied(base: &Path, extra: &[&str]) -> (PathBuf, String) {
    let dir = base.join("season");
    init(&dir, &[], extra);
    let (alice, bob) = (new_token(&dir, "alice"), new_token(&dir, "bob"));
    let good = archive(&base.join("good.tar.gz"), sample_bot());
    let out = upload(&dir, "alice", &alice, &good, "python3 bot.py");
    assert!(out.status.success(), "{out:?}");
    let said = stdout(&out);
    let dir = std::fs::canonicalize(&dir).unwrap();
    let secrets = [
        dir.join("uploads/alice/v1/bot.py"),
        dir.join("seed-secret"),
        dir.join("season.db"),
    ];
    assert!(secrets.iter().all(|p| p.exists()));
    let path = archive(&base.join("spy.tar.gz"), spy(&secrets));
    let out = upload(&dir, "bob", &bob, &path, "python3 spy.py");
    (dir, format!("{said}{}", stdout(&out)))
}

#[test]
fn in_a_sandboxed_season_an_upload_is_checked_in_the_sandbox_and_sees_only_its_own_folder() {
    let base = scratch("season_upload", "sandboxed");
    let (dir, said) = spied(&base, &["--sandbox"]);
    assert!(
        said.contains("alice v1: admitted (passed check-bot in the season's sandbox)"),
        "{said}"
    );
    assert!(
        said.contains("bob v1: admitted (passed check-bot in the season's sandbox)"),
        "bob saw neither alice's code nor the season's files: {said}"
    );
    // A third upload, and a set of the three in the sandbox.
    let carol = new_token(&dir, "carol");
    let good = archive(&base.join("carol.tar.gz"), sample_bot());
    assert!(
        upload(&dir, "carol", &carol, &good, "python3 bot.py simple")
            .status
            .success()
    );
    succeeds(season(&["run", "--sets", "1", "--jobs", "1", "-q"]).arg(&dir));
    let s: serde_json::Value = serde_json::from_str(&stdout(&succeeds(
        season(&["standings", "--json"]).arg(&dir),
    )))
    .unwrap();
    let played: Vec<(&str, u64)> = (s["entrants"].as_array().unwrap().iter())
        .map(|r| (r["entrant"].as_str().unwrap(), r["sets"].as_u64().unwrap()))
        .collect();
    assert_eq!(played.len(), 3, "{played:?}");
    assert!(played.iter().all(|(_, sets)| *sets == 1), "{played:?}");
    // The bots' folders were shown read-only: Python could leave nothing.
    let uploads = tree(&dir.join("uploads"));
    assert!(
        !uploads.iter().any(|p| p.contains("__pycache__")),
        "{uploads:?}"
    );
    // The same upload in a season without the sandbox sees them: the check
    // above can fail.
    let base = scratch("season_upload", "unsandboxed");
    let (_, said) = spied(&base, UNSANDBOXED);
    assert!(
        said.contains("bob v1: not admitted: it failed check-bot"),
        "{said}"
    );
    assert!(said.contains("I can see"), "{said}");
}

/// `season serve DIR` on a free loopback port: the process (killed when
/// dropped) and the address it says it serves on.
struct Site(std::process::Child, std::net::SocketAddr);

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &Path) -> Site {
    use std::io::BufRead;
    let mut child = season(&["serve", "--addr", "127.0.0.1:0"])
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = (line.trim().strip_prefix("referee: season site at http://"))
        .and_then(|a| a.strip_suffix('/'))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .unwrap();
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Site(child, addr)
}

/// `POST /api/entrants/NAME/versions?command=CMD` with the archive's bytes
/// and, if any, the token; the status and the body.
fn post(site: &Site, name: &str, token: Option<&str>, command: &str, body: &[u8]) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(site.1).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let command = command.replace(' ', "%20");
    write!(
        s,
        "POST /api/entrants/{name}/versions?command={command} HTTP/1.1\r\nHost: site\r\n\
         Connection: close\r\n{auth}Content-Type: application/gzip\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |p| p.1).to_owned();
    (status, body)
}

#[test]
fn an_owner_uploads_over_http_with_its_token_and_no_other_token_writes_anything() {
    let base = scratch("season_upload", "http");
    let dir = base.join("season");
    let t = init(
        &dir,
        &["a=builtin:random", "b=builtin:heuristic"],
        UNSANDBOXED,
    );
    let up = new_token(&dir, "up");
    let good = std::fs::read(archive(&base.join("good.tar.gz"), sample_bot())).unwrap();
    let site = serve(&dir);
    let cmd = "python3 bot.py simple";
    // No token, another entrant's, a made-up one: refused, nothing written.
    let (status, said) = post(&site, "up", None, cmd, &good);
    assert_eq!(status, 401, "{said}");
    let (status, said) = post(&site, "up", Some(&t[0].1), cmd, &good);
    assert_eq!(status, 403, "{said}");
    assert!(said.contains("do not match an entrant"), "{said}");
    let (status, _) = post(
        &site,
        "up",
        Some("0123456789abcdef0123456789abcdef"),
        cmd,
        &good,
    );
    assert_eq!(status, 403);
    assert_eq!(versions(&dir), 2);
    assert!(
        !dir.join("uploads").exists(),
        "nothing written for a wrong token"
    );
    // An archive that climbs out: 400, naming the entry; nothing kept.
    let bad = std::fs::read(archive(
        &base.join("bad.tar.gz"),
        vec![file("../escape.py", b"print(1)\n")],
    ))
    .unwrap();
    let (status, said) = post(&site, "up", Some(&up), cmd, &bad);
    assert_eq!(status, 400, "{said}");
    assert!(said.contains("../escape.py"), "{said}");
    assert!(!base.join("escape.py").exists());
    assert_eq!(versions(&dir), 2);
    // One byte over the archive cap (32 MiB): 413, and nothing kept.
    let (status, said) = post(&site, "up", Some(&up), cmd, &vec![0; (32 << 20) + 1]);
    assert_eq!(status, 413, "{said}");
    assert!(said.contains("at most 33554432 bytes"), "{said}");
    assert_eq!(versions(&dir), 2);
    // The owner's good upload: checked, admitted, and it plays.
    let (status, said) = post(&site, "up", Some(&up), cmd, &good);
    assert_eq!(status, 201, "{said}");
    let answer: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(answer["admitted"], true, "{answer}");
    assert_eq!(answer["version"], 1, "{answer}");
    assert!(dir.join("uploads/up/v1/bot.py").is_file());
    assert_eq!(versions(&dir), 3);
    succeeds(season(&["run", "--sets", "1", "--jobs", "1", "-q"]).arg(&dir));
    let s: serde_json::Value = serde_json::from_str(&stdout(&succeeds(
        season(&["standings", "--json"]).arg(&dir),
    )))
    .unwrap();
    let row = (s["entrants"].as_array().unwrap().iter())
        .find(|r| r["entrant"] == "up")
        .expect("up in the standings");
    assert_eq!(row["sets"], 1, "{row}");
}

/// A season without a sandbox whose organiser did not opt in takes no
/// upload: `init` says so, the CLI refuses with the reason (exit 2), the
/// site answers 403 with JSON saying why and what the organiser can do, and
/// nothing is written or recorded. A wrong token is still refused as one
/// (the season's settings are no stranger's business). The same season made
/// with `--allow-unsandboxed-uploads` takes it (the tests above).
#[test]
fn an_unsandboxed_season_refuses_uploads_unless_its_organiser_opted_in() {
    let base = scratch("season_upload", "refused");
    let dir = base.join("season");
    let mut c = season(&["init"]);
    c.arg(&dir).args([
        "--seed",
        "7",
        "--unchecked",
        "--entrant",
        "a=builtin:random",
    ]);
    let said = stdout(&succeeds(&mut c));
    assert!(
        said.contains("uploads: refused (the season has no sandbox"),
        "{said}"
    );
    let up = new_token(&dir, "up");
    let good = archive(&base.join("good.tar.gz"), sample_bot());
    let out = upload(&dir, "up", &up, &good, "python3 bot.py simple");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("runs its bots without a sandbox, so it takes no uploads")
            && err.contains("--allow-unsandboxed-uploads"),
        "{err}"
    );
    let site = serve(&dir);
    let bytes = std::fs::read(&good).unwrap();
    let (status, said) = post(&site, "up", Some(&up), "python3 bot.py", &bytes);
    assert_eq!(status, 403, "{said}");
    let answer: serde_json::Value = serde_json::from_str(&said).expect("a JSON answer");
    assert_eq!(answer["error"], "unsandboxed", "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(message.contains("season init --sandbox"), "{answer}");
    assert!(
        answer["organiser"]
            .as_str()
            .unwrap()
            .contains("--allow-unsandboxed-uploads"),
        "{answer}"
    );
    // A wrong token: the usual 403, not the season's settings.
    let (status, said) = post(&site, "up", Some(&"0".repeat(32)), "python3 bot.py", &bytes);
    assert_eq!(status, 403, "{said}");
    assert!(said.contains("do not match an entrant"), "{said}");
    assert_eq!(versions(&dir), 1, "no version recorded");
    assert!(!dir.join("uploads").exists(), "nothing written");
    // Opted in: said at init, and the upload is taken.
    let dir = base.join("opted-in");
    let mut c = season(&["init"]);
    c.arg(&dir)
        .args(["--seed", "7", "--allow-unsandboxed-uploads"]);
    let said = stdout(&succeeds(&mut c));
    assert!(
        said.contains("uploads: taken WITHOUT a sandbox (--allow-unsandboxed-uploads)"),
        "{said}"
    );
    let up = new_token(&dir, "up");
    let out = upload(&dir, "up", &up, &good, "python3 bot.py simple");
    assert!(out.status.success(), "{out:?}");
}
