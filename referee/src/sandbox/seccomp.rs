//! The seccomp deny-list of sandboxed bots: a second layer under the namespaces.
//!
//! The namespaces already hide every other process; these system calls are
//! refused (`EPERM`) anyway, because each is a way to reach into another process
//! or into the kernel that no card-playing bot needs: `ptrace`,
//! `process_vm_readv`/`writev`, `bpf`, `perf_event_open`, `userfaultfd`,
//! `keyctl`/`add_key`/`request_key`, `kexec_*`, `init_module` and friends; and
//! the `TIOCSTI`/`TIOCLINUX` ioctls, which would push keystrokes into the
//! operator's terminal (bots stay in the referee's session: see `sandbox/mod.rs`).
//! Built once with `seccompiler` (rust-vmm's BPF compiler); installed in the child
//! between fork and exec, where it must not allocate, so the program is compiled
//! beforehand. bubblewrap runs under it.
//!
//! The inner filter ([`inner`]) closes what the namespaces share: state the
//! kernel keeps for the whole host, through which any two bots could talk (file
//! locks, inotify, the page cache, vsock ports, aio counts, `sysinfo`, a disk's free blocks, device nodes' times), and the
//! calls that would build namespaces and mounts anew. bubblewrap needs the
//! latter, so this filter is installed inside the sandbox by the Landlock
//! wrapper, last before it execs the bot. PROTOCOL.md lists every refusal with
//! the error a bot gets.

use std::collections::BTreeMap;
use std::sync::Arc;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The system calls refused to a sandboxed bot.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_kexec_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
];

/// The compiled deny-list for this machine's architecture.
pub fn deny_list() -> anyhow::Result<Arc<BpfProgram>> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| anyhow::anyhow!("failed to build the seccomp filter: {e:?}"))?;
    let fail = |e| anyhow::anyhow!("failed to build the seccomp filter: {e}");
    let mut rules = DENIED
        .iter()
        .map(|&nr| (nr, Vec::new()))
        .collect::<BTreeMap<_, _>>();
    let ioctl = |request: u64| {
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(fail)
    };
    rules.insert(
        libc::SYS_ioctl,
        vec![ioctl(libc::TIOCSTI as _)?, ioctl(libc::TIOCLINUX as _)?],
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(fail)?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e| anyhow::anyhow!("failed to compile the seccomp filter: {e}"))?;
    Ok(Arc::new(program))
}

/// `cachestat(2)` (Linux 6.5): the same number on every architecture, not yet
/// named by the `libc` crate.
const SYS_CACHESTAT: i64 = 451;

/// `statmount(2)` and `listmount(2)` (Linux 6.8), the same on every
/// architecture, not yet named by the `libc` crate: they give the mounts'
/// 64-bit ids, drawn from a counter of every mount the host ever made.
const SYS_STATMOUNT: i64 = 457;
const SYS_LISTMOUNT: i64 = 458;

/// `getsockopt` options (level `SOL_SOCKET`) that read a host-wide counter:
/// `SO_COOKIE` (the socket's cookie, handed out in order as sockets are
/// asked for one) and `SO_NETNS_COOKIE` (the network namespace's, one per
/// namespace the host ever made): each a count of what started before the
/// bot, so a bot of a later game of a set reads a larger one
/// (SECURITY.md, "Nothing counts the games").
const SOCKOPT_REFUSED: &[u64] = &[57, 71];

/// `STATX_MNT_ID_UNIQUE` (Linux 6.8): in `statx`'s mask, asks for the mount's
/// 64-bit id, a count of the host's mounts (the plain `STATX_MNT_ID` is the
/// lowest free id, reused).
const STATX_MNT_ID_UNIQUE: u64 = 0x4000;

