// Self-tests for bot.js: they run it as a subprocess on hand-written sessions.
//
//     node --test sample-bots/js/        (from the repo root; Node 20, no packages)
//
// The name matters: `node --test <dir>` only runs files named like test-*.js,
// *.test.js or *_test.js (test_bot.js would be silently skipped).
//
// Keep them passing when you change the bot.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const { spawn, spawnSync } = require("node:child_process");

const BOT = path.join(__dirname, "bot.js");
const STRATEGIES = ["random", "simple"];

const line = (msg) => JSON.stringify(msg) + "\n";

const HELLO = {
  type: "hello", protocol: "schmier/1", referee: "schmier-referee 0.1.0",
  limits: { startup_ms: 10000, decision_ms: 1000, max_line_bytes: 65536 },
};
const GAME_START = {
  type: "game_start", game: 1, seat: 2, team: 2, partner: 5, players: ["a", "b", "c", "d", "e", "f"],
  rules: { stick_the_dealer: false, trump_anytime: false, redeal_limit: 10, target: 21, hand_cap: 200 },
};
const DEAL = { type: "deal", deal: 1, dealer: 4, hand: ["4S", "9S", "KH", "JD", "5C", "JK"] };
const BYE = { type: "bye", reason: "session over" };

/** A realistic `view` for seat 2 (dealer 4), with some fields changed. */
function view(changes = {}) {
  return {
    seat: 2, team: 2, partner: 5, deal: 1, dealer: 4, scores: [0, 0, 0], target: 21,
    hand: ["4S", "9S", "KH", "JD", "5C", "JK"],
    bids: [{ seat: 5, bid: "pass" }, { seat: 0, bid: "pass" }, { seat: 1, bid: "pass" }],
    bidder: null, bid: null, trump: null, exchanges: [], dealer_pickup: null,
    own_exchange: null, trick: null, tricks: [],
    ...changes,
  };
}

const request = (id, decision, legal, v) => ({ type: "request", id, decision, legal, time_ms: 1000, view: v });

const AFTER_BIDS = {
  bids: [{ seat: 5, bid: "pass" }, { seat: 0, bid: "pass" }, { seat: 1, bid: "pass" },
    { seat: 2, bid: 3 }, { seat: 3, bid: "pass" }, { seat: 4, bid: "pass" }],
  bidder: 2, bid: 3,
};
const REQUESTS = [
  request(1, "bid", ["pass", 3, 4, 5, 6], view()),
  request(2, "trump", ["S", "H", "D", "C"], view(AFTER_BIDS)),
  request(3, "exchange", { must: [], from: ["4S", "9S"], min: 0, max: 2 },
    view({ ...AFTER_BIDS, trump: "S", hand: ["4S", "9S", "KH", "JD", "5C", "JK"] })),
  request(4, "discard", { must: ["2C"], from: ["3H", "4H"], min: 1, max: 1 },
    view({
      ...AFTER_BIDS, trump: "H", dealer: 2, dealer_pickup: 2,
      hand: ["AH", "KH", "QH", "JH", "JD", "4H", "3H", "2H", "JK", "2C"],
      own_exchange: { discarded: [], drawn: ["3H", "2C"] },
      exchanges: [3, 4, 5, 0, 1].map((seat) => ({ seat, count: 3 })),
    })),
  request(5, "play", ["4S", "9S"],
    view({ ...AFTER_BIDS, trump: "H", dealer_pickup: 5, trick: { leader: 1, cards: [{ seat: 1, card: "7S" }] } })),
];
const SESSION = [HELLO, GAME_START, DEAL, { type: "bid", seat: 5, bid: "pass" }, ...REQUESTS, BYE];

/** Run the bot on `input` (string or Buffer); return the process result and stdout messages. */
function run(args, input) {
  const proc = spawnSync(process.execPath, [BOT, ...args], { input, timeout: 30000 });
  const out = proc.stdout.toString().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  return { proc, out };
}

function session(strategy, messages) {
  const result = run([strategy], messages.map(line).join(""));
  assert.equal(result.proc.status, 0, result.proc.stderr.toString());
  return result;
}

/** Whether `action` is a legal answer, as PROTOCOL.md defines it. */
function isLegal(decision, legal, action) {
  if (decision === "exchange" || decision === "discard") {
    if (!Array.isArray(action) || new Set(action).size !== action.length) return false;
    const rest = action.filter((c) => !legal.must.includes(c));
    return legal.must.every((c) => action.includes(c)) && rest.every((c) => legal.from.includes(c))
      && legal.min <= rest.length && rest.length <= legal.max;
  }
  return legal.includes(action); // strict equality: 4 and "4" differ
}

function checkReplies(requests, replies) {
  assert.deepEqual(replies.map((r) => r.id), requests.map((q) => q.id));
  requests.forEach((q, i) => {
    assert.equal(replies[i].type, "reply");
    assert.ok(isLegal(q.decision, q.legal, replies[i].action),
      `${q.decision}: ${JSON.stringify(replies[i].action)} not in ${JSON.stringify(q.legal)}`);
  });
}

