//! Where the referee may make a bot's cgroups: under its own cgroup, in a
//! cgroup v1 hierarchy of the controller or where cgroup v2 delegates it.

use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug)]
pub(super) enum Version {
    V1,
    V2,
}

/// Where a bot's cgroup for a feature without a limit goes: the referee's own
/// cgroup v2 if it may make children there (`cpu.stat` and `cgroup.freeze`
/// need no controller), else its cgroup v1 of `controller`.
pub(super) fn feature_parent(controller: &str) -> Option<(PathBuf, Version)> {
    own_cgroup_v2()
        .map(|d| (d, Version::V2))
        .or_else(|| own_cgroup(controller).filter(|(_, v)| matches!(v, Version::V1)))
}

/// The referee's own cgroup v2 directory (`0::PATH` in `/proc/self/cgroup`,
/// under `/sys/fs/cgroup` or a hybrid host's `/sys/fs/cgroup/unified`), if it
/// may make children there.
pub(super) fn own_cgroup_v2() -> Option<PathBuf> {
    let table = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = table.lines().find_map(|l| l.strip_prefix("0::"))?;
    let path = path.trim_start_matches('/');
    ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        .into_iter()
        .map(|root| Path::new(root).join(path))
        .find(|dir| dir.join("cgroup.controllers").is_file() && writable(dir))
}

/// The directory of the referee's own cgroup for `controller`, and which
/// version it is, if the referee may create children there.
pub(super) fn own_cgroup(controller: &str) -> Option<(PathBuf, Version)> {
    let table = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in table.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == controller) {
            let dir = Path::new("/sys/fs/cgroup").join(controller).join(path);
            if writable(&dir) {
                return Some((dir, Version::V1));
            }
        } else if controllers.is_empty() {
            for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(root).join(path);
                let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                    .is_ok_and(|s| s.split_whitespace().any(|c| c == controller));
                if delegated && writable(&dir) {
                    return Some((dir, Version::V2));
                }
            }
        }
    }
    None
}

fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}
