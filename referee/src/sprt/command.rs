//! `referee sprt` at the command boundary: the runtime, signals, what is
//! printed, and the exit status (0 when the test ended, whatever its verdict;
//! 2 for bad input or a failure, from `main`; 128 + the signal, 130 for Ctrl-C,
//! when interrupted).

use std::process::ExitCode;

use super::args::SprtConfig;
use super::run::Ended;

pub fn main(mut cfg: SprtConfig) -> anyhow::Result<ExitCode> {
    // The coordinator's runtime: each table runs on a thread of its own
    // (tournament/pool.rs).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let dir = &cfg.tournament.out;
    // One run per folder, from before anything looks at it (`lock.rs`).
    let _lock = crate::lock::hold(
        &dir.display().to_string(),
        dir,
        &dir.join(crate::layout::LOCK),
    )?;
    let fresh = !crate::layout::holds_anything(dir);
    let hub = match &cfg.tournament.remote {
        Some(spec) => Some(crate::remote::announce::serve(
            spec,
            &dir.join(crate::layout::TOKENS),
        )?),
        None => None,
    };
    cfg.tournament.table.isolation.remote.clone_from(&hub);
    let ended = runtime.block_on(async {
        crate::bot::install_cleanup();
        crate::shutdown::cancel_on_signals(cancel.clone());
        super::run::run(&cfg, &cancel).await
    });
    if let Some(hub) = &hub {
        hub.close();
    }
    let dir = &cfg.tournament.out;
    if ended.is_err() && fresh {
        // Nothing half-done blocks the corrected rerun.
        crate::tournament::discard_unplayed(dir);
    }
    match ended? {
        Ended::Done { report, discarded } => {
            if let Some(said) = report.forfeits.text(report.games) {
                eprintln!(
                    "referee: warning: {said}; each counts the worst duplicate score of its \
                     set (its faults are in standings.json, each game's in games/)"
                );
            }
            if discarded > 0 && !cfg.tournament.quiet {
                eprintln!(
                    "referee: {discarded} game(s) finished past the deciding set were discarded \
                     (not counted, files removed), as were any still under way"
                );
            }
            if cfg.json {
                print!("{}", String::from_utf8_lossy(&report.json()));
            } else {
                println!("{}", crate::names::printable_lines(&report.line()));
                println!(
                    "seed {}, seed secret {}: every set's deal followed from both; `--seed {} \
                     --seed-secret {}` deals them again",
                    report.seed, report.seed_secret, report.seed, report.seed_secret
                );
                println!(
                    "files in {}/: sprt.json, sprt.html (the LLR chart), standings.json, games/",
                    dir.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Ended::Interrupted { sets } => {
            eprintln!(
                "referee: interrupted after {sets} counted set(s); finished games are journaled, \
                 games in flight were discarded. Resume with:\n  {}",
                resume_command(&cfg)
            );
            Ok(ExitCode::from(
                crate::shutdown::signal_exit_code().unwrap_or(130),
            ))
        }
    }
}

/// This very command line with `--resume`, and the seed and directory made
/// explicit (a drawn seed is not on it).
fn resume_command(cfg: &SprtConfig) -> String {
    let mut args: Vec<String> = std::env::args().collect();
    let has = |flag: &str, args: &[String]| {
        args.iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    if !has("--seed", &args) {
        args.extend(["--seed".into(), cfg.tournament.seed.to_string()]);
    }
    if !has("--out", &args) {
        args.extend(["--out".into(), cfg.tournament.out.display().to_string()]);
    }
    if !has("--resume", &args) {
        args.push("--resume".into());
    }
    shlex::try_join(args.iter().map(String::as_str)).unwrap_or_else(|_| args.join(" "))
}
