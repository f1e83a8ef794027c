//! All the groups together: the settings of one table.

use clap::Args;

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
