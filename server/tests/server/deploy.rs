//! Checks of `deploy/`: the example configs start the real server and serve their projects,
//! and the Dockerfile, compose file, systemd unit and Kubernetes manifests hold together.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

/// The placeholder upstream in the example configs, rewritten to a local bare repository.
const EXAMPLE_UPSTREAM: &str = "https://github.com/example-org/backend-knowledge.git";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn deploy(rel: &str) -> PathBuf {
    repo_root().join("deploy").join(rel)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn run_git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Dana Ops")
        .env("GIT_AUTHOR_EMAIL", "dana@example.com")
        .env("GIT_COMMITTER_NAME", "Dana Ops")
        .env("GIT_COMMITTER_EMAIL", "dana@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare repository on branch `main` with entries under `knowledge/` (the example's
/// subdir) and one outside it, which must not be read.
fn make_upstream(root: &Path) -> PathBuf {
    let work = root.join("upstream-work");
    std::fs::create_dir_all(work.join("knowledge/build")).expect("mkdir");
    std::fs::create_dir_all(work.join("knowledge/ops")).expect("mkdir");
    std::fs::create_dir_all(work.join("other")).expect("mkdir");
    std::fs::write(
        work.join("knowledge/build/linker.md"),
        "# Linker runs out of memory\n\nSet `-C link-arg=-Wl,--no-keep-memory` on CI.\n",
    )
    .expect("write");
    std::fs::write(
        work.join("knowledge/ops/restart.md"),
        "---\ntitle: Restart order\ntags: [ops]\n---\nRestart the queue before the API.\n",
    )
    .expect("write");
    std::fs::write(
        work.join("other/not-read.md"),
        "# Outside the subdir\n\nNo.\n",
    )
    .expect("write");
    run_git(&work, &["init", "-q", "-b", "main"]);
    run_git(&work, &["add", "."]);
    run_git(&work, &["commit", "-q", "-m", "Add entries"]);
    let bare = root.join("upstream.git");
    run_git(
        root,
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().expect("utf8"),
            bare.to_str().expect("utf8"),
        ],
    );
    bare
}

/// A running `helix-server` started from a deployment's own command line.
struct Running {
    child: Child,
    url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the real binary with `args` (taken from a deployment file) after mapping the
/// deployment's paths to temporary ones and its port to an ephemeral loopback one.
fn start_with(args: &[String], config: &Path, data: &Path) -> Running {
    let mapped: Vec<String> = args
        .iter()
        .map(|a| match a.as_str() {
            "/etc/helix/server.toml" => config.display().to_string(),
            "/var/lib/helix" => data.display().to_string(),
            "0.0.0.0:7700" => "127.0.0.1:0".to_string(),
            other => other.to_string(),
        })
        .collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_helix-server"));
    // Relative paths (the default `./helix-data`) must land in the test's temp dir, not in
    // the source tree.
    cmd.args(&mapped).current_dir(data.parent().unwrap_or(data));
    if !mapped.iter().any(|a| a == "--listen") {
        // The unit takes its address from the config; tests need an ephemeral port.
        cmd.args(["--listen", "127.0.0.1:0"]);
    }
    helix_test_support::isolate(&mut cmd, data.parent().unwrap_or(data));
    let mut child = cmd
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("helix-server starts");
    let url = helix_test_support::listen_url(
        &mut child,
        Duration::from_secs(60),
        &format!("helix-server {mapped:?}"),
    );
    Running { child, url }
}

fn http() -> Client {
    helix_server::sys::install_crypto_provider();
    Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

/// A copy of a config text with the upstream pointed at `bare`.
fn localize(config_text: &str, bare: &Path, dir: &Path) -> PathBuf {
    assert!(
        config_text.contains(EXAMPLE_UPSTREAM),
        "example config no longer names {EXAMPLE_UPSTREAM}"
    );
    let path = dir.join("server.toml");
    std::fs::write(
        &path,
        config_text.replace(EXAMPLE_UPSTREAM, &bare.display().to_string()),
    )
    .expect("write config");
    path
}

fn token_add(config: &Path, project: &str, name: &str, scope: &str) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_helix-server"));
    helix_test_support::token_add(bin, config, project, name, scope)
}

/// Polls the status of `project` until its first refresh is done: an artifact is served,
/// or (an empty server-owned repository) the refresh found no commit.
fn wait_ingested(s: &Running, project: &str, token: &str) -> Value {
    let c = http();
    for _ in 0..2400 {
        let r = c
            .get(format!("{}/v1/projects/{project}/status", s.url))
            .bearer_auth(token)
            .send()
            .expect("status");
        assert_eq!(r.status(), StatusCode::OK, "status of {project}");
        let v: Value = r.json().expect("status json");
        let served = v["generation"].as_u64().unwrap_or(0) > 0;
        let failed = !v["last_fetch"]["error"].is_null();
        let empty_owned = project == "org" && !v["last_fetch"]["at"].is_null();
        if served || failed || empty_owned {
            return v;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("project {project} was never ingested");
}

fn project_names(s: &Running, token: &str) -> BTreeSet<String> {
    let r = http()
        .get(format!("{}/v1/projects", s.url))
        .bearer_auth(token)
        .send()
        .expect("projects");
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().expect("json");
    v["projects"]
        .as_array()
        .expect("projects array")
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

fn assert_healthy(s: &Running) {
    let r = http()
        .get(format!("{}/healthz", s.url))
        .send()
        .expect("healthz");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.text().expect("body").trim(), "ok");
}

/// The example config as the server's own loader sees it.
fn example_config() -> helix_server::Config {
    let path = deploy("server.toml");
    helix_server::Config::parse(&read(&path), &path.display().to_string())
        .expect("deploy/server.toml is a valid config")
}

#[test]
fn example_server_toml_describes_an_upstream_and_a_server_owned_project() {
    let cfg = example_config();
    assert_eq!(cfg.listen.to_string(), "0.0.0.0:7700");
    assert_eq!(cfg.data_dir, Path::new("/var/lib/helix"));
    assert!(
        !cfg.anonymous_loopback,
        "a shared server must not trust loopback"
    );
    assert_eq!(cfg.projects.len(), 2);
    let up = cfg.project("backend").expect("project backend");
    assert_eq!(up.upstream.as_deref(), Some(EXAMPLE_UPSTREAM));
    assert_eq!(up.branch, "main");
    assert_eq!(up.subdir.as_deref(), Some("knowledge"));
    assert!(up.webhook_secret.is_some());
    let owned = cfg.project("org").expect("project org");
    assert!(owned.upstream.is_none());
    for p in &cfg.projects {
        assert!(!p.tokens.is_empty(), "{} has example tokens", p.name);
    }
}

#[test]
fn example_config_starts_the_server_from_each_deployment_command_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bare = make_upstream(tmp.path());
    let config = localize(&read(&deploy("server.toml")), &bare, tmp.path());
    // Tokens are added the documented way, with the server's own command.
    let backend = token_add(&config, "backend", "dana", "read,write");
    let org = token_add(&config, "org", "erin", "read");
    let secret = helix_server::Config::load(&config)
        .expect("config still valid after token add")
        .project("backend")
        .and_then(|p| p.webhook_secret.clone())
        .expect("webhook secret kept");

    let command_lines = [
        ("deploy/Dockerfile", dockerfile_command()),
        ("deploy/compose.yaml", compose_command()),
        ("deploy/helix-server.service", unit_command()),
        ("deploy/k8s/deployment.yaml", k8s_command()),
    ];
    for (i, (origin, args)) in command_lines.iter().enumerate() {
        let data = tmp.path().join(format!("data-{i}"));
        let s = start_with(args, &config, &data);
        assert_healthy(&s);
        assert_eq!(
            project_names(&s, &backend),
            BTreeSet::from(["backend".to_string()]),
            "{origin}"
        );
        assert_eq!(
            project_names(&s, &org),
            BTreeSet::from(["org".to_string()]),
            "{origin}"
        );
        let st = wait_ingested(&s, "backend", &backend);
        assert!(st["last_fetch"]["error"].is_null(), "{origin}: {st}");
        assert_eq!(st["entries"], 2, "{origin}: only the subdir is read: {st}");
        let st = wait_ingested(&s, "org", &org);
        assert_eq!(st["entries"], 0, "{origin}: {st}");
        assert!(
            super::common::mirror(&data, &bare).is_dir()
                && data.join("projects/backend/current.json").is_file()
                && data.join("projects/org/repo.git").is_dir()
                && !data.join("projects/backend/repo.git").exists(),
            "{origin}: the data dir layout docs/operations.md describes"
        );

        // The health checks the image and the compose file run, against this server.
        for check in [dockerfile_healthcheck(), compose_healthcheck()] {
            run_healthcheck(&check, &s.url);
        }

        // The GitHub webhook as docs/operations.md sets it up.
        let body = br#"{"ref":"refs/heads/main"}"#;
        let r = http()
            .post(format!("{}/v1/projects/backend/refresh", s.url))
            .header("X-GitHub-Event", "push")
            .header(
                "X-Hub-Signature-256",
                helix_server::auth::sign(&secret, body),
            )
            .body(body.to_vec())
            .send()
            .expect("webhook");
        assert_eq!(r.status(), StatusCode::ACCEPTED, "{origin}");
        // The GitLab webhook: a write token in a custom Authorization header.
        let r = http()
            .post(format!("{}/v1/projects/backend/refresh", s.url))
            .header("X-Gitlab-Event", "Push Hook")
            .bearer_auth(&backend)
            .body("{}")
            .send()
            .expect("webhook");
        assert_eq!(r.status(), StatusCode::ACCEPTED, "{origin}");
        // A read token cannot write.
        let r = http()
            .post(format!("{}/v1/projects/org/refresh", s.url))
            .bearer_auth(&org)
            .send()
            .expect("refresh");
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin}");
    }
}

#[test]
fn k8s_secret_config_starts_the_server() {
    let docs = yaml_docs("k8s/secret.yaml");
    let text = docs[0]["stringData"]["server.toml"]
        .as_str()
        .expect("stringData.server.toml");
    helix_server::Config::parse(text, "deploy/k8s/secret.yaml")
        .expect("the Secret holds a valid config");
    let tmp = tempfile::tempdir().expect("tempdir");
    let bare = make_upstream(tmp.path());
    let config = localize(text, &bare, tmp.path());
    let token = token_add(&config, "backend", "ci", "read");
    let s = start_with(&k8s_command(), &config, &tmp.path().join("data"));
    assert_healthy(&s);
    assert_eq!(
        project_names(&s, &token),
        BTreeSet::from(["backend".to_string()])
    );
    let st = wait_ingested(&s, "backend", &token);
    assert_eq!(st["entries"], 2, "{st}");
}

#[test]
fn documented_metrics_are_exported() {
    let doc = read(&repo_root().join("docs/operations.md"));
    // Metric names in the metrics table and the example alerts.
    let mut names = BTreeSet::new();
    let lines = doc
        .lines()
        .filter(|l| l.starts_with("| `helix_") || l.contains("increase(") || l.contains("rate("));
    for line in lines {
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.starts_with("helix_") && word.len() > "helix_".len() {
                names.insert(word.to_string());
            }
        }
    }
    assert!(
        names.len() >= 5,
        "docs/operations.md names the exported metrics: {names:?}"
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let config = tmp.path().join("server.toml");
    std::fs::write(&config, "[[projects]]\nname = \"p\"\n").expect("write");
    let s = start_with(&[], &config, &tmp.path().join("data"));
    let text = http()
        .get(format!("{}/metrics", s.url))
        .send()
        .expect("metrics")
        .text()
        .expect("body");
    for n in &names {
        let exported = text.lines().any(|l| {
            l.strip_prefix("# TYPE ")
                .and_then(|t| t.split_whitespace().next())
                .is_some_and(|base| {
                    n == base
                        || n.strip_prefix(base)
                            .is_some_and(|s| s == "_sum" || s == "_count")
                })
        });
        assert!(
            exported,
            "docs/operations.md names {n}, which /metrics does not export:\n{text}"
        );
    }
}

// ---------------------------------------------------------------- Dockerfile

/// Dockerfile instructions with continuation lines joined, comments dropped.
fn dockerfile() -> Vec<(String, String)> {
    let text = read(&deploy("Dockerfile"));
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && cur.is_empty()) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            cur.push_str(head);
            cur.push(' ');
            continue;
        }
        cur.push_str(t);
        let (op, rest) = cur.split_once(' ').unwrap_or((cur.as_str(), ""));
        out.push((op.to_uppercase(), rest.trim().to_string()));
        cur.clear();
    }
    out
}

