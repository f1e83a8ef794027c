#!/usr/bin/env node
/*
 * A sample Schmier bot: Node 20, no npm packages. Copy it and make it yours.
 *
 * Run it (the referee starts it as a child process and talks over stdin/stdout):
 *
 *     node sample-bots/js/bot.js            # strategy "random" (the default)
 *     node sample-bots/js/bot.js simple     # strategy "simple" (a small heuristic)
 *
 * Try it by hand: paste lines from PROTOCOL.md into its stdin. Self-tests:
 *
 *     node --test sample-bots/js/
 *
 * The protocol loop is in schmier.js (`run(choose)`: hello, a reply to every
 * request, everything else ignored, stop at bye); this file only chooses. The wire
 * protocol `schmier/1` is in PROTOCOL.md, the game in docs/RULES.md. stdout carries
 * protocol lines only, so all logging goes to stderr.
 *
 * The `action` for each `decision` (always pick from the request's `legal`):
 *     bid       "pass" or a number 3..6 from legal, e.g. legal ["pass",4,5,6] -> 4
 *     trump     a suit letter "S", "H", "D" or "C"
 *     exchange  an array of cards: all of legal.must plus k distinct cards of
 *     discard   legal.from, with legal.min <= k <= legal.max, e.g. ["4S","2C"]
 *     play      one card from legal, e.g. "9S"
 *
 * Cards are two characters, rank then suit ("AS", "TH", "2C"), or "JK" for the joker.
 *
 * Determinism: the same input lines always give the same output lines. The random
 * strategy seeds a fresh PRNG for each request from the request id and our seat, and
 * the simple strategy uses no randomness at all (it makes the same choices as
 * sample-bots/python/bot.py's).
 */
"use strict";

const { run, log } = require("./schmier.js");

const RANKS = "23456789TJQKA"; // low to high, outside trump
const SUITS = ["S", "H", "D", "C"];
const SAME_COLOUR = { S: "C", C: "S", H: "D", D: "H" };
// Inside trump, low to high: joker, 2 .. 10, left bower, right bower, Q, K, A.
const TRUMP_ORDER = ["JK", "2", "3", "4", "5", "6", "7", "8", "9", "T", "left", "right", "Q", "K", "A"];

// ---------------------------------------------------------------- card helpers

/** The jack of trump's colour, e.g. "JD" when hearts are trump. */
const leftBower = (trump) => "J" + SAME_COLOUR[trump];

/** The joker and the left bower are trumps too (RULES.md §12). */
const isTrump = (card, trump) =>
  trump != null && (card === "JK" || card[1] === trump || card === leftBower(trump));

/** The suit a card follows: trump for trumps, else its printed suit. */
const suitOf = (card, trump) => (isTrump(card, trump) ? trump : card[1]);

/** 0 (joker) .. 14 (ace) inside the trump suit. */
function trumpRank(card, trump) {
  if (card === "JK") return 0;
  if (card === "J" + trump) return TRUMP_ORDER.indexOf("right");
  if (card === leftBower(trump)) return TRUMP_ORDER.indexOf("left");
  return TRUMP_ORDER.indexOf(card[0]);
}

/** How strongly `card` competes in a trick whose led suit is `led`:
 *  any trump beats any non-trump, the led suit beats other suits (-1: can't win). */
function power(card, trump, led) {
  if (isTrump(card, trump)) return 100 + trumpRank(card, trump);
  if (card[1] === led) return RANKS.indexOf(card[0]);
  return -1;
}

/** How much we want to keep a card: trumps above everything, else by rank. */
function keepValue(card, trump) {
  return isTrump(card, trump) ? 100 + trumpRank(card, trump) : RANKS.indexOf(card[0]);
}

/** The first item with the largest / smallest key (like Python's max / min). */
function maxBy(items, key) {
  return items.reduce((best, x) => (key(x) > key(best) ? x : best));
}
function minBy(items, key) {
  return items.reduce((best, x) => (key(x) < key(best) ? x : best));
}

// ---------------------------------------------------------------- strategy "random"

