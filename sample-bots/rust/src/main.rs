//! `schmier-bot [random|heuristic]`: a sample bot as its own process.

fn main() {
    let name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "heuristic".to_owned());
    let Some(mut strategy) = schmier_sample_bots::by_name(&name) else {
        eprintln!(
            "schmier-bot: unknown strategy {name:?}; expected one of {:?}",
            schmier_sample_bots::NAMES
        );
        std::process::exit(2);
    };
    if let Err(e) = schmier_sample_bots::run(strategy.as_mut()) {
        eprintln!("schmier-bot: failed to talk to the referee: {e}");
        std::process::exit(1);
    }
}