fn json_array(s: &str) -> Vec<String> {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not a JSON (exec form) array: {s}: {e}"))
}

/// ENTRYPOINT + CMD of the final stage, as the container runs them.
/// The HEALTHCHECK command of the image (exec form).
fn dockerfile_healthcheck() -> Vec<String> {
    let ins = dockerfile();
    let hc = ins
        .iter()
        .rev()
        .find(|(o, _)| o == "HEALTHCHECK")
        .map(|(_, r)| r.clone())
        .expect("Dockerfile has a HEALTHCHECK");
    let (_, cmd) = hc.split_once("CMD ").expect("HEALTHCHECK CMD");
    json_array(cmd)
}

/// Runs a health check command line with the container's address mapped to `url`; it must
/// succeed. Skipped with a note when its program is not installed here.
fn run_healthcheck(check: &[String], url: &str) {
    let args: Vec<String> = check
        .iter()
        .map(|a| a.replace("http://127.0.0.1:7700", url))
        .collect();
    let out = match Command::new(&args[0]).args(&args[1..]).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!(
                "note: {} not installed; health check {check:?} not run",
                args[0]
            );
            return;
        }
        Err(e) => panic!("cannot run {args:?}: {e}"),
    };
    assert!(
        out.status.success(),
        "health check {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn dockerfile_command() -> Vec<String> {
    let ins = dockerfile();
    let last = |op: &str| {
        ins.iter()
            .rev()
            .find(|(o, _)| o == op)
            .map(|(_, r)| json_array(r))
            .unwrap_or_else(|| panic!("Dockerfile has no {op}"))
    };
    let entry = last("ENTRYPOINT");
    assert_eq!(entry, ["/usr/local/bin/helix-server"]);
    last("CMD")
}

