/*
 * The protocol loop of a Schmier bot, so that your bot is one function.
 * Node 20, no packages; copy this file next to your bot.
 *
 *     const { run } = require("./schmier.js");
 *     run((request) => request.legal[0], { name: "my-bot" });  // see below for `legal`
 *
 * `run(choose, { name, onMessage })` speaks protocol `schmier/1` (PROTOCOL.md) on
 * stdin/stdout: it answers the referee's `hello`, calls `choose(request)` for
 * every `request` and sends what it returns as the reply's `action`, ignores
 * every other message (or hands it to `onMessage(msg)`: game_start, events,
 * faults, game_end, message types from later protocol versions), and stops at
 * `bye` or when stdin ends.
 *
 * `request` is the referee's message:
 *     request.decision   "bid", "trump", "exchange", "discard" or "play"
 *     request.legal      every legal answer:
 *         bid       e.g. ["pass", 4, 5, 6]     -> return one: "pass" or a number
 *         trump     ["S", "H", "D", "C"]       -> return one letter
 *         exchange  {must: [...], from: [...], min: m, max: n}
 *         discard     -> return an array: all of `must` plus m..n distinct cards of `from`
 *         play      e.g. ["4S", "9S"]          -> return one card
 *     request.view       everything your seat knows: hand, trump, bids, trick, tricks, scores...
 *     request.id, request.time_ms
 *
 * A bid is a JSON number (return 4, not "4"). Cards are "AS", "TH", "2C", ... and
 * "JK" for the joker; the joker and the left bower are trumps (docs/RULES.md §12).
 *
 * If `choose` throws, `run` logs the error and answers with `fallback(request)`
 * (the first legal answer): a bug costs a bad move, not a fault. Log with
 * `log(...)` (stderr): stdout carries protocol lines only.
 */
"use strict";

const readline = require("node:readline");

const PROTOCOL = "schmier/1";

/** Diagnostics go to stderr: the referee keeps them in a log file per bot. */
function log(...args) {
  console.error("[bot]", ...args);
}

/** One compact JSON object per line (no flush needed; never process.exit() after it). */
function send(msg) {
  process.stdout.write(JSON.stringify(msg) + "\n");
}

/** The first legal answer: `must` plus the fewest cards of `from`, else legal[0]. */
function fallback(request) {
  const legal = request.legal;
  if (!Array.isArray(legal)) return [...legal.must, ...legal.from.slice(0, legal.min)];
  return legal[0];
}

function run(choose, { name = "js-bot", onMessage = null } = {}) {
  // The referee went away (EPIPE): nothing left to say.
  process.stdout.on("error", () => process.exit(0));
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let done = false;
  rl.on("line", (line) => {
    if (done || !line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
      if (msg === null || typeof msg !== "object" || Array.isArray(msg)) throw new Error("not a JSON object");
    } catch (e) {
      log("ignoring a malformed line:", e.message, line.slice(0, 200));
      return;
    }
    try {
      if (msg.type === "hello") {
        if (msg.protocol !== PROTOCOL) log("the referee speaks", msg.protocol, "but this bot", PROTOCOL);
        send({ type: "hello", name, protocol: PROTOCOL });
      } else if (msg.type === "request") {
        let action;
        try {
          action = choose(msg);
        } catch (e) {
          log("choose() failed, playing the first legal answer:", e.stack);
          action = fallback(msg);
        }
        send({ type: "reply", id: msg.id, action });
      } else if (msg.type === "bye") {
        done = true;
        rl.close(); // stop reading; Node exits once stdout has drained
        process.stdin.destroy();
      } else if (onMessage) {
        onMessage(msg);
      }
    } catch (e) {
      // A message of an unexpected shape: log it, keep playing.
      log("error handling a", msg.type, "message:", e.stack);
    }
  });
  return rl;
}

module.exports = { run, log, send, fallback, PROTOCOL };
