//! What remote seats cost the rest of a run (issue 43): a flood of silent
//! connections from anybody who can reach the port, a participant dialling a
//! thousand connections with its own valid token, and a referee that asks
//! `referee connect` for forty seats. Real processes on real sockets: the
//! flooders dial from loopback addresses of their own (127.0.0.2 and up),
//! as machines of their own would, and the fake referee is a listener that
//! speaks the wire by hand. What is held is counted (connections answered,
//! bots started, files written), never timed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::remote::{
    connect, connect_bot, equivalent, faults, finished, local_game, organise, organise_with,
    remote_play, strs, Organiser, GUARD,
};
use crate::support::{self, REFEREE};

/// A connection to `to` from `source`, an address of this host's loopback.
fn dial_from(source: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use nix::sys::socket::{bind, connect, socket, AddressFamily, SockFlag, SockType, SockaddrIn};
    use std::os::fd::AsRawFd;
    let SocketAddr::V4(to) = to else {
        unreachable!("the referee listens on 127.0.0.1")
    };
    let fd = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    bind(
        fd.as_raw_fd(),
        &SockaddrIn::from(SocketAddrV4::new(source, 0)),
    )?;
    connect(fd.as_raw_fd(), &SockaddrIn::from(to))?;
    Ok(TcpStream::from(fd))
}

/// Silent connections, `per_source` from each source, each dialled again as
/// soon as the referee closes it, until stopped.
struct Flood {
    stop: Arc<AtomicBool>,
    closed: Arc<AtomicUsize>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Flood {
    fn start(to: SocketAddr, sources: &[Ipv4Addr], per_source: usize) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicUsize::new(0));
        let mut threads = Vec::new();
        for &source in sources {
            for _ in 0..per_source {
                let (stop, closed) = (stop.clone(), closed.clone());
                threads.push(std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        match dial_from(source, to) {
                            Ok(s) => silent_until_closed(s, &stop),
                            // The referee is gone, or the host is out of ports.
                            Err(_) => std::thread::sleep(Duration::from_millis(10)),
                        }
                        closed.fetch_add(1, Ordering::SeqCst);
                    }
                }));
            }
        }
        Flood {
            stop,
            closed,
            threads,
        }
    }

    /// How many of its connections the referee has closed so far.
    fn closed(&self) -> usize {
        self.closed.load(Ordering::SeqCst)
    }

    fn stop(self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads {
            t.join().unwrap();
        }
        self.closed.load(Ordering::SeqCst)
    }
}

/// Says nothing, reads what comes, until the other end closes (or `stop`).
fn silent_until_closed(mut s: TcpStream, stop: &AtomicBool) {
    // The timeout only lets the thread see `stop`.
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 512];
    while !stop.load(Ordering::SeqCst) {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock) => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

#[test]
fn a_flood_of_silent_connections_keeps_no_connector_out() {
    let out = support::scratch("remote-bounds", "flood");
    let extra = ["--decision-ms", "20000"];
    let org = organise(&strs(&remote_play(31, &out, &extra)), "127.0.0.1:0", &out);
    // 72 silent connections from eight addresses, nine each: every address
    // over its share, and the pool of connections not yet proved full.
    let sources: Vec<Ipv4Addr> = (2..10).map(|i| Ipv4Addr::new(127, 0, 0, i)).collect();
    let flood = Flood::start(org.addr, &sources, 9);
    let mut child = org.child;
    support::wait_while_running(
        &mut child,
        "the flood had been turned away 200 times",
        || flood.closed() >= 200,
    );
    let before = flood.closed();
    let org = Organiser { child, ..org };
    let bot = connect(org.addr, &org.token("alice"), None, &[]);
    let (code, text) = org.finish();
    let during = flood.stop() - before;
    assert_eq!(code, Some(0), "{text}");
    let (code, said) = finished(bot);
    assert_eq!(code, Some(0), "{said}");
    assert!(during > 0, "the flood went on during the game");
    let transcript = out.join("game-0001.jsonl");
    assert!(faults(&transcript).is_empty(), "{:?}", faults(&transcript));
    equivalent(&local_game(31, &extra), &transcript);
}