#[test]
fn dockerfile_builds_in_one_stage_and_runs_unprivileged_in_another() {
    let ins = dockerfile();
    let froms: Vec<&String> = ins
        .iter()
        .filter(|(o, _)| o == "FROM")
        .map(|(_, r)| r)
        .collect();
    assert_eq!(froms.len(), 2, "builder and runtime stages: {froms:?}");
    assert_eq!(froms[0], "rust:1-bookworm AS builder");
    assert!(froms[1].starts_with("debian:bookworm-slim"), "{}", froms[1]);
    let runtime_start = ins
        .iter()
        .rposition(|(o, _)| o == "FROM")
        .expect("runtime stage");
    let (build, runtime) = ins.split_at(runtime_start);

    let runs = |stage: &[(String, String)]| -> String {
        stage
            .iter()
            .filter(|(o, _)| o == "RUN")
            .map(|(_, r)| r.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(runs(build).contains("cargo build --release -p helix-server --locked"));
    let rt = runs(runtime);
    for pkg in ["git", "ca-certificates", "curl"] {
        assert!(
            rt.split_whitespace().any(|w| w == pkg),
            "runtime installs {pkg}"
        );
    }
    assert!(rt.contains("--no-install-recommends") && rt.contains("rm -rf /var/lib/apt/lists"));
    let user = runtime
        .iter()
        .rev()
        .find(|(o, _)| o == "USER")
        .map(|(_, r)| r.clone())
        .expect("USER");
    let uid = user.split(':').next().expect("uid");
    assert!(
        rt.contains("useradd") && rt.contains(&format!("--uid {uid}")),
        "the USER {uid} is created: {rt}"
    );

    // Sources copied from the build context exist; the runtime copies only the binary.
    for (op, rest) in build.iter().filter(|(o, _)| o == "COPY") {
        let words: Vec<&str> = rest
            .split_whitespace()
            .filter(|w| !w.starts_with("--"))
            .collect();
        let (dest, srcs) = words.split_last().expect("COPY has a destination");
        assert!(!dest.is_empty(), "{op} {rest}");
        for src in srcs {
            assert!(
                repo_root().join(src).exists(),
                "Dockerfile copies {src}, which is not in the repository"
            );
        }
    }
    let copies: Vec<&String> = runtime
        .iter()
        .filter(|(o, _)| o == "COPY")
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        copies,
        ["--from=builder /out/helix-server /usr/local/bin/helix-server"]
    );
    assert!(runs(build).contains("target/release/helix-server /out/helix-server"));
    // The build script embeds the examples; the workspace needs every member's manifest.
    let members = read(&repo_root().join("Cargo.toml"));
    for m in ["index-format", "server", "client", "tests"] {
        assert!(
            members.contains(&format!("\"{m}\"")),
            "workspace member {m}"
        );
        assert!(
            build
                .iter()
                .any(|(o, r)| o == "COPY" && r.starts_with(&format!("{m} "))),
            "Dockerfile copies workspace member {m}"
        );
    }

    let value = |op: &str| -> Vec<&String> {
        runtime
            .iter()
            .filter(|(o, _)| o == op)
            .map(|(_, r)| r)
            .collect()
    };
    let user = value("USER");
    assert_eq!(user.len(), 1);
    let uid = user[0].split(':').next().expect("uid");
    assert!(uid != "root" && uid != "0", "runs as non-root: {uid}");
    assert_eq!(value("VOLUME"), ["[\"/var/lib/helix\"]"]);
    assert_eq!(value("EXPOSE"), ["7700"]);
    let hc = value("HEALTHCHECK");
    assert_eq!(hc.len(), 1);
    let (opts, cmd) = hc[0].split_once("CMD ").expect("HEALTHCHECK CMD");
    assert!(
        opts.contains("--interval=") && opts.contains("--timeout="),
        "{opts}"
    );
    let cmd = json_array(cmd);
    assert_eq!(cmd[0], "curl");
    assert_eq!(cmd.last().expect("url"), "http://127.0.0.1:7700/healthz");

    let args = dockerfile_command();
    assert_eq!(
        args,
        [
            "--config",
            "/etc/helix/server.toml",
            "--listen",
            "0.0.0.0:7700",
            "--data-dir",
            "/var/lib/helix"
        ]
    );
    // The build context filter keeps target dirs (gigabytes) out.
    let ignore = read(&deploy("Dockerfile.dockerignore"));
    assert!(ignore.lines().any(|l| l.trim() == "**/target"));
}

// ---------------------------------------------------------------- compose

fn yaml_docs(rel: &str) -> Vec<Yaml> {
    let path = deploy(rel);
    let docs = YamlLoader::load_from_str(&read(&path))
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()));
    assert!(!docs.is_empty(), "{} is empty", path.display());
    docs
}

