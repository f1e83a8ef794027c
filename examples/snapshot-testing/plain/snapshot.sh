#!/bin/sh
# Snapshot test for a bot in any language: play fixed seeds against the built-in
# random bots and compare the transcripts, in game terms, with the checked-in
# ones in snapshots/.
#
#   ./snapshot.sh            compare; on a change, exit 1 naming the first divergence
#   ./snapshot.sh --update   accept the new games as the snapshot
#
# REFEREE: the referee binary (default: `referee` on PATH)
# BOT:     the bot command, run from this folder (default: python3 my_bot.py)
# SNAPSHOTS: the snapshot folder (default: snapshots/ beside this script)
# OUT:     keep the new games in this folder (default: a temporary one)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
referee=${REFEREE:-referee}
bot=${BOT:-python3 my_bot.py}
snapshots=${SNAPSHOTS:-$here/snapshots}
update=
case "${1:-}" in
    --update) update=--update ;;
    "") ;;
    *) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac

if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    out=$(cd "$OUT" && pwd)
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
cd "$here"
for seed in 1 2; do
    rm -rf "$out/seed-$seed" # an earlier run's games, when OUT is kept
    # Two games per seed: the lineup rotates, so the bot plays two seats.
    "$referee" play --quiet --seed "$seed" --games 2 \
        --team "$bot" --team builtin:random --team builtin:random \
        --transcript "$out/seed-$seed" >/dev/null
done
"$referee" diff $update "$snapshots" "$out"
