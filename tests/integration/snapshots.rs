//! Complete transcripts for fixed seeds, as text snapshots (one JSONL line per
//! snapshot line, so a diff reads event by event). The built-in bots are
//! deterministic, so these change only when the rules engine, the shuffle, the
//! transcript format or a built-in bot's play change — review such a diff line by
//! line. (The default lineup is used: six random bots rarely reach 21 and run into
//! the 200-deal cap, which makes a 10,000-line snapshot.)

use crate::support::play;

fn snapshot_game(seed: u64) -> String {
    play().seed(seed).ok().text(1)
}

#[test]
fn transcript_seed_1() {
    insta::assert_snapshot!(snapshot_game(1));
}

#[test]
fn transcript_seed_2() {
    insta::assert_snapshot!(snapshot_game(2));
}