fn strings(y: &Yaml) -> Vec<String> {
    y.as_vec()
        .unwrap_or_else(|| panic!("expected a list, got {y:?}"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("expected a string, got {v:?}"))
                .to_string()
        })
        .collect()
}

/// The compose health check without its `CMD` marker.
fn compose_healthcheck() -> Vec<String> {
    let docs = yaml_docs("compose.yaml");
    let test = strings(&docs[0]["services"]["helix-server"]["healthcheck"]["test"]);
    assert_eq!(test[0], "CMD", "exec-form health check");
    test[1..].to_vec()
}

fn compose_command() -> Vec<String> {
    let docs = yaml_docs("compose.yaml");
    strings(&docs[0]["services"]["helix-server"]["command"])
}

#[test]
fn compose_file_keeps_data_in_a_named_volume_and_mounts_the_config_read_only() {
    let docs = yaml_docs("compose.yaml");
    let c = &docs[0];
    let svc = &c["services"]["helix-server"];
    assert!(!svc.is_badvalue(), "service helix-server");
    assert_eq!(svc["build"]["context"].as_str(), Some(".."));
    assert_eq!(
        svc["build"]["dockerfile"].as_str(),
        Some("deploy/Dockerfile")
    );
    assert!(deploy("..").join("deploy/Dockerfile").is_file());
    assert_eq!(svc["restart"].as_str(), Some("unless-stopped"));
    assert_eq!(strings(&svc["ports"]), ["7700:7700"]);

    let volumes = strings(&svc["volumes"]);
    let named = c["volumes"].as_hash().expect("top-level volumes");
    let data = volumes
        .iter()
        .find(|v| v.ends_with(":/var/lib/helix"))
        .expect("data volume mounted on /var/lib/helix");
    let vol_name = data.split(':').next().expect("volume name");
    assert!(
        named.contains_key(&Yaml::String(vol_name.to_string())),
        "{vol_name} is a named (persistent) volume"
    );
    let cfg = volumes
        .iter()
        .find(|v| v.contains(":/etc/helix/server.toml"))
        .expect("config mount");
    assert!(cfg.ends_with(":ro"), "config mounted read-only: {cfg}");
    let host = cfg.split(':').next().expect("host path");
    assert!(
        deploy(host).is_file(),
        "compose mounts {host}, which exists"
    );

    let test = strings(&svc["healthcheck"]["test"]);
    assert_eq!(test[0], "CMD");
    assert!(test.iter().any(|t| t.ends_with("/healthz")), "{test:?}");
    assert!(svc["healthcheck"]["interval"].as_str().is_some());
    assert_eq!(svc["stop_signal"].as_str(), Some("SIGTERM"));
    // The command matches the image's default, so both run the same way.
    assert_eq!(compose_command(), dockerfile_command());
}

