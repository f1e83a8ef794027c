//! `starter-bot`: the starter bot as a process. Its decisions are in `bot.rs`.

fn main() {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    if let Err(e) = schmier_starter::run(schmier_starter::choose, "starter-bot", stdin, stdout) {
        eprintln!("starter-bot: failed to talk to the referee: {e}");
        std::process::exit(1);
    }
}
