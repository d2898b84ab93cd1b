//! `helix hooks install|uninstall|status|plugin` on real settings files that hold other tools'
//! hooks and keys: round trips, idempotence, backups, dry runs and invalid JSON; the MCP
//! registration per scope; refusing a `helix` Claude Code would not find; duplicates.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{Client, helix};

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

    /// `helix ARGS` in `dir`, with the directory of the helix under test on PATH (as after
    /// `cargo install`).
    fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.run_with_path(dir, args, &path_with_helix())
    }

    fn run_with_path(&self, dir: &Path, args: &[&str], path: &str) -> Output {
        let mut c = Command::new(helix());
        helix_test_support::isolate(c.args(args).current_dir(dir), &self.home)
            .env("PATH", path)
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("run helix")
    }

    /// One entry in the local knowledge directory `.helix.toml` names.
    fn knowledge(&self) {
        let dir = self.repo.join("knowledge/db");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("pool.md"),
            "# Pool exhaustion\n\nRaise max_connections.\n",
        )
        .expect("entry");
    }

    /// `~/.claude.json`, where Claude Code keeps user-scope MCP servers.
    fn global_config(&self) -> PathBuf {
        self.home.join(".claude.json")
    }

    /// The backup the installer kept of `path` (in `$XDG_STATE_HOME/helix/backups/`).
    fn backup_of(&self, path: &Path) -> Option<String> {
        let dir = path.parent()?.file_name()?.to_string_lossy().into_owned();
        let name = format!("{dir}-{}.", path.file_name()?.to_string_lossy());
        let backups = self.home.join(".local/state/helix/backups");
        let found = std::fs::read_dir(backups)
            .ok()?
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with(&name))?;
        std::fs::read_to_string(found.path()).ok()
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

/// PATH with the helix under test first.
fn path_with_helix() -> String {
    let dir = Path::new(helix()).parent().expect("helix has a directory");
    format!("{}:/usr/bin:/bin", dir.display())
}

/// PATH of a shell where helix is not installed.
const PATH_WITHOUT_HELIX: &str = "/usr/bin:/bin";

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
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
        env.backup_of(&env.user_settings()).as_deref(),
        Some(original.as_str()),
        "backup of the previous file"
    );
    assert!(!env.user_settings().with_extension("json.bak").exists());

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
    let mut sh = Command::new("sh");
    let out = helix_test_support::isolate(&mut sh, &env.home)
        .env("PATH", path_with_helix())
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
    // The settings file held nothing but helix hooks: it goes away with them, and so does
    // the `.claude/` directory it leaves empty.
    assert!(!env.project_settings().exists());
    assert!(!env.repo.join(".claude").exists());
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
    assert!(env.backup_of(&env.user_settings()).is_none());
    assert!(
        out.contains("mcpServers.helix = {\"type\":\"stdio\""),
        "the user MCP registration, not all of ~/.claude.json: {out}"
    );
    assert!(!env.global_config().exists());

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
    assert!(
        out.contains(
            "duplicate: helix hooks are installed 2 times (user settings, project settings)"
        ),
        "{out}"
    );
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
    let o = env.run_in(&env.repo, &["hooks", "status"]);
    let out = stdout(&o);
    assert!(out.contains("/nonexistent/bin/helix (MISSING)"), "{out}");
    assert_eq!(
        o.status.code(),
        Some(1),
        "a missing binary fails status: {out}"
    );
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

