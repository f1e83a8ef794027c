//! Headless Chromium for the page tests (`replay_page.rs`, `page.rs`): Debian's
//! `chromium`, which `scripts/test` installs. A host without it fails those
//! tests with a message saying how to get it — unless `SCHMIER_ALLOW_NO_BROWSER`
//! is set, when each test says loudly that it did not run and why. CI installs
//! the browser and does not set it, so there the tests always run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser's path (after [`available`] said there is one).
pub fn path() -> PathBuf {
    find().expect("a test checks `available()` first")
}

/// The flags every headless run of the tests' browser gets.
pub const FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The browser's path, if there is one.
fn find() -> Option<PathBuf> {
    let name = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    if Path::new(&name).is_absolute() {
        return Path::new(&name).is_file().then(|| PathBuf::from(&name));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
    })
}

/// Whether the calling test can use the browser: true if there is one; false,
/// with the reason printed, if there is none and `SCHMIER_ALLOW_NO_BROWSER`
/// allows that; otherwise the test fails saying how to get one.
pub fn available() -> bool {
    if find().is_some() {
        return true;
    }
    let name = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let reason = format!(
        "headless Chromium is needed and no `{name}` was found on PATH: install Debian's \
         package (`apt-get install chromium`, as scripts/test does) or set CHROMIUM to the \
         browser's path"
    );
    if std::env::var_os("SCHMIER_ALLOW_NO_BROWSER").is_none() {
        panic!("{reason} (SCHMIER_ALLOW_NO_BROWSER=1 skips the browser tests instead)");
    }
    // Printed past the test harness's capture and counted (support.rs).
    crate::support::skip(&format!("{reason} (SCHMIER_ALLOW_NO_BROWSER is set)"));
    false
}

/// The window the page tests draw in, unless a test names another.
const WINDOW: (u32, u32) = (1320, 700);

fn browser(profile: &Path) -> Command {
    sized(profile, WINDOW)
}

fn sized(profile: &Path, (width, height): (u32, u32)) -> Command {
    let mut cmd = Command::new(path());
    cmd.args(FLAGS)
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// The page as drawn after its script acted on `fragment`.
pub fn dom(page: &Path, fragment: &str) -> String {
    dom_in(page, fragment, WINDOW)
}

/// [`dom`] in a window of `size` (width, height) pixels.
pub fn dom_in(page: &Path, fragment: &str, size: (u32, u32)) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = sized(profile.path(), size)
        .arg("--dump-dom")
        .arg(format!("file://{}#{fragment}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("</main>"), "no page drawn: {text}");
    text
}

/// Keeps a picture of the page at `fragment` as a test artifact, in
/// target/tmp/replay-page/NAME.
pub fn screenshot(page: &Path, fragment: &str, name: &str) {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("replay-page");
    std::fs::create_dir_all(&shots).unwrap();
    let png = shots.join(name);
    let _ = std::fs::remove_file(&png);
    let profile = tempfile::tempdir().unwrap();
    let out = browser(profile.path())
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}#{fragment}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
}