/// One line off a socket (the link's lines are short).
fn line_of(reader: &mut impl BufRead) -> String {
    let mut line = String::new();
    let _ = reader.read_line(&mut line);
    line.trim_end().to_owned()
}

/// What a participant's own connections got: the referee's answer to each
/// proof of the token, and the connections, still open on this side.
struct Dialled {
    answers: Vec<String>,
    held: Vec<TcpStream>,
}

/// `n` control connections from `source`, each proving `token` and kept
/// open on this side; one closed before it was answered is dialled again.
fn dial_with_token(to: SocketAddr, source: Ipv4Addr, token: &Path, n: usize) -> Dialled {
    let token = referee::remote::token::Token::read(token).unwrap();
    let threads = 16;
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let token = token.clone();
            std::thread::spawn(move || {
                let mut mine = Dialled {
                    answers: Vec::new(),
                    held: Vec::new(),
                };
                let share = n / threads + usize::from(t < n % threads);
                let start = Instant::now();
                while mine.answers.len() < share {
                    assert!(start.elapsed() < GUARD, "the referee never answered");
                    let Ok(s) = dial_from(source, to) else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    s.set_read_timeout(Some(GUARD)).unwrap();
                    let mut reader = BufReader::new(s.try_clone().unwrap());
                    let challenge = line_of(&mut reader);
                    let Some(json) = challenge.strip_prefix("~challenge ") else {
                        continue; // closed unread: over the bound of its address
                    };
                    let c: serde_json::Value = serde_json::from_str(json).unwrap();
                    let (run, nonce) = (c["run"].as_str().unwrap(), c["nonce"].as_str().unwrap());
                    let auth = serde_json::json!({
                        "name": token.name, "role": "control", "seat": "",
                        "mac": token.prove(run, nonce, "control", ""),
                    });
                    let mut w = s.try_clone().unwrap();
                    let _ = w.write_all(format!("~auth {auth}\n").as_bytes());
                    let answer = line_of(&mut reader);
                    if answer.is_empty() {
                        continue; // closed unanswered: a host too busy for 1.5 s
                    }
                    mine.answers.push(answer);
                    mine.held.push(s);
                }
                mine
            })
        })
        .collect();
    let mut all = Dialled {
        answers: Vec::new(),
        held: Vec::new(),
    };
    for w in workers {
        let mine = w.join().unwrap();
        all.answers.extend(mine.answers);
        all.held.extend(mine.held);
    }
    all
}

fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

