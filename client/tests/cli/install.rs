//! `helix hooks install|uninstall|status` on real settings files that hold other tools'
//! hooks and keys: round trips, idempotence, backups, dry runs and invalid JSON.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{Client, HELIX};

const EVENTS: &[(&str, &str)] = &[
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "prompt"),
    ("PreToolUse", "ambient"),
    ("PostToolUse", "post-build"),
    ("PostToolUseFailure", "error"),
    ("PreCompact", "pre-compact"),
    ("Stop", "stop"),
    ("SubagentStart", "subagent-start"),
    ("PermissionRequest", "approve-mcp"),
];

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

impl Env {
    fn new() -> Env {
        let Client {
            tmp,
            root: repo,
            home,
        } = Client::new();
        std::fs::create_dir_all(repo.join("src/deep")).expect("mkdir repo");
        std::fs::write(
            repo.join(".helix.toml"),
            "local = \"knowledge\"\nproject = \"kb\"\n",
        )
        .expect("write config");
        Env {
            _tmp: tmp,
            home,
            repo,
        }
    }

    fn user_settings(&self) -> PathBuf {
        self.home.join(".claude/settings.json")
    }

    fn project_settings(&self) -> PathBuf {
        self.repo.join(".claude/settings.json")
    }

    fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        Command::new(HELIX)
            .args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("config"))
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env("XDG_DATA_HOME", self.home.join("data"))
            .stdin(Stdio::null())
            .output()
            .expect("run helix")
    }

    /// Runs `helix hooks ...` from a subdirectory of the repository; asserts success.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run_in(&self.repo.join("src/deep"), args);
        assert!(
            out.status.success(),
            "helix {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 stdout")
    }
}

fn write_json(path: &Path, v: &Value) -> String {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let text = format!("{}\n", serde_json::to_string_pretty(v).expect("render"));
    std::fs::write(path, &text).expect("write");
    text
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Settings of a user who already has another tool's hooks and unrelated keys, in the
/// exact layout helix writes (two-space JSON), keys deliberately not sorted.
const FOREIGN: &str = r#"{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(git status)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "other-tool guard",
            "timeout": 3
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "statusLine": {
    "type": "command",
    "command": "starship"
  }
}
"#;

fn write_foreign(path: &Path) -> String {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, FOREIGN).expect("write");
    FOREIGN.to_string()
}