/// What the inner filter refuses with `EPERM` outright: each reads or writes
/// state the kernel keeps for the whole host, so two bots (or a bot of an
/// earlier run) could pass a value through it, or it rebuilds the sandbox.
fn shared_state() -> Vec<i64> {
    let calls = vec![
        // Locks on shared files (/usr): the holder's offset is readable by all.
        libc::SYS_flock,
        // Open/access events on shared files reach every watcher.
        libc::SYS_inotify_init1,
        libc::SYS_fanotify_init,
        // The host-wide /proc/sys/fs/aio-nr counter; io_uring would bypass this
        // filter and reads page-cache residency (RWF_NOWAIT).
        libc::SYS_io_setup,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // Page-cache residency of shared files: read (mincore, cachestat) or
        // evicted (fadvise DONTNEED), so a cached page is a bit.
        libc::SYS_fadvise64,
        libc::SYS_mincore,
        SYS_CACHESTAT,
        // Host-wide load, free memory and process count.
        libc::SYS_sysinfo,
        // Pinning to a CPU: pipe, socket and memfd inode numbers come from
        // host-wide counters handed out to each CPU in batches, so two
        // partners pinned to one CPU read each other's allocations exactly.
        libc::SYS_sched_setaffinity,
        // POSIX message queues count against a per-user byte limit.
        libc::SYS_mq_open,
        // Mount ids from the host's count of mounts.
        SYS_STATMOUNT,
        SYS_LISTMOUNT,
        // File handles name host inodes; kcmp compares kernel objects.
        libc::SYS_name_to_handle_at,
        libc::SYS_open_by_handle_at,
        libc::SYS_kcmp,
        // Rebuilding the sandbox: new namespaces, mounts, another root.
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_quotactl,
        // Keyrings: a named session keyring outlives its process in the
        // sandbox's user namespace, which a kept sandbox keeps across games.
        libc::SYS_keyctl,
        // Changes how this process's addresses and syscalls behave.
        libc::SYS_personality,
        // A filesystem's free blocks and inodes: a file bound from the host
        // reports the host disk's, which the referee moves when it writes a
        // bot's stderr log (issue 43: a partner's hand, a bit a turn).
        libc::SYS_statfs,
        libc::SYS_fstatfs,
        // Setting a file's times needs only write permission when they are
        // set to now, so a bot could move the times of the host's device
        // nodes every sandbox shows (`/dev/null`: a partner channel, and a
        // store for a later bot) where no mount is read-only (issue 43).
        libc::SYS_utimensat,
    ];
    // The older calls only x86_64 has (aarch64 was built without them).
    #[cfg(target_arch = "x86_64")]
    let calls = [
        calls,
        vec![
            libc::SYS_inotify_init,
            libc::SYS_ustat,
            libc::SYS_sysfs,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
        ],
    ]
    .concat();
    calls
}

/// `fcntl` commands refused: POSIX and open-file-description record locks
/// (`F_GETLK` tells where another process holds one), leases, and `F_NOTIFY`
/// (dnotify, the older inotify).
const FCNTL_REFUSED: &[libc::c_int] = &[
    libc::F_GETLK,
    libc::F_SETLK,
    libc::F_SETLKW,
    libc::F_OFD_GETLK,
    libc::F_OFD_SETLK,
    libc::F_OFD_SETLKW,
    libc::F_SETLEASE,
    libc::F_GETLEASE,
    libc::F_NOTIFY,
];

/// The `madvise` advice refused: pushing a shared file's pages out of the page
/// cache (the write side of the residency channel).
const MADVISE_REFUSED: &[libc::c_int] = &[libc::MADV_COLD, libc::MADV_PAGEOUT];

/// `RWF_NOWAIT`: a read that fails rather than wait for the disk, so its
/// answer is whether the page was cached.
const RWF_NOWAIT: u64 = 0x8;

