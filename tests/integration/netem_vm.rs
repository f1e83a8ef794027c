//! A real kernel delay for the remote clock's test where this host's kernel
//! has no `netem`: Debian's cloud kernel (which has it, as a module) boots
//! in qemu with an initramfs of busybox, this build's `referee`, and the
//! host's `ip` and `tc` with the libraries they load. Inside, on the guest's
//! own loopback, one referee process plays the local game, the same game
//! with a remote team and no delay, then again behind `netem delay 25ms`
//! (50 ms round trip); the transcripts and timings come back over the serial
//! console as a base64 tar. `scripts/test` fetches the kernel and busybox
//! (`target/netem-vm`) and installs qemu; without them the test says why it
//! cannot run. qemu runs as software emulation (TCG), so no KVM is needed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::REFEREE;

/// A hang guard for the whole VM run, never a timing assertion.
const GUARD: Duration = Duration::from_secs(900);

/// What scripts/test unpacked: the kernel, its netem module and busybox.
struct Assets {
    kernel: PathBuf,
    netem: PathBuf,
    busybox: PathBuf,
}

fn find(dir: &Path, pick: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.is_symlink() {
            if let Some(found) = find(&path, pick) {
                return Some(found);
            }
        } else if pick(&path) {
            return Some(path);
        }
    }
    None
}

fn assets() -> Result<Assets, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("netem-vm");
    let named = |prefix: &'static str| {
        move |p: &Path| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        }
    };
    let kernel = find(&dir.join("root/boot"), &named("vmlinuz-"));
    let netem = find(&dir.join("root/lib/modules"), &named("sch_netem.ko"));
    let busybox = Some(dir.join("root/bin/busybox")).filter(|p| p.is_file());
    match (kernel, netem, busybox) {
        (Some(kernel), Some(netem), Some(busybox)) => Ok(Assets {
            kernel,
            netem,
            busybox,
        }),
        _ => Err(format!(
            "no kernel with netem, or no busybox, unpacked in {} (scripts/test fetches them)",
            dir.display()
        )),
    }
}