for (const strategy of STRATEGIES) {
  test(`${strategy}: answers hello, then every request legally`, () => {
    const { out } = session(strategy, SESSION);
    assert.deepEqual(out[0], { type: "hello", name: `${strategy}-js`, protocol: "schmier/1" });
    checkReplies(REQUESTS, out.slice(1));
  });

  test(`${strategy}: same input, same output`, () => {
    assert.equal(session(strategy, SESSION).proc.stdout.toString(), session(strategy, SESSION).proc.stdout.toString());
  });

  test(`${strategy}: ignores unknown and malformed lines`, () => {
    const noise = '\nnot json at all\n[1,2,3]\n"hello"\n{"no_type":1}\n{"type":"mystery","x":[1,2]}\n'
      + '{"type":"fault","seat":1,"fault":"timeout","replaced":false}\n';
    const text = line({ ...HELLO, extra: { new: "field" } }) + noise + line(REQUESTS[0]) + noise
      + line({ ...REQUESTS[4], future_field: 42 }) + line(BYE);
    const { proc, out } = run([strategy], Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xfe, 0x0a])]));
    assert.equal(proc.status, 0);
    assert.equal(out[0].type, "hello");
    checkReplies([REQUESTS[0], REQUESTS[4]], out.slice(1));
    assert.match(proc.stderr.toString(), /malformed/); // logged, on stderr only
  });

  test(`${strategy}: stops at bye, and at end of input`, () => {
    assert.equal(session(strategy, [HELLO, BYE, REQUESTS[0]]).out.length, 1); // nothing after bye
    assert.equal(session(strategy, [HELLO, REQUESTS[0]]).out.length, 2); // EOF, no bye
  });

  test(`${strategy}: a stuck dealer bids`, () => {
    const stuck = request(9, "bid", [3, 4, 5, 6], view({ hand: ["2S", "3H", "4D", "5C", "6S", "7H"] }));
    checkReplies([stuck], session(strategy, [HELLO, stuck]).out.slice(1));
  });
}

test("exits on bye while stdin stays open", async () => {
  const child = spawn(process.execPath, [BOT], { stdio: ["pipe", "pipe", "ignore"] });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  child.stdin.write(line(HELLO) + line(BYE));
  const timer = setTimeout(() => child.kill(), 10000);
  assert.equal(await exited, 0);
  clearTimeout(timer);
  child.stdin.destroy();
});

test("random: legal and varied across ids", () => {
  const requests = [];
  for (let i = 0; i < 60; i++) for (const q of REQUESTS) requests.push({ ...q, id: q.id + 10 * i });
  const { out } = session("random", [HELLO, ...requests]);
  checkReplies(requests, out.slice(1));
  for (const decision of ["bid", "trump", "exchange", "play"]) {
    const actions = new Set(requests.flatMap((q, i) => (q.decision === decision ? [JSON.stringify(out[i + 1].action)] : [])));
    assert.ok(actions.size > 1, decision);
  }
});

test("simple: the heuristic's choices", () => {
  const strong = ["AH", "KH", "JH", "JD", "5H", "2C"];
  const lead = view({ ...AFTER_BIDS, trump: "H", hand: strong, trick: { leader: 2, cards: [] } });
  const partnerWins = view({
    ...AFTER_BIDS, trump: "H", hand: ["4S", "AS", "KH", "JD", "5C", "JK"],
    trick: { leader: 5, cards: [{ seat: 5, card: "KS" }, { seat: 0, card: "3S" }, { seat: 1, card: "9S" }] },
  });
  const opponentWins = { ...partnerWins, trick: { leader: 1, cards: [{ seat: 1, card: "QS" }] } };
  const cases = [ // [request, expected action]
    [request(1, "bid", ["pass", 3, 4, 5, 6], view({ hand: strong })), 5],
    [request(2, "bid", ["pass", 3, 4, 5, 6], view({ hand: ["2S", "3H", "4D", "5C", "6S", "7H"] })), "pass"],
    [request(3, "trump", ["S", "H", "D", "C"], view({ hand: strong })), "H"],
    [request(4, "exchange", { must: [], from: ["AS", "9S", "2C"], min: 0, max: 3 },
      view({ trump: "H", hand: ["AS", "9S", "2C", "KH", "JD", "JK"] })), ["2C", "9S"]],
    [request(5, "play", strong, lead), "AH"],
    [request(6, "play", ["4S", "AS"], partnerWins), "4S"],
    [request(7, "play", ["4S", "AS"], opponentWins), "AS"],
  ];
  const { out } = session("simple", [HELLO, ...cases.map(([q]) => q)]);
  checkReplies(cases.map(([q]) => q), out.slice(1));
  assert.deepEqual(out.slice(1).map((r) => r.action), cases.map(([, want]) => want));
});

test("an unknown strategy is an error", () => {
  const { proc, out } = run(["no-such-strategy"], line(HELLO));
  assert.equal(proc.status, 2);
  assert.deepEqual(out, []);
});
