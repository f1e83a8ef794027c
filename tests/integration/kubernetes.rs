//! `examples/kubernetes/` holds manifests a cluster accepts: every one validates
//! offline against the API schema of Kubernetes 1.29 (the first release with
//! `backoffLimitPerIndex` on by default) with `kubernetes-validate` from PyPI
//! (`scripts/test` installs it), and they fit together: the Jobs mount the claim
//! pvc.yaml makes, run the image Containerfile builds, and the Indexed Job's
//! index and shard count are what `--shard auto` reads. No cluster runs here.

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

/// A manifest as JSON (through PyYAML, which kubernetes-validate brings).
fn load(path: &Path) -> serde_json::Value {
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
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

#[test]
fn every_manifest_validates_against_the_pinned_api() {
    let files = manifests();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["merge-job.yaml", "pvc.yaml", "tournament-job.yaml"],
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