/// The namespace flags of `clone(2)`: a bot may start threads and processes,
/// not new namespaces.
const CLONE_NAMESPACES: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// The inner filter's rules for the calls that read a host-wide counter by
/// one argument: `getsockopt` of the cookies, `statx` asking for the mount's
/// unique id.
fn counter_rules(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) -> anyhow::Result<()> {
    let fail = |e| anyhow::anyhow!("failed to build the seccomp filter: {e}");
    let at = |arg, op, value| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value);
    // getsockopt(fd, level, optname, ...): the cookies, at SOL_SOCKET.
    let sockopt = (SOCKOPT_REFUSED.iter())
        .map(|&opt| {
            let level = at(1, SeccompCmpOp::Eq, libc::SOL_SOCKET as u64).map_err(fail)?;
            let name = at(2, SeccompCmpOp::Eq, opt).map_err(fail)?;
            SeccompRule::new(vec![level, name]).map_err(fail)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    rules.insert(libc::SYS_getsockopt, sockopt);
    // statx(dirfd, path, flags, mask, buf).
    let unique = SeccompCmpOp::MaskedEq(STATX_MNT_ID_UNIQUE);
    let statx = at(3, unique, STATX_MNT_ID_UNIQUE)
        .and_then(|c| SeccompRule::new(vec![c]))
        .map_err(fail)?;
    rules.insert(libc::SYS_statx, vec![statx]);
    Ok(())
}

/// The inner filter: installed inside the sandbox by the Landlock wrapper just
/// before it execs the bot (bubblewrap, which runs under the outer one, needs
/// namespaces and mounts to build the sandbox). Two programs: the `EPERM` list
/// with its argument filters, and the calls answered with `ENOSYS`, as by a
/// kernel that lacks them, so that programs fall back to older ones whose
/// arguments a filter can see: `clone3` (the C library falls back to `clone`,
/// whose flags are its first argument; `clone3` passes them in memory, out of a
/// filter's reach) and `openat2` (programs fall back to `openat`): its
/// `RESOLVE_CACHED`, also in memory, answers whether a name's lookup is in the
/// host's dentry cache without looking it up, `ENOENT` for a name another bot
/// looked up before and `EAGAIN` for one nobody did, so it read a store of
/// negative dentries under the shared system directories without a single
/// error (SECURITY.md, "Duplicate-set memory").
pub fn inner() -> anyhow::Result<Vec<BpfProgram>> {
    let arch: seccompiler::TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| anyhow::anyhow!("failed to build the seccomp filter: {e:?}"))?;
    let fail = |e| anyhow::anyhow!("failed to build the seccomp filter: {e}");
    let when = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(fail)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        shared_state().into_iter().map(|nr| (nr, vec![])).collect();
    let fcntl = (FCNTL_REFUSED.iter())
        .map(|&cmd| when(1, SeccompCmpOp::Eq, cmd as u64))
        .collect::<anyhow::Result<Vec<_>>>()?;
    rules.insert(libc::SYS_fcntl, fcntl);
    let madvise = (MADVISE_REFUSED.iter())
        .map(|&advice| when(2, SeccompCmpOp::Eq, advice as u64))
        .collect::<anyhow::Result<Vec<_>>>()?;
    rules.insert(libc::SYS_madvise, madvise);
    // preadv2/pwritev2(fd, iov, iovcnt, pos_l, pos_h, flags).
    for nr in [libc::SYS_preadv2, libc::SYS_pwritev2] {
        rules.insert(
            nr,
            vec![when(5, SeccompCmpOp::MaskedEq(RWF_NOWAIT), RWF_NOWAIT)?],
        );
    }
    counter_rules(&mut rules)?;
    // Unix sockets only: no vsock (a port table shared by the whole host), no
    // netlink, and no IP (the network namespace has nothing to reach anyway).
    for nr in [libc::SYS_socket, libc::SYS_socketpair] {
        rules.insert(nr, vec![when(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?]);
    }
    // clone(flags, ...): flags are the first argument on x86_64 and aarch64;
    // refused if any namespace flag is set.
    let clone = (CLONE_NAMESPACES.iter())
        .map(|&flag| {
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag as u64),
                flag as u64,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(fail)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    rules.insert(libc::SYS_clone, clone);
    let compile = |rules, errno: i32| -> anyhow::Result<BpfProgram> {
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(fail)?
        .try_into()
        .map_err(|e| anyhow::anyhow!("failed to compile the seccomp filter: {e}"))
    };
    let absent = BTreeMap::from([(libc::SYS_clone3, vec![]), (libc::SYS_openat2, vec![])]);
    Ok(vec![
        compile(rules, libc::EPERM)?,
        compile(absent, libc::ENOSYS)?,
    ])
}