/// `(event, matcher, command)` of every helix handler in a settings document.
fn helix_handlers(doc: &Value) -> Vec<(String, Option<String>, String)> {
    let mut out = Vec::new();
    for (event, groups) in doc["hooks"].as_object().into_iter().flatten() {
        for g in groups.as_array().into_iter().flatten() {
            for h in g["hooks"].as_array().into_iter().flatten() {
                let cmd = h["command"].as_str().unwrap_or_default();
                if cmd.contains(" hook ")
                    && cmd
                        .split_whitespace()
                        .next()
                        .is_some_and(|p| p.trim_matches('\'').ends_with("helix"))
                {
                    assert_eq!(h["type"], "command");
                    let t = h["timeout"].as_u64().expect("timeout in seconds");
                    assert!((1..=30).contains(&t), "small timeout: {t}");
                    out.push((
                        event.clone(),
                        g["matcher"].as_str().map(str::to_string),
                        cmd.to_string(),
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn user_install_twice_then_uninstall_round_trips_with_other_hooks_present() {
    let env = Env::new();
    let original = write_foreign(&env.user_settings());

    env.ok(&["hooks", "install"]);
    let once = read(&env.user_settings());
    let doc: Value = serde_json::from_str(&once).expect("valid JSON");
    let handlers = helix_handlers(&doc);
    assert_eq!(handlers.len(), 9, "{once}");
    for (event, hook) in EVENTS {
        let (_, matcher, cmd) = handlers
            .iter()
            .find(|(e, _, _)| e == event)
            .unwrap_or_else(|| panic!("{event} missing"));
        // The user file names this binary by absolute path.
        assert!(
            cmd.starts_with('/') && cmd.ends_with(&format!(" hook {hook}")),
            "{cmd}"
        );
        match *event {
            "PreToolUse" => assert_eq!(
                matcher.as_deref(),
                Some("Read|Edit|Write|MultiEdit|Glob|Grep|NotebookEdit")
            ),
            "PostToolUse" => assert_eq!(matcher.as_deref(), Some("Bash|mcp__helix__store")),
            "PostToolUseFailure" => assert_eq!(matcher.as_deref(), Some("Bash")),
            "PermissionRequest" => assert_eq!(matcher.as_deref(), Some("mcp__helix__.*")),
            _ => assert_eq!(matcher, &None),
        }
    }
    // Everything else is kept, in place.
    assert_eq!(doc["model"], "opus");
    assert_eq!(doc["statusLine"]["command"], "starship");
    assert_eq!(
        doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "other-tool guard"
    );
    assert_eq!(
        doc["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    let keys: Vec<&str> = once
        .lines()
        .filter(|l| l.starts_with("  \""))
        .map(|l| l.trim().split('"').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "statusLine"]);
    assert_eq!(
        read(&env.user_settings().with_extension("json.bak")),
        original,
        "backup of the previous file"
    );

    // Idempotent: a second run changes nothing.
    env.ok(&["hooks", "install", "--user"]);
    assert_eq!(read(&env.user_settings()), once);

    env.ok(&["hooks", "uninstall"]);
    assert_eq!(
        read(&env.user_settings()),
        original,
        "uninstall restores the file exactly"
    );
    env.ok(&["hooks", "uninstall"]);
    assert_eq!(read(&env.user_settings()), original);
}

#[test]
fn installed_user_hooks_run_as_written() {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    let doc: Value = serde_json::from_str(&read(&env.user_settings())).expect("valid JSON");
    let (_, _, cmd) = helix_handlers(&doc)
        .into_iter()
        .find(|(e, _, _)| e == "PermissionRequest")
        .expect("approve-mcp");
    let out = Command::new("sh")
        .args(["-c", &cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(br#"{"tool_name":"mcp__helix__read"}"#)?;
            c.wait_with_output()
        })
        .expect("run installed command");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("hook output is JSON");
    assert_eq!(v["hookSpecificOutput"]["decision"]["behavior"], "allow");
}

#[test]
fn project_install_writes_settings_and_mcp_json_and_uninstall_removes_only_that() {
    let env = Env::new();
    let mcp = env.repo.join(".mcp.json");
    let mcp_original = write_json(
        &mcp,
        &json!({"mcpServers": {"other": {"command": "other-mcp", "args": []}}}),
    );

    env.ok(&["hooks", "install", "--project"]);
    let doc: Value = serde_json::from_str(&read(&env.project_settings())).expect("valid JSON");
    let handlers = helix_handlers(&doc);
    assert_eq!(handlers.len(), 9);
    // A committed file names `helix`, not a machine-specific path.
    assert!(
        handlers
            .iter()
            .all(|(_, _, c)| c.starts_with("helix hook ")),
        "{handlers:?}"
    );
    let m: Value = serde_json::from_str(&read(&mcp)).expect("valid .mcp.json");
    assert_eq!(
        m["mcpServers"]["helix"],
        json!({"command": "helix", "args": ["mcp"]})
    );
    assert_eq!(m["mcpServers"]["other"]["command"], "other-mcp");
    assert!(
        !env.user_settings().exists(),
        "the user file is not touched"
    );

    let settings_once = read(&env.project_settings());
    let mcp_once = read(&mcp);
    env.ok(&["hooks", "install", "--project"]);
    assert_eq!(read(&env.project_settings()), settings_once);
    assert_eq!(read(&mcp), mcp_once);

    env.ok(&["hooks", "uninstall", "--project"]);
    assert_eq!(read(&mcp), mcp_original);
    // The settings file held nothing but helix hooks: it goes away with them.
    assert!(!env.project_settings().exists());
}

#[test]
fn dry_run_prints_the_result_and_writes_nothing() {
    let env = Env::new();
    let original = write_foreign(&env.user_settings());
    let out = env.ok(&["hooks", "install", "--dry-run"]);
    assert!(
        out.contains(&env.user_settings().display().to_string()),
        "{out}"
    );
    assert!(
        out.contains("hook session-start") && out.contains("other-tool guard"),
        "{out}"
    );
    assert_eq!(read(&env.user_settings()), original);
    assert!(!env.user_settings().with_extension("json.bak").exists());

    let out = env.ok(&["hooks", "install", "--project", "--dry-run"]);
    assert!(
        out.contains("\"mcpServers\"") && out.contains("helix hook ambient"),
        "{out}"
    );
    assert!(!env.project_settings().exists());
    assert!(!env.repo.join(".mcp.json").exists());
}

#[test]
fn invalid_json_is_reported_and_left_untouched() {
    let env = Env::new();
    std::fs::create_dir_all(env.user_settings().parent().expect("parent")).expect("mkdir");
    let broken = "{\"hooks\": {\"Stop\": [ }\n";
    std::fs::write(env.user_settings(), broken).expect("write");
    for args in [
        &["hooks", "install"][..],
        &["hooks", "uninstall"],
        &["hooks", "status"],
    ] {
        let out = env.run_in(&env.repo, args);
        assert!(!out.status.success(), "{args:?} must fail on invalid JSON");
        let err = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(
            err.contains("settings.json") && err.contains("not valid JSON"),
            "{err}"
        );
        assert_eq!(
            read(&env.user_settings()),
            broken,
            "{args:?} left the file untouched"
        );
    }
    // Valid JSON of the wrong shape is refused too.
    write_json(
        &env.user_settings(),
        &json!({"hooks": ["not", "an", "object"]}),
    );
    let out = env.run_in(&env.repo, &["hooks", "install"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`hooks` is not a JSON object"));
}

#[test]
fn status_reports_each_file_and_whether_the_binary_exists() {
    let env = Env::new();
    let out = env.ok(&["hooks", "status"]);
    assert!(out.contains("user: ") && out.contains("no file"), "{out}");

    env.ok(&["hooks", "install"]);
    env.ok(&["hooks", "install", "--project"]);
    let out = env.ok(&["hooks", "status"]);
    let user = out
        .lines()
        .find(|l| l.starts_with("user: "))
        .expect("user line");
    assert!(
        user.contains("9 of 9 helix hooks installed") && user.contains("(found)"),
        "{out}"
    );
    let project = out
        .lines()
        .find(|l| l.starts_with("project: "))
        .expect("project line");
    assert!(project.contains("9 of 9 helix hooks installed"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("mcp: ") && l.contains("helix MCP server registered")),
        "{out}"
    );

    // A moved binary is reported missing.
    let text = read(&env.user_settings());
    let doc: Value = serde_json::from_str(&text).expect("valid JSON");
    let (_, _, cmd) = helix_handlers(&doc).into_iter().next().expect("a handler");
    let program = cmd.split(" hook ").next().expect("program").to_string();
    std::fs::write(
        env.user_settings(),
        text.replace(&program, "/nonexistent/bin/helix"),
    )
    .expect("write");
    let out = env.ok(&["hooks", "status"]);
    assert!(out.contains("/nonexistent/bin/helix (MISSING)"), "{out}");
    // Installing again repairs the path and leaves one handler per event.
    env.ok(&["hooks", "install"]);
    let doc: Value = serde_json::from_str(&read(&env.user_settings())).expect("valid JSON");
    let handlers = helix_handlers(&doc);
    assert_eq!(handlers.len(), 9);
    assert!(
        handlers.iter().all(|(_, _, c)| c.starts_with(&program)),
        "{handlers:?}"
    );
}
