#!/usr/bin/env python3
"""A sample Schmier bot: Python 3, standard library only. Copy it and make it yours.

Run it (the referee starts it as a child process and talks over stdin/stdout):

    python3 sample-bots/python/bot.py            # strategy "random" (the default)
    python3 sample-bots/python/bot.py simple     # strategy "simple" (a small heuristic)

Try it by hand: paste lines from PROTOCOL.md into its stdin. Self-tests:

    python3 -m unittest discover -s sample-bots/python

The protocol loop is in schmier_kit.py (`run(choose)`: hello, a reply to every
request, everything else ignored, stop at bye); this file only chooses. The wire
protocol `schmier/1` is in PROTOCOL.md, the game in docs/RULES.md. stdout carries
protocol lines only, so all logging goes to stderr.

The `action` for each `decision` (always pick from the request's `legal`):
    bid       "pass" or a number 3..6 from legal, e.g. legal ["pass",4,5,6] -> 4
    trump     a suit letter "S", "H", "D" or "C"
    exchange  an array of cards: all of legal.must plus k distinct cards of
    discard   legal.from, with legal.min <= k <= legal.max, e.g. ["4S","2C"]
    play      one card from legal, e.g. "9S"

Cards are two characters, rank then suit ("AS", "TH", "2C"), or "JK" for the joker.

Determinism: the same input lines always give the same output lines. The random
strategy seeds a fresh PRNG for each request from the request id and our seat, and
the simple strategy uses no randomness at all.
"""

import random
import sys

from schmier_kit import log, run

RANKS = "23456789TJQKA"  # low to high, outside trump
SUITS = "SHDC"
SAME_COLOUR = {"S": "C", "C": "S", "H": "D", "D": "H"}
# Inside trump, low to high: joker, 2 .. 10, left bower, right bower, Q, K, A.
TRUMP_ORDER = ["JK", "2", "3", "4", "5", "6", "7", "8", "9", "T", "left", "right", "Q", "K", "A"]


# ---------------------------------------------------------------- card helpers

def left_bower(trump):
    """The jack of trump's colour, e.g. "JD" when hearts are trump."""
    return "J" + SAME_COLOUR[trump]


def is_trump(card, trump):
    """The joker and the left bower are trumps too (RULES.md §12)."""
    return trump is not None and (card == "JK" or card[1] == trump or card == left_bower(trump))


def suit_of(card, trump):
    """The suit a card follows: trump for trumps, else its printed suit."""
    return trump if is_trump(card, trump) else card[1]


def trump_rank(card, trump):
    """0 (joker) .. 14 (ace) inside the trump suit."""
    if card == "JK":
        return 0
    if card == "J" + trump:
        return TRUMP_ORDER.index("right")
    if card == left_bower(trump):
        return TRUMP_ORDER.index("left")
    return TRUMP_ORDER.index(card[0])


def power(card, trump, led):
    """How strongly `card` competes in a trick whose led suit is `led`:
    any trump beats any non-trump, the led suit beats other suits (-1: can't win)."""
    if is_trump(card, trump):
        return 100 + trump_rank(card, trump)
    if card[1] == led:
        return RANKS.index(card[0])
    return -1


def keep_value(card, trump):
    """How much we want to keep a card: trumps above everything, else by rank."""
    if is_trump(card, trump):
        return 100 + trump_rank(card, trump)
    return RANKS.index(card[0])


# ---------------------------------------------------------------- strategy "random"

def random_action(decision, legal, rng):
    """Uniform among legal answers; for exchange/discard a uniform count k in
    [min, max], then k distinct cards of `from`, added to all of `must`."""
    if decision in ("exchange", "discard"):
        k = rng.randint(legal["min"], legal["max"])
        return list(legal["must"]) + rng.sample(legal["from"], k)
    return rng.choice(legal)


# ---------------------------------------------------------------- strategy "simple"

