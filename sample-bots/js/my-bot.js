#!/usr/bin/env node
/*
 * A Schmier bot to make your own: edit `choose`. The protocol is handled by
 * schmier.js (keep it next to this file); see its header for what a request holds
 * and what to return.
 *
 *     node my-bot.js                                  # the referee runs it
 *     referee check-bot -- node my-bot.js             # is it a correct bot?
 *     referee play --team "node my-bot.js"            # a game against the built-in bots
 */
"use strict";

const { run } = require("./schmier.js");

function choose(request) {
  const { decision, legal, view } = request;
  const hand = view.hand;
  switch (decision) {
    case "bid":
      // Pass if we may (a stuck dealer may not: then the lowest bid).
      return legal.includes("pass") ? "pass" : Math.min(...legal);
    case "trump": {
      // The suit we hold the most cards of ("JK" belongs to no suit).
      const count = (suit) => hand.filter((card) => card !== "JK" && card[1] === suit).length;
      return legal.reduce((best, suit) => (count(suit) > count(best) ? suit : best));
    }
    case "exchange":
    case "discard":
      // Everything we must discard, and as few others as allowed.
      return [...legal.must, ...legal.from.slice(0, legal.min)];
    default:
      // "play": any card of `legal`; here the first.
      return legal[0];
  }
}

run(choose, { name: "my-bot" });