/// The guest's /init. Every game is the host test's lineup: `remote:alice`
/// at seats 0 and 3 served by `referee connect … -- referee bot heuristic`,
/// the built-in bots elsewhere.
const INIT: &str = r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
exec >/dev/ttyS0 2>&1
stty -F /dev/ttyS0 -onlcr
mkdir -p /out
R=/bin/referee
A="play --seed SEED --decision-ms 5000"
remote() {
  $R $A --seat 0=remote:alice --seat 3=remote:alice --startup-ms 60000 \
    --transcript /out/$1 --listen 127.0.0.1:$2 2>/out/$1.err &
  while [ ! -f /out/$1/tokens/alice.token ]; do sleep 0.1; done
  $R connect 127.0.0.1:$2 --token-file /out/$1/tokens/alice.token -- $R bot heuristic 2>/out/$1.connect.err
  wait $!; echo "== $1 exit $?"
}
/sbin/ip link set lo up
$R $A -q --transcript /out/local; echo "== local exit $?"
remote plain 47998
insmod /sch_netem.ko && /sbin/tc qdisc add dev lo root netem delay 25ms && echo "== netem on"
/sbin/tc qdisc show dev lo
ping -c 3 127.0.0.1 | tail -1
remote netem 47999
rm -rf /out/*/tokens
echo "==BEGIN"; (cd /out && tar cf - .) | base64; echo "==END"
poweroff -f
"#;

/// Copies `from` to `dir/to`, its folders made.
fn put(dir: &Path, from: &Path, to: &str) {
    let dest = dir.join(to.trim_start_matches('/'));
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(from, &dest).unwrap_or_else(|e| panic!("{} → {}: {e}", from.display(), to));
}

/// The shared libraries `ldd` says `binary` loads, as absolute paths.
fn libraries(binary: &Path) -> Vec<String> {
    let out = Command::new("ldd").arg(binary).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(str::to_owned)
        .collect()
}

/// Lays out the initramfs in `dir/root` and packs it (busybox's cpio, newc).
fn initramfs(dir: &Path, a: &Assets, seed: u64) -> PathBuf {
    let root = dir.join("root");
    put(&root, &a.busybox, "/bin/busybox");
    put(&root, &a.netem, "/sch_netem.ko");
    // A stripped copy where `strip` exists keeps the archive small.
    let referee = root.join("bin/referee");
    let stripped = Command::new("strip")
        .arg("-o")
        .arg(&referee)
        .arg(REFEREE)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        put(&root, Path::new(REFEREE), "/bin/referee");
    }
    let mut libs = libraries(Path::new(REFEREE));
    for tool in ["/usr/sbin/ip", "/usr/sbin/tc"] {
        put(&root, Path::new(tool), &tool.replace("/usr", ""));
        libs.extend(libraries(Path::new(tool)));
    }
    for lib in libs {
        put(&root, &std::fs::canonicalize(&lib).unwrap(), &lib);
    }
    for d in ["proc", "sys", "dev", "tmp"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let init = root.join("init");
    std::fs::write(&init, INIT.replace("SEED", &seed.to_string())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cpio = dir.join("initrd.cpio");
    let packed = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd '{}' && find . | '{}' cpio -o -H newc > '{}'",
            root.display(),
            a.busybox.display(),
            cpio.display()
        ))
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(packed.success(), "busybox cpio packs the initramfs");
    cpio
}

/// Boots the guest and waits (with the hang guard) for it to power off.
fn boot(dir: &Path, a: &Assets, cpio: &Path) -> String {
    let console = dir.join("console.log");
    let mut qemu = Command::new("qemu-system-x86_64")
        .args(["-accel", "tcg", "-cpu", "max", "-smp", "2", "-m", "1024"])
        .arg("-kernel")
        .arg(&a.kernel)
        .arg("-initrd")
        .arg(cpio)
        .args(["-append", "console=ttyS0 quiet panic=-1 edd=off"])
        .args(["-display", "none", "-monitor", "none", "-no-reboot"])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu starts");
    let start = Instant::now();
    while qemu.try_wait().unwrap().is_none() {
        if start.elapsed() > GUARD {
            let _ = qemu.kill();
            panic!("the VM did not power off");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::fs::read_to_string(&console).unwrap_or_default()
}

/// Unpacks the base64 tar between the console's markers into `dir/out`.
fn unpack(console: &str, dir: &Path) -> PathBuf {
    let body: String = console
        .lines()
        .skip_while(|l| l.trim() != "==BEGIN")
        .skip(1)
        .take_while(|l| l.trim() != "==END")
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!body.is_empty(), "the guest sent its files: {console}");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mut untar = Command::new("sh")
        .arg("-c")
        .arg(format!("base64 -d | tar xf - -C '{}'", out.display()))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    untar
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    assert!(untar.wait().unwrap().success(), "the guest's tar unpacks");
    out
}

/// Plays the three games in the VM; the folder holding `local/`, `plain/`
/// and `netem/` (each a transcript folder with its timings), or why the VM
/// cannot run here.
pub fn three_games(dir: &Path, seed: u64) -> Result<PathBuf, String> {
    let a = assets()?;
    let qemu = Command::new("qemu-system-x86_64").arg("--version").output();
    if !qemu.is_ok_and(|o| o.status.success()) {
        return Err("no qemu-system-x86_64 (scripts/test installs qemu-system-x86)".into());
    }
    std::fs::create_dir_all(dir).unwrap();
    let cpio = initramfs(dir, &a, seed);
    let console = boot(dir, &a, &cpio);
    for game in ["local", "plain", "netem"] {
        assert!(
            console.contains(&format!("== {game} exit 0")),
            "the {game} game ran in the VM: {console}"
        );
    }
    assert!(console.contains("== netem on"), "netem is on: {console}");
    Ok(unpack(&console, dir))
}
