use std::process::ExitCode;

use clap::Parser;

use referee::cli::{Cli, Command};
use referee::config::PlayConfig;
use referee::names::printable_lines;

fn main() -> ExitCode {
    // Read before anything can replace it: the run starts this executable,
    // not whatever its path names later (`os/linux/own_exe.rs`).
    referee::os::own_exe::remember();
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never into a pipe or file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // This is the referee's own binary: it may start the freezer's guard
    // (`referee freeze-guard`) as itself.
    referee::cgroup::freeze_guard::enable();
    let result = match cli.command() {
        Command::Secret => referee::tournament::seed_secret::SeedSecret::draw().map(|s| {
            println!("{s}");
            ExitCode::SUCCESS
        }),
        Command::Bot { name } => referee::builtin::run(&name).map(|()| ExitCode::SUCCESS),
        Command::Connect(args) => referee::remote::connect::main(&args),
        Command::Verify { files } => referee::audit::run(&files),
        Command::Play(args) => args.validate().and_then(play),
        Command::Bench(args) => args.validate().and_then(|cfg| bench(&cfg, args.json)),
        Command::Landlock(args) => Err(referee::sandbox::landlock_exec(&args)),
        Command::Launcher(args) => {
            referee::sandbox::launcher_run(&args).map(|()| ExitCode::SUCCESS)
        }
        Command::HoldView(args) => referee::sandbox::hold_view(&args)
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| anyhow::anyhow!("failed to hold the sandbox's view: {e}")),
        Command::StageView(args) => referee::sandbox::stage_view(&args).map(|()| ExitCode::SUCCESS),
        Command::FreezeGuard(args) => {
            referee::cgroup::freeze_guard::run(&args).map(|()| ExitCode::SUCCESS)
        }
        Command::BenchEcho => referee::bench::echo()
            .map(|()| ExitCode::SUCCESS)
            .map_err(|e| anyhow::anyhow!("failed to echo: {e}")),
        Command::CheckBot(args) => args
            .validate()
            .and_then(|(argv, limits)| check_bot(argv, limits)),
        Command::Tournament(args) => args.validate().and_then(tournament),
        Command::Sprt(args) => args.validate().and_then(referee::sprt::main),
        Command::Season(args) => referee::season::main(args),
        Command::Merge { dirs, out } => merge(&dirs, &out),
        Command::Diff(args) => diff(&args),
        Command::Show(args) => show(&args),
        Command::Schema(args) => schema(&args),
        Command::Replay(args) => args.validate().and_then(|cfg| replay(&cfg, args.json)),
    };
    // Nothing a bot started outlives the run: the trees of the bots ended last
    // may still be dying (`os/linux/reaper.rs`).
    referee::bot::wait_for_reaper();
    referee::os::own_exe::forget();
    result.unwrap_or_else(|e| {
        // An error can quote a transcript, a journal or a tournament.json.
        let said = format!("{e:#}");
        eprintln!("referee: {}", printable_lines(&said));
        ExitCode::from(2)
    })
}

fn play(mut cfg: PlayConfig) -> anyhow::Result<ExitCode> {
    use referee::play::Ended;
    // One run per folder (`lock.rs`), held until the last file is written.
    let _lock = referee::lock::hold(
        cfg.output.describe().trim_end_matches('/'),
        &cfg.output.folder(),
        &cfg.output.lock(),
    )?;
    let hub = match &cfg.remote {
        Some(spec) => Some(referee::remote::announce::serve(
            spec,
            &cfg.output.tokens_dir(),
        )?),
        None => None,
    };
    cfg.table.isolation.remote.clone_from(&hub);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let console = std::sync::Arc::new(referee::report::Console::new(&cfg));
    let ended = runtime.block_on(async {
        referee::bot::install_cleanup();
        referee::shutdown::cancel_on_signals(cancel.clone());
        referee::play::run(&cfg, &cancel, console.clone()).await
    });
    if let Some(hub) = &hub {
        hub.close();
    }
    let ended = ended.inspect_err(|_| console.reveal_seed())?;
    Ok(match ended {
        Ended::Interrupted(_) => {
            ExitCode::from(referee::shutdown::signal_exit_code().unwrap_or(130))
        }
        // The console named the lost games; the run is not a success.
        Ended::Complete(summary) if !summary.lost.is_empty() => ExitCode::from(2),
        Ended::Complete(_) => ExitCode::SUCCESS,
    })
}

