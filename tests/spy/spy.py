#!/usr/bin/env python3
"""A Schmier bot that cheats, one way per MODE, for the referee's sandbox tests.

    python3 tests/spy/spy.py MODE [--tag TOKEN]

It plays correctly (the first legal action) and, at its first request, tries the
attack MODE against its siblings, its partner or the referee. It reports on
stderr (which the referee keeps in the bot's log) one line

    SPY MODE ok DETAIL        the attack worked
    SPY MODE blocked DETAIL   it did not

and, for partner channels, whether the partner's message arrived by the end of
the game. `--tag` is a token the tests use to find leftover processes.

The `remember` modes play a duplicate set (`referee tournament`): the bot notes
the hand it is dealt at each deal and place after the dealer, in its memory
(`remember`) or in files under /tmp, /dev/shm and its scratch directory
(`remember-files`) or in the host's dentry cache (`remember-dentries`, read by
`openat2(RESOLVE_CACHED)`; `remember-dentries-timed`, read by timing `stat`:
`dentries.py`), and from then on claims, at each deal, the hand of every opponent in a place it
has held itself. Each claim is a stderr line `CLAIM {json}` the tests check against the
transcripts; at the end of each game it reports `ok` if it made any.
"""
import ctypes
import errno
import json
import os
import signal
import socket
import stat
import sys
import time

MODE = sys.argv[1]
TAG = sys.argv[sys.argv.index("--tag") + 1] if "--tag" in sys.argv else "spy"
out = sys.stdout.buffer
libc = ctypes.CDLL(None, use_errno=True)
state = {"seat": None, "done": False, "partner_heard": None, "sockets": []}


def send(obj):
    out.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
    out.flush()


def report(ok, detail):
    sys.stderr.write(f"SPY {MODE} {'ok' if ok else 'blocked'} {detail}\n")
    sys.stderr.flush()


def first_legal(req):
    legal = req["legal"]
    if isinstance(legal, dict):
        return legal["must"] + legal["from"][: legal["min"]]
    return legal[0]


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def referee():
    """This bot's referee, if it can see it: the ancestor running `referee play`
    (other referees may run on the same machine; they are left alone)."""
    pid = parent_of(os.getpid())
    while pid > 0:
        c = cmdline(pid)
        if "referee" in c and " play" in c:
            return pid
        pid = parent_of(pid)
    return None


def siblings(ref):
    """The other bot processes of this bot's referee it can see (the built-in
    bots); any visible built-in bot if it cannot see its referee."""
    me = os.getpid()
    return [
        p
        for p in pids()
        if p != me and "referee bot " in cmdline(p) and (ref is None or parent_of(p) == ref)
    ]


def attempt(what, fn):
    try:
        return True, f"{what}: {fn()}"
    except OSError as e:
        return False, f"{what}: {errno.errorcode.get(e.errno, e.errno)}"


