//! What of the host's system directories a sandboxed bot sees, read-only.
//!
//! Not all of `/usr`: what programs run from `/usr/bin` need (the shared
//! libraries, the Python and Node.js runtimes, locales and time zones) and
//! `/etc`. Why smaller: every page a bot can read is held in memory for the
//! whole run (`resident.rs`), so that the page cache is no store between the
//! games of a duplicate set; all of `/usr` is 6.4 GB on the development host,
//! this view about 1.2 GB. A bot whose runtime lives elsewhere (a JVM under
//! `/usr/lib/jvm`, say) does not find it: PROTOCOL.md lists what is shown.

use std::path::{Path, PathBuf};

pub mod extents;
pub mod holder;
pub mod image;
pub mod own;
pub mod resident;
pub mod stage;

/// Shown read-only where they exist, file or directory.
const SYSTEM_PATHS: &[&str] = &[
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/locale",
    "/usr/lib/node_modules",
    "/usr/lib/os-release",
    "/usr/share/nodejs",
    "/usr/share/zoneinfo",
    "/usr/local/bin",
    "/usr/local/lib",
    "/etc",
];

/// `/usr/lib` entries shown by prefix (each Python version's library).
const SYSTEM_PREFIXES: &[&str] = &["/usr/lib/python3"];

/// Top-level names that are links into `/usr` on merged-usr systems, directories
/// on others (shown whole, then).
pub const SYSTEM_LINKS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// The system paths shown (those that exist), in a fixed order.
pub fn system_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SYSTEM_PATHS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    for prefix in SYSTEM_PREFIXES {
        let prefix = Path::new(prefix);
        let (Some(parent), Some(stem)) = (prefix.parent(), prefix.file_name()) else {
            continue;
        };
        let mut found: Vec<PathBuf> = std::fs::read_dir(parent)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&*stem.to_string_lossy())
            })
            .map(|e| e.path())
            .collect();
        found.sort();
        paths.extend(found);
    }
    paths
}

/// The merged-usr links that are directories here (not links), shown whole.
pub fn link_dirs() -> Vec<PathBuf> {
    SYSTEM_LINKS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.read_link().is_err() && p.is_dir())
        .collect()
}

/// Whether `p` lies in a path every sandbox shows anyway.
pub fn shown_as_system(p: &Path) -> bool {
    system_paths().iter().any(|d| p.starts_with(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The interpreters the sample bots need are shown, with their libraries;
    /// the rest of `/usr` (documentation, compilers' trees) is not.
    #[test]
    fn the_view_holds_the_runtimes_and_not_the_rest_of_usr() {
        let paths = system_paths();
        assert!(shown_as_system(Path::new("/usr/bin/python3")), "{paths:?}");
        assert!(!shown_as_system(Path::new("/usr/share/doc")), "{paths:?}");
        assert!(!shown_as_system(Path::new("/usr/include")), "{paths:?}");
        if Path::new("/usr/lib/python3").exists() {
            assert!(paths.contains(&PathBuf::from("/usr/lib/python3")));
        }
    }
}