fn check_bot(
    argv: Vec<String>,
    limits: referee::checkbot::CheckLimits,
) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        referee::bot::install_cleanup();
        referee::checkbot::run(argv, limits).await
    });
    print!("{}", printable_lines(&referee::checkbot::render(&report)));
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn tournament(mut cfg: referee::tournament::TournamentConfig) -> anyhow::Result<ExitCode> {
    use referee::tournament::events::{Reporter, Reporters};
    use referee::tournament::{Console, Ended, Progress};
    // The coordinator's runtime: each table runs on a thread of its own
    // (tournament/pool.rs).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    // One run per folder, from before anything looks at it (`lock.rs`).
    let _lock = referee::lock::hold(
        &cfg.out.display().to_string(),
        &cfg.out,
        &cfg.out.join(referee::layout::LOCK),
    )?;
    let fresh = !referee::layout::holds_anything(&cfg.out);
    let hub = match &cfg.remote {
        Some(spec) => {
            let tokens = cfg.out.join(referee::layout::TOKENS);
            Some(referee::remote::announce::serve(spec, &tokens)?)
        }
        None => None,
    };
    cfg.table.isolation.remote.clone_from(&hub);
    let mut reporters: Vec<Box<dyn Reporter>> = vec![
        Box::new(Console::new(&cfg, resume_command(&cfg))),
        Box::new(Progress::new(&cfg)),
    ];
    if cfg.page {
        reporters.push(Box::new(referee::tournament::page::Page::new(&cfg)));
    }
    let reporter = std::sync::Arc::new(Reporters(reporters));
    let ended = runtime.block_on(async {
        referee::bot::install_cleanup();
        referee::shutdown::cancel_on_signals(cancel.clone());
        referee::tournament::run(&cfg, &cancel, reporter).await
    });
    if let Some(hub) = &hub {
        hub.close();
    }
    if ended.is_err() && fresh {
        // Nothing half-done blocks the corrected rerun.
        referee::tournament::discard_unplayed(&cfg.out);
    }
    // The console has told the standings (or how far the run got).
    Ok(match ended? {
        Ended::Complete(_) => ExitCode::SUCCESS,
        Ended::Interrupted(_) => {
            ExitCode::from(referee::shutdown::signal_exit_code().unwrap_or(130))
        }
    })
}