def attack():
    ref = referee()
    sibs = siblings(ref)
    found = f"siblings={len(sibs)} referee={'yes' if ref else 'no'}"
    if MODE == "proc-fd":
        # Steal a sibling's requests (its stdin) or forge its replies (its stdout).
        if not sibs:
            return report(False, found)
        ok_in, d_in = attempt("stdin", lambda: os.open(f"/proc/{sibs[0]}/fd/0", os.O_RDONLY | os.O_NONBLOCK) and "opened")
        ok_out, d_out = attempt("stdout", lambda: os.open(f"/proc/{sibs[0]}/fd/1", os.O_WRONLY | os.O_NONBLOCK) and "opened")
        return report(ok_in or ok_out, f"{found} {d_in} {d_out}")
    if MODE == "referee-mem":
        # Read the referee's memory, where all six hands are.
        if not ref:
            return report(False, found)
        def read_mem():
            with open(f"/proc/{ref}/maps") as f:
                start = int(f.readline().split("-")[0], 16)
            with open(f"/proc/{ref}/mem", "rb") as f:
                f.seek(start)
                return f"{len(f.read(64))} bytes"
        return report(*attempt(f"{found} mem", read_mem))
    if MODE == "partial":
        # Read the game in progress from the referee's open transcript.
        if not ref:
            return report(False, found)
        for fd in os.listdir(f"/proc/{ref}/fd"):
            target = os.readlink(f"/proc/{ref}/fd/{fd}")
            if target.endswith(".jsonl.partial"):
                # Opened is enough: the referee flushes the game into it as it goes.
                with open(f"/proc/{ref}/fd/{fd}") as f:
                    size = len(f.read())
                return report(True, f"{found} opened {target} ({size} bytes so far)")
        return report(False, f"{found} no open transcript")
    if MODE == "symlink":
        # Make the referee write the next game's transcript over another file:
        # plant `game-0002.jsonl.partial` -> `../victim` in the output folder.
        if not ref:
            return report(False, found)
        for fd in os.listdir(f"/proc/{ref}/fd"):
            target = os.readlink(f"/proc/{ref}/fd/{fd}")
            if target.endswith("game-0001.jsonl.partial"):
                out_dir = os.path.dirname(target)
                plant = os.path.join(out_dir, "game-0002.jsonl.partial")
                return report(*attempt(f"{found} {plant}", lambda: os.symlink("../victim", plant) or "planted"))
        return report(False, f"{found} no open transcript")
    if MODE == "write":
        # Write outside the scratch space: into the bot's own directory.
        name = f"spy-wrote-{TAG}"
        return report(*attempt(f"{found} {os.getcwd()}/{name}", lambda: open(name, "w").close() or "written"))
    if MODE == "write-parent":
        # Write outside the scratch space where the mount namespace would let
        # it: next to its own directory (in a sandbox, bubblewrap's own root).
        name = f"../spy-wrote-{TAG}"
        path = os.path.normpath(os.path.join(os.getcwd(), name))
        return report(*attempt(f"{found} {path}", lambda: open(name, "w").close() or "written"))
    if MODE == "tcp-loopback":
        # Serve and reach a TCP port on loopback (in a sandbox, its own network
        # namespace's, which nothing but Landlock forbids).
        def serve_and_connect():
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            client = socket.socket()
            client.connect(server.getsockname())
            return f"connected to port {server.getsockname()[1]}"
        return report(*attempt(found, serve_and_connect))
    if MODE == "signal-parent":
        # Signal the parent process: the referee, or in a sandbox bubblewrap's
        # pid 1 (outside the bot's Landlock domain). Signal 0 only checks.
        parent = os.getppid()
        return report(*attempt(f"{found} kill({parent}, 0)", lambda: os.kill(parent, 0) or "allowed"))
    if MODE == "tty":
        # Reach the operator's terminal, where a human seat types its moves: the
        # bot shares the referee's session, so /dev/tty is that terminal.
        def write_tty():
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
            os.write(fd, f"SPY-ON-THE-TERMINAL-{TAG}\n".encode())
            os.close(fd)
            return "written"
        return report(*attempt(found, write_tty))
    if MODE == "hold":
        # Not an attack: wait at the first request until the test has looked at
        # this bot from outside and sends it SIGWINCH. (Not a file left in the
        # bot's directory: a sandboxed bot may see that directory as it was
        # when the run began. SIGWINCH is ignored until this handler is set,
        # so one sent too early is lost, not fatal; the test sends it until
        # the game is over.)
        released = []
        signal.signal(signal.SIGWINCH, lambda *_: released.append(True))
        deadline = time.monotonic() + 300
        while not released:
            if time.monotonic() > deadline:
                return report(False, "never released")
            time.sleep(0.01)
        return report(True, "released")
    if MODE == "fork-hog":
        # Start as many processes as allowed (up to 100) and keep them.
        children = 0
        for _ in range(100):
            try:
                if os.fork() == 0:
                    while True:
                        time.sleep(3600)
                children += 1
            except OSError as e:
                return report(True, f"children={children} then {errno.errorcode.get(e.errno)}")
        return report(True, f"children={children}")
    if MODE == "proc-files":
        # One read per class of /proc file that shows more than the bot's own
        # state; the allowed ones a runtime needs are read too.
        child = os.fork()
        if child == 0:
            time.sleep(30)
            os._exit(0)
        classes = {
            "page maps": ["self/pagemap", "self/smaps", "self/smaps_rollup", "self/numa_maps"],
            "mounts": ["self/mountinfo", "self/mounts", "self/mountstats"],
            "user maps": ["self/uid_map", "self/gid_map"],
            "other process": ["1/status", "1/cmdline", f"{child}/stat", f"{child}/maps"],
            "host-wide": ["cgroups", "partitions", "modules", "kallsyms", "zoneinfo", "self/sessionid",
                          "sys/kernel/random/entropy_avail", "self/net/dev"],
            "allowed": ["self/status", "self/stat", "self/maps", "meminfo", "cpuinfo"],
        }
        seen = {}
        for cls, files in classes.items():
            for f in files:
                def read(f=f):
                    with open(f"/proc/{f}", "rb") as fh:
                        fh.read(1)
                    return "ok"
                seen[f"{cls}:{f.replace(str(child), 'CHILD')}"] = probe(read)
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        return report(True, json.dumps(seen))
    if MODE == "where":
        # What tells a bot which game of a set it plays: its scratch path, the
        # host uid in mountinfo or uid_map.
        seen = {"scratch": os.environ.get("SCHMIER_SCRATCH")}
        for f in ("mountinfo", "uid_map"):
            try:
                with open(f"/proc/self/{f}") as fh:
                    seen[f] = fh.read()
            except OSError as e:
                seen[f] = errno.errorcode.get(e.errno, str(e.errno))
        return report(True, json.dumps(seen))
    if MODE == "counters":
        return report(True, json.dumps(counters()))
    if MODE == "whoami":
        with open("/proc/self/status") as f:
            status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        return report(True, json.dumps({"cwd": os.getcwd(), "env": dict(os.environ),
                                        "uid": os.getuid(),
                                        "caps": status.get("CapEff")}))
    if MODE == "seed":
        # Learn the match seed from the referee's command line.
        words = cmdline(ref).split() if ref else []
        seed = words[words.index("--seed") + 1] if "--seed" in words else None
        return report(seed is not None, f"{found} seed={seed}")
    if MODE == "environ":
        # The referee's secrets, in this bot's environment, the referee's, or
        # that of the sandbox's pid 1.
        leaks = [k for k in os.environ if k.startswith("SPY_SECRET")]
        for p in filter(None, [ref, 1]):
            try:
                with open(f"/proc/{p}/environ", "rb") as f:
                    if b"SPY_SECRET" in f.read():
                        leaks.append(f"/proc/{p}/environ")
            except OSError:
                pass
        return report(bool(leaks), f"{found} leaks={leaks} own_env={sorted(os.environ)}")
    if MODE == "kill-sibling":
        if not sibs:
            return report(False, found)
        return report(*attempt(f"{found} SIGKILL {sibs[0]}", lambda: os.kill(sibs[0], signal.SIGKILL) or "sent"))
    if MODE == "kill-referee":
        if not ref:
            return report(False, found)
        return report(*attempt(f"{found} SIGKILL", lambda: os.kill(ref, signal.SIGKILL) or "sent"))
    if MODE == "ptrace":
        # Attach to a sibling; then, to test the seccomp layer on its own, to a
        # child of this very bot (which nothing but seccomp forbids).
        PTRACE_ATTACH, PTRACE_DETACH = 16, 17
        results = []
        if sibs:
            rc = libc.ptrace(PTRACE_ATTACH, sibs[0], None, None)
            results.append(("sibling", rc == 0, ctypes.get_errno()))
            if rc == 0:
                os.waitpid(sibs[0], 0x40000000)  # __WALL
                libc.ptrace(PTRACE_DETACH, sibs[0], None, None)
        child = os.fork()
        if child == 0:
            time.sleep(60)
            os._exit(0)
        rc = libc.ptrace(PTRACE_ATTACH, child, None, None)
        results.append(("own child", rc == 0, ctypes.get_errno()))
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        return report(any(ok for _, ok, _ in results), f"{found} {results}")
    if MODE == "tiocsti":
        # Push a keystroke into a terminal. The bot's stdin is a pipe, so the
        # kernel answers ENOTTY, unless the call is filtered before it gets there.
        TIOCSTI = 0x5412
        rc = libc.ioctl(0, TIOCSTI, ctypes.c_char_p(b"x"))
        err = ctypes.get_errno()
        return report(rc == 0 or err != errno.EPERM, f"errno={errno.errorcode.get(err, err)}")
    if MODE == "daemon":
        # Leave a process behind: double fork and a new session.
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                while True:
                    time.sleep(3600)
            os._exit(0)
        os.wait()
        return report(True, "daemon started")
    if MODE == "cpu-daemon":
        # Think in a daemon outside the bot's process tree while --clock cpu
        # measures the tree: the first reply waits for 2 s of the daemon's CPU.
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                start = time.process_time()
                while time.process_time() - start < 2.0:
                    pass
                os.write(w, b"x")
                while True:
                    time.sleep(3600)
            os._exit(0)
        os.wait()
        os.read(r, 1)
        return report(True, "a daemon did 2 s of work")
    if MODE == "syscalls":
        # Every call the sandbox refuses because it reaches host-wide state:
        # "name=ok" where it worked, "name=ERRNO" where it did not.
        return report(True, " ".join(f"{name}={probe(fn)}" for name, fn in syscall_probes()))
    if MODE == "proc-counters":
        # Host-wide counters in /proc: does starting 300 threads show in the
        # host's thread count (/proc/loadavg), and what do the others read?
        def threads():
            with open("/proc/loadavg") as f:
                return int(f.read().split()[3].split("/")[1])
        # The count is the host's: another process ending threads meanwhile
        # hides this bot's (one whose count swings by hundreds did so in a
        # third of single tries), so up to 20 tries, each after the last's
        # threads are gone; `rose` is the most any try showed.
        import threading
        rose, tries = 0, 0
        while rose < 150 and tries < 20:
            tries += 1
            stop = threading.Event()
            before = threads()
            started = [threading.Thread(target=stop.wait, daemon=True) for _ in range(300)]
            for t in started:
                t.start()
            for _ in range(5):
                rose = max(rose, threads() - before)
            stop.set()
            for t in started:
                t.join()
        seen = {}
        for name in ("loadavg", "meminfo", "vmstat", "stat", "sys/fs/file-nr", "sys/fs/aio-nr"):
            try:
                with open(f"/proc/{name}") as f:
                    seen[name] = f.read()[:300]
            except OSError as e:
                seen[name] = errno.errorcode.get(e.errno, e.errno)
        try:
            seen["pressure"] = sorted(os.listdir("/proc/pressure"))
        except OSError as e:
            seen["pressure"] = errno.errorcode.get(e.errno, e.errno)
        return report(rose >= 150, json.dumps({"rose": rose, "tries": tries, "seen": seen}))
    if MODE == "fill-tmp":
        # Fill /tmp and /dev/shm (each up to 80 MiB, more than the sandbox's
        # 64 MiB): how much each took, and how it stopped.
        results = {}
        for d in ("/tmp", "/dev/shm"):
            path, wrote, chunk = f"{d}/{TAG}-fill", 0, b"x" * (1 << 20)
            try:
                with open(path, "wb") as f:
                    while wrote < 80 << 20:
                        f.write(chunk)
                        f.flush()
                        wrote += len(chunk)
                results[d] = [wrote, "ok"]
            except OSError as e:
                results[d] = [wrote, errno.errorcode.get(e.errno, e.errno)]
            try:
                os.remove(path)
            except OSError:
                pass
        return report(all(r[1] == "ok" for r in results.values()), json.dumps(results))
    if MODE == "inherited-fd":
        return report(*leak_into_inherited())
    raise SystemExit(f"unknown mode {MODE}")


