//! The host's device nodes as a sandbox shows them: read-only binds, so that
//! no bot can change them (issue 43).
//!
//! bubblewrap's `--dev` binds the host's `/dev/null`, `zero`, `full`,
//! `random`, `urandom` and `tty` into every sandbox, read-write. A bot may
//! not open most of them (Landlock), but changing an inode's metadata opens
//! nothing: a root referee runs a bot whose files other users cannot reach
//! under bubblewrap as root, and there the bot's user is the host's root
//! (bubblewrap maps it so), the owner of those nodes, so a `chmod` of
//! `/dev/null` would change the host's own (a store any later bot reads, and
//! a host broken at will). Setting times (which needs only write permission)
//! is refused by the inner seccomp filter everywhere (`seccomp.rs`).
//!
//! bubblewrap cannot bind a device node read-only and still usable (its
//! read-only binds are `nodev`), so that bubblewrap is started in a mount
//! namespace of its own where each node is already a read-only bind of
//! itself: bubblewrap's binds of them inherit that, and keep it. A kept
//! sandbox's init makes them read-only itself (`kept/state.rs`, `seal`).

use std::ffi::CStr;
use tokio::process::Command;

use nix::libc;

/// The nodes bubblewrap's `--dev` binds from the host.
const NODES: [&CStr; 6] = [
    c"/dev/null",
    c"/dev/zero",
    c"/dev/full",
    c"/dev/random",
    c"/dev/urandom",
    c"/dev/tty",
];

/// Makes `cmd` (bubblewrap, run as root) start in a mount namespace of its
/// own in which the host's device nodes are read-only binds of themselves.
pub fn read_only_for(cmd: &mut Command) {
    // SAFETY: runs in the forked child: system calls only, on static strings;
    // nothing allocates or takes a lock.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Nothing done here reaches the host's mount namespace.
            mount(None, c"/", libc::MS_REC | libc::MS_PRIVATE)?;
            for node in NODES {
                match mount(Some(node), node, libc::MS_BIND) {
                    // A host without the node: bubblewrap shows none either.
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                    other => other?,
                }
                let ro = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
                mount(None, node, ro | libc::MS_NOSUID | libc::MS_NOEXEC)?;
            }
            Ok(())
        });
    }
}

/// `mount(2)` with no file system type or data: async-signal-safe.
fn mount(source: Option<&CStr>, target: &CStr, flags: libc::c_ulong) -> std::io::Result<()> {
    let source = source.map_or(std::ptr::null(), CStr::as_ptr);
    let null = std::ptr::null();
    // SAFETY: NUL-terminated strings that outlive the call, or null.
    match unsafe { libc::mount(source, target.as_ptr(), null, flags, null.cast()) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