def suit_strength(hand, suit):
    """How good `suit` would be as trump: 1 per trump held, +1 more for each of
    the A, K and both bowers (they win tricks and points)."""
    trumps = [c for c in hand if is_trump(c, suit)]
    big = {"A" + suit, "K" + suit, "J" + suit, left_bower(suit)}
    return len(trumps) + len(big.intersection(trumps))


def best_suit(hand):
    """The strongest suit for trump (ties: the first in S, H, D, C order)."""
    return max(SUITS, key=lambda s: suit_strength(hand, s))


def simple_bid(legal, view):
    strength = suit_strength(view["hand"], best_suit(view["hand"]))
    # 0..3 -> pass, 4-5 -> 3, 6-7 -> 4, 8-9 -> 5, 10 -> 6.
    want = min(6, strength // 2 + 1) if strength >= 4 else 0
    numbers = [b for b in legal if b != "pass"]
    affordable = [b for b in numbers if b <= want]
    if affordable:
        return max(affordable)  # everyone calls once: bid what we expect to make
    if "pass" in legal:
        return "pass"
    return min(numbers)  # a stuck dealer must bid: as little as possible


def simple_cards(legal, view):
    """Exchange / dealer discard: give away all of `must`, then the least useful
    cards of `from`: every non-trump below an ace if allowed, never fewer than min."""
    trump = view["trump"]
    pool = sorted(legal["from"], key=lambda c: keep_value(c, trump))
    low = [c for c in pool if not is_trump(c, trump) and c[0] != "A"]
    k = max(legal["min"], min(legal["max"], len(low)))
    return list(legal["must"]) + pool[:k]


def simple_play(legal, view):
    trump = view["trump"]
    played = (view.get("trick") or {}).get("cards") or []
    if not played:
        # Leading: play our strongest card (trumps first, so high trumps lead out).
        return max(legal, key=lambda c: power(c, trump, suit_of(c, trump)))
    led = suit_of(played[0]["card"], trump)
    best = max(played, key=lambda p: power(p["card"], trump, led))
    cheapest = min(legal, key=lambda c: keep_value(c, trump))
    if best["seat"] == view["partner"]:
        return cheapest  # partner is winning: don't waste a good card
    to_beat = power(best["card"], trump, led)
    winners = [c for c in legal if power(c, trump, led) > to_beat]
    if winners:
        return min(winners, key=lambda c: power(c, trump, led))  # win as cheaply as possible
    return cheapest  # can't win: throw the least useful card


def simple_action(decision, legal, view, rng):
    if decision == "bid":
        return simple_bid(legal, view)
    if decision == "trump":
        return max(legal, key=lambda s: suit_strength(view["hand"], s))
    if decision in ("exchange", "discard"):
        return simple_cards(legal, view)
    if decision == "play":
        return simple_play(legal, view)
    return random_action(decision, legal, rng)  # a decision this bot doesn't know


STRATEGIES = {
    "random": lambda decision, legal, view, rng: random_action(decision, legal, rng),
    "simple": simple_action,
}


# ---------------------------------------------------------------- the protocol loop
# lives in schmier_kit.py: this file only chooses.

def make_choose(strategy):
    """`choose(request)` for `run`. Each request carries the whole `view`, so no
    state; a fresh PRNG per request, seeded with an int (stable across Python
    versions), keeps the bot deterministic."""
    def choose(request):
        view = request.get("view") or {}
        rng = random.Random(request["id"] * 7919 + view.get("seat", 0))
        return strategy(request["decision"], request["legal"], view, rng)
    return choose


def main():
    strategy_name = sys.argv[1] if len(sys.argv) > 1 else "random"
    if strategy_name not in STRATEGIES:
        log(f"unknown strategy {strategy_name!r}; choose one of: {', '.join(STRATEGIES)}")
        sys.exit(2)

    def on_message(msg):
        if msg.get("type") == "game_start":
            log(f"game {msg.get('game')}: seat {msg.get('seat')}, partner {msg.get('partner')}")

    run(make_choose(STRATEGIES[strategy_name]), name=f"{strategy_name}-py", on_message=on_message)
    log("bye")


if __name__ == "__main__":
    main()
