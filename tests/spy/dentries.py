"""A store in the host's dentry cache, for `spy.py remember-dentries[-timed]`.

Looking up a name that does not exist leaves a negative dentry in the cache of
the directory's filesystem, for the whole host. A sandboxed bot sees `/usr/bin`
bound read-only from the host, the same superblock, so the names it looks up
there are cached for every later bot of the host: a bit written by `stat`.

Two ways to read one back:

- `cached`: `openat2(RESOLVE_CACHED)` fails with `ENOENT` where the negative
  dentry is cached and with `EAGAIN` where the lookup would need the
  filesystem; no timing, no errors, and the read looks nothing up, so it
  leaves the store as it was.
- `timed`: time `stat`: a cached negative dentry answers in about a third of
  the time. A read looks the name up, so it writes it too: each bit is a pair
  of names of which the writer looks up one (the faster of the two is the
  bit), and each value has versions, a reader taking version v and writing
  the value again as version v + 1 for the next reader.

Keys are a fixed name set, as an attacker's own code would carry: the tag
(a secret prefix) and the key, here a place after the dealer and a deal.
"""
import ctypes
import errno
import os
import random
import time

DIR = "/usr/bin"
CARDS = [r + s for s in "SHDC" for r in "23456789TJQKA"] + ["JK"]
BITS = 36  # six cards of six bits
VERSIONS = 64

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


RESOLVE_CACHED = 0x20
SYS_OPENAT2 = 437  # the same on every architecture


def encode(hand):
    bits = 0
    for k, card in enumerate(hand):
        index = int(card[1:]) if card.startswith("?") else CARDS.index(card)
        bits |= index << (6 * k)
    return [bits >> j & 1 for j in range(BITS)]


def decode(bits):
    value = sum(b << j for j, b in enumerate(bits))
    cards = [value >> (6 * k) & 63 for k in range(BITS // 6)]
    return [CARDS[c] if c < len(CARDS) else f"?{c}" for c in cards]


def look_up(path):
    try:
        os.stat(path)
    except OSError:
        pass


def cached(path):
    """Whether `path`'s lookup is in the dentry cache: "yes", "no", or the
    errno that refused the question."""
    how = OpenHow(os.O_RDONLY | os.O_CLOEXEC, 0, RESOLVE_CACHED)
    fd = libc.syscall(SYS_OPENAT2, -100, path.encode(), ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        os.close(fd)
        return "yes"
    err = ctypes.get_errno()
    if err == errno.ENOENT:
        return "yes"
    if err == errno.EAGAIN:
        return "no"
    return errno.errorcode.get(err, str(err))


def timed(path):
    start = time.perf_counter_ns()
    look_up(path)
    return time.perf_counter_ns() - start


class Store:
    def __init__(self, tag, how):
        self.tag, self.how = tag, how
        self.stats = {"written": 0, "read": 0, "lookups": 0, "refused": None, "read_ns": 0,
                      "markers": []}

    def name(self, key, *rest):
        return f"{DIR}/.{self.tag}-{key}-" + "-".join(map(str, rest))

    def write(self, key, hand, version=None):
        """Leaves `hand` under `key` for later bots (timed: as `version`, else
        after the first version not yet taken, which looking at takes)."""
        bits = encode(hand)
        if self.how == "cached":
            names = [self.name(key, j) for j, b in enumerate(bits) if b] + [self.name(key, "m")]
        else:
            v = self.scan(key, peek=False)[0] + 1 if version is None else version
            if v >= VERSIONS:
                return
            names = [self.name(key, v, j, b) for j, b in enumerate(bits)] + [self.name(key, v, "m", "a")]
        # The marker last: a reader that sees it finds every bit written.
        for n in names:
            look_up(n)
        self.stats["markers"].append(names[-1])
        self.stats["written"] += 1
        self.stats["lookups"] += len(names)

    def read(self, key):
        """The hand left under `key`, or None."""
        start = time.perf_counter_ns()
        try:
            if self.how == "cached":
                return self.read_cached(key)
            v, hand = self.scan(key)
            if hand is not None:
                self.write(key, hand, v + 1)  # for the next reader
            return hand
        finally:
            self.stats["read_ns"] += time.perf_counter_ns() - start

    def read_cached(self, key):
        marker = cached(self.name(key, "m"))
        if marker not in ("yes", "no"):
            self.stats["refused"] = marker
            return None
        if marker == "no":
            return None
        self.stats["read"] += 1
        return decode([cached(self.name(key, j)) == "yes" for j in range(BITS)])

    def scan(self, key, peek=True):
        """The first version of `key` not yet taken: (v, hand) where one was
        written (read only if `peek`), (v, None) where none was (each marker
        looked at is taken)."""
        for v in range(VERSIONS):
            state = self.marker(key, v)
            if state == "taken":
                continue
            if state == "written" and peek:
                self.stats["read"] += 1
                return v, decode([self.pair(self.name(key, v, j, 0), self.name(key, v, j, 1))
                                  for j in range(BITS)])
            return v, None
        return VERSIONS, None

    def marker(self, key, v):
        """A marker pair: only `a` looked up (written), both (taken: read
        before, by a reader or a writer), or neither (never written)."""
        ref = sorted(timed(f"{DIR}/.{self.tag}-ref-{random.getrandbits(64):x}") for _ in range(3))[1]
        a, b = timed(self.name(key, v, "m", "a")), timed(self.name(key, v, "m", "b"))
        fast = lambda t: t < 0.6 * ref
        if fast(a) and not fast(b):
            return "written"
        if fast(a) and fast(b):
            return "taken"
        return "unwritten"

    def pair(self, zero, one):
        """1 if `one` answers faster than `zero` (it was looked up before)."""
        if random.getrandbits(1):
            t0 = timed(zero)
            t1 = timed(one)
        else:
            t1 = timed(one)
            t0 = timed(zero)
        return int(t1 < t0)
