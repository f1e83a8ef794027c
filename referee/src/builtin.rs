//! `referee bot NAME`: the built-in sample bots, run as their own processes so the
//! referee treats them exactly like any external bot.

pub fn run(name: &str) -> anyhow::Result<()> {
    let mut strategy = schmier_sample_bots::by_name(name)
        .ok_or_else(|| anyhow::anyhow!(crate::settings::unknown_builtin(name)))?;
    schmier_sample_bots::run(strategy.as_mut())
        .map_err(|e| anyhow::anyhow!("failed to talk to the referee: {e}"))
}
