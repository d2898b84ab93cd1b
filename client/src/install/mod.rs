//! `helix hooks install|uninstall|status`: merges the nine helix hook handlers into Claude
//! Code's settings file (user or project) and removes exactly those again, keeping all else.
//!
//! Settings are edited as order-preserving JSON so other keys and hooks keep their place;
//! writes are atomic with a `.bak` copy of the previous file; invalid JSON is never touched.

pub mod ordered;

use crate::hook::table::{HOOKS, Hook, TIMEOUT_SECS};
use anyhow::{Context, Result, anyhow, bail};
use ordered::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `helix hooks ...`
#[derive(Debug, clap::Subcommand)]
pub enum HooksCommand {
    /// Merge the helix hooks into Claude Code's settings (user settings unless --project).
    Install(Target),
    /// Remove exactly the hooks `install` added (and the `.mcp.json` entry with --project).
    Uninstall(Target),
    /// Say which helix hooks are installed in which settings file.
    Status,
}

/// Which settings file to edit.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The project's `.claude/settings.json` (to commit for the team) and `.mcp.json`.
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// The user's `~/.claude/settings.json` (the default).
    #[arg(long)]
    pub user: bool,
    /// Print the resulting file(s) on stdout and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Entry point of `helix hooks`.
pub fn run(cmd: &HooksCommand) -> Result<ExitCode> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    match cmd {
        HooksCommand::Install(t) => install(t, &cwd),
        HooksCommand::Uninstall(t) => uninstall(t, &cwd),
        HooksCommand::Status => status(&cwd),
    }
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            anyhow!("HOME is not set; cannot find ~/.claude/settings.json (use --project)")
        })
}

/// The project directory: nearest ancestor with `.helix.toml`, else with `.git`, else `cwd`.
pub fn project_dir(cwd: &Path) -> PathBuf {
    for marker in [".helix.toml", ".git"] {
        let mut dir = Some(cwd);
        while let Some(d) = dir {
            if d.join(marker).exists() {
                return d.to_path_buf();
            }
            dir = d.parent();
        }
    }
    cwd.to_path_buf()
}

fn user_settings() -> Result<PathBuf> {
    Ok(home()?.join(".claude").join("settings.json"))
}

/// Quotes `s` for `sh` when it holds anything but safe characters.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The program helix hooks run: `helix` for a project file (committed, machine-independent),
/// the absolute path of this binary for the user file (hooks may run with a short PATH).
fn program(project: bool) -> String {
    if project {
        return "helix".to_string();
    }
    match std::env::current_exe().and_then(|p| p.canonicalize()) {
        Ok(p) => shell_quote(&p.to_string_lossy()),
        Err(_) => "helix".to_string(),
    }
}

/// If `command` is a helix handler (`helix hook <name>` or `/path/to/helix hook <name>`),
/// returns `(program, name)`.
pub fn parse_helix_command(command: &str) -> Option<(String, String)> {
    let command = command.trim();
    let (prog, rest) = if let Some(stripped) = command.strip_prefix('\'') {
        let end = stripped.find('\'')?;
        (stripped[..end].to_string(), &stripped[end + 1..])
    } else {
        let end = command.find(char::is_whitespace)?;
        (command[..end].to_string(), &command[end..])
    };
    let mut words = rest.split_whitespace();
    if words.next()? != "hook" {
        return None;
    }
    let name = words.next()?;
    if words.next().is_some() {
        return None;
    }
    let base = prog.rsplit('/').next().unwrap_or(&prog);
    if base != "helix" {
        return None;
    }
    Some((prog, name.to_string()))
}

fn is_helix_handler(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| parse_helix_command(c).is_some())
}

fn handler_value(spec: &Hook, program: &str) -> Value {
    Value::Object(vec![
        ("type".into(), Value::String("command".into())),
        (
            "command".into(),
            Value::String(format!("{program} hook {}", spec.name)),
        ),
        ("timeout".into(), Value::Number(TIMEOUT_SECS.into())),
    ])
}

fn group_value(spec: &Hook, program: &str) -> Value {
    let mut fields = Vec::new();
    if let Some(m) = spec.matcher {
        fields.push(("matcher".into(), Value::String(m.into())));
    }
    fields.push((
        "hooks".into(),
        Value::Array(vec![handler_value(spec, program)]),
    ));
    Value::Object(fields)
}

