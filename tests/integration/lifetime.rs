//! Bots live exactly as long as the referee: not shorter (the parent-death signal
//! must not fire while the referee runs, however long it idles), not longer (see
//! the hostile and spy suites for processes left behind).

use crate::support::play;

/// A tokio blocking-pool thread ends after 10 s idle; a bot whose death signal
/// was tied to such a thread died then. Here one bot thinks for 11 s inside a
/// generous limit, so every bot idles that long mid-match; all of them must play
/// the second game as the same processes, without a fault.
#[test]
fn bots_survive_an_idle_stretch_longer_than_ten_seconds() {
    let done = play()
        .seed(5)
        .args([
            "--games",
            "2",
            "--decision-ms",
            "30000",
            "--policy",
            "lenient",
        ])
        .arg("--seat")
        .arg("1=python3 tests/hostile/bot.py sleep LIMIT_MS=22000 FRACTION=0.5 FIRST=1")
        .ok();
    for game in [1, 2] {
        let faults: Vec<_> = done
            .lines(game)
            .into_iter()
            .filter(|l| l["type"] == "fault")
            .collect();
        assert!(faults.is_empty(), "game {game}: {faults:?}");
    }
    let restarted: Vec<_> = std::fs::read_dir(done.dir.join("stderr"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("restart"))
        .collect();
    assert!(restarted.is_empty(), "no bot was restarted: {restarted:?}");
}
