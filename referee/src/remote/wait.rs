//! Before the first game, the run waits for every remote name's `referee
//! connect`, up to `--remote-wait`: a token is handed over by hand, and its
//! owner may take minutes to start, which is no bot's startup. The console
//! says who is awaited (the instructions printed above say how to connect)
//! and who came; a name still missing at the end fails to start, as a local
//! bot that cannot start does (the caller decides what that stops).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::args::show_wait;
use super::Hub;

/// How often the wait looks at who is connected.
const LOOK: Duration = Duration::from_millis(50);

/// Waits up to the run's `--remote-wait` for each remote name's control
/// connection, telling stderr as each comes. The names that did not come
/// (empty: all did); `None` if `cancel` fired first.
pub async fn connectors(hub: &Hub, cancel: &CancellationToken) -> Option<Vec<String>> {
    let names = &hub.spec.names;
    let limit = hub.spec.wait;
    let mut missing: Vec<&String> = names.iter().filter(|n| !hub.connected(n)).collect();
    if missing.is_empty() {
        return Some(Vec::new());
    }
    eprintln!(
        "referee: waiting up to {} (--remote-wait) for {} to connect, with the `referee connect` \
         line above; the first game starts once {} connected",
        show_wait(limit),
        listed(&missing),
        if names.len() == 1 { "it is" } else { "all are" }
    );
    let give_up = tokio::time::Instant::now() + limit;
    while !missing.is_empty() && tokio::time::Instant::now() < give_up {
        tokio::select! {
            () = tokio::time::sleep(LOOK) => {}
            () = cancel.cancelled() => return None,
        }
        missing.retain(|name| {
            let came = hub.connected(name);
            if came {
                eprintln!("referee: remote:{name} connected");
            }
            !came
        });
    }
    Some(missing.into_iter().cloned().collect())
}

/// Why `name` failed to start: it did not connect in time.
pub fn not_connected(hub: &Hub, name: &str) -> String {
    format!(
        "remote:{name}: its `referee connect` did not connect within {} (--remote-wait): \
         hand its token ({name}.token) to its owner, who runs the `referee connect` line printed \
         at the start",
        show_wait(hub.spec.wait)
    )
}

/// `remote:a, remote:b`.
fn listed(names: &[&String]) -> String {
    let all: Vec<String> = names.iter().map(|n| format!("remote:{n}")).collect();
    all.join(", ")
}