/// Whether `groups` (one event's array) already holds exactly the wanted helix handler once.
fn already_installed(groups: &[Value], spec: &Hook, program: &str) -> bool {
    let want = handler_value(spec, program);
    let mut found = 0;
    let mut exact = false;
    for g in groups {
        let Some(handlers) = g.get("hooks").and_then(Value::as_array) else {
            continue;
        };
        for h in handlers.iter().filter(|h| is_helix_handler(h)) {
            found += 1;
            let matcher = g
                .get("matcher")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty());
            exact = *h == want && matcher == spec.matcher && handlers.len() == 1;
        }
    }
    found == 1 && exact
}

/// Removes helix handlers from one event's groups; drops groups left empty by that.
fn remove_helix(groups: &mut Vec<Value>) -> bool {
    let mut changed = false;
    groups.retain_mut(|g| {
        let Some(handlers) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = handlers.len();
        handlers.retain(|h| !is_helix_handler(h));
        if handlers.len() != before {
            changed = true;
            return !handlers.is_empty();
        }
        true
    });
    changed
}

/// Merges the nine handlers into a settings document. Returns whether anything changed.
pub fn merge_hooks(doc: &mut Value, program: &str) -> Result<bool> {
    let Value::Object(_) = doc else {
        bail!("the top level is not a JSON object")
    };
    let hooks = doc.entry_or_insert("hooks", Value::Object(Vec::new()));
    let Value::Object(_) = hooks else {
        bail!("`hooks` is not a JSON object")
    };
    let mut changed = false;
    for spec in &HOOKS {
        let groups = hooks.entry_or_insert(spec.event, Value::Array(Vec::new()));
        let Value::Array(groups) = groups else {
            bail!("`hooks.{}` is not a JSON array", spec.event)
        };
        if already_installed(groups, spec, program) {
            continue;
        }
        remove_helix(groups);
        groups.push(group_value(spec, program));
        changed = true;
    }
    Ok(changed)
}

/// Removes every helix handler from a settings document, and containers left empty by it.
pub fn remove_hooks(doc: &mut Value) -> bool {
    let Some(hooks) = doc.get_mut("hooks") else {
        return false;
    };
    let Value::Object(events) = hooks else {
        return false;
    };
    let mut changed = false;
    events.retain_mut(|(_, groups)| {
        let Value::Array(list) = groups else {
            return true;
        };
        let before = list.len();
        if remove_helix(list) {
            changed = true;
            // An event array that only held helix groups goes away with them.
            return !(list.is_empty() && before > 0);
        }
        true
    });
    if changed && events.is_empty() {
        doc.remove("hooks");
    }
    changed
}

fn mcp_server_value() -> Value {
    Value::Object(vec![
        ("command".into(), Value::String("helix".into())),
        (
            "args".into(),
            Value::Array(vec![Value::String("mcp".into())]),
        ),
    ])
}

fn merge_mcp(doc: &mut Value) -> Result<bool> {
    let Value::Object(_) = doc else {
        bail!("the top level is not a JSON object")
    };
    let servers = doc.entry_or_insert("mcpServers", Value::Object(Vec::new()));
    let Value::Object(_) = servers else {
        bail!("`mcpServers` is not a JSON object")
    };
    let want = mcp_server_value();
    if servers.get("helix") == Some(&want) {
        return Ok(false);
    }
    *servers.entry_or_insert("helix", Value::Null) = want;
    Ok(true)
}

fn remove_mcp(doc: &mut Value) -> bool {
    let Some(servers) = doc.get_mut("mcpServers") else {
        return false;
    };
    if servers.get("helix") != Some(&mcp_server_value()) {
        return false;
    }
    servers.remove("helix");
    if matches!(servers, Value::Object(v) if v.is_empty()) {
        doc.remove("mcpServers");
    }
    true
}

/// A settings file read from disk: `None` when it does not exist.
fn load(path: &Path) -> Result<Option<(Value, String)>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok(Some((Value::Object(Vec::new()), text)));
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!(
            "{}: not valid JSON ({e}); left untouched — fix or move it, then retry",
            path.display()
        )
    })?;
    Ok(Some((v, text)))
}

/// Writes `text` to `path` atomically, keeping the previous content as `<path>.bak`.
fn save(path: &Path, text: &str, previous: Option<&str>) -> Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if let Some(prev) = previous {
        let bak = backup_path(path);
        std::fs::write(&bak, prev).with_context(|| format!("writing backup {}", bak.display()))?;
    }
    crate::sys::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

fn backup_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".bak");
    PathBuf::from(s)
}

fn render(doc: &Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(doc).context("rendering JSON")?;
    text.push('\n');
    Ok(text)
}