/// A project install from a shell where `helix` is not on PATH must not succeed silently (nor
/// `doctor` say "all good") while every hook fails with `helix: not found` in Claude Code.
#[test]
fn project_install_refuses_a_helix_claude_code_would_not_find_and_status_and_doctor_fail() {
    let env = Env::new();
    env.knowledge();
    let synced = env.run_in(&env.repo, &["sync"]);
    assert!(synced.status.success(), "{}", stderr(&synced));

    let out = env.run_with_path(
        &env.repo,
        &["hooks", "install", "--project"],
        PATH_WITHOUT_HELIX,
    );
    assert_eq!(out.status.code(), Some(2), "refused: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("`helix` is not on PATH") && err.contains("--absolute"),
        "{err}"
    );
    assert!(!env.project_settings().exists(), "nothing written");
    assert!(!env.repo.join(".mcp.json").exists());

    // --absolute names this binary instead: it resolves anywhere on this machine.
    let out = env.run_with_path(
        &env.repo,
        &["hooks", "install", "--project", "--absolute", "--dry-run"],
        PATH_WITHOUT_HELIX,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let real = std::fs::canonicalize(helix()).expect("helix path");
    assert!(
        stdout(&out).contains(&format!("{} hook prompt", real.display())),
        "{}",
        stdout(&out)
    );

    // Forced, the committed file names `helix`; status and doctor say it cannot start.
    let out = env.run_with_path(
        &env.repo,
        &["hooks", "install", "--project", "--force"],
        PATH_WITHOUT_HELIX,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("WARNING"), "{}", stderr(&out));
    for args in [&["hooks", "status"][..], &["doctor"]] {
        let out = env.run_with_path(&env.repo, args, PATH_WITHOUT_HELIX);
        let text = stdout(&out) + &stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
        assert!(
            text.contains("helix (MISSING)") && text.contains("not on PATH"),
            "{args:?}: {text}"
        );
        assert!(!text.contains("all good"), "{text}");
    }
    // With helix on PATH all is well again.
    let out = env.run_in(&env.repo, &["doctor"]);
    assert!(out.status.success(), "{}", stdout(&out));
}

/// A user-level install registers the MCP server the hooks tell the model to call
/// (`mcp__helix__search`), and `--mcp none` names only the CLI.
#[test]
fn user_install_registers_the_mcp_server_for_the_user_and_no_mcp_names_only_the_cli() {
    let env = Env::new();
    write_json(
        &env.global_config(),
        &json!({"userID": "u1", "projects": {"/x": {"allowedTools": []}}, "mcpServers": {"db": {"command": "db-mcp", "args": []}}}),
    );
    env.ok(&["hooks", "install"]);
    let global: Value = serde_json::from_str(&read(&env.global_config())).expect("JSON");
    let real = std::fs::canonicalize(helix()).expect("helix path");
    // The shape `claude mcp add --scope user helix -- <helix> mcp` writes.
    assert_eq!(
        global["mcpServers"]["helix"],
        json!({"type": "stdio", "command": real, "args": ["mcp"], "env": {}})
    );
    assert_eq!(global["userID"], "u1", "Claude Code's own state is kept");
    assert_eq!(global["mcpServers"]["db"]["command"], "db-mcp");
    let status = env.ok(&["hooks", "status"]);
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("mcp-user: ") && l.ends_with("(found)")),
        "{status}"
    );

    // --no-mcp: no registration, and the hooks name only the CLI.
    env.ok(&["hooks", "install", "--no-mcp"]);
    let global: Value = serde_json::from_str(&read(&env.global_config())).expect("JSON");
    assert!(global["mcpServers"].get("helix").is_none(), "{global}");
    let doc: Value = serde_json::from_str(&read(&env.user_settings())).expect("JSON");
    let handlers = helix_handlers(&doc);
    assert!(
        handlers.iter().all(|(_, _, c)| c.ends_with(" --mcp none")),
        "{handlers:?}"
    );
    let (_, _, start) = handlers
        .iter()
        .find(|(e, _, _)| e == "SessionStart")
        .expect("session-start");
    env.knowledge();
    assert!(env.run_in(&env.repo, &["sync"]).status.success());
    let mut sh = Command::new("sh");
    let out = helix_test_support::isolate(sh.args(["-c", start]).current_dir(&env.repo), &env.home)
        .env("HELIX_SYNC_MAX_AGE", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().expect("stdin").write_all(
                format!(
                    r#"{{"session_id":"s1","cwd":{:?},"hook_event_name":"SessionStart","source":"startup"}}"#,
                    env.repo
                )
                .as_bytes(),
            )?;
            c.wait_with_output()
        })
        .expect("run the installed session-start");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("helix search <words>") && text.contains("helix store --topic"),
        "{text}"
    );
    assert!(
        !text.contains("mcp__"),
        "no MCP tool is named without a server: {text}"
    );

    // Uninstall takes out exactly helix's entries.
    env.ok(&["hooks", "install"]);
    env.ok(&["hooks", "uninstall"]);
    let global: Value = serde_json::from_str(&read(&env.global_config())).expect("JSON");
    assert_eq!(
        global,
        json!({"userID": "u1", "projects": {"/x": {"allowedTools": []}}, "mcpServers": {"db": {"command": "db-mcp", "args": []}}})
    );

    // Hooks that name MCP tools with no server registered (an install from before this
    // fix) are a problem `status` reports.
    let mut doc: Value = json!({});
    let real = real.display().to_string();
    for (event, hook) in EVENTS {
        doc["hooks"][*event] = json!([{"hooks": [{"type": "command", "command": format!("{real} hook {hook}"), "timeout": 5}]}]);
    }
    write_json(&env.user_settings(), &doc);
    let out = env.run_in(&env.repo, &["hooks", "status"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("no helix MCP server is registered for this directory"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn claude_config_dir_moves_the_user_files() {
    let env = Env::new();
    let dir = env.home.join("elsewhere");
    let mut c = Command::new(helix());
    let out = helix_test_support::isolate(
        c.args(["hooks", "install"]).current_dir(&env.repo),
        &env.home,
    )
    .env("PATH", path_with_helix())
    .env("CLAUDE_CONFIG_DIR", &dir)
    .stdin(Stdio::null())
    .output()
    .expect("run helix");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("settings.json").is_file());
    assert!(read(&dir.join(".claude.json")).contains("\"helix\""));
    assert!(!env.user_settings().exists() && !env.global_config().exists());
}

/// The same hook installed twice, the installer's half (`hooks.rs` has the hooks'): installing in
/// one scope when the other has helix warns, says how to remove it, and `status` notes it.
#[test]
fn installing_over_another_scope_or_the_plugin_warns() {
    let env = Env::new();
    env.ok(&["hooks", "install"]);
    let out = env.run_in(&env.repo, &["hooks", "install", "--project"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("WARNING: helix is also installed as helix hooks in")
            && err.contains(&env.user_settings().display().to_string())
            && err.contains("`helix hooks uninstall`"),
        "{err}"
    );
    // The project's plugin entry counts too.
    let mut doc: Value = serde_json::from_str(&read(&env.project_settings())).expect("JSON");
    doc["enabledPlugins"] = json!({"helix@helix": true, "other@x": true});
    write_json(&env.project_settings(), &doc);
    env.ok(&["hooks", "uninstall"]);
    let out = env.run_in(&env.repo, &["hooks", "install"]);
    let err = stderr(&out);
    assert!(err.contains("the plugin helix@helix"), "{err}");
    let status = env.ok(&["hooks", "status"]);
    assert!(
        status.contains("plugin: ") && status.contains("duplicate: "),
        "{status}"
    );
}

/// The opt-in approval of the project's MCP server.
#[test]
fn enable_mcp_approves_the_project_server_for_the_team_and_uninstall_takes_it_back() {
    let env = Env::new();
    write_json(
        &env.project_settings(),
        &json!({"enabledMcpjsonServers": ["db"]}),
    );
    env.ok(&["hooks", "install", "--project", "--enable-mcp"]);
    let doc: Value = serde_json::from_str(&read(&env.project_settings())).expect("JSON");
    assert_eq!(doc["enabledMcpjsonServers"], json!(["db", "helix"]));
    let status = env.ok(&["hooks", "status"]);
    assert!(
        status.contains("approved in enabledMcpjsonServers"),
        "{status}"
    );
    // Only with --project.
    let out = env.run_in(&env.repo, &["hooks", "install", "--enable-mcp"]);
    assert!(!out.status.success());
    env.ok(&["hooks", "uninstall", "--project"]);
    let doc: Value = serde_json::from_str(&read(&env.project_settings())).expect("JSON");
    assert_eq!(doc, json!({"enabledMcpjsonServers": ["db"]}));
}

#[test]
fn backups_stay_out_of_the_repository() {
    let env = Env::new();
    let original = write_foreign(&env.project_settings());
    env.ok(&["hooks", "install", "--project"]);
    env.ok(&["hooks", "uninstall", "--project"]);
    assert_eq!(read(&env.project_settings()), original);
    let mut left: Vec<String> = Vec::new();
    for dir in [env.repo.clone(), env.repo.join(".claude")] {
        for e in std::fs::read_dir(&dir).expect("dir").flatten() {
            left.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    assert!(left.iter().all(|n| !n.ends_with(".bak")), "{left:?}");
    // The last backup holds what uninstall replaced.
    assert!(
        env.backup_of(&env.project_settings())
            .is_some_and(|b| b.contains("helix hook") && b.contains("other-tool guard"))
    );
}

/// The Claude Code plugin this repository ships is exactly what `helix hooks plugin` writes
/// from the hook table; a change to the table must be followed by `helix hooks plugin .`
/// at the repository root.
#[test]
fn shipped_plugin_matches_the_hook_table() {
    let env = Env::new();
    let dir = env.home.join("marketplace");
    let out = env.run_in(&env.repo, &["hooks", "plugin", &dir.to_string_lossy()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for rel in [
        ".claude-plugin/marketplace.json",
        "plugins/helix/.claude-plugin/plugin.json",
        "plugins/helix/hooks/hooks.json",
        "plugins/helix/.mcp.json",
    ] {
        assert_eq!(
            read(&root.join(rel)),
            read(&dir.join(rel)),
            "{rel} differs from `helix hooks plugin` output: run `helix hooks plugin .` at the repository root"
        );
    }
    let hooks: Value =
        serde_json::from_str(&read(&dir.join("plugins/helix/hooks/hooks.json"))).expect("JSON");
    for (event, hook) in EVENTS {
        let cmd = hooks["hooks"][*event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{event} in the plugin"));
        assert!(
            cmd.contains(&format!(
                "exec helix hook {hook} --mcp mcp__plugin_helix_helix__;"
            )),
            "{cmd}"
        );
    }
    assert_eq!(
        hooks["hooks"]["PermissionRequest"][0]["matcher"],
        "mcp__plugin_helix_helix__.*"
    );
}