#[test]
fn a_participant_dialling_a_thousand_connections_with_its_token_harms_no_other_seat() {
    // The attacker keeps its thousand sockets: this process needs the room.
    let room = referee::remote::descriptors::raise().unwrap_or(0);
    if room < 1500 {
        return support::skip(&format!("an open-file limit of {room} here, 1500 needed"));
    }
    let dir = support::scratch("remote-bounds", "thousand");
    let out = dir.join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let (up, go) = (dir.join("up"), dir.join("go"));
    let out_text = out.display().to_string();
    // A tournament, one table at a time: every game starts fresh bot
    // processes, so the local entrants' later games start theirs after the
    // thousand connections.
    let args = [
        "tournament",
        "--seed",
        "32",
        "--entrant",
        "alice=remote",
        "--entrant",
        "mallory=remote",
        "--entrant",
        "h=builtin:heuristic",
        "--entrant",
        "r=builtin:random",
        "--jobs",
        "1",
        "--startup-ms",
        "300000",
        "--decision-ms",
        "20000",
        "--out",
        &out_text,
    ];
    // The host of the finding: 1,024 descriptors, soft and hard.
    let mut referee = support::referee();
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        referee.pre_exec(|| {
            use nix::sys::resource::{setrlimit, Resource};
            setrlimit(Resource::RLIMIT_NOFILE, 1024, 1024).map_err(std::io::Error::from)
        });
    }
    let org = organise_with(referee, &args, "127.0.0.1:0", &out);
    let alice = connect(org.addr, &org.token("alice"), None, &[]);
    // mallory's own bots say they are up (so its control connection is
    // held: the seat was opened through it) and wait for `go`, so that its
    // first game goes on only once the thousand connections were answered.
    let wait_then_play = format!(
        "echo up >> {up}; while [ ! -e {go} ]; do sleep 0.05; done; exec {REFEREE} bot heuristic",
        up = up.display(),
        go = go.display()
    );
    let mallory = connect_bot(
        org.addr,
        &org.token("mallory"),
        None,
        &[],
        &["sh", "-c", &wait_then_play],
    );
    let mut child = org.child;
    support::wait_while_running(&mut child, "a bot of mallory's was up", || up.exists());
    let org = Organiser { child, ..org };
    let pid = org.child.id();
    let before = open_files(pid);
    // The most the referee holds open while the participant dials: sampled
    // (a sample missed only makes the check weaker).
    let (dialling, peak) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicUsize::new(0)),
    );
    let sampler = {
        let (dialling, peak) = (dialling.clone(), peak.clone());
        std::thread::spawn(move || {
            while dialling.load(Ordering::SeqCst) {
                peak.fetch_max(open_files(pid), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let mallorys = org.token("mallory");
    let dialled = dial_with_token(org.addr, Ipv4Addr::new(127, 0, 0, 3), &mallorys, 1000);
    dialling.store(false, Ordering::SeqCst);
    sampler.join().unwrap();
    let during = peak.load(Ordering::SeqCst);
    // A second `referee connect` with the same token is told why it is
    // turned away.
    let second = connect(org.addr, &mallorys, None, &["--retry-ms", "1000"]);
    let (code, said) = finished(second);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains(
            "turned the connection away: remote:mallory already has a control connection"
        ),
        "{said}"
    );
    std::fs::write(&go, "").unwrap();
    let (code, text) = org.finish();
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(finished(alice).0, Some(0));
    assert_eq!(finished(mallory).0, Some(0));
    assert_eq!(dialled.answers.len(), 1000);
    for answer in &dialled.answers {
        assert!(
            answer.starts_with("~busy ") && answer.contains("already has a control connection"),
            "{answer}"
        );
    }
    eprintln!(
        "the referee's open files: {before} before, at most {during} while the thousand \
         connections were dialled ({} still open on the participant's side)",
        dialled.held.len()
    );
    assert!(during < before + 64, "{before} before, {during} after");
    // Every game of every entrant was played out, no seat faulted.
    let mut games = 0;
    for game in std::fs::read_dir(out.join("games")).unwrap() {
        let game = game.unwrap().path();
        if game.extension().is_none_or(|e| e != "jsonl") {
            continue; // timings/
        }
        assert!(
            faults(&game).is_empty(),
            "{}: {:?}",
            game.display(),
            faults(&game)
        );
        games += 1;
    }
    assert!(games >= 6, "{games} games");
    assert!(support::verify(&[&out]).status.success());
    let standings = std::fs::read_to_string(out.join("standings.json")).unwrap();
    for name in ["alice", "mallory", "h", "r"] {
        assert!(standings.contains(&format!("\"{name}\"")), "{standings}");
    }
    drop(dialled);
}

/// Waits (up to [`GUARD`]) for a connection to `listener`.
fn accept(listener: &TcpListener) -> TcpStream {
    listener.set_nonblocking(true).unwrap();
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(GUARD)).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(start.elapsed() < GUARD, "nobody connected");
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// A connection's handshake as a referee that welcomes any proof: its
/// `auth`, a reader and the connection.
fn welcome_any(s: TcpStream) -> (serde_json::Value, BufReader<TcpStream>, TcpStream) {
    let mut w = s.try_clone().unwrap();
    w.write_all(b"~challenge {\"v\":1,\"run\":\"f00d\",\"nonce\":\"00\"}\n")
        .unwrap();
    let mut r = BufReader::new(s);
    let auth = line_of(&mut r);
    let auth = auth.strip_prefix("~auth ").expect("a proof");
    w.write_all(b"~welcome {\"received\":0,\"max_line\":100000,\"grace_ms\":10000}\n")
        .unwrap();
    (serde_json::from_str(auth).unwrap(), r, w)
}

#[test]
fn connect_starts_no_more_bots_than_its_token_names_and_names_its_own_logs() {
    let dir = support::scratch("remote-bounds", "fake-referee");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let earlier = "an earlier run's log\n";
    std::fs::write(logs.join("bot-1.log"), earlier).unwrap();
    // A token naming two seats (the referee would write it so for a team).
    let token = dir.join("alice.token");
    let secret = "ab".repeat(32);
    std::fs::write(
        &token,
        format!("schmier-remote-token-1 alice * 4102444800 {secret} 2\n"),
    )
    .unwrap();
    // Each bot says `up` on stderr, its pid on stdout, and waits.
    let bot = "import os, sys\nprint('up', file=sys.stderr, flush=True)\n\
               print(os.getpid(), flush=True)\nsys.stdin.read()\n";
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let connector = support::referee()
        .arg("connect")
        .arg(listener.local_addr().unwrap().to_string())
        .arg("--token-file")
        .arg(&token)
        .arg("--stderr-dir")
        .arg(&logs)
        .args(["--", "python3", "-c", bot])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (auth, _control_r, mut control) = welcome_any(accept(&listener));
    assert_eq!(auth["role"], "control");
    // Forty requests: 36 seats, one of them again, and three ids that
    // would be file names.
    let mut opens: Vec<String> = (1..=36).map(|i| format!("s{i}")).collect();
    opens.extend(["s1", "s2\nx", "../../pwned", "s37/../../pwned"].map(String::from));
    for seat in &opens {
        let line = format!("~open {}\n", serde_json::json!({ "seat": seat }));
        control.write_all(line.as_bytes()).unwrap();
    }
    // Serve what comes: when two seats are live, end the older one first.
    // A seat is dialled before its bot starts: by then, at most one of the
    // bots started before it may still be running.
    let mut live = std::collections::VecDeque::new();
    let (mut served, mut pids) = (Vec::new(), Vec::new());
    let bye = |mut w: TcpStream| w.write_all(b"~bye\n").unwrap();
    for _ in 0..4 {
        if live.len() == 2 {
            bye(live.pop_front().unwrap());
        }
        let seat = accept(&listener);
        let running = (pids.iter())
            .filter(|&&pid| nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok())
            .count();
        assert!(
            running <= 1,
            "{running} bots running as another seat was dialled"
        );
        let (auth, mut r, w) = welcome_any(seat);
        assert_eq!(auth["role"], "seat", "{auth}");
        let pid = line_of(&mut r);
        pids.push(
            pid.parse::<i32>()
                .unwrap_or_else(|_| panic!("{auth}: {pid}")),
        );
        served.push(auth["seat"].as_str().unwrap().to_owned());
        live.push_back(w);
    }
    live.into_iter().for_each(bye);
    control.write_all(b"~bye\n").unwrap();
    let (code, said) = finished(connector);
    assert_eq!(code, Some(0), "{said}");
    // Nothing else dialled: the connector is gone and nobody is waiting.
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "a fifth seat was dialled");
    // Four bots in all: two running and two waiting their turn.
    served.sort();
    assert_eq!(served, ["s1", "s2", "s3", "s4"], "{said}");
    assert!(said.contains("not started"), "{said}");
    // The logs: named by the connector, the earlier one untouched.
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bot-1.log",
            "bot-2.log",
            "bot-3.log",
            "bot-4.log",
            "bot-5.log"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(logs.join("bot-1.log")).unwrap(),
        earlier
    );
    for n in 2..=5 {
        let log = std::fs::read_to_string(logs.join(format!("bot-{n}.log"))).unwrap();
        assert_eq!(log, "up\n");
    }
    let stray: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.parent().unwrap()).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("pwned") || n.contains('\n'))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}