def counters():
    """Numbers a bot can read that the kernel hands out from a counter: pids,
    inode numbers of its own files and pipes, mount ids, the network
    namespace's and a socket's cookie, namespace inode numbers, its cgroup,
    its start time. Each is a value or the errno that refused it."""
    import struct
    seen = {"pid": os.getpid(), "ppid": os.getppid()}

    def put(name, fn):
        try:
            seen[name] = fn()
        except OSError as e:
            seen[name] = errno.errorcode.get(e.errno, str(e.errno))

    def ino(d):
        path = f"{d}/{TAG}-ino"
        with open(path, "w"):
            pass
        try:
            return os.stat(path).st_ino
        finally:
            os.remove(path)

    for d in ("/tmp", "/dev/shm"):
        put(f"ino:{d}", lambda d=d: ino(d))
    put("ino:stdin", lambda: os.fstat(0).st_ino)
    put("ino:pipe", lambda: os.fstat(os.pipe()[0]).st_ino)

    def mnt_id(mask):
        # statx(AT_FDCWD, "/tmp", 0, mask, buf): stx_mask at 0, stx_mnt_id at 0x90.
        buf = ctypes.create_string_buffer(256)
        libc.syscall.restype = ctypes.c_long
        check(libc.syscall(332 if os.uname().machine == "x86_64" else 291, -100, b"/tmp", 0, mask, buf))
        got, value = struct.unpack_from("<I", buf, 0)[0], struct.unpack_from("<Q", buf, 0x90)[0]
        return value if got & mask else "not given"

    put("mnt_id", lambda: mnt_id(0x1000))
    put("mnt_id_unique", lambda: mnt_id(0x4000))

    def cookie(opt):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            return struct.unpack("<Q", s.getsockopt(socket.SOL_SOCKET, opt, 8))[0]
        finally:
            s.close()

    put("netns_cookie", lambda: cookie(71))  # SO_NETNS_COOKIE
    put("socket_cookie", lambda: cookie(57))  # SO_COOKIE
    for ns in ("net", "mnt", "pid", "user", "uts", "ipc", "cgroup"):
        put(f"ns:{ns}", lambda ns=ns: os.readlink(f"/proc/self/ns/{ns}"))

    def read(path, pick=lambda t: t.strip()):
        with open(path) as f:
            return pick(f.read())

    put("cgroup", lambda: read("/proc/self/cgroup"))
    put("starttime", lambda: int(read("/proc/self/stat", lambda t: t.rsplit(")", 1)[1].split()[19])))
    put("fdinfo_mnt_id", lambda: read("/proc/self/fdinfo/0", lambda t: [l for l in t.split("\n") if l.startswith("mnt_id")][0]))
    put("boot_id", lambda: read("/proc/sys/kernel/random/boot_id"))
    return seen