/** mulberry32: a tiny 32-bit PRNG. Returns below(n): an integer in [0, n). */
function makeRng(seed) {
  let a = seed >>> 0;
  return function below(n) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Uniform among legal answers; for exchange/discard a uniform count k in
 *  [min, max], then k distinct cards of `from`, added to all of `must`. */
function randomAction(decision, legal, below) {
  if (decision === "exchange" || decision === "discard") {
    const k = legal.min + below(legal.max - legal.min + 1);
    const pool = [...legal.from];
    const chosen = [];
    for (let i = 0; i < k; i++) chosen.push(pool.splice(below(pool.length), 1)[0]);
    return [...legal.must, ...chosen];
  }
  return legal[below(legal.length)];
}

// ---------------------------------------------------------------- strategy "simple"

/** How good `suit` would be as trump: 1 per trump held, +1 more for each of
 *  the A, K and both bowers (they win tricks and points). */
function suitStrength(hand, suit) {
  const trumps = hand.filter((c) => isTrump(c, suit));
  const big = ["A" + suit, "K" + suit, "J" + suit, leftBower(suit)];
  return trumps.length + trumps.filter((c) => big.includes(c)).length;
}

/** The strongest suit for trump (ties: the first in S, H, D, C order). */
const bestSuit = (hand) => maxBy(SUITS, (s) => suitStrength(hand, s));

function simpleBid(legal, view) {
  const strength = suitStrength(view.hand, bestSuit(view.hand));
  // 0..3 -> pass, 4-5 -> 3, 6-7 -> 4, 8-9 -> 5, 10 -> 6.
  const want = strength >= 4 ? Math.min(6, Math.floor(strength / 2) + 1) : 0;
  const numbers = legal.filter((b) => b !== "pass");
  const affordable = numbers.filter((b) => b <= want);
  if (affordable.length) return Math.max(...affordable); // everyone calls once: bid what we expect to make
  if (legal.includes("pass")) return "pass";
  return Math.min(...numbers); // a stuck dealer must bid: as little as possible
}

/** Exchange / dealer discard: give away all of `must`, then the least useful
 *  cards of `from`: every non-trump below an ace if allowed, never fewer than min. */
function simpleCards(legal, view) {
  const trump = view.trump;
  const pool = [...legal.from].sort((a, b) => keepValue(a, trump) - keepValue(b, trump));
  const low = pool.filter((c) => !isTrump(c, trump) && c[0] !== "A");
  const k = Math.max(legal.min, Math.min(legal.max, low.length));
  return [...legal.must, ...pool.slice(0, k)];
}

function simplePlay(legal, view) {
  const trump = view.trump;
  const played = (view.trick && view.trick.cards) || [];
  if (played.length === 0) {
    // Leading: play our strongest card (trumps first, so high trumps lead out).
    return maxBy(legal, (c) => power(c, trump, suitOf(c, trump)));
  }
  const led = suitOf(played[0].card, trump);
  const best = maxBy(played, (p) => power(p.card, trump, led));
  const cheapest = minBy(legal, (c) => keepValue(c, trump));
  if (best.seat === view.partner) return cheapest; // partner is winning: don't waste a good card
  const toBeat = power(best.card, trump, led);
  const winners = legal.filter((c) => power(c, trump, led) > toBeat);
  if (winners.length) return minBy(winners, (c) => power(c, trump, led)); // win as cheaply as possible
  return cheapest; // can't win: throw the least useful card
}

function simpleAction(decision, legal, view, below) {
  switch (decision) {
    case "bid":
      return simpleBid(legal, view);
    case "trump":
      return maxBy(legal, (s) => suitStrength(view.hand, s));
    case "exchange":
    case "discard":
      return simpleCards(legal, view);
    case "play":
      return simplePlay(legal, view);
    default:
      return randomAction(decision, legal, below); // a decision this bot doesn't know
  }
}

const STRATEGIES = {
  random: (decision, legal, view, below) => randomAction(decision, legal, below),
  simple: simpleAction,
};

// ---------------------------------------------------------------- the protocol loop
// lives in schmier.js: this file only chooses.

/** `choose(request)` for `run`. Each request carries the whole `view`, so no
 * state; a fresh PRNG per request, seeded from the id and our seat, keeps the bot
 * deterministic. */
function makeChoose(strategy) {
  return (request) => {
    const view = request.view || {};
    const below = makeRng(request.id * 7919 + (view.seat || 0));
    return strategy(request.decision, request.legal, view, below);
  };
}

function main() {
  const strategyName = process.argv[2] || "random";
  if (!Object.hasOwn(STRATEGIES, strategyName)) {
    log(`unknown strategy ${JSON.stringify(strategyName)}; choose one of: ${Object.keys(STRATEGIES).join(", ")}`);
    process.exitCode = 2;
    return;
  }
  const onMessage = (msg) => {
    if (msg.type === "game_start") log(`game ${msg.game}: seat ${msg.seat}, partner ${msg.partner}`);
  };
  const rl = run(makeChoose(STRATEGIES[strategyName]), { name: `${strategyName}-js`, onMessage });
  rl.on("close", () => log("bye"));
}

main();
