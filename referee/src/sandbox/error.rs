//! Why `--sandbox` cannot start on this host, or refuses a bot: the errors of
//! `sandbox/mod.rs`, each a sentence that says what to do.

use std::path::PathBuf;

/// Why `--sandbox` cannot be given on this host (all "failed to start the
/// sandbox: …", saying what to do), or why it refuses a bot.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "failed to start the sandbox: --sandbox needs bubblewrap (`bwrap`), which is not \
         on PATH; install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf \
         install bubblewrap) or run without --sandbox"
    )]
    NoBubblewrap,
    #[error("failed to start the sandbox: cannot find the referee's own executable")]
    NoOwnExecutable(#[source] std::io::Error),
    /// Landlock, the seccomp filter or the constant `/proc` files could not be
    /// set up (their own modules say why).
    #[error(transparent)]
    Layer(#[from] anyhow::Error),
    #[error(
        "failed to start the sandbox: {reason}, and the sandbox's constant /proc files \
         are there ({}); set TMPDIR to a directory every user can reach (/tmp)",
        dir.display()
    )]
    MasksUnreachable { reason: Unreachable, dir: PathBuf },
    #[error("failed to start the sandbox: no `true` program in /usr/bin or /bin")]
    NoTrue,
    #[error("failed to start the sandbox: cannot run {}", .0.display())]
    CannotRun(PathBuf, #[source] std::io::Error),
    #[error(
        "failed to start the sandbox: its Landlock layer failed inside bubblewrap \
         ({0}); run without --sandbox, or report this with the kernel version"
    )]
    LandlockFailed(Refusal),
    #[error(
        "failed to start the sandbox: this bubblewrap is too old for the sandbox's \
         options ({0}); --sandbox needs `--size` for its bounded /tmp \
         (bubblewrap 0.8 is known to work). Upgrade bubblewrap, or run without \
         --sandbox"
    )]
    OldBubblewrap(Refusal),
    #[error(
        "failed to start the sandbox: this host does not let bubblewrap create the \
         namespaces --sandbox needs ({0}). Allow unprivileged user namespaces \
         (e.g. sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu \
         kernel.apparmor_restrict_unprivileged_userns=0), or run without --sandbox; \
         the referee does not run bots unsandboxed when --sandbox is asked for"
    )]
    NoNamespaces(Refusal),
    #[error("its directory is /: put the bot in a directory of its own")]
    RootDirectory,
    #[error(
        "its directory {} holds $HOME, which the sandbox never shows: put the \
         bot in a directory of its own",
        .0.display()
    )]
    HoldsHome(PathBuf),
    #[error(
        "its directory {} is where the transcripts go; give --transcript a \
         place outside it",
        .0.display()
    )]
    HoldsOutput(PathBuf),
    /// Its program is a virtual environment's Python the sandbox cannot
    /// run (`venv.rs`).
    #[error(transparent)]
    Venv(#[from] super::venv::VenvError),
    #[error("failed to mount an image of the bot's view for it")]
    ImageMount(#[source] std::io::Error),
}

/// How bubblewrap refused the probe: its exit status and what it said.
#[derive(Debug)]
pub struct Refusal {
    pub(super) status: std::process::ExitStatus,
    pub(super) stderr: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status, self.stderr.trim())
    }
}

/// Why other users cannot reach a path: a bot run as a user of its own could
/// not either.
#[derive(Debug, thiserror::Error)]
pub enum Unreachable {
    #[error("failed to read {}", .0.display())]
    Unreadable(PathBuf, #[source] std::io::Error),
    #[error("{} is not {} by other users", .0.display(), .1)]
    Closed(PathBuf, &'static str),
}

impl SandboxError {
    /// The process holding the view in memory could not be started or failed.
    pub fn hold_failed(e: std::io::Error) -> SandboxError {
        SandboxError::Layer(anyhow::anyhow!("failed to start the sandbox: {e}"))
    }
}
