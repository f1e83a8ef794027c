//! All the groups together: the settings of one table.

use clap::Args;

use crate::bot::ResourceLimits;
use crate::config::Clock;
use crate::os::Host;

use super::{
    ChannelArgs, IsolationArgs, LimitArgs, Merge, OutputArgs, PolicyArgs, RulesArgs, TimeArgs,
};

/// Every setting of a table, all groups: `play` flattens it, and so does
/// `tournament` (on the command line and in its file), so a table flag of one
/// is a flag of the other by construction.
#[derive(Args, Clone, Debug, Default)]
pub struct TableArgs {
    #[command(flatten)]
    pub time: TimeArgs,
    #[command(flatten)]
    pub channel: ChannelArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub rules: RulesArgs,
    #[command(flatten)]
    pub isolation: IsolationArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl TableArgs {
    /// The bots' resource limits, for bots timed on `clock`, once this
    /// operating system is known to honour all the table asks of it
    /// (`host.rs`; else the run stops before anything starts).
    pub fn resource_limits(&self, clock: Clock) -> anyhow::Result<ResourceLimits> {
        self.resource_limits_on(&crate::os::HOST, clock)
    }

    /// [`TableArgs::resource_limits`] on the operating system `host`.
    pub(crate) fn resource_limits_on(
        &self,
        host: &Host,
        clock: Clock,
    ) -> anyhow::Result<ResourceLimits> {
        let sandboxed = self.isolation.sandbox();
        super::host::check(host, &self.limits, clock, sandboxed)?;
        self.limits.resolve(clock, sandboxed)
    }
}

impl Merge for TableArgs {
    fn merge(self, lower: Self) -> Self {
        TableArgs {
            time: self.time.merge(lower.time),
            channel: self.channel.merge(lower.channel),
            policy: self.policy.merge(lower.policy),
            rules: self.rules.merge(lower.rules),
            isolation: self.isolation.merge(lower.isolation),
            limits: self.limits.merge(lower.limits),
            output: self.output.merge(lower.output),
        }
    }
}