/// One planned file change.
struct Plan {
    path: PathBuf,
    previous: Option<String>,
    /// New content; `None` deletes the file (uninstall left nothing of it).
    next: Option<String>,
}

fn apply(plans: Vec<Plan>, dry_run: bool, verb: &str) -> Result<ExitCode> {
    if plans.is_empty() {
        eprintln!("helix hooks: nothing to {verb}; already up to date");
        return Ok(ExitCode::SUCCESS);
    }
    for p in plans {
        if dry_run {
            match &p.next {
                Some(text) => print!("--- {}\n{text}", p.path.display()),
                None => println!("--- {}\n(file would be removed)", p.path.display()),
            }
            continue;
        }
        match &p.next {
            Some(text) => {
                save(&p.path, text, p.previous.as_deref())?;
                eprintln!("helix hooks: {verb}: wrote {}", p.path.display());
            }
            None => {
                if let Some(prev) = &p.previous {
                    let bak = backup_path(&p.path);
                    std::fs::write(&bak, prev)
                        .with_context(|| format!("writing backup {}", bak.display()))?;
                }
                std::fs::remove_file(&p.path)
                    .with_context(|| format!("removing {}", p.path.display()))?;
                eprintln!(
                    "helix hooks: {verb}: removed {} (nothing else was in it)",
                    p.path.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn targets(t: &Target, cwd: &Path) -> Result<(PathBuf, Option<PathBuf>)> {
    if t.project {
        let dir = project_dir(cwd);
        Ok((
            dir.join(".claude").join("settings.json"),
            Some(dir.join(".mcp.json")),
        ))
    } else {
        Ok((user_settings()?, None))
    }
}

fn install(t: &Target, cwd: &Path) -> Result<ExitCode> {
    let (settings, mcp) = targets(t, cwd)?;
    // Load (and so validate) every file before changing any.
    let loaded = load(&settings)?;
    let loaded_mcp = match &mcp {
        Some(p) => Some(load(p)?),
        None => None,
    };
    let mut plans = Vec::new();
    let (mut doc, previous) = match loaded {
        Some((v, text)) => (v, Some(text)),
        None => (Value::Object(Vec::new()), None),
    };
    if merge_hooks(&mut doc, &program(t.project)).with_context(|| settings.display().to_string())? {
        plans.push(Plan {
            path: settings.clone(),
            previous,
            next: Some(render(&doc)?),
        });
    }
    if let (Some(path), Some(loaded)) = (mcp, loaded_mcp) {
        let (mut doc, previous) = match loaded {
            Some((v, text)) => (v, Some(text)),
            None => (Value::Object(Vec::new()), None),
        };
        if merge_mcp(&mut doc).with_context(|| path.display().to_string())? {
            plans.push(Plan {
                path,
                previous,
                next: Some(render(&doc)?),
            });
        }
    }
    apply(plans, t.dry_run, "install")
}

fn uninstall(t: &Target, cwd: &Path) -> Result<ExitCode> {
    let (settings, mcp) = targets(t, cwd)?;
    let loaded = load(&settings)?;
    let loaded_mcp = match &mcp {
        Some(p) => load(p)?.map(|l| (p.clone(), l)),
        None => None,
    };
    let mut plans = Vec::new();
    if let Some((mut doc, text)) = loaded
        && remove_hooks(&mut doc)
    {
        let next = if doc == Value::Object(Vec::new()) {
            None
        } else {
            Some(render(&doc)?)
        };
        plans.push(Plan {
            path: settings,
            previous: Some(text),
            next,
        });
    }
    if let Some((path, (mut doc, text))) = loaded_mcp
        && remove_mcp(&mut doc)
    {
        let next = if doc == Value::Object(Vec::new()) {
            None
        } else {
            Some(render(&doc)?)
        };
        plans.push(Plan {
            path,
            previous: Some(text),
            next,
        });
    }
    apply(plans, t.dry_run, "uninstall")
}

/// Whether `program` (as written in a handler) can be run: an existing file for a path,
/// an executable found on PATH for a bare name.
fn program_exists(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

fn status(cwd: &Path) -> Result<ExitCode> {
    let dir = project_dir(cwd);
    let mut files = Vec::new();
    if let Ok(u) = user_settings() {
        files.push(("user", u));
    }
    files.push(("project", dir.join(".claude").join("settings.json")));
    files.push((
        "project-local",
        dir.join(".claude").join("settings.local.json"),
    ));
    let mut bad = false;
    let mut out = String::new();
    for (label, path) in files {
        let line = match load(&path) {
            Err(e) => {
                bad = true;
                format!("{label}: {e:#}")
            }
            Ok(None) => format!("{label}: {}: no file", path.display()),
            Ok(Some((doc, _))) => describe(label, &path, &doc),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let mcp = dir.join(".mcp.json");
    let line = match load(&mcp) {
        Err(e) => {
            bad = true;
            format!("mcp: {e:#}")
        }
        Ok(None) => format!("mcp: {}: no file", mcp.display()),
        Ok(Some((doc, _))) => match doc.get("mcpServers").and_then(|s| s.get("helix")) {
            Some(v) if *v == mcp_server_value() => {
                format!("mcp: {}: helix MCP server registered", mcp.display())
            }
            Some(_) => format!(
                "mcp: {}: a different `helix` MCP server is registered",
                mcp.display()
            ),
            None => format!("mcp: {}: helix MCP server not registered", mcp.display()),
        },
    };
    out.push_str(&line);
    out.push('\n');
    print!("{out}");
    Ok(if bad {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn describe(label: &str, path: &Path, doc: &Value) -> String {
    let mut found: Vec<(String, String)> = Vec::new();
    if let Some(Value::Object(events)) = doc.get("hooks") {
        for (_, groups) in events {
            for g in groups.as_array().map(Vec::as_slice).unwrap_or_default() {
                for h in g
                    .get("hooks")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                {
                    if let Some(parsed) = h
                        .get("command")
                        .and_then(Value::as_str)
                        .and_then(parse_helix_command)
                    {
                        found.push(parsed);
                    }
                }
            }
        }
    }
    if found.is_empty() {
        return format!("{label}: {}: no helix hooks", path.display());
    }
    let names: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
    let missing: Vec<&str> = HOOKS
        .iter()
        .map(|s| s.name)
        .filter(|h| !names.contains(h))
        .collect();
    let mut programs: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    programs.sort_unstable();
    programs.dedup();
    let progs: Vec<String> = programs
        .iter()
        .map(|p| {
            format!(
                "{p} ({})",
                if program_exists(p) {
                    "found"
                } else {
                    "MISSING"
                }
            )
        })
        .collect();
    let mut s = format!(
        "{label}: {}: {} of {} helix hooks installed ({}); binary: {}",
        path.display(),
        HOOKS.len() - missing.len(),
        HOOKS.len(),
        names.join(", "),
        progs.join(", ")
    );
    if !missing.is_empty() {
        s.push_str(&format!("; missing: {}", missing.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).expect("test JSON")
    }

    #[test]
    fn recognises_helix_commands() {
        assert_eq!(
            parse_helix_command("helix hook prompt"),
            Some(("helix".into(), "prompt".into()))
        );
        assert_eq!(
            parse_helix_command("/usr/local/bin/helix hook stop"),
            Some(("/usr/local/bin/helix".into(), "stop".into()))
        );
        assert_eq!(
            parse_helix_command("'/my dir/helix' hook error"),
            Some(("/my dir/helix".into(), "error".into()))
        );
        assert_eq!(parse_helix_command("other-tool hook prompt"), None);
        assert_eq!(parse_helix_command("helix sync"), None);
        assert_eq!(parse_helix_command("helix hook prompt && rm -rf /"), None);
    }

    #[test]
    fn merge_keeps_order_and_other_hooks_and_is_idempotent() {
        let src = r#"{"model":"x","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"lint"}]}]},"zeta":1}"#;
        let mut doc = parse(src);
        assert!(merge_hooks(&mut doc, "helix").unwrap());
        let once = render(&doc).unwrap();
        assert!(!merge_hooks(&mut doc, "helix").unwrap());
        assert_eq!(render(&doc).unwrap(), once);
        let keys: Vec<&str> = match &doc {
            Value::Object(m) => m.iter().map(|(k, _)| k.as_str()).collect(),
            _ => vec![],
        };
        assert_eq!(keys, ["model", "hooks", "zeta"]);
        assert!(remove_hooks(&mut doc));
        assert_eq!(doc, parse(src));
    }

    #[test]
    fn merge_replaces_a_stale_binary_path() {
        let mut doc = parse(r#"{}"#);
        merge_hooks(&mut doc, "/old/helix").unwrap();
        assert!(merge_hooks(&mut doc, "/new/helix").unwrap());
        let text = render(&doc).unwrap();
        assert!(!text.contains("/old/helix"));
        assert_eq!(text.matches("/new/helix hook").count(), 9);
    }
}
