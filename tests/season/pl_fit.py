#!/usr/bin/env python3
"""An independent Plackett-Luce fit of a season's games, for
tests/integration/season_e2e.rs and season_cluster.rs: reads the games of
DIR/season.db with sqlite3, or with `-` the outcome column of a season's
finished sets' games (a JSON text a line, as `psql -tA` prints them) from
stdin, and prints {"VERSION_ID": rating, ...} as JSON.

The model is the one docs/organisers.md ("The rating", "A season's ratings")
states, written here from that text and not from the referee's code:
- every game of every finished set counts; each version is its own entrant;
- a game's ranking of its three teams (team positions, first to last) has
  probability g1/(g1+g2+g3) * g2/(g2+g3); a team that forfeited ranks last,
  and two forfeiters are not compared (two forfeits: the first factor only,
  three: nothing);
- prior: each entrant one virtual win and one virtual loss against a virtual
  entrant of strength 1, the factor g/(g+1)^2;
- reported: 400*log10(g) minus the mean of that over the versions that played.

The maximum of likelihood x prior is found by Newton's method on ln g (the
referee uses minorisation-maximisation), so the two agree only if both find
the same maximum of the same model.
"""

import json
import math
import sqlite3
import sys


# The games that count: every game of every finished set.
COUNTED = (
    "SELECT g.outcome FROM games g JOIN sets s ON s.id = g.set_id "
    "WHERE s.finished IS NOT NULL ORDER BY g.set_id, g.game"
)


def outcomes(source):
    if source == "-":
        return [line for line in sys.stdin.read().splitlines() if line.strip()]
    db = sqlite3.connect(f"file:{source}/season.db?mode=ro", uri=True)
    return [text for (text,) in db.execute(COUNTED)]


def games(texts):
    for text in texts:
        o = json.loads(text)
        teams, forfeited = o["teams"], set(o["forfeited"])
        clean = [teams[t] for t in o["ranking"] if t not in forfeited]
        last = [teams[t] for t in o["ranking"] if t in forfeited]
        yield clean + last, min(len(clean), 2)


def log_posterior_derivatives(theta, played):
    """Gradient and Hessian of the log posterior in theta = ln g."""
    n = len(theta)
    grad = [0.0] * n
    hess = [[0.0] * n for _ in range(n)]
    for i in range(n):
        # Prior: theta - 2 ln(1 + e^theta).
        p = 1.0 / (1.0 + math.exp(-theta[i]))
        grad[i] += 1.0 - 2.0 * p
        hess[i][i] -= 2.0 * p * (1.0 - p)
    for order, choices in played:
        for k in range(choices):
            rest = order[k:]
            w = [math.exp(theta[j]) for j in rest]
            total = sum(w)
            q = [x / total for x in w]
            grad[order[k]] += 1.0
            for a, qa in zip(rest, q):
                grad[a] -= qa
                hess[a][a] -= qa
                for b, qb in zip(rest, q):
                    hess[a][b] += qa * qb
    return grad, hess


def solve(a, b):
    """a x = b by Gaussian elimination with partial pivoting."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def main():
    raw = list(games(outcomes(sys.argv[1])))
    versions = sorted({v for order, _ in raw for v in order})
    index = {v: i for i, v in enumerate(versions)}
    played = [([index[v] for v in order], choices) for order, choices in raw]
    theta = [0.0] * len(versions)
    for _ in range(200):
        grad, hess = log_posterior_derivatives(theta, played)
        step = solve([[-x for x in row] for row in hess], grad)
        # Halve a step that would overshoot far (the posterior is concave).
        scale = min(1.0, 2.0 / max(abs(s) for s in step)) if step else 1.0
        theta = [t + scale * s for t, s in zip(theta, step)]
        if max((abs(s) for s in step), default=0.0) < 1e-12:
            break
    points = [400.0 * t / math.log(10.0) for t in theta]
    mean = sum(points) / len(points)
    print(json.dumps({str(v): p - mean for v, p in zip(versions, points)}))


if __name__ == "__main__":
    main()
