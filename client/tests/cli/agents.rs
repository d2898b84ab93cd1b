//! Every agent's hooks through the real binary, on the payloads each agent really sends:
//! Codex, Copilot CLI and Gemini CLI as captured from their pinned clients
//! (`tests/agents/<agent>/fixtures/`), Cursor as its hook engine builds them
//! (`tests/agents/cursor/`). Each answer must have exactly the shape the agent accepts and
//! carry the entry the event is about. Then the installer per agent: what it writes, that
//! a second install changes nothing, that the written commands run, what `hooks status`
//! says, and that uninstall gives back the files as they were.

use super::hooks::Fixture;
use crate::common::helix;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What an answer must carry.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Context naming this entry.
    Entry(&'static str),
    /// The session-start summary.
    Summary,
    /// An allow of a permission request.
    Allow,
    /// Nothing at all.
    Silent,
}

/// `(agent, fixture file, helix hook, what it must answer)`.
// A table reads better than rustfmt's one field per line.
#[rustfmt::skip]
const CASES: &[(&str, &str, &str, Expect)] = &[
    ("codex", "session-start.json", "session-start", Expect::Summary),
    ("codex", "prompt.json", "prompt", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("codex", "pre-tool-read.json", "ambient", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("codex", "pre-tool-read-sed.json", "ambient", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("codex", "post-tool-fail.json", "post-tool", Expect::Entry("kb:build/linker-openssl.md")),
    ("codex", "post-tool-mcp.json", "post-tool", Expect::Silent),
    ("codex", "subagent-start.json", "subagent-start", Expect::Summary),
    ("codex", "prompt-subagent.json", "prompt", Expect::Silent),
    ("copilot", "session-start.json", "session-start", Expect::Summary),
    ("copilot", "prompt.json", "prompt", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("copilot", "pre-tool-view.json", "ambient", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("copilot", "post-tool-bash-failing.json", "post-tool", Expect::Entry("kb:build/linker-openssl.md")),
    ("copilot", "post-tool-ok.json", "post-tool", Expect::Silent),
    ("copilot", "permission-request-mcp.json", "approve-mcp", Expect::Allow),
    ("copilot", "permission-request.json", "approve-mcp", Expect::Silent),
    ("copilot", "subagent-start.json", "subagent-start", Expect::Summary),
    ("copilot", "prompt-subagent.json", "prompt", Expect::Silent),
    ("gemini", "session-start.json", "session-start", Expect::Summary),
    ("gemini", "before-agent.json", "prompt", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("gemini", "after-tool-read.json", "post-tool", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("gemini", "after-tool-fail.json", "post-tool", Expect::Entry("kb:build/linker-openssl.md")),
    ("gemini", "after-tool-read-error.json", "post-tool", Expect::Silent),
    ("cursor", "session-start.json", "session-start", Expect::Summary),
    ("cursor", "before-submit-prompt.json", "prompt", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("cursor", "pre-tool-read.json", "ambient", Expect::Entry("kb:db/pool-exhaustion.md")),
    ("cursor", "post-tool-shell-failed.json", "post-tool", Expect::Entry("kb:build/linker-openssl.md")),
    ("cursor", "subagent-start.json", "subagent-start", Expect::Summary),
];

fn fixtures_dir(agent: &str) -> PathBuf {
    helix_test_support::workspace_root()
        .join("tests/agents")
        .join(agent)
        .join("fixtures")
}

/// A captured payload with `/path/to/code` made `root`, and its session made `session`.
fn payload(agent: &str, file: &str, root: &Path, session: &str) -> Value {
    let text = std::fs::read_to_string(fixtures_dir(agent).join(file))
        .unwrap_or_else(|e| panic!("{agent}/{file}: {e}"));
    let text = text.replace("/path/to/code", root.to_str().expect("UTF-8 path"));
    let mut v: Value = serde_json::from_str(&text).expect("fixture JSON");
    for key in ["session_id", "sessionId", "conversation_id"] {
        if v.get(key).is_some() {
            v[key] = Value::String(session.into());
        }
    }
    v
}

/// Runs `helix hook <hook> --agent <agent>` with `input`; its stdout.
fn hook(f: &Fixture, agent: &str, hook: &str, input: &Value) -> String {
    let mut cmd = f.command();
    cmd.args(["hook", hook, "--agent", agent])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn helix hook");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(input.to_string().as_bytes())
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("helix hook runs");
    assert_eq!(out.status.code(), Some(0), "hooks always exit 0");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// The answer's fields, checked against what `agent` accepts: Codex fails a hook on any
/// field it does not know, Copilot and Cursor read only their top-level field.
fn answer(agent: &str, input: &Value, stdout: &str) -> Value {
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    match agent {
        "codex" | "gemini" if v.get("hookSpecificOutput").is_some() => {
            assert_eq!(keys(&v), ["hookSpecificOutput"], "{stdout}");
            let inner = &v["hookSpecificOutput"];
            assert_eq!(
                keys(inner),
                ["additionalContext", "hookEventName"],
                "{stdout}"
            );
            assert_eq!(inner["hookEventName"], input["hook_event_name"], "{stdout}");
        }
        "codex" => assert_eq!(keys(&v), ["decision", "reason"], "{stdout}"),
        "copilot" => assert!(
            [
                vec!["additionalContext"],
                vec!["behavior"],
                vec!["decision", "reason"]
            ]
            .contains(&keys(&v).iter().map(String::as_str).collect()),
            "{stdout}"
        ),
        "cursor" => assert!(
            [vec!["additional_context"], vec!["followup_message"]]
                .contains(&keys(&v).iter().map(String::as_str).collect()),
            "{stdout}"
        ),
        other => panic!("no shape for {other}: {stdout}"),
    }
    v
}

/// The context text of an answer, whatever the agent's field.
fn text_of(v: &Value) -> &str {
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .or_else(|| v["additionalContext"].as_str())
        .or_else(|| v["additional_context"].as_str())
        .unwrap_or("")
}

#[test]
fn every_agent_gets_the_entries_in_the_form_it_accepts() {
    let f = Fixture::new();
    for (n, (agent, file, hook_name, expect)) in CASES.iter().enumerate() {
        // Each case a session of its own: no entry is held back as already shown.
        let input = payload(agent, file, &f.root, &format!("case-{n}"));
        let out = hook(&f, agent, hook_name, &input);
        let what = format!("{agent} {file} → helix hook {hook_name}");
        match expect {
            Expect::Silent => {
                assert_eq!(out, "", "{what}");
                continue;
            }
            Expect::Allow => {
                let v = answer(agent, &input, &out);
                assert!(v.get("behavior").is_some(), "{what}: {out}");
                continue;
            }
            Expect::Summary | Expect::Entry(_) => {}
        }
        assert!(!out.is_empty(), "{what}: silent");
        let v = answer(agent, &input, &out);
        let text = text_of(&v);
        match expect {
            Expect::Entry(id) => assert!(text.contains(id), "{what}: {text}"),
            _ => assert!(text.starts_with("helix team knowledge"), "{what}: {text}"),
        }
        if *agent == "gemini" {
            // Gemini shows `<` and `>` escaped: helix's own text has none.
            assert!(
                text.contains("PROJECT:ID") && !text.contains("<project:id>"),
                "{what}: {text}"
            );
            assert!(
                !text.contains("<words>") && !text.contains("<topic>"),
                "{what}: {text}"
            );
        }
        if *agent == "copilot" && *hook_name == "session-start" {
            assert!(text.contains("`helix-search` tool"), "{what}: {text}");
        }
    }
}

#[test]
fn a_failing_session_is_reminded_at_stop_in_each_agents_form() {
    let f = Fixture::new();
    for (agent, fail, stop, field) in [
        ("codex", "post-tool-fail.json", "stop.json", "reason"),
        (
            "copilot",
            "post-tool-bash-failing.json",
            "agent-stop.json",
            "reason",
        ),
        (
            "cursor",
            "post-tool-shell-failed.json",
            "stop.json",
            "followup_message",
        ),
    ] {
        let session = format!("stop-{agent}");
        hook(
            &f,
            agent,
            "post-tool",
            &payload(agent, fail, &f.root, &session),
        );
        let input = payload(agent, stop, &f.root, &session);
        let out = hook(&f, agent, "stop", &input);
        let v = answer(agent, &input, &out);
        assert!(
            v[field].as_str().is_some_and(|r| r.contains("helix store")),
            "{agent}: {out}"
        );
        assert_eq!(hook(&f, agent, "stop", &input), "", "{agent}: only once");
    }
}

#[test]
fn the_injection_log_names_the_agent() {
    let f = Fixture::new();
    let input = payload("copilot", "prompt.json", &f.root, "log-1");
    assert!(!hook(&f, "copilot", "prompt", &input).is_empty());
    let out = f
        .command()
        .args(["log", "--agent", "copilot"])
        .output()
        .expect("helix log");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("prompt  copilot session log-1"), "{text}");
    let out = f
        .command()
        .args(["log", "--agent", "codex"])
        .output()
        .expect("helix log");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// `helix ARGS` in `dir` with helix on PATH, as after `cargo install`.
fn helix_in(f: &Fixture, dir: &Path, args: &[&str]) -> std::process::Output {
    let bin = Path::new(helix()).parent().expect("bin dir");
    f.command()
        .args(args)
        .current_dir(dir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .stdin(Stdio::null())
        .output()
        .expect("run helix")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `command`/`bash` string in a JSON hooks file that runs helix.
fn helix_commands(doc: &Value, out: &mut Vec<String>) {
    match doc {
        Value::Object(m) => {
            for (k, v) in m {
                match v.as_str() {
                    Some(c) if (k == "command" || k == "bash") && c.contains(" hook ") => {
                        out.push(c.to_string())
                    }
                    _ => helix_commands(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| helix_commands(v, out)),
        _ => {}
    }
}

#[test]
fn each_agents_installer_merges_runs_and_uninstalls_exactly() {
    let f = Fixture::new();
    // What the project holds before: other tools' hooks and servers, which must survive.
    let before: [(&str, &str, &str); 4] = [
        (
            "codex",
            ".codex/hooks.json",
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#,
        ),
        (
            "copilot",
            ".github/mcp.json",
            r#"{"mcpServers":{"db":{"type":"local","command":"db-mcp","tools":["*"]}}}"#,
        ),
        (
            "gemini",
            ".gemini/settings.json",
            r#"{"theme":"dark","hooks":{"BeforeAgent":[{"hooks":[{"type":"command","command":"./audit.sh"}]}]}}"#,
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            r#"{"version":1,"hooks":{"afterFileEdit":[{"command":"./fmt.sh"}]}}"#,
        ),
    ];
    f.write(".codex/config.toml", "# team settings\nmodel = \"o3\"\n");
    for (_, path, text) in &before {
        // As the installer writes JSON (pretty, a final newline), so that uninstalling can
        // give back the very bytes.
        let v: Value = serde_json::from_str(text).expect("JSON");
        f.write(
            path,
            &format!("{}\n", serde_json::to_string_pretty(&v).expect("render")),
        );
    }
    let written: [(&str, &[&str]); 4] = [
        ("codex", &[".codex/hooks.json", ".codex/config.toml"]),
        ("copilot", &[".github/hooks/helix.json", ".github/mcp.json"]),
        ("gemini", &[".gemini/settings.json"]),
        ("cursor", &[".cursor/hooks.json", ".cursor/mcp.json"]),
    ];
    for (agent, files) in written {
        let snapshot: Vec<Option<String>> = files
            .iter()
            .map(|p| std::fs::read_to_string(f.root.join(p)).ok())
            .collect();
        // --dry-run writes nothing.
        let out = helix_in(
            &f,
            &f.root,
            &[
                "hooks",
                "install",
                "--agent",
                agent,
                "--project",
                "--dry-run",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (p, s) in files.iter().zip(&snapshot) {
            assert_eq!(
                &std::fs::read_to_string(f.root.join(p)).ok(),
                s,
                "{agent} dry run wrote {p}"
            );
        }
        let out = helix_in(
            &f,
            &f.root,
            &["hooks", "install", "--agent", agent, "--project"],
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{agent}: {err}");
        assert!(err.contains("wrote"), "{agent}: {err}");
        let hooks_file = f.root.join(files[0]);
        let mut commands = Vec::new();
        helix_commands(
            &serde_json::from_str(&read(&hooks_file)).expect("JSON"),
            &mut commands,
        );
        let adapter = helix_client::hook::agent::find(agent).expect("agent");
        assert_eq!(
            commands.len(),
            adapter.bindings.len(),
            "{agent}: {commands:?}"
        );
        assert!(
            commands
                .iter()
                .all(|c| c.starts_with("helix hook ") && c.contains(&format!("--agent {agent}"))),
            "{agent}: {commands:?}"
        );
        // The MCP server is registered where the agent reads it.
        let mcp = read(&f.root.join(files[files.len() - 1]));
        assert!(
            mcp.contains("helix") && mcp.contains("mcp"),
            "{agent}: {mcp}"
        );
        // The written commands run as the agent would run them, and answer.
        let prompt = commands
            .iter()
            .find(|c| c.contains("hook session-start"))
            .expect("a session-start hook");
        let input = payload(agent, "session-start.json", &f.root, "inst");
        let bin = Path::new(helix()).parent().expect("bin dir");
        let mut sh = Command::new("sh");
        let mut child =
            helix_test_support::isolate(sh.args(["-c", prompt]).current_dir(&f.root), &f.home)
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .env("HELIX_SYNC_MAX_AGE", "off")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("sh");
        {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.to_string().as_bytes())
                .expect("write");
        }
        let out = child.wait_with_output().expect("sh runs");
        assert!(out.status.success());
        let v = answer(agent, &input, &String::from_utf8_lossy(&out.stdout));
        assert!(text_of(&v).starts_with("helix team knowledge"), "{agent}");
        // Installing again changes nothing.
        let out = helix_in(
            &f,
            &f.root,
            &["hooks", "install", "--agent", agent, "--project"],
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("already up to date"),
            "{agent}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Status names the agent and its installation.
        let out = helix_in(&f, &f.root, &["hooks", "status"]);
        let status = String::from_utf8_lossy(&out.stdout);
        assert!(
            status.contains(&format!("{} hooks (project", adapter.title)),
            "{agent}: {status}"
        );
        // Uninstall gives back exactly what was there, and removes what helix created.
        let out = helix_in(
            &f,
            &f.root,
            &["hooks", "uninstall", "--agent", agent, "--project"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (p, s) in files.iter().zip(&snapshot) {
            assert_eq!(
                &std::fs::read_to_string(f.root.join(p)).ok(),
                s,
                "{agent}: {p} after uninstall"
            );
        }
    }
}

#[test]
fn status_says_what_keeps_an_agent_from_running_the_hooks() {
    let f = Fixture::new();
    for agent in ["codex", "copilot", "gemini"] {
        let out = helix_in(
            &f,
            &f.root,
            &["hooks", "install", "--agent", agent, "--project"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("will not run these hooks yet"),
            "{agent}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = helix_in(&f, &f.root, &["hooks", "status"]);
    let status = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{status}");
    assert!(
        status.contains("/hooks") && status.contains("approve"),
        "{status}"
    );
    assert!(status.contains("trustedFolders"), "{status}");
    assert!(status.contains("trustedFolders.json"), "{status}");
    // The user trusts the folders as each agent records it.
    let root = f.root.to_str().expect("UTF-8");
    f.write_home(
        ".copilot/config.json",
        // As Copilot rewrites it after every run: two comment lines on top.
        &format!(
            "// User settings belong in settings.json.\n// This file is managed automatically.\n{{\"trustedFolders\":[{root:?}],\"firstLaunchAt\":\"2026-11-28T17:00:00Z\"}}\n"
        ),
    );
    f.write_home(
        ".gemini/trustedFolders.json",
        &format!(r#"{{{root:?}:"TRUST_FOLDER"}}"#),
    );
    let out = helix_in(&f, &f.root, &["hooks", "status"]);
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(!status.contains("trustedFolders.json"), "{status}");
    assert!(
        !status.contains("~/.copilot/config.json") && !status.contains("is not a trusted folder"),
        "{status}"
    );
    assert!(
        status.contains("approve"),
        "Codex still waits for /hooks: {status}"
    );
}

#[test]
fn all_installs_for_the_agents_found() {
    let f = Fixture::new();
    for dir in [".gemini", ".cursor"] {
        std::fs::create_dir_all(f.home.join(dir)).expect("mkdir");
    }
    let out = helix_in(
        &f,
        &f.root,
        &["hooks", "install", "--agent", "all", "--project"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("agents found: gemini, cursor"), "{err}");
    assert!(f.root.join(".gemini/settings.json").is_file());
    assert!(f.root.join(".cursor/hooks.json").is_file());
    assert!(!f.root.join(".codex").exists() && !f.root.join(".claude").exists());
    let out = helix_in(&f, &f.root, &["hooks", "install", "--agent", "vim"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown agent"));
}

/// The Gemini CLI extension `helix hooks plugin DIR --agent gemini` writes is the one the
/// repository ships (plugins/gemini/), and its hooks answer when helix is on PATH and stay
/// silent, exiting 0, when it is not (Gemini takes a failed hook for a refusal).
#[test]
fn the_gemini_extension_is_generated_and_runs_with_or_without_helix() {
    let f = Fixture::new();
    let dir = f.home.join("ext");
    let out = helix_in(
        &f,
        &f.root,
        &[
            "hooks",
            "plugin",
            dir.to_str().expect("UTF-8"),
            "--agent",
            "gemini",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shipped = helix_test_support::workspace_root().join("plugins/gemini");
    for rel in ["gemini-extension.json", "hooks/hooks.json"] {
        assert_eq!(
            read(&shipped.join(rel)),
            read(&dir.join(rel)),
            "plugins/gemini/{rel} differs: run `helix hooks plugin plugins/gemini --agent gemini` at the repository root"
        );
    }
    let hooks: Value = serde_json::from_str(&read(&dir.join("hooks/hooks.json"))).expect("JSON");
    let start = hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .expect("a SessionStart command");
    let input = payload("gemini", "session-start.json", &f.root, "ext");
    let bin = Path::new(helix()).parent().expect("bin dir");
    for (path, answers) in [
        (format!("{}:/usr/bin:/bin", bin.display()), true),
        ("/usr/bin:/bin".to_string(), false),
    ] {
        let mut sh = Command::new("sh");
        let mut child =
            helix_test_support::isolate(sh.args(["-c", start]).current_dir(&f.root), &f.home)
                .env("PATH", &path)
                .env("HELIX_SYNC_MAX_AGE", "off")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sh");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().expect("stdin");
            // Without helix the guarded command exits without reading its stdin: the pipe
            // may be closed before the payload is written, which is no failure.
            match stdin.write_all(input.to_string().as_bytes()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe && !answers => {}
                r => r.expect("write"),
            }
        }
        let out = child.wait_with_output().expect("sh runs");
        assert_eq!(out.status.code(), Some(0), "PATH={path}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if answers {
            let v = answer("gemini", &input, &stdout);
            assert!(text_of(&v).starts_with("helix team knowledge"), "{stdout}");
        } else {
            assert!(
                stdout.is_empty() && out.stderr.is_empty(),
                "silent without helix: {stdout}"
            );
        }
    }
}