def leak_into_inherited():
    """Writes a message into every descriptor above 2 it was given (a pipe or
    FIFO the referee inherited reaches whoever holds its other end)."""
    found = []
    for fd in sorted(int(f) for f in os.listdir("/proc/self/fd")):
        if fd <= 2:
            continue
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            os.write(fd, f"LEAK-{TAG}\n".encode())
            found.append(f"{fd}:{target}")
        except OSError:
            pass  # the listing's own descriptor, closed by now, or read-only
    return bool(found), f"wrote into {found}"


def probe(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def check(rc):
    if rc < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return rc


def syscall_probes():
    import fcntl
    import mmap
    import struct
    shared = shared_file(0)
    fd = os.open(shared, os.O_RDONLY)
    flock = lambda cmd, kind: fcntl.fcntl(fd, cmd, struct.pack("hhqqi4x", kind, 0, 0, 1, 0))
    libc.syscall.restype = ctypes.c_long
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]

    def mincore():
        addr = check(libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0) or -1)
        vec = ctypes.create_string_buffer(1)
        check(libc.mincore(ctypes.c_void_p(addr), 4096, vec))

    def preadv2_nowait():
        os.preadv(fd, [bytearray(1)], 0, os.RWF_NOWAIT)

    def cachestat():
        rng = (ctypes.c_uint64 * 2)(0, 0)
        stat = (ctypes.c_uint64 * 5)()
        check(libc.syscall(451, fd, rng, stat, 0))

    def io_setup():
        ctx = ctypes.c_ulong(0)
        check(libc.syscall(206, 1, ctypes.byref(ctx)))  # x86_64 io_setup
        libc.syscall(207, ctx)  # io_destroy

    def io_uring():
        params = ctypes.create_string_buffer(120)
        os.close(check(libc.syscall(425, 1, params)))

    def fanotify():
        # FAN_CLASS_NOTIF | FAN_REPORT_FID: what an unprivileged process may ask.
        os.close(check(libc.fanotify_init(0x200, 0)))

    def inotify():
        os.close(check(libc.inotify_init1(0)))

    def sysinfo():
        check(libc.sysinfo(ctypes.create_string_buffer(128)))

    def unshare():
        # In a child: the bot itself stays as it is.
        pid = os.fork()
        if pid == 0:
            os._exit(0 if libc.unshare(0x10000000) == 0 else ctypes.get_errno())
        rc = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if rc:
            raise OSError(rc, os.strerror(rc))

    def mlock():
        buf = ctypes.create_string_buffer(4096)
        check(libc.mlock(buf, 4096))
        libc.munlock(buf, 4096)

    def sock(family, kind=socket.SOCK_STREAM):
        return lambda: socket.socket(family, kind).close()

    return [
        ("flock", lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
        ("F_SETLK", lambda: flock(fcntl.F_SETLK, fcntl.F_RDLCK)),
        ("F_GETLK", lambda: flock(fcntl.F_GETLK, fcntl.F_WRLCK)),
        ("F_OFD_SETLK", lambda: flock(37, fcntl.F_RDLCK)),
        ("F_OFD_GETLK", lambda: flock(36, fcntl.F_WRLCK)),
        ("inotify", inotify),
        ("fanotify", fanotify),
        ("io_setup", io_setup),
        ("io_uring", io_uring),
        ("fadvise_dontneed", lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)),
        ("mincore", mincore),
        ("preadv2_nowait", preadv2_nowait),
        ("cachestat", cachestat),
        ("sysinfo", sysinfo),
        ("unshare", unshare),
        ("mlock", mlock),
        # Pinning itself next to its partner on one CPU is what made the
        # host-wide inode counter a fast channel (per-CPU batches).
        ("sched_setaffinity", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0))),
        # A file bound from the host reports the host disk's free blocks,
        # which the referee moves as it writes a bot's log.
        ("statfs", lambda: os.statvfs(shared)),
        ("fstatfs", lambda: os.fstatvfs(fd)),
        # Times set to now need only write permission: the host's /dev/null
        # (every sandbox shows it) would carry a partner's bits.
        ("utime_devnull", lambda: os.utime("/dev/null")),
        ("vsock", sock(40)),
        ("netlink", sock(socket.AF_NETLINK, socket.SOCK_RAW)),
        ("inet", sock(socket.AF_INET)),
        ("unix", sock(socket.AF_UNIX)),
    ]


def shared_files():
    """Files every bot on the host can open (the sandbox shows the Python
    library), at least 64 KiB, in a fixed order; read, never mapped, by the
    host's own programs."""
    found = []
    for root, _, files in os.walk("/usr/lib/python3"):
        for name in files:
            path = os.path.join(root, name)
            try:
                if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) >= 1 << 16:
                    found.append(path)
            except OSError:
                pass
        if len(found) >= 400:
            break
    return sorted(found)


