//! Headless Chromium driven over the DevTools protocol, for page tests that
//! wait for a page to change by itself or follow a click (`season_site.rs`).
//! The protocol travels on two pipes (`--remote-debugging-pipe`: Chromium
//! reads commands on fd 3 and writes answers on fd 4, each message JSON
//! ended by a NUL byte), so no port and no client library is needed.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// A browser with one page open.
pub struct Page {
    child: Child,
    to: File,
    from: BufReader<File>,
    next: u64,
    session: String,
    _profile: tempfile::TempDir,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pipe's two ends moved above the descriptors the child is given (so
/// the child's `dup2` onto 3 and 4 cannot overwrite one it still needs).
fn pipe_high() -> (OwnedFd, OwnedFd) {
    let (r, w) = nix::unistd::pipe().expect("a pipe");
    let high = |fd: OwnedFd| {
        let raw = nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(10))
            .expect("fcntl");
        // SAFETY: `raw` is a new descriptor this function alone owns.
        unsafe { OwnedFd::from_raw_fd(raw) }
    };
    (high(r), high(w))
}

impl Page {
    /// Starts Chromium (as `browser.rs` does) and opens `url`.
    pub fn open(url: &str) -> Page {
        let profile = tempfile::tempdir().unwrap();
        let (cmd_r, cmd_w) = pipe_high();
        let (ans_r, ans_w) = pipe_high();
        let (in_fd, out_fd) = (cmd_r.as_raw_fd(), ans_w.as_raw_fd());
        let mut cmd = Command::new(crate::browser::path());
        cmd.args(crate::browser::FLAGS)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--remote-debugging-pipe")
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only dup2, which is async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                nix::unistd::dup2(in_fd, 3)?;
                nix::unistd::dup2(out_fd, 4)?;
                Ok(())
            });
        }
        let child = cmd.spawn().expect("chromium starts");
        drop((cmd_r, ans_w));
        let mut page = Page {
            child,
            to: File::from(cmd_w),
            from: BufReader::new(File::from(ans_r)),
            next: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = page.call("Target.createTarget", json!({ "url": url }));
        let id = target["result"]["targetId"].clone();
        let attached = page.call(
            "Target.attachToTarget",
            json!({ "targetId": id, "flatten": true }),
        );
        page.session = attached["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {attached}"))
            .to_owned();
        page
    }

    /// Sends `method` and returns the answer to it, `result` or `error` (the
    /// events between are dropped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut msg = json!({ "id": self.next, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("chromium reads its pipe");
        loop {
            let mut buf = Vec::new();
            let n = self.from.read_until(0, &mut buf).expect("chromium answers");
            assert!(n > 0, "chromium closed its pipe (it exited?)");
            buf.pop();
            let answer: Value = serde_json::from_slice(&buf).expect("a JSON message");
            if answer["id"] == json!(self.next) {
                return answer;
            }
        }
    }

    /// The value of JavaScript `expr` in the page (awaited if a promise);
    /// `Null` if it threw (e.g. while the page navigates).
    pub fn eval(&mut self, expr: &str) -> Value {
        let a = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        match a.get("error").or(a["result"].get("exceptionDetails")) {
            Some(_) => Value::Null,
            None => a["result"]["result"]["value"].clone(),
        }
    }

    /// Waits until `expr` is true, a tenth of a second between tries, at
    /// most `limit`; panics with `what` if it never is.
    pub fn wait_for(&mut self, expr: &str, limit: Duration, what: &str) {
        let start = Instant::now();
        while self.eval(expr) != json!(true) {
            assert!(start.elapsed() < limit, "{what}: `{expr}` never held");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
