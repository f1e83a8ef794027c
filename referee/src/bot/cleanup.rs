//! Every bot taken down with the referee: on a panic (the hook installed
//! here) or when a run is cancelled (`crate::shutdown`).

/// SIGKILLs every bot process group still registered (Ctrl-C, SIGTERM,
/// panic), thawing the cgroup v1-frozen ones first, which would take the
/// signal only once thawed.
pub fn kill_all() {
    crate::cgroup::freeze_guard::thaw_own();
    crate::os::group::kill_all_groups();
}

/// Installs the panic hook that kills every bot before the referee goes. Signals
/// are not handled here: they cancel the run cooperatively (`crate::shutdown`).
pub fn install_cleanup() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        kill_all();
        previous(info);
    }));
}