def unheld_file(seat):
    """Like `shared_file`, from /usr/share where it can be seen: a sandboxed
    referee keeps every page of the sandbox's view mapped (so no page of it is
    ever mapped by one process alone), and /usr/share is outside that view.
    Sandboxed (no /usr/share), a file of the view."""
    if "unheld" not in state:
        found = []
        for root, _, files in os.walk("/usr/share"):
            for name in files:
                path = os.path.join(root, name)
                try:
                    if not os.path.islink(path) and os.path.getsize(path) >= 1 << 16:
                        found.append(path)
                except OSError:
                    pass
            if len(found) >= 400:
                break
        state["unheld"] = sorted(found)
    files = state["unheld"]
    if not files:
        return shared_file(seat)
    return files[(sum(map(ord, TAG)) * 31 + seat) % len(files)]


def shared_file(seat):
    """A shared file chosen by this run's tag and a seat: both partners pick
    the same one for a seat, and other runs most likely another."""
    files = state.setdefault("shared", None) or state.update(shared=shared_files()) or state["shared"]
    return files[(sum(map(ord, TAG)) * 31 + seat) % len(files)]


# Partner channels: both partners run the same mode, each leaves a message on
# every request and looks for the other's, and reports at the end of the game.
def partner_names(seat):
    return f"{TAG}-{seat}", f"{TAG}-{(seat + 3) % 6}"


def partner_step():
    seat = state["seat"]
    mine, theirs = partner_names(seat)
    if MODE == "partner-files":
        for d in ("/tmp", "/dev/shm"):
            try:
                open(f"{d}/{mine}", "w").close()
                if os.path.exists(f"{d}/{theirs}"):
                    state["partner_heard"] = f"file in {d}"
            except OSError:
                pass
    elif MODE == "partner-scratch":
        # Each partner writes into its own --scratch directory and looks for the
        # other's message in the directories beside it.
        scratch = os.environ.get("SCHMIER_SCRATCH")
        if not scratch:
            return
        if "wrote" not in state:
            try:
                with open(os.path.join(scratch, mine), "w") as f:
                    f.write("hand")
                state["wrote"] = "yes"
            except OSError as e:
                state["wrote"] = errno.errorcode.get(e.errno, e.errno)
        parent = os.path.dirname(scratch)
        try:
            for d in os.listdir(parent):
                if os.path.exists(os.path.join(parent, d, theirs)):
                    state["partner_heard"] = f"a file in {os.path.join(parent, d)}"
        except OSError:
            pass
    elif MODE == "partner-unix":
        if not state["sockets"]:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind("\0" + mine)
            s.setblocking(False)
            state["sockets"].append(s)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            c.sendto(b"hand", "\0" + theirs)
        except OSError:
            pass
        try:
            if state["sockets"][0].recv(16) == b"hand":
                state["partner_heard"] = "abstract unix socket"
        except OSError:
            pass
    elif MODE == "partner-net":
        port = lambda s: 20000 + (sum(map(ord, TAG)) * 7 + s) % 20000
        if not state["sockets"]:
            for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                try:
                    s = socket.socket(socket.AF_INET, kind)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    s.bind(("127.0.0.1", port(seat)))
                    if kind == socket.SOCK_STREAM:
                        s.listen(4)
                    s.setblocking(False)
                    state["sockets"].append(s)
                except OSError:
                    pass
        for kind, proto in ((socket.SOCK_STREAM, "tcp"), (socket.SOCK_DGRAM, "udp")):
            try:
                c = socket.socket(socket.AF_INET, kind)
                c.settimeout(0.05)
                c.connect(("127.0.0.1", port((seat + 3) % 6)))
                c.send(b"hand")
                c.close()
                if proto == "tcp":
                    state["partner_heard"] = "tcp on 127.0.0.1"
            except OSError:
                pass
        for s in state["sockets"]:
            try:
                if s.type == socket.SOCK_DGRAM and s.recv(16) == b"hand":
                    state["partner_heard"] = "udp on 127.0.0.1"
            except OSError:
                pass
    elif MODE == "partner-lock":
        # Each partner holds a lock on a shared file of its seat, by flock, a
        # POSIX record lock and an open-file-description lock (each its own
        # descriptor), and tests for the partner's: a lock held is a bit.
        import fcntl
        import struct
        region = lambda kind, seat_: struct.pack("hhqqi4x", kind, 0, 64 + seat_, 1, 0)
        if "locks" not in state:
            state["locks"], state["heard"] = [], set()
            for how in ("flock", "posix", "ofd"):
                try:
                    fd = os.open(shared_file(seat), os.O_RDONLY)
                    state["locks"].append(fd)
                    if how == "flock":
                        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    else:
                        fcntl.fcntl(fd, fcntl.F_SETLK if how == "posix" else 37, region(fcntl.F_RDLCK, seat))
                except OSError:
                    pass
        partner = (seat + 3) % 6
        for how in ("flock", "posix", "ofd"):
            try:
                fd = os.open(shared_file(partner), os.O_RDONLY)
                try:
                    if how == "flock":
                        try:
                            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                            fcntl.flock(fd, fcntl.LOCK_UN)
                        except BlockingIOError:
                            state["heard"].add(how)
                    else:
                        got = fcntl.fcntl(fd, fcntl.F_GETLK if how == "posix" else 36, region(fcntl.F_WRLCK, partner))
                        if struct.unpack("hhqqi4x", got)[0] != fcntl.F_UNLCK:
                            state["heard"].add(how)
                finally:
                    os.close(fd)
            except OSError:
                pass
        if state["heard"]:
            state["partner_heard"] = "locks: " + ",".join(sorted(state["heard"]))
    elif MODE == "partner-devnull":
        # The host's /dev/null, which every sandbox shows: each partner sets
        # its times to a value of its own seat's and looks for its
        # partner's (setting them needs the owner, root, or a sandbox that
        # maps the bot to root; set to now, only write permission).
        mark = lambda s: 1_000_000_000 + (sum(map(ord, TAG)) % 100_000) * 8 + s
        try:
            if int(os.stat("/dev/null").st_mtime) == mark((seat + 3) % 6):
                state["partner_heard"] = "the times of /dev/null"
            os.utime("/dev/null", (mark(seat), mark(seat)))
        except OSError as e:
            state["partner_missed"] = errno.errorcode.get(e.errno, e.errno)
    elif MODE == "partner-inotify":
        # Each partner watches its partner's shared file for open events and
        # opens its own: an event seen is a bit.
        if "inotify" not in state:
            state["inotify"] = libc.inotify_init1(os.O_NONBLOCK)
            if state["inotify"] >= 0:
                path = shared_file((seat + 3) % 6).encode()
                libc.inotify_add_watch(state["inotify"], path, 0x20)  # IN_OPEN
        try:
            os.close(os.open(shared_file(seat), os.O_RDONLY))
        except OSError:
            pass
        if state["inotify"] >= 0:
            try:
                if os.read(state["inotify"], 4096):
                    state["partner_heard"] = "inotify open events"
            except OSError:
                pass
    elif MODE == "partner-vsock":
        # The vsock port table is the whole host's: a port bound is a bit.
        port = lambda s: 30000 + (sum(map(ord, TAG)) * 7 + s) % 20000
        try:
            if not state["sockets"]:
                s = socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
                s.bind((0xFFFFFFFF, port(seat)))  # VMADDR_CID_ANY
                state["sockets"].append(s)
            probe_ = socket.socket(40, socket.SOCK_STREAM)
            try:
                probe_.bind((0xFFFFFFFF, port((seat + 3) % 6)))
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    state["partner_heard"] = "a vsock port bound"
            finally:
                probe_.close()
        except OSError:
            pass
    elif MODE == "partner-pagecache":
        # Page-cache residency: each partner empties its shared file from the
        # cache and reads back the pages of its message (a 12-bit token of its
        # seat); the other reads which pages are cached, without loading any.
        pagecache_step(seat)
    elif MODE == "partner-affinity":
        # Not a channel itself: where each partner may run. On one CPU the
        # host-wide inode counter carries tens of bits a second between them.
        cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        state["partner_heard"] = f"cpus={cpus}"
    elif MODE == "partner-pagemap":
        pagemap_step(seat)
    elif MODE == "partner-comm":
        try:
            with open("/proc/self/comm", "w") as f:
                f.write(mine[-15:])
        except OSError:
            pass  # Landlock: /proc is read-only in a sandbox
        for p in pids():
            try:
                with open(f"/proc/{p}/comm") as f:
                    if f.read().strip() == theirs[-15:]:
                        state["partner_heard"] = "/proc/PID/comm"
            except OSError:
                pass


