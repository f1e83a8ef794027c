// The replay page's script: draws the frames in the page's data (written by
// the referee; see referee/src/show/html.rs) and steps through them.
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
// Each frame carries only what changed since the one before (compact.rs):
// laid over its predecessor it is the whole table again.
const NAMES = { d: "deal", D: "dealer", x: "text", v: "seat_text", a: "actor", t: "trick",
  w: "winner", n: "trick_number", b: "bids", B: "bidder", k: "bid", T: "trump", s: "scores", f: "fault" };
// `before` laid over with `delta`: a "+" key appends to the text before, a
// caption is a number in D.texts, the seats' captions are the common one and
// the seats told otherwise.
function next(before, delta) {
  const out = Object.assign({}, before);
  for (const [k, v] of Object.entries(delta)) {
    if (k[0] === "+") out[NAMES[k.slice(1)]] += v;
    else out[NAMES[k] || k] = v;
  }
  if ("x" in delta) out.text = D.texts[delta.x];
  if (delta.v) out.seat_text = [0, 1, 2, 3, 4, 5].map(s => D.texts[delta.v[s] ?? delta.v["*"]]);
  return out;
}
let whole = {};
const F = D.frames.map(d => (whole = next(whole, d)));
// Card lists are runs of two-letter codes; the trick and the auction prefix
// each entry with its seat.
const codes = s => s.match(/../g) || [];
const hand = (f, s) => codes(f["h" + s]);
const trick = f => (f.trick.match(/\d../g) || []).map(e => ({ seat: Number(e[0]), card: e.slice(1) }));
const bids = f => (f.bids.match(/\d./g) || []).map(e => ({ seat: Number(e[0]), bid: e[1] === "p" ? "pass" : e[1] }));
let step = 0;
let me = null; // null: everyone's cards; else the seat whose view is shown
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
// Screen places for seats, seat 0 at the bottom, then clockwise (left of s is s+1).
// Columns 8..278, 295..565 and 582..852 of the 860 px table (replay.css): a
// side seat never meets a centre one, and 2 above 1 (4 above 5) leave room for
// a hand of three rows.
const PLACES = [[295, 496], [8, 336], [8, 104], [295, 6], [582, 104], [582, 336]];
const TRICK_PLACES = [[120, 150], [10, 110], [10, 30], [120, 0], [230, 30], [230, 110]];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function cardEl(code) {
  if (code === "JK") { const e = el("span", "card joker", "joker"); e.dataset.card = code; return e; }
  const rank = code[0] === "T" ? "10" : code[0];
  const e = el("span", "card" + (code[1] === "H" || code[1] === "D" ? " red" : ""), rank + SUITS[code[1]]);
  e.dataset.card = code;
  return e;
}
function place(s) { return me === null ? s : (s - me + 6) % 6; }
function dealStart(k) { return F.findIndex(f => f.deal === k); }
// The last step of deal k: the one before the next deal's first, or the game's last.
function dealEnd(k) { const n = F.findIndex(f => f.deal > k); return n < 0 ? F.length - 1 : n - 1; }

const table = document.getElementById("table");
const seatBoxes = [];
for (let s = 0; s < 6; s++) {
  const box = el("section", "seat");
  box.id = "seat-" + s;
  box.dataset.seat = s;
  box.append(el("h2"), el("div", "hand"));
  table.append(box);
  seatBoxes.push(box);
}
const dealSel = document.getElementById("deal");
[...new Set(F.map(f => f.deal))].filter(k => k > 0).forEach(k => {
  const o = el("option", "", String(k)); o.value = k; dealSel.append(o);
});
const viewSel = document.getElementById("view");
for (let s = 0; s < 6; s++) {
  const o = el("option", "", "seat " + s + " (" + D.players[s] + ") only"); o.value = s; viewSel.append(o);
}
document.getElementById("title").textContent = document.title;
// A team is named by its player when both its seats have the same one.
for (let t = 0; t < 3; t++) {
  const th = document.querySelectorAll("table.scores th")[t + 1];
  if (D.players[t] === D.players[t + 3]) th.textContent = "team " + t + " · " + D.players[t];
}

