#!/usr/bin/env python3
"""A Schmier bot to make your own: edit `choose`. The protocol is handled by
schmier_kit.py (keep it next to this file); see its docstring for what a request
holds and what to return.

    python3 my_bot.py                                   # the referee runs it
    referee check-bot -- python3 my_bot.py              # is it a correct bot?
    referee play --team "python3 my_bot.py"             # a game against the built-in bots
"""

from schmier_kit import log, run


def choose(request):
    decision, legal, view = request["decision"], request["legal"], request["view"]
    hand = view["hand"]
    if decision == "bid":
        # Pass if we may (a stuck dealer may not: then the lowest bid).
        return "pass" if "pass" in legal else min(legal)
    if decision == "trump":
        # The suit we hold the most cards of ("JK" belongs to no suit).
        return max(legal, key=lambda suit: sum(card[1] == suit for card in hand if card != "JK"))
    if decision in ("exchange", "discard"):
        # Everything we must discard, and as few others as allowed.
        return legal["must"] + legal["from"][: legal["min"]]
    # decision == "play": any card of `legal`; here the first.
    return legal[0]


if __name__ == "__main__":
    run(choose, name="my-bot")
    log("bye")