# Duplicate sets: what this bot was dealt, by (place after the dealer, deal),
# from earlier games. Hands go round from the dealer's left, and which seat deals
# deal k depends on the thrown-in deals before it, so the place is what repeats.
memory = {}


def memory_files():
    dirs = ["/tmp", "/dev/shm"] + [d for d in [os.environ.get("SCHMIER_SCRATCH")] if d]
    return [os.path.join(d, f"{TAG}-memory") for d in dirs]


def recall():
    """What earlier games left: this process's memory, or the files."""
    if MODE == "remember":
        return memory
    seen = {}
    for path in memory_files():
        try:
            with open(path) as f:
                for line in f:
                    place, deal, hand = json.loads(line)
                    seen[(place, deal)] = hand
        except (OSError, ValueError):
            pass
    return seen


def remember_deal(msg):
    seat, deal, dealer, hand = state["seat"], msg["deal"], msg["dealer"], msg["hand"]
    if MODE.startswith("remember-dentries"):
        return remember_in_dentries(seat, deal, dealer, hand)
    seen = recall()
    for (place, k), held in sorted(seen.items()):
        other = (dealer + place) % 6
        if k == deal and other % 3 != seat % 3:
            state["claims"] += 1
            claim = {"deal": deal, "seat": other, "hand": held, "me": seat, "my_hand": hand}
            sys.stderr.write("CLAIM " + json.dumps(claim) + "\n")
    place = (seat - dealer) % 6
    if MODE == "remember":
        memory[(place, deal)] = hand
    else:
        for path in memory_files():
            try:
                with open(path, "a") as f:
                    f.write(json.dumps([place, deal, hand]) + "\n")
            except OSError:
                pass
    sys.stderr.flush()


def dentry_store():
    """The host's dentry cache as a store (`dentries.py`): read by
    `openat2(RESOLVE_CACHED)` (`remember-dentries`) or by timing `stat`
    (`remember-dentries-timed`)."""
    if "store" not in state:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        sys.dont_write_bytecode = True  # nothing left in the bot's directory
        import dentries
        state["store"] = dentries.Store(TAG, "timed" if MODE.endswith("-timed") else "cached")
    return state["store"]


def remember_in_dentries(seat, deal, dealer, hand):
    """Claims every opponent's hand an earlier bot left in the store under
    its place and deal, then leaves its own."""
    store = dentry_store()
    for place in range(6):
        other = (dealer + place) % 6
        if other % 3 == seat % 3:
            continue
        held = store.read(f"{place}-{deal}")
        if held is not None:
            state["claims"] += 1
            claim = {"deal": deal, "seat": other, "hand": held, "me": seat, "my_hand": hand}
            sys.stderr.write("CLAIM " + json.dumps(claim) + "\n")
    key = f"{(seat - dealer) % 6}-{deal}"
    store.write(key, hand)
    state.setdefault("dentry_keys", []).append(key)
    sys.stderr.flush()


def token(seat):
    return (sum(map(ord, TAG)) * 131 + seat * 977) % 4095 + 1


