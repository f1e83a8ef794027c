//! The descriptors a run with remote seats may spend. Every connection the
//! hub holds is a descriptor of the referee's, as is every pipe of a local
//! bot; the hub's are bounded ([`super::hub`]), and at its start the soft
//! limit is raised to the hard one, so that what the hub may hold at most
//! comes out of room the local seats never had to count on. A tournament or
//! SPRT counts the hub's [`reserve`] besides its tables' files before it
//! starts a round, and refuses to start one that does not fit. A bot started
//! afterwards inherits the raised limit unless `--limit-files` sets its own.

use super::RemoteSpec;

/// The descriptors the hub may hold beyond its seats' (two a remote seat,
/// counted in its table's files): the listener, the connections not yet
/// proved, and a control connection a name.
pub fn reserve(spec: &RemoteSpec) -> u64 {
    (1 + super::admission::MAX_PENDING + spec.names.len()) as u64
}

/// Raises the soft open-file limit to the hard one; the limit in force.
pub fn raise() -> Option<u64> {
    let (soft, hard) = crate::os::sys::open_files()?;
    if soft < hard && crate::os::sys::set_open_files(hard, hard) {
        return Some(hard);
    }
    Some(soft)
}
