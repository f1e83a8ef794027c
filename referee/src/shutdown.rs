//! Cooperative shutdown. Ctrl-C or SIGTERM cancels one [`CancellationToken`] that
//! every table and the tournament pool watch: games in flight are abandoned (never
//! half-recorded), bots are ended, and the run returns normally so that whoever
//! keeps records (the journal, the summary) knows exactly what finished. A second
//! signal, for a run that does not stop, kills every bot and exits at once.

use std::sync::atomic::{AtomicI32, Ordering};

use tokio_util::sync::CancellationToken;

/// The exit code of the signal that cancelled the run (130 for SIGINT, 143 for
/// SIGTERM), or 0 while none came.
static SIGNALLED: AtomicI32 = AtomicI32::new(0);

/// Spawns the signal watcher that cancels `token`. Call once, inside the runtime.
pub fn cancel_on_signals(token: CancellationToken) {
    tokio::spawn(async move {
        let Some(mut signals) = crate::os::sys::StopSignals::new() else {
            return;
        };
        let code = signals.next().await;
        SIGNALLED.store(code, Ordering::SeqCst);
        token.cancel();
        let code = signals.next().await;
        crate::bot::kill_all_groups();
        eprintln!("referee: interrupted twice; every bot process was killed");
        std::process::exit(code);
    });
}

/// The exit code for a run that a signal stopped, if one did.
pub fn signal_exit_code() -> Option<u8> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        code => Some(code as u8),
    }
}