/// This very command line with `--resume`, and the seed, directory and shard
/// made explicit: `--shard auto` read a cluster's variables, which a command
/// typed by hand does not have.
fn resume_command(cfg: &referee::tournament::TournamentConfig) -> String {
    let mut args: Vec<String> = std::env::args().collect();
    if let Some(shard) = &cfg.shard {
        let explicit = format!("{}/{}", shard.index, shard.count);
        if let Some(i) = args.iter().position(|a| a == "--shard=auto") {
            args[i] = format!("--shard={explicit}");
        } else if let Some(i) = args
            .windows(2)
            .position(|w| w[0] == "--shard" && w[1] == "auto")
        {
            args[i + 1] = explicit;
        }
    }
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
    let _lock = referee::lock::hold(
        &out.display().to_string(),
        out,
        &out.join(referee::layout::LOCK),
    )?;
    let standings = referee::tournament::merge(dirs, out)?;
    // The shards' tournament.json name the entrants: anyone's text.
    print!("{}", printable_lines(&standings.table()));
    println!(
        "{} games from {} shards; standings in {}/standings.json and standings.csv",
        standings.games,
        dirs.len(),
        printable_lines(&out.display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}

fn bench(cfg: &referee::bench::BenchConfig, json: bool) -> anyhow::Result<ExitCode> {
    let report = referee::bench::run(cfg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(ExitCode::SUCCESS)
}

fn diff(args: &referee::cli::DiffArgs) -> anyhow::Result<ExitCode> {
    let mut report = String::new();
    let same = referee::diff::run(&args.a, &args.b, args.update, &mut report)?;
    // Header notes quote both transcripts' names, commands and versions.
    print!("{}", printable_lines(&report));
    Ok(if same || args.update {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn show(args: &referee::cli::ShowArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    if args.file.is_dir() {
        return show_folder(&args.file, args.html.as_deref());
    }
    let transcript = referee::load::Transcript::read(&args.file).map_err(|mut e| {
        if e.reason.starts_with("not a transcript:") {
            e.reason += "; `referee show` takes a transcript, or a tournament's folder \
                         (`referee show --html OUT.html DIR` draws its page)";
        }
        e
    })?;
    let replay = referee::show::Replay::new(&transcript)?;
    if let Some(out) = &args.html {
        let page = referee::show::html::render(&replay)?;
        referee::safe_create::write_atomic(out, page.as_bytes())?;
        eprintln!("referee: wrote {}", out.display());
        return Ok(ExitCode::SUCCESS);
    }
    let opts = referee::show::TextOptions {
        seat: args.seat.map(|s| schmier_protocol::Seat::new(s as usize)),
        deal: args.deal,
    };
    let text = referee::show::text::render(&replay, opts)?;
    // anstream drops the colours unless stdout is a terminal that wants them
    // (NO_COLOR set: plain).
    let mut stdout = anstream::stdout();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // `referee show ... | head` is not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            anyhow::bail!("failed to write to stdout: {e}")
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `referee show DIR`: a tournament folder's page with `--html`; otherwise what
/// to give instead, naming one of the folder's games.
fn show_folder(dir: &std::path::Path, html: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    let tournament = referee::show::bracket::is_tournament(dir);
    if let (Some(out), true) = (html, tournament) {
        let w = referee::tournament::page::write_finished(dir, out)?;
        eprintln!(
            "referee: wrote {} and {} replay pages beside it",
            w.page.display(),
            w.replays
        );
        return Ok(ExitCode::SUCCESS);
    }
    // A tournament's games are those in its games/ folder, whatever else
    // lies beneath it.
    let holds = match tournament {
        true => referee::layout::tournament::games(dir),
        false => dir.to_path_buf(),
    };
    let games = match holds.is_dir() {
        true => referee::load::transcripts_in(&holds)?,
        false => Vec::new(),
    };
    let one = match games.first() {
        Some(game) => format!(
            "; one game as text: `referee show {}` ({} game(s) in the folder)",
            holds.join(game).display(),
            games.len()
        ),
        None => "; it holds no transcript".to_owned(),
    };
    match (tournament, html) {
        (true, _) => anyhow::bail!(
            "{} is a tournament folder: `referee show --html OUT.html {}` draws its page{one}",
            dir.display(),
            dir.display()
        ),
        (false, Some(_)) => anyhow::bail!(
            "{} is not a tournament folder (it has no standings.json), so it has no \
             page; --html draws one game's replay page from its transcript{one}",
            dir.display()
        ),
        (false, None) => anyhow::bail!("{} is a folder, not a transcript{one}", dir.display()),
    }
}

fn replay(cfg: &referee::rerun::ReplayConfig, json: bool) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        referee::bot::install_cleanup();
        referee::rerun::run(cfg).await
    })?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", printable_lines(&report.text()));
    }
    Ok(if report.same() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn schema(args: &referee::cli::SchemaArgs) -> anyhow::Result<ExitCode> {
    if !args.check {
        referee::schema::write(&args.dir)?;
        eprintln!("referee: wrote the schema files to {}", args.dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    let stale = referee::schema::check(&args.dir);
    if stale.is_empty() {
        println!("schema files in {} match the code", args.dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    for name in &stale {
        println!("{}: missing or out of date", args.dir.join(name).display());
    }
    eprintln!(
        "referee: {} schema file(s) differ from the code; run `referee schema {}`",
        stale.len(),
        args.dir.display()
    );
    Ok(ExitCode::FAILURE)
}
