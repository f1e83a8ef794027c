//! What Linux and macOS share of process and file control (Unix): files
//! (`files.rs`: no symlink followed, `flock`, free space), a bot's pipes
//! (`pipe.rs`), the referee's own limits, CPU clock and stop signals
//! (`sys.rs`), and the one thread every bot is forked from
//! (`spawner.rs`). Each OS's folder re-exports what it uses of it.

pub mod files;
pub mod pipe;
pub mod spawner;
pub mod sys;

/// A pipe's or a file's end as the OS hands it over.
pub type Fd = std::os::fd::OwnedFd;
