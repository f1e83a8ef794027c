//! `examples/kubernetes/` holds manifests a cluster accepts: every one validates
//! offline against the API schema of Kubernetes 1.29 (the first release with
//! `backoffLimitPerIndex` on by default) with `kubernetes-validate` from PyPI
//! (`scripts/test` installs it), and they fit together: the Jobs mount the claim
//! pvc.yaml makes, run the image Containerfile builds, and the Indexed Job's
//! index and shard count are what `--shard auto` reads. The season's manifests
//! (PostgreSQL, the server, its workers, the Job that opens it) name each
//! other's Services, ports, Secrets and volumes consistently, and the referee
//! accepts their command lines. No cluster runs here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{referee, root};

const API: &str = "1.29.0";

fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples/kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// `kubernetes-validate --strict` (unknown fields are errors) on the files.
fn validate(files: &[PathBuf]) -> std::process::Output {
    let out = Command::new("python3")
        .args([
            "-m",
            "kubernetes_validate",
            "-k",
            API,
            "--strict",
            "--quiet",
        ])
        .args(files)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named kubernetes_validate"),
        "the validator is missing: python3 -m pip install kubernetes-validate \
         (scripts/test installs it)"
    );
    out
}

/// A manifest of one document, as JSON.
fn load(path: &Path) -> serde_json::Value {
    let mut docs = load_all(path);
    assert_eq!(docs.len(), 1, "{}: one document", path.display());
    docs.remove(0)
}

#[test]
fn every_manifest_validates_against_the_pinned_api() {
    let files = manifests();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "merge-job.yaml",
            "pvc.yaml",
            "season-init-job.yaml",
            "season-postgres.yaml",
            "season-server.yaml",
            "season-workers.yaml",
            "tournament-job.yaml"
        ],
        "the manifests this test knows"
    );
    let out = validate(&files);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The validator does refuse what a cluster would: a misspelt field.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(root().join("examples/kubernetes/tournament-job.yaml"))
        .unwrap()
        .replace("backoffLimitPerIndex:", "backoffLimitPerIndx:");
    std::fs::write(&bad, text).unwrap();
    let out = validate(&[bad]);
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("backoffLimitPerIndx"),
        "{said}"
    );
}

