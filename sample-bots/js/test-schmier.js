// Tests for schmier.js (the protocol loop) through my-bot.js, run as the referee
// runs it:   node --test sample-bots/js/
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const HELLO = { type: "hello", protocol: "schmier/1", referee: "test", limits: {} };
const VIEW = { seat: 1, hand: ["AS", "2H", "JK", "9D", "TC", "3C"], trump: null, bids: [] };

function session(args, messages) {
  const input = messages.map((m) => JSON.stringify(m) + "\n").join("");
  const out = spawnSync(process.execPath, args, { input, encoding: "utf8", timeout: 30000 });
  assert.equal(out.status, 0, out.stderr);
  return { replies: out.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)), stderr: out.stderr };
}

test("hello, a reply per request, unknown messages ignored, stop at bye", () => {
  const { replies } = session([path.join(__dirname, "my-bot.js")], [
    HELLO,
    { type: "x_from_the_future", data: 1 },
    { type: "request", id: 7, decision: "bid", legal: ["pass", 3, 4], view: VIEW, x_unknown_field: true },
    { type: "request", id: 8, decision: "exchange", legal: { must: ["2C"], from: ["AS", "2H"], min: 1, max: 1 }, view: VIEW },
    { type: "bye" },
    { type: "request", id: 9, decision: "bid", legal: ["pass"], view: VIEW },
  ]);
  assert.deepEqual(replies, [
    { type: "hello", name: "my-bot", protocol: "schmier/1" },
    { type: "reply", id: 7, action: "pass" },
    { type: "reply", id: 8, action: ["2C", "AS"] },
  ]);
});

test("a choose() that throws still answers the first legal action", () => {
  const code = `require(${JSON.stringify(path.join(__dirname, "schmier.js"))}).run(() => { throw new Error("boom"); }, { name: "broken" });`;
  const { replies, stderr } = session(["-e", code], [
    HELLO,
    { type: "request", id: 3, decision: "play", legal: ["9D", "TC"], view: VIEW },
  ]);
  assert.deepEqual(replies[1], { type: "reply", id: 3, action: "9D" });
  assert.match(stderr, /boom/);
});
