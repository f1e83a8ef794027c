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
        referee::bot::install_cleanup();
        if !cfg.quiet {
            // A drawn seed stays secret until the run ends: bots share the terminal.
            let seed = match cfg.secret_seed {
                true => "secret (printed at the end)".to_owned(),
                false => cfg.seed.to_string(),
            };
            eprintln!(
                "referee: seed {seed} — {} game(s), transcripts in {}",
                cfg.games,
                cfg.output.describe()
            );
        }
        referee::session::run(&cfg).await
    })?;
    referee::report::print(&cfg, &summary);
    if cfg.secret_seed && !cfg.quiet {
        eprintln!("referee: the match seed was {}", cfg.seed);
    }
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