#[test]
fn the_manifests_fit_together_and_shard_auto_reads_the_index() {
    let dir = root().join("examples/kubernetes");
    let pvc = load(&dir.join("pvc.yaml"));
    let claim = pvc["metadata"]["name"].as_str().unwrap();
    assert_eq!(pvc["spec"]["accessModes"][0], "ReadWriteMany");
    let containerfile = std::fs::read_to_string(dir.join("Containerfile")).unwrap();
    let mut completions = None;
    let mut shards = None;
    for name in ["tournament-job.yaml", "merge-job.yaml"] {
        let job = load(&dir.join(name));
        let pod = &job["spec"]["template"]["spec"];
        let volume = &pod["volumes"][0];
        assert_eq!(
            volume["persistentVolumeClaim"]["claimName"], claim,
            "{name} mounts the claim pvc.yaml makes"
        );
        let container = &pod["containers"][0];
        let image = container["image"].as_str().unwrap();
        assert!(
            containerfile.contains(&format!("-t {image} .")),
            "{name} runs the image the Containerfile's build command tags ({image})"
        );
        assert_eq!(container["volumeMounts"][0]["name"], volume["name"]);
        if name == "tournament-job.yaml" {
            assert_eq!(job["spec"]["completionMode"], "Indexed");
            completions = job["spec"]["completions"].as_u64();
            shards = container["env"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == "SCHMIER_SHARDS")
                .and_then(|e| e["value"].as_str())
                .and_then(|v| v.parse::<u64>().ok());
            let args = container["args"][0].as_str().unwrap();
            assert!(args.contains("--shard auto"), "{args}");
            // Every shard deals from the one secret the Secret volume holds.
            assert!(
                args.contains("--seed-secret-file /secret/seed-secret"),
                "{args}"
            );
            let mounts = container["volumeMounts"].as_array().unwrap();
            let secret = mounts.iter().find(|m| m["mountPath"] == "/secret").unwrap();
            let volumes = job["spec"]["template"]["spec"]["volumes"]
                .as_array()
                .unwrap();
            assert!(
                volumes.iter().any(|v| v["name"] == secret["name"]
                    && v["secret"]["secretName"] == "schmier-seed-secret"),
                "{volumes:?}"
            );
            assert!(
                args.contains("/results/shard-$(JOB_COMPLETION_INDEX)"),
                "{args}"
            );
            assert_eq!(container["workingDir"], "/schmier");
            assert!(containerfile.contains("WORKDIR /schmier"));
            assert!(containerfile.contains("/usr/local/bin/referee"));
        }
    }
    let n = completions.expect("completions");
    assert_eq!(shards, Some(n), "SCHMIER_SHARDS equals completions");
    // The last pod's view: --shard auto reads it as the last shard of n.
    let out = tempfile::tempdir().unwrap();
    let secret = out.path().join("seed-secret");
    let made = referee().arg("secret").output().unwrap();
    std::fs::write(&secret, &made.stdout).unwrap();
    let run = referee()
        .args([
            "tournament",
            "examples/sample-bracket.toml",
            "--shard",
            "auto",
        ])
        .arg("--seed-secret-file")
        .arg(&secret)
        .args(["--quiet", "--out"])
        .arg(out.path().join("s"))
        .env("JOB_COMPLETION_INDEX", (n - 1).to_string())
        .env("SCHMIER_SHARDS", n.to_string())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("s/tournament.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["shard"],
        serde_json::json!({ "index": n - 1, "count": n })
    );
}

/// Every document of a manifest file, as JSON (through PyYAML, which
/// kubernetes-validate brings).
fn load_all(path: &Path) -> Vec<serde_json::Value> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ])
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The document of `kind` in `docs`.
fn of_kind<'a>(docs: &'a [serde_json::Value], kind: &str) -> &'a serde_json::Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} among {docs:?}"))
}

/// The args of a pod's first container, as strings.
fn args(pod: &serde_json::Value) -> Vec<String> {
    pod["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect()
}

/// Where the pod mounts the Secret named `secret`.
fn secret_mount(pod: &serde_json::Value, secret: &str) -> String {
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["secret"]["secretName"] == secret)
        .unwrap_or_else(|| panic!("no volume of the Secret {secret}: {pod}"));
    let mount = pod["containers"][0]["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == volume["name"])
        .unwrap_or_else(|| panic!("the Secret {secret} is not mounted: {pod}"));
    mount["mountPath"].as_str().unwrap().to_owned()
}

/// The value after `flag` in `args`.
fn after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args
        .iter()
        .position(|a| a == flag)
        .unwrap_or_else(|| panic!("{flag} not in {args:?}"));
    &args[i + 1]
}