function render() {
  const f = F[step];
  document.body.dataset.step = step;
  document.body.dataset.deal = f.deal;
  document.body.dataset.view = me === null ? "all" : me;
  dealSel.value = f.deal;
  viewSel.value = me === null ? "all" : me;
  // Counted from 1, as the fragment's step= counts: in the game, and in the deal.
  const inDeal = f.deal > 0 ? " · deal " + f.deal + ", step " + (step - dealStart(f.deal) + 1) : "";
  document.getElementById("counter").textContent = "step " + (step + 1) + " of " + F.length + inDeal;
  for (let s = 0; s < 6; s++) {
    const box = seatBoxes[s];
    const [x, y] = PLACES[place(s)];
    box.style.left = x + "px"; box.style.top = y + "px";
    box.classList.toggle("actor", f.actor === s);
    box.classList.toggle("me", me === s);
    const tags = [];
    if (f.dealer === s) tags.push("dealer");
    if (f.bidder === s && f.bid !== null) tags.push("bid " + f.bid);
    const h2 = box.querySelector("h2");
    h2.textContent = "seat " + s + " · " + D.players[s] + " · team " + (s % 3) + " ";
    h2.append(el("span", "tags", tags.join(", ")));
    const shown = box.querySelector(".hand");
    shown.replaceChildren();
    const cards = hand(f, s);
    shown.dataset.count = cards.length;
    if (me === null || me === s) {
      cards.forEach(c => shown.append(cardEl(c)));
    } else {
      cards.forEach(() => shown.append(el("span", "card back")));
    }
  }
  const centre = document.getElementById("centre");
  centre.querySelectorAll(".played").forEach(e => e.remove());
  const onTable = trick(f);
  onTable.forEach(p => {
    const c = cardEl(p.card);
    c.classList.add("played");
    if (f.winner === p.seat) c.classList.add("win");
    c.dataset.seat = p.seat;
    const [x, y] = TRICK_PLACES[place(p.seat)];
    c.style.left = x + "px"; c.style.top = y + "px";
    centre.append(c);
  });
  document.getElementById("trump").textContent = f.trump ? "trump " + SUITS[f.trump] : "";
  document.getElementById("trick-info").textContent =
    f.winner !== null ? "seat " + f.winner + " wins trick " + f.trick_number
    : onTable.length ? "trick " + f.trick_number : "";
  const cap = document.getElementById("caption");
  cap.textContent = (me !== null && f.seat_text) ? f.seat_text[me] : f.text;
  cap.classList.toggle("fault", f.fault);
  const auction = bids(f);
  document.getElementById("bids").textContent = auction.length
    ? "Auction: " + auction.map(b => "seat " + b.seat + " " + b.bid).join(", ")
    : "";
  for (let t = 0; t < 3; t++) document.getElementById("score-" + t).textContent = f.scores[t];
  document.getElementById("result").textContent =
    step === F.length - 1 && D.result ? "Result: " + D.result : "";
}

function go(n) { step = Math.max(0, Math.min(F.length - 1, n)); render(); }
document.getElementById("next").addEventListener("click", () => go(step + 1));
document.getElementById("prev").addEventListener("click", () => go(step - 1));
document.getElementById("first").addEventListener("click", () => go(dealStart(F[step].deal)));
dealSel.addEventListener("change", () => go(dealStart(Number(dealSel.value))));
viewSel.addEventListener("change", () => { me = viewSel.value === "all" ? null : Number(viewSel.value); render(); });
document.addEventListener("keydown", e => {
  if (e.key === "ArrowRight") go(step + 1);
  if (e.key === "ArrowLeft") go(step - 1);
});

// The fragment: #deal=3&seat=2&step=40&next=5&prev=1, applied through the controls.
// step= is the counter's number, from 1: the game's step, or with deal= the
// deal's (#deal=3&step=40: deal 3's 40th step, kept within deal 3).
function fromFragment() {
  const p = new URLSearchParams(location.hash.slice(1));
  if (p.has("seat")) { viewSel.value = p.get("seat"); viewSel.dispatchEvent(new Event("change")); }
  const deal = p.has("deal") ? Number(p.get("deal")) : null;
  if (deal !== null) { dealSel.value = deal; dealSel.dispatchEvent(new Event("change")); }
  if (p.has("step")) {
    const n = Number(p.get("step")) - 1;
    const start = deal !== null ? dealStart(deal) : -1;
    go(start < 0 ? n : Math.min(start + Math.max(n, 0), dealEnd(deal)));
  }
  for (let i = 0; i < Number(p.get("next") || 0); i++) document.getElementById("next").click();
  for (let i = 0; i < Number(p.get("prev") || 0); i++) document.getElementById("prev").click();
  render();
}
window.addEventListener("hashchange", fromFragment);
fromFragment();
