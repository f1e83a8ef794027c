use std::process::ExitCode;

use clap::Parser;

use referee::cli::{Cli, Command};
use referee::config::PlayConfig;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    // No subcommand: `play` with every default.
    let command = cli
        .command
        .or_else(|| Cli::parse_from(["referee", "play"]).command);
    let result = match command.expect("play parses") {
        Command::Bot { name } => referee::builtin::run(&name).map(|()| ExitCode::SUCCESS),
        Command::Verify { files } => Ok(verify(&files)),
        Command::Play(args) => args.validate().and_then(play),
        Command::Tournament(args) => args.validate().and_then(tournament),
        Command::Merge { dirs, out } => merge(&dirs, &out),
    };
    result.unwrap_or_else(|e| {
        eprintln!("referee: {e:#}");
        ExitCode::from(2)
    })
}

fn play(cfg: PlayConfig) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let summary = runtime.block_on(async {
        referee::bot::install_cleanup();
        referee::shutdown::cancel_on_signals(cancel.clone());
        if !cfg.quiet {
            eprintln!(
                "referee: seed {} — {} game(s), transcripts in {}",
                cfg.seed,
                cfg.games,
                cfg.output.describe()
            );
        }
        referee::session::run(&cfg, &cancel).await
    });
    let summary = match summary {
        Err(e) if e.is::<referee::session::Interrupted>() => {
            eprintln!("referee: interrupted; every bot process was ended. Completed games' transcripts are kept; the game in progress was left as *.partial.");
            let code = referee::shutdown::signal_exit_code().unwrap_or(130);
            return Ok(ExitCode::from(code));
        }
        other => other?,
    };
    referee::report::print(&cfg, &summary);
    Ok(ExitCode::SUCCESS)
}

fn tournament(cfg: referee::tournament::TournamentConfig) -> anyhow::Result<ExitCode> {
    use referee::tournament::Ended;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cfg.jobs.min(cores).max(1))
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let ended = runtime.block_on(async {
        referee::bot::install_cleanup();
        referee::shutdown::cancel_on_signals(cancel.clone());
        referee::tournament::run(&cfg, &cancel).await
    })?;
    match ended {
        Ended::Complete(standings) => {
            print!("{}", standings.table());
            println!(
                "{} games; standings in {}/standings.json and standings.csv",
                standings.games,
                cfg.out.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Ended::Interrupted(standings) => {
            print!("{}", standings.table());
            eprintln!(
                "referee: interrupted after {} recorded games; games in flight were discarded. Resume with:\n  {}",
                standings.games,
                resume_command(&cfg)
            );
            Ok(ExitCode::from(
                referee::shutdown::signal_exit_code().unwrap_or(130),
            ))
        }
    }
}

/// This very command line with `--resume`, and the seed and directory made explicit.
fn resume_command(cfg: &referee::tournament::TournamentConfig) -> String {
    let mut args: Vec<String> = std::env::args().collect();
    let has = |flag: &str, args: &[String]| {
        args.iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    if !has("--seed", &args) {
        args.extend(["--seed".into(), cfg.seed.to_string()]);
    }
    if !has("--out", &args) {
        args.extend(["--out".into(), cfg.out.display().to_string()]);
    }
    if !has("--resume", &args) {
        args.push("--resume".into());
    }
    shlex::try_join(args.iter().map(String::as_str)).unwrap_or_else(|_| args.join(" "))
}

fn merge(dirs: &[std::path::PathBuf], out: &std::path::Path) -> anyhow::Result<ExitCode> {
    let standings = referee::tournament::merge(dirs, out)?;
    print!("{}", standings.table());
    println!(
        "{} games from {} shards; standings in {}/standings.json and standings.csv",
        standings.games,
        dirs.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn verify(files: &[std::path::PathBuf]) -> ExitCode {
    let mut bad = 0;
    for f in files {
        match referee::verify::verify_file(f) {
            Ok(v) => println!(
                "ok {} ({} lines, winner {:?}, scores {:?})",
                f.display(),
                v.lines,
                v.result.winner.map(|t| t.index()),
                v.result.scores
            ),
            Err(e) => {
                bad += 1;
                println!("INVALID {}:{}: {}", f.display(), e.line, e.message);
            }
        }
    }
    if bad == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("referee: {bad} of {} transcript(s) invalid", files.len());
        ExitCode::FAILURE
    }
}