#[test]
fn the_season_manifests_name_each_other_and_the_referee_takes_their_commands() {
    let dir = root().join("examples/kubernetes");
    let postgres = load_all(&dir.join("season-postgres.yaml"));
    let server = load_all(&dir.join("season-server.yaml"));
    let workers = load_all(&dir.join("season-workers.yaml"));
    let init = load_all(&dir.join("season-init-job.yaml"));
    let containerfile = std::fs::read_to_string(dir.join("Containerfile")).unwrap();

    // PostgreSQL: its Service and the user and database it creates.
    let pg_service = of_kind(&postgres, "Service");
    let pg_name = pg_service["metadata"]["name"].as_str().unwrap();
    let pg_port = pg_service["spec"]["ports"][0]["port"].as_u64().unwrap();
    let pg_pod = &of_kind(&postgres, "StatefulSet")["spec"]["template"]["spec"];
    let env = |name: &str| -> serde_json::Value {
        pg_pod["containers"][0]["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .clone()
    };
    let pg_secret = env("POSTGRES_PASSWORD")["valueFrom"]["secretKeyRef"].clone();
    let url = format!(
        "postgres://{}@{pg_name}:{pg_port}/{}",
        env("POSTGRES_USER")["value"].as_str().unwrap(),
        env("POSTGRES_DB")["value"].as_str().unwrap()
    );

    // The Job that opens the season: that database, the password from the
    // same Secret, the folder on the server's volume.
    let init_pod = &of_kind(&init, "Job")["spec"]["template"]["spec"];
    let script = args(init_pod).join(" ");
    assert!(script.contains(&format!("--db {url}")), "{script}");
    let secret_name = pg_secret["name"].as_str().unwrap();
    let password_file = format!(
        "{}/{}",
        secret_mount(init_pod, secret_name),
        pg_secret["key"].as_str().unwrap()
    );
    assert!(
        script.contains(&format!("--db-password-file {password_file}")),
        "{script}"
    );
    let claim = of_kind(&server, "PersistentVolumeClaim")["metadata"]["name"].clone();
    assert_eq!(
        init_pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        claim
    );
    assert!(script.contains("season init /season/s1"), "{script}");

    // The server: the season the Job opened, the password where the folder
    // recorded it, the port its Service forwards to.
    let server_pod = &of_kind(&server, "Deployment")["spec"]["template"]["spec"];
    let run = args(server_pod);
    assert_eq!(run[..3], ["season", "run", "/season/s1"]);
    assert_eq!(
        server_pod["volumes"][0]["persistentVolumeClaim"]["claimName"],
        claim
    );
    assert_eq!(
        format!("{}/password", secret_mount(server_pod, secret_name)),
        password_file,
        "the server reads the password file season init recorded"
    );
    let serve_port: u64 = after(&run, "--serve")
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let service = of_kind(&server, "Service");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], serve_port);
    assert!(run.iter().any(|a| a == "--workers"), "{run:?}");

    // The workers: the server's Service, the token Secret's file.
    let worker_pod = &of_kind(&workers, "Deployment")["spec"]["template"]["spec"];
    let work = args(worker_pod);
    assert_eq!(
        after(&work, "--server"),
        format!(
            "http://{}:{}",
            service["metadata"]["name"].as_str().unwrap(),
            service["spec"]["ports"][0]["port"]
        )
    );
    assert_eq!(
        after(&work, "--token-file"),
        format!("{}/token", secret_mount(worker_pod, "schmier-worker-token"))
    );

    // Every pod runs the image the Containerfile's build command tags.
    for pod in [pg_pod, init_pod, server_pod, worker_pod] {
        let image = pod["containers"][0]["image"].as_str().unwrap();
        if !image.contains("postgres") {
            assert!(containerfile.contains(&format!("-t {image} .")), "{image}");
        }
    }

    // The referee takes the server's and the workers' command lines: each
    // fails on what is missing here (no season, no token file), not on a
    // flag it does not know.
    let scratch = tempfile::tempdir().unwrap();
    let mut server_args = run.clone();
    server_args[2] = scratch.path().join("s1").display().to_string();
    let out = referee().args(&server_args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("holds no season"), "{server_args:?}: {said}");
    let mut worker_args = work.clone();
    let i = worker_args
        .iter()
        .position(|a| a == "--token-file")
        .unwrap();
    worker_args[i + 1] = scratch.path().join("token").display().to_string();
    let j = worker_args.iter().position(|a| a == "--cache").unwrap();
    worker_args[j + 1] = scratch.path().join("cache").display().to_string();
    let out = referee().args(&worker_args).output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--token-file"), "{worker_args:?}: {said}");
    assert!(!said.contains("unexpected argument"), "{said}");
}
