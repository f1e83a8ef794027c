#!/usr/bin/env python3
"""A Schmier bot that finds the deal seed from its own first hand, for the
referee's seed tests (tests/integration/spy_seed.rs).

    python3 tests/spy/seed_search.py play|tournament [--below N] [--secret HEX] [--peek FILE]

It plays correctly (the first legal action). At its first deal it tries every
seed a person might have typed, 0 to N-1 (default 1000), as `referee play
--seed S` (`play`: game 1 of match S) or as `referee tournament --seed S`
(`tournament`: the one matchup of a three-entrant round robin, set 1), derives
the game's seed as the referee does, deals it, and keeps the candidates that
deal it its own hand. `--secret HEX` is the tournament's seed secret, if the bot
somehow knew it: it is mixed in as the referee mixes it (the control that shows
the search is right). The derivations are the referee's, written out here from
protocol/src/shuffle.rs and referee/src/seed_secret.rs.

On finding the seed it prints on stderr (the bot's log) one line

    SEED found S {json}    with every seat's hand at that deal and the stock
    SEED none              no candidate deals it this hand

and from then on, at each later deal, `SEED predicted {json}` with every hand
it expects: the tests check both against the transcripts. `--peek FILE` first
tries to read FILE (a seed secret the referee was given in a file) and says
`SEED peek ok CONTENT` or `SEED peek blocked WHY`.
"""
import json
import sys

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF
GAMMA = 0x9E3779B97F4A7C15
RANKS = "23456789TJQKA"
SUITS = "SHDC"


def card_name(i):
    return "JK" if i == 52 else RANKS[i % 13] + SUITS[i // 13]


def splitmix64(z):
    z = (z + GAMMA) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def derive_seed(parent, index):
    return splitmix64((parent + GAMMA * index) & MASK64)


def rotl(x, n):
    return ((x << n) & MASK32) | (x >> (32 - n))


def chacha_block(key_words, counter, stream, rounds):
    """One ChaCha block (rand_chacha's layout: 64-bit counter, 64-bit stream)."""
    s = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574] + list(key_words)
    s += [counter & MASK32, counter >> 32, stream & MASK32, stream >> 32]
    x = list(s)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & MASK32
        x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & MASK32
        x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & MASK32
        x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & MASK32
        x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(rounds // 2):
        qr(0, 4, 8, 12)
        qr(1, 5, 9, 13)
        qr(2, 6, 10, 14)
        qr(3, 7, 11, 15)
        qr(0, 5, 10, 15)
        qr(1, 6, 11, 12)
        qr(2, 7, 8, 13)
        qr(3, 4, 9, 14)
    return [(a + b) & MASK32 for a, b in zip(x, s)]


def words(key_bytes, stream, rounds):
    key_words = [int.from_bytes(key_bytes[i : i + 4], "little") for i in range(0, 32, 4)]
    counter = 0
    while True:
        yield from chacha_block(key_words, counter, stream, rounds)
        counter += 1


def deck_order(seed, deal):
    """protocol/src/shuffle.rs: ChaCha8 keyed by the seed, stream = deal,
    Fisher-Yates from the top with Lemire's bounded draws."""
    w = words(seed.to_bytes(8, "little") + bytes(24), deal, 8)
    deck = list(range(53))
    for i in range(52, 0, -1):
        n = i + 1
        m = next(w) * n
        if (m & MASK32) < n:
            threshold = (-n % (1 << 32)) % n
            while (m & MASK32) < threshold:
                m = next(w) * n
        j = m >> 32
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def hands_of(deck, dealer):
    hands = [[] for _ in range(6)]
    for i, card in enumerate(deck[:36]):
        hands[(dealer + 1 + i % 6) % 6].append(card_name(card))
    return [sorted(h) for h in hands], [card_name(c) for c in deck[36:]]


def mixed(seed, secret):
    """referee/src/seed_secret.rs: ChaCha20 keyed by the secret, stream = seed,
    its first 64-bit output."""
    if secret is None:
        return seed
    w = words(secret, seed, 20)
    lo, hi = next(w), next(w)
    return (hi << 32) | lo


def game_seed(mode, candidate, secret):
    if mode == "play":
        return derive_seed(candidate, 0)
    round_seed = derive_seed(mixed(candidate, secret), 0)
    return derive_seed(derive_seed(round_seed, 0), 0)


MODE = sys.argv[1]
BELOW = int(sys.argv[sys.argv.index("--below") + 1]) if "--below" in sys.argv else 1000
SECRET = bytes.fromhex(sys.argv[sys.argv.index("--secret") + 1]) if "--secret" in sys.argv else None
PEEK = sys.argv[sys.argv.index("--peek") + 1] if "--peek" in sys.argv else None
out = sys.stdout.buffer
state = {"seat": None, "seed": None, "searched": False}


def send(obj):
    out.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
    out.flush()


def first_legal(req):
    legal = req["legal"]
    if isinstance(legal, dict):
        return legal["must"] + legal["from"][: legal["min"]]
    return legal[0]


def on_deal(msg):
    seat, dealer, deal = state["seat"], msg["dealer"], msg["deal"]
    mine = sorted(msg["hand"])
    if not state["searched"]:
        state["searched"] = True
        for candidate in range(BELOW):
            seed = game_seed(MODE, candidate, SECRET)
            hands, stock = hands_of(deck_order(seed, deal - 1), dealer)
            if hands[seat] == mine:
                state["seed"] = seed
                found = {"candidate": candidate, "deal": deal, "hands": hands, "stock": stock}
                sys.stderr.write(f"SEED found {candidate} {json.dumps(found)}\n")
                break
        else:
            sys.stderr.write(f"SEED none (searched {BELOW} seeds)\n")
    elif state["seed"] is not None:
        hands, stock = hands_of(deck_order(state["seed"], deal - 1), dealer)
        sys.stderr.write("SEED predicted " + json.dumps({"deal": deal, "hands": hands}) + "\n")
    sys.stderr.flush()


def main():
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        kind = msg.get("type")
        if kind == "hello" and PEEK:
            try:
                with open(PEEK) as f:
                    text = f.read().strip()
                verdict = f"ok {text}" if text else "blocked (it reads empty)"
            except OSError as e:
                verdict = f"blocked ({e})"
            sys.stderr.write(f"SEED peek {verdict}\n")
            sys.stderr.flush()
        if kind == "hello":
            send({"type": "hello", "name": "seed-search", "protocol": "schmier/1"})
        elif kind == "game_start":
            state["seat"] = msg["seat"]
        elif kind == "deal":
            on_deal(msg)
        elif kind == "request":
            send({"type": "reply", "id": msg["id"], "action": first_legal(msg)})
        elif kind == "bye":
            return


if __name__ == "__main__":
    main()
