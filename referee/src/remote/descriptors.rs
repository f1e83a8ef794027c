//! The descriptors a run with remote seats may spend. Every connection the
//! hub holds is a descriptor of the referee's, as is every pipe of a local
//! bot; the hub's are bounded ([`super::hub`]), and at its start the soft
//! limit is raised to the hard one, so that what the hub may hold at most
//! comes out of room the local seats never had to count on (the tournament
//! budgets its tables' files within the limit as it is then). A bot started
//! afterwards inherits the raised limit unless `--limit-files` sets its own.

use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Raises the soft open-file limit to the hard one; the limit in force.
pub fn raise() -> Option<u64> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}
