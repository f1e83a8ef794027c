use std::process::ExitCode;

use clap::Parser;

use referee::cli::{Cli, Command};
use referee::config::PlayConfig;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never into a pipe or file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let result = match cli.command() {
        Command::Bot { name } => referee::builtin::run(&name).map(|()| ExitCode::SUCCESS),
        Command::Verify { files } => referee::verify::transcripts(&files).map(|f| verify(&f)),
        Command::Play(args) => args.validate().and_then(play),
        Command::CheckBot(args) => args
            .validate()
            .and_then(|(argv, limits)| check_bot(argv, limits)),
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
    let summary = runtime.block_on(async {
        referee::bot::install_cleanup(referee::report::print_interrupted_tally);
        if !cfg.quiet {
            eprintln!(
                "referee: seed {} — {} game(s), transcripts in {}",
                cfg.seed,
                cfg.games,
                cfg.output.describe()
            );
        }
        referee::session::run(&cfg).await
    })?;
    referee::report::print(&cfg, &summary);
    Ok(ExitCode::SUCCESS)
}

fn check_bot(
    argv: Vec<String>,
    limits: referee::checkbot::CheckLimits,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        referee::bot::install_cleanup(|| {});
        referee::checkbot::run(argv, limits).await
    });
    print!("{}", referee::checkbot::render(&report));
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn verify(files: &[std::path::PathBuf]) -> ExitCode {
    let mut bad = 0;
    for f in files {
        match referee::verify::verify_file(f) {
            Ok(v) => {
                let players: Vec<&str> = v.header.seats.iter().map(|s| s.name.as_str()).collect();
                let teams = referee::names::team_names(&players);
                let r = &v.result;
                let forfeited: Vec<usize> = r.forfeited.iter().map(|t| t.index()).collect();
                println!(
                    "ok {} ({} lines): {}",
                    f.display(),
                    v.lines,
                    referee::report::outcome_text(
                        &teams,
                        r.winner.map(|t| t.index()),
                        r.scores,
                        &forfeited
                    )
                );
            }
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
