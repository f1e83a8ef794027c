//! The seccomp deny-list of sandboxed bots: a second layer under the namespaces.
//!
//! The namespaces already hide every other process; these system calls are
//! refused (`EPERM`) anyway, because each is a way to reach into another process
//! or into the kernel that no card-playing bot needs: `ptrace`,
//! `process_vm_readv`/`writev`, `bpf`, `perf_event_open`, `userfaultfd`,
//! `keyctl`/`add_key`/`request_key`, `kexec_*`, `init_module` and friends; and
//! the `TIOCSTI`/`TIOCLINUX` ioctls, which would push keystrokes into the
//! operator's terminal (bots stay in the referee's session: see `sandbox.rs`).
//! Built once with `seccompiler` (rust-vmm's BPF compiler); installed in the child
//! between fork and exec, where it must not allocate, so the program is compiled
//! beforehand.

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
