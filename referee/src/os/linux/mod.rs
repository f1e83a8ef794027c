//! Process control on Linux.

pub mod own_exe;
pub mod process;
pub mod reaper;
pub mod spawner;