// ---------------------------------------------------------------- systemd

fn unit() -> Vec<(String, String, String)> {
    let text = read(&deploy("helix-server.service"));
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(s) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = s.to_string();
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("unit line without '=': {line}"));
        out.push((section.clone(), k.trim().to_string(), v.trim().to_string()));
    }
    out
}

fn unit_values(section: &str, key: &str) -> Vec<String> {
    unit()
        .into_iter()
        .filter(|(s, k, _)| s == section && k == key)
        .map(|(_, _, v)| v)
        .collect()
}

fn unit_command() -> Vec<String> {
    let exec = unit_values("Service", "ExecStart");
    assert_eq!(exec.len(), 1, "one ExecStart");
    let words: Vec<String> = exec[0].split_whitespace().map(str::to_string).collect();
    assert_eq!(words[0], "/usr/local/bin/helix-server");
    words[1..].to_vec()
}

#[test]
fn systemd_unit_is_hardened_and_verifies() {
    assert_eq!(
        unit_command(),
        [
            "--config",
            "/etc/helix/server.toml",
            "--data-dir",
            "/var/lib/helix"
        ]
    );
    let one = |k: &str| -> String {
        let v = unit_values("Service", k);
        assert_eq!(v.len(), 1, "[Service] {k} set once: {v:?}");
        v[0].clone()
    };
    let user = unit_values("Service", "User");
    let dynamic = unit_values("Service", "DynamicUser");
    assert!(
        dynamic == ["yes"] || (user.len() == 1 && user[0] != "root"),
        "runs as an unprivileged user"
    );
    for (k, v) in [
        ("StateDirectory", "helix"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("NoNewPrivileges", "yes"),
        ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
        ("CapabilityBoundingSet", ""),
        ("KillSignal", "SIGTERM"),
    ] {
        assert_eq!(one(k), v, "[Service] {k}");
    }
    assert!(unit_values("Service", "SystemCallFilter").contains(&"@system-service".to_string()));
    assert!(
        one("TimeoutStopSec")
            .trim_end_matches('s')
            .parse::<u64>()
            .is_ok()
    );
    assert_eq!(unit_values("Install", "WantedBy"), ["multi-user.target"]);

    // `systemd-analyze verify` wants an executable ExecStart: point it at the built binary.
    let Some(analyze) = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
    else {
        println!("note: systemd-analyze not installed; skipped `systemd-analyze verify`");
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = tmp.path().join("helix-server.service");
    std::fs::write(
        &copy,
        read(&deploy("helix-server.service")).replace(
            "/usr/local/bin/helix-server",
            env!("CARGO_BIN_EXE_helix-server"),
        ),
    )
    .expect("write unit copy");
    let out = Command::new(analyze)
        .arg("verify")
        .arg(&copy)
        .env("SYSTEMD_LOG_LEVEL", "warning")
        .output()
        .expect("systemd-analyze runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Unknown or malformed keys are only warnings ("..., ignoring."): fail on those too.
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("helix-server.service") || l.contains("ignoring"))
        .collect();
    assert!(
        out.status.success() && complaints.is_empty(),
        "systemd-analyze verify: {stderr}"
    );
}

// ---------------------------------------------------------------- Kubernetes

fn k8s_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(deploy("k8s"))
        .expect("deploy/k8s")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .collect();
    files.sort();
    files
}

/// The single object of kind `kind` among all manifests.
fn k8s_object(kind: &str) -> Yaml {
    let mut found: Vec<Yaml> = Vec::new();
    for f in k8s_files() {
        for d in yaml_docs(&format!("k8s/{f}")) {
            if d["kind"].as_str() == Some(kind) {
                found.push(d);
            }
        }
    }
    assert_eq!(found.len(), 1, "exactly one {kind}");
    found.remove(0)
}

fn k8s_container() -> Yaml {
    let d = k8s_object("Deployment");
    let containers = d["spec"]["template"]["spec"]["containers"]
        .as_vec()
        .expect("containers")
        .clone();
    assert_eq!(containers.len(), 1);
    containers[0].clone()
}

fn k8s_command() -> Vec<String> {
    strings(&k8s_container()["args"])
}

#[test]
fn k8s_manifests_parse_and_fit_together() {
    let mut kinds = BTreeSet::new();
    for f in k8s_files() {
        for d in yaml_docs(&format!("k8s/{f}")) {
            let kind = d["kind"].as_str().unwrap_or_else(|| panic!("{f}: no kind"));
            assert!(d["apiVersion"].as_str().is_some(), "{f}: no apiVersion");
            if kind != "Kustomization" {
                assert!(d["metadata"]["name"].as_str().is_some(), "{f}: no name");
            }
            kinds.insert(kind.to_string());
        }
    }
    for k in ["Deployment", "Service", "PersistentVolumeClaim", "Secret"] {
        assert!(kinds.contains(k), "deploy/k8s has a {k}: {kinds:?}");
    }

    let dep = k8s_object("Deployment");
    let spec = &dep["spec"];
    assert_eq!(spec["replicas"].as_i64(), Some(1));
    assert_eq!(spec["strategy"]["type"].as_str(), Some("Recreate"));
    let labels = &spec["template"]["metadata"]["labels"];
    let selector = &spec["selector"]["matchLabels"];
    assert!(selector.as_hash().is_some_and(|h| !h.is_empty()));
    for (k, v) in selector.as_hash().expect("matchLabels") {
        assert_eq!(
            &labels[k.as_str().expect("label")],
            v,
            "pod labels match the selector"
        );
    }
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"].as_bool(), Some(true));
    let uid = pod["securityContext"]["runAsUser"]
        .as_i64()
        .expect("runAsUser");
    assert!(uid > 0);
    // The uid matches the image's USER.
    let user = dockerfile()
        .into_iter()
        .filter(|(o, _)| o == "USER")
        .map(|(_, r)| r)
        .next_back()
        .expect("USER");
    assert_eq!(user.split(':').next(), Some(uid.to_string().as_str()));

    let c = k8s_container();
    assert_eq!(
        c["securityContext"]["allowPrivilegeEscalation"].as_bool(),
        Some(false)
    );
    assert_eq!(c["ports"][0]["containerPort"].as_i64(), Some(7700));
    for probe in ["livenessProbe", "readinessProbe"] {
        assert_eq!(
            c[probe]["httpGet"]["path"].as_str(),
            Some("/healthz"),
            "{probe}"
        );
    }
    assert!(c["resources"]["requests"]["memory"].as_str().is_some());
    assert!(c["resources"]["limits"]["memory"].as_str().is_some());
    let args = k8s_command();
    for pair in [
        ["--config", "/etc/helix/server.toml"],
        ["--data-dir", "/var/lib/helix"],
    ] {
        assert!(
            args.windows(2).any(|w| w == pair),
            "args {args:?} carry {pair:?}"
        );
    }

    // Volumes: the data PVC and the config Secret, mounted where the args say.
    let mounts: Vec<(String, String)> = c["volumeMounts"]
        .as_vec()
        .expect("volumeMounts")
        .iter()
        .map(|m| {
            (
                m["name"].as_str().expect("name").to_string(),
                m["mountPath"].as_str().expect("mountPath").to_string(),
            )
        })
        .collect();
    let volumes = pod["volumes"].as_vec().expect("volumes");
    let volume = |name: &str| -> &Yaml {
        volumes
            .iter()
            .find(|v| v["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("volume {name}"))
    };
    let pvc = k8s_object("PersistentVolumeClaim");
    let (data_vol, _) = mounts
        .iter()
        .find(|(_, p)| p == "/var/lib/helix")
        .expect("data mount");
    assert_eq!(
        volume(data_vol)["persistentVolumeClaim"]["claimName"],
        pvc["metadata"]["name"]
    );
    assert_eq!(strings(&pvc["spec"]["accessModes"]), ["ReadWriteOnce"]);
    assert!(
        pvc["spec"]["resources"]["requests"]["storage"]
            .as_str()
            .is_some()
    );

    let secret = k8s_object("Secret");
    let (cfg_vol, _) = mounts
        .iter()
        .find(|(_, p)| p == "/etc/helix")
        .expect("config mount");
    let sv = &volume(cfg_vol)["secret"];
    assert_eq!(sv["secretName"], secret["metadata"]["name"]);
    assert_eq!(sv["items"][0]["key"].as_str(), Some("server.toml"));
    assert_eq!(sv["items"][0]["path"].as_str(), Some("server.toml"));
    assert!(secret["stringData"]["server.toml"].as_str().is_some());

    let svc = k8s_object("Service");
    for (k, v) in selector.as_hash().expect("matchLabels") {
        assert_eq!(&svc["spec"]["selector"][k.as_str().expect("label")], v);
    }
    assert_eq!(svc["spec"]["ports"][0]["port"].as_i64(), Some(7700));
    let target = &svc["spec"]["ports"][0]["targetPort"];
    assert!(
        target.as_i64() == Some(7700) || target.as_str() == c["ports"][0]["name"].as_str(),
        "Service targets the container port"
    );

    // kustomization.yaml lists every other manifest.
    let kust = yaml_docs("k8s/kustomization.yaml");
    let listed: BTreeSet<String> = strings(&kust[0]["resources"]).into_iter().collect();
    let files: BTreeSet<String> = k8s_files()
        .into_iter()
        .filter(|f| f != "kustomization.yaml")
        .collect();
    assert_eq!(listed, files);
}