def pagecache_step(seat):
    import mmap
    page = mmap.PAGESIZE
    if "cache_file" not in state:
        state["cache_file"] = pagecache_own_file(seat)
    # Two files: this run's own on a disk where there is one, which no other
    # process reads or maps (a file of /usr/share may be held mapped by
    # another process, and then reads as cached whatever is evicted), read by
    # an unsandboxed partner; and a file of /usr/share, or of the view where
    # there is none, which a sandboxed partner sees too. Outside the view
    # where it can be: a sandboxed referee holds the view resident (a
    # concurrent sandboxed run would keep a file of the view cached,
    # whatever a bot does).
    for path in filter(None, (state["cache_file"], unheld_file(seat))):
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
                for bit in range(12):
                    if token(seat) >> bit & 1:
                        os.pread(fd, 1, bit * page)
            finally:
                os.close(fd)
        except OSError:
            pass
    partner = (seat + 3) % 6
    theirs = [p for p in pagecache_own_files(partner) if os.path.exists(p)]
    try:
        fd = os.open(theirs[0] if theirs else unheld_file(partner), os.O_RDONLY)
    except OSError as e:
        state["partner_missed"] = f"last read failed: {e}"
        return
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    addr = libc.mmap(None, 12 * page, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    os.close(fd)
    if not addr or addr == ctypes.c_void_p(-1).value:
        state["partner_missed"] = "last read failed: mmap"
        return
    vec = ctypes.create_string_buffer(12)
    if libc.mincore(ctypes.c_void_p(addr), 12 * page, vec) == 0:
        got = sum((vec.raw[bit] & 1) << bit for bit in range(12))
        if got == token(partner):
            state["partner_heard"] = f"page-cache token {got}"
        else:
            state["partner_missed"] = f"last read {got:012b} for {token(partner):012b}"
    else:
        state["partner_missed"] = f"last read failed: mincore errno {ctypes.get_errno()}"
    libc.munmap(ctypes.c_void_p(addr), 12 * page)


def pagecache_own_files(seat):
    """Where a partner's own page-cache file may be: /tmp, else /var/tmp (a
    disk on Debian where /tmp is a tmpfs)."""
    return [f"{d}/{TAG}-pagecache-{seat}" for d in ("/tmp", "/var/tmp")]


def pagecache_own_file(seat):
    """Makes this run's own file of 12 pages where its pages can be evicted
    (not a tmpfs, whose pages are the file itself): written, synced (a dirty
    page is not evicted) and evicted, then checked to be out of the cache.
    Its path, or None where no such place can be written (a sandbox)."""
    import mmap
    page = mmap.PAGESIZE
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    for path in pagecache_own_files(seat):
        try:
            with open(path + ".part", "w+b") as f:
                f.write(bytes(12 * page))
                f.flush()
                os.fsync(f.fileno())
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
                addr = libc.mmap(None, 12 * page, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
            if not addr or addr == ctypes.c_void_p(-1).value:
                raise OSError("mmap")
            vec = ctypes.create_string_buffer(12)
            evicted = libc.mincore(ctypes.c_void_p(addr), 12 * page, vec) == 0 and not any(vec.raw)
            libc.munmap(ctypes.c_void_p(addr), 12 * page)
            if evicted:
                os.replace(path + ".part", path)
                return path
        except OSError:
            pass
        try:
            os.remove(path + ".part")
        except OSError:
            pass
    return None


def pagemap_step(seat):
    """Bit 56 of a /proc/self/pagemap entry says the page is mapped by this
    process alone. Each partner keeps mapped the pages of its 12-bit token in
    a file the other can open; the other maps all 12 and reads which are not
    exclusive."""
    import mmap
    import struct
    page = mmap.PAGESIZE

    def mapped(path):
        # Private and writable only so that ctypes can take its address; never
        # written, so the pages stay the page cache's own.
        with open(path, "rb") as f:
            return mmap.mmap(f.fileno(), 12 * page, flags=mmap.MAP_PRIVATE,
                             prot=mmap.PROT_READ | mmap.PROT_WRITE)

    if "held" not in state:
        state["held"] = []
        # Two files: this run's own in /tmp, which no other process maps (a
        # file of /usr/share may be, and then reads as all ones), where the
        # partner shares /tmp; and a file of /usr/share or of the view, which
        # a sandboxed partner sees too.
        own = pagemap_own_file(seat)
        try:
            with open(own + ".part", "wb") as f:
                f.write(bytes(12 * page))
            os.replace(own + ".part", own)
        except OSError:
            pass
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        for path in (own, unheld_file(seat)):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            for bit in range(12):
                if token(seat) >> bit & 1:
                    # A mapping per page: fault-around would map a page's
                    # cached neighbours within the same mapping.
                    at = libc.mmap(None, page, mmap.PROT_READ, mmap.MAP_SHARED, fd, bit * page)
                    if at and at != ctypes.c_void_p(-1).value:
                        # Locked where allowed: a page mapped once is not
                        # pinned, and a busy host's reclaim unmaps it.
                        libc.mlock(ctypes.c_void_p(at), page)
                        state["held"].append(at)
            os.close(fd)
    # Touched on every request: a page reclaim took (where it could not be
    # locked) is mapped here again before the partner reads.
    for at in state["held"]:
        ctypes.c_char.from_address(at).value
    partner = (seat + 3) % 6
    theirs = pagemap_own_file(partner)
    try:
        m = mapped(theirs if os.path.exists(theirs) else unheld_file(partner))
        at = ctypes.addressof(ctypes.c_char.from_buffer(m))
        got = 0
        for bit in range(12):
            m[bit * page]
        # Unbuffered: a buffered reader serves the later entries from what it
        # read at the first, before the pages were mapped (fault-around maps
        # a page's neighbours only when they are not locked at that moment).
        with open("/proc/self/pagemap", "rb", buffering=0) as pm:
            for bit in range(12):
                pm.seek((at // page + bit) * 8)
                entry = struct.unpack("<Q", pm.read(8))[0]
                if entry >> 63 & 1 and not entry >> 56 & 1:
                    got |= 1 << bit
        if got == token(partner):
            state["partner_heard"] = f"pagemap token {got}"
        else:
            state["partner_missed"] = f"last read {got:012b} for {token(partner):012b}"
    except (OSError, ValueError) as e:
        state["partner_missed"] = f"last read failed: {e}"


def pagemap_own_file(seat):
    return f"/tmp/{TAG}-pagemap-{seat}"


def litter():
    """`litter`: looks for what a bot of an earlier game left in its sandbox
    (a file in /tmp and /dev/shm, a SysV shared memory segment, an abstract
    socket, a process, a named keyring), then leaves each for the next game.
    Reports `ok` with what it found of an earlier game's, else `blocked`
    with what it left."""
    found, left = [], []
    for d in ("/tmp", "/dev/shm"):
        path = f"{d}/{TAG}-litter"
        if os.path.exists(path):
            found.append(path)
        try:
            with open(path, "w") as f:
                f.write("left\n")
            left.append(path)
        except OSError as e:
            left.append(f"{path}:{errno.errorcode.get(e.errno, e.errno)}")
    key = 0x5C4E0000 | (sum(TAG.encode()) & 0xFFFF)
    IPC_CREAT, IPC_EXCL = 0o1000, 0o2000
    if libc.shmget(key, 4096, 0o600) >= 0:
        found.append("shm")
    # Left only sandboxed (pid 2 there), so that no segment outlives an
    # unsandboxed test on the host.
    if os.getpid() == 2 and libc.shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0o600) >= 0:
        left.append("shm")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(f"\0{TAG}-litter")
        sock.listen(1)
        state["sockets"].append(sock)
        left.append("socket")
    except OSError as e:
        found.append(f"socket:{errno.errorcode.get(e.errno, e.errno)}")
    me = os.getpid()
    # Before this bot forks: any other process is an earlier game's.
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) not in (1, me):
            found.append(f"process:{pid}:{cmdline(pid)}")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(10)
        os._exit(0)
    left.append("process")
    litter_metadata(found, left)
    KEYCTL_JOIN_SESSION_KEYRING = 1
    name = f"{TAG}-litter".encode()
    if libc.syscall(250, KEYCTL_JOIN_SESSION_KEYRING, name, 0, 0, 0) >= 0:
        left.append("keyring")
    else:
        left.append(f"keyring:{errno.errorcode.get(ctypes.get_errno(), '?')}")
    report(bool(found), f"found={json.dumps(found)} left={json.dumps(left)}")


def litter_metadata(found, left):
    """What a bot could leave in the metadata of what the next bot shares
    (Landlock governs opening files, not this): an extended attribute, set
    times, the sticky bit, the owner. Sandboxed, on the sandbox's root, its
    `/dev` and the host's `/dev/null`; unsandboxed (the control, which must
    find the earlier bot's), on a file of the test's own in /tmp."""
    sandboxed = os.getpid() == 2
    targets = ["/", "/dev", "/dev/null"] if sandboxed else [f"/tmp/{TAG}-meta"]
    if not sandboxed and not os.path.exists(targets[0]):
        open(targets[0], "w").close()
    mark = 1_000_000_000 + (sum(TAG.encode()) & 0xFFFF)
    for t in targets:
        st = os.lstat(t)
        try:
            if os.getxattr(t, "user.schmier", follow_symlinks=False) == b"left":
                found.append(f"xattr:{t}")
        except OSError:
            pass
        if int(st.st_mtime) == mark:
            found.append(f"times:{t}")
        if st.st_mode & stat.S_ISVTX:
            found.append(f"mode:{t}")
        tries = [
            ("xattr", lambda: os.setxattr(t, "user.schmier", b"left", follow_symlinks=False)),
            ("now", lambda: os.utime(t)),
            ("times", lambda: os.utime(t, (mark, mark))),
            ("chmod", lambda: os.chmod(t, stat.S_IMODE(st.st_mode) | stat.S_ISVTX)),
            ("chown", lambda: os.chown(t, st.st_uid, st.st_gid)),
        ]
        left.append(f"meta:{t}:" + ",".join(f"{name}={probe(fn)}" for name, fn in tries))


def main():
    state["claims"] = 0
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "hello":
            send({"type": "hello", "name": "spy-" + MODE, "protocol": "schmier/1"})
        elif kind == "game_start":
            state["seat"] = msg["seat"]
            state["game"] = msg.get("game")  # absent in the one-request fixture
        elif kind == "deal" and MODE.startswith("remember"):
            remember_deal(msg)
        elif kind == "game_end" and MODE.startswith("remember"):
            store = ""
            if "store" in state:
                seen = dict(state["store"].stats, keys=state.pop("dentry_keys", []))
                store = f"store={json.dumps(seen, separators=(',', ':'))} "
            report(state["claims"] > 0, f"claims={state['claims']} {store}game_start.game={state['game']}")
            state["claims"] = 0
        elif kind == "request":
            if MODE.startswith("partner-"):
                partner_step()
            elif MODE == "litter" and not state["done"]:
                state["done"] = True
                litter()
            elif not state["done"] and not MODE.startswith("remember"):
                state["done"] = True
                attack()
            send({"type": "reply", "id": msg["id"], "action": first_legal(msg)})
        elif kind == "game_end" and MODE.startswith("partner-"):
            heard = state["partner_heard"]
            wrote = f" (wrote to its scratch: {state['wrote']})" if "wrote" in state else ""
            missed = f" ({state['partner_missed']})" if "partner_missed" in state else ""
            report(heard is not None, (heard or "the partner was never heard" + missed) + wrote)
            left = [f"{d}/{partner_names(state['seat'])[0]}" for d in ("/tmp", "/dev/shm")]
            own = [pagemap_own_file(state["seat"])] + pagecache_own_files(state["seat"])
            for path in left + own:
                try:
                    os.remove(path)
                except OSError:
                    pass
        elif kind == "bye":
            return


if __name__ == "__main__":
    main()
