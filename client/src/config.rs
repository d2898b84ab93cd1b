//! Configuration: the project's `.helix.toml` (found walking up from the working directory)
//! and the user's `config.toml` under the XDG config dir (tokens per server).

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// File name of the project configuration.
pub const PROJECT_FILE: &str = ".helix.toml";

/// A parsed `.helix.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectConfig {
    /// Directory holding `.helix.toml`.
    pub root: PathBuf,
    /// Server URL (server mode).
    pub server: Option<String>,
    /// Followed projects (server mode), or the one local project (local mode).
    pub projects: Vec<String>,
    /// Local knowledge directory, resolved against `root` (local mode).
    pub local: Option<PathBuf>,
    /// Path of the `.helix.toml` itself.
    pub file: PathBuf,
    /// `[check] stale_commits`: commits to a source after an entry's date beyond which
    /// `helix check --stale` reports it.
    pub stale_commits: Option<u32>,
    /// `[hooks] session_budget`: characters of context the hooks give one agent session
    /// (0: no cap; `hook::budget`).
    pub session_budget: Option<u64>,
}

/// `[check]` of `.helix.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    stale_commits: Option<u32>,
}

/// `[hooks]` of `.helix.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHooks {
    session_budget: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    server: Option<String>,
    #[serde(default)]
    projects: Vec<String>,
    local: Option<PathBuf>,
    project: Option<String>,
    #[serde(default)]
    check: RawCheck,
    #[serde(default)]
    hooks: RawHooks,
}

/// What to write when no configuration is found; every command that needs one says this.
pub fn missing_config_help(cwd: &Path) -> String {
    format!(
        "no {PROJECT_FILE} found in {} or any parent directory.\n\
         Create {} with either\n\
         \x20   server = \"http://127.0.0.1:7700\"\n\
         \x20   projects = [\"backend\"]\n\
         or, without a server,\n\
         \x20   local = \"path/to/knowledge\"\n\
         (or run `helix init --server URL --project NAME` / `helix init --local DIR`)",
        cwd.display(),
        cwd.join(PROJECT_FILE).display()
    )
}

/// Walks up from `cwd` for `.helix.toml`. `Ok(None)` when there is none.
pub fn find(cwd: &Path) -> Result<Option<ProjectConfig>> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        let file = d.join(PROJECT_FILE);
        match std::fs::read_to_string(&file) {
            Ok(text) => return parse(&file, &text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
        }
        dir = d.parent();
    }
    Ok(None)
}

/// Like [`find`], but no configuration is an error that says what to create.
pub fn require(cwd: &Path) -> Result<ProjectConfig> {
    match find(cwd)? {
        Some(c) => Ok(c),
        None => bail!("{}", missing_config_help(cwd)),
    }
}

/// Parses the text of a `.helix.toml` located at `file`.
pub fn parse(file: &Path, text: &str) -> Result<ProjectConfig> {
    let raw: RawProject = toml::from_str(text)
        .with_context(|| format!("{}: invalid configuration", file.display()))?;
    let root = file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let cfg = match (raw.server, raw.local) {
        (Some(_), Some(_)) => {
            bail!(
                "{}: set either `server` or `local`, not both",
                file.display()
            )
        }
        (None, None) => bail!(
            "{}: set `server = \"http://host:port\"` with `projects = [..]`, or `local = \"dir\"`",
            file.display()
        ),
        (Some(server), None) => {
            let server = server.trim_end_matches('/').to_string();
            if !(server.starts_with("http://") || server.starts_with("https://")) {
                bail!(
                    "{}: server `{server}` must start with http:// or https://",
                    file.display()
                );
            }
            let mut projects = raw.projects;
            if let Some(p) = raw.project
                && !projects.contains(&p)
            {
                projects.insert(0, p);
            }
            if projects.is_empty() {
                bail!(
                    "{}: `projects = [\"name\"]` is empty; list the projects to follow",
                    file.display()
                );
            }
            ProjectConfig {
                root: root.clone(),
                server: Some(server),
                projects,
                local: None,
                file: file.to_path_buf(),
                stale_commits: raw.check.stale_commits,
                session_budget: raw.hooks.session_budget,
            }
        }
        (None, Some(local)) => {
            let local = root.join(local);
            let name = match raw.project {
                Some(p) => p,
                None => local
                    .canonicalize()
                    .unwrap_or_else(|_| local.clone())
                    .file_name()
                    .and_then(|n| n.to_str())
                    .map(sanitize_name)
                    .unwrap_or_else(|| "local".to_string()),
            };
            ProjectConfig {
                root: root.clone(),
                server: None,
                projects: vec![name],
                local: Some(local),
                file: file.to_path_buf(),
                stale_commits: raw.check.stale_commits,
                session_budget: raw.hooks.session_budget,
            }
        }
    };
    for p in &cfg.projects {
        if !crate::paths::is_safe_name(p) {
            bail!(
                "{}: project name `{p}` must be letters, digits, `-`, `_` or `.`",
                file.display()
            );
        }
    }
    Ok(cfg)
}

fn sanitize_name(s: &str) -> String {
    let n: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let n = n.trim_matches('-').to_string();
    if n.is_empty() { "local".to_string() } else { n }
}

impl ProjectConfig {
    /// The project that `store` writes to by default: the first followed one.
    pub fn default_project(&self) -> &str {
        self.projects.first().map(String::as_str).unwrap_or("local")
    }
    /// Cache directory of `project`.
    pub fn cache_dir(&self, project: &str) -> PathBuf {
        crate::paths::project_cache_dir(self.server.as_deref(), self.local.as_deref(), project)
    }
}

/// The user's `config.toml`.
#[derive(Debug, Default, Deserialize)]
pub struct UserConfig {
    #[serde(default)]
    pub servers: std::collections::BTreeMap<String, ServerUserConfig>,
    /// `[sync]`: network bounds of `helix sync` (see `sync::NetLimits`).
    #[serde(default)]
    pub sync: SyncUserConfig,
    /// `[usage]`: the usage reports `helix sync` sends (docs/usage.md).
    #[serde(default)]
    pub usage: UsageUserConfig,
}

/// `[usage]` of the user config.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageUserConfig {
    /// `false`: `helix sync` sends no usage reports (default: it does).
    pub report: Option<bool>,
}

impl UsageUserConfig {
    /// Whether `helix sync` sends usage reports.
    pub fn report(&self) -> bool {
        self.report.unwrap_or(true)
    }
}

/// `[sync]` of the user config; unset keys keep their defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncUserConfig {
    pub connect_timeout_secs: Option<u64>,
    pub stall_timeout_secs: Option<u64>,
    pub timeout_secs: Option<u64>,
    pub max_artifact_bytes: Option<u64>,
}

/// Per-server settings in the user config. Server tokens are per project, so a project's
/// own entry (`[servers."URL".projects.NAME]`) wins over the server-wide one.
#[derive(Debug, Default, Deserialize)]
pub struct ServerUserConfig {
    pub token: Option<String>,
    pub token_command: Option<String>,
    #[serde(default)]
    pub projects: std::collections::BTreeMap<String, TokenSource>,
}

/// Where one token comes from: the value itself, or a command that prints it.
#[derive(Debug, Default, Deserialize)]
pub struct TokenSource {
    pub token: Option<String>,
    pub token_command: Option<String>,
}

impl UserConfig {
    /// Loads the user config; a missing file is an empty config.
    pub fn load() -> Result<UserConfig> {
        let file = crate::paths::user_config_file();
        match std::fs::read_to_string(&file) {
            Ok(t) => toml::from_str(&t)
                .with_context(|| format!("{}: invalid configuration", file.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UserConfig::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
        }
    }

    fn server(&self, url: &str) -> Option<&ServerUserConfig> {
        let norm = url.trim_end_matches('/');
        self.servers
            .iter()
            .find(|(k, _)| k.trim_end_matches('/') == norm)
            .map(|(_, v)| v)
    }
}

/// The bearer token for `project` on `server`: `HELIX_TOKEN`, else the project's own entry
/// in the user config, else the server-wide one (each a `token` or a `token_command`).
/// `Ok(None)` when none is configured.
pub fn token_for(server: &str, project: &str) -> Result<Option<String>> {
    if let Ok(t) = std::env::var("HELIX_TOKEN")
        && !t.trim().is_empty()
    {
        return Ok(Some(t.trim().to_string()));
    }
    let user = UserConfig::load()?;
    let Some(s) = user.server(server) else {
        return Ok(None);
    };
    if let Some(p) = s.projects.get(project)
        && let Some(t) = token_from(p.token.as_deref(), p.token_command.as_deref(), server)?
    {
        return Ok(Some(t));
    }
    token_from(s.token.as_deref(), s.token_command.as_deref(), server)
}

fn token_from(token: Option<&str>, command: Option<&str>, server: &str) -> Result<Option<String>> {
    if let Some(t) = token {
        return Ok(Some(t.trim().to_string()));
    }
    if let Some(cmd) = command {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running token_command for {server}"))?;
        if !out.status.success() {
            bail!("token_command for {server} failed ({})", out.status);
        }
        let t = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if t.is_empty() {
            bail!("token_command for {server} printed nothing");
        }
        return Ok(Some(t));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_reports_are_on_unless_turned_off() {
        let parse = |t: &str| toml::from_str::<UserConfig>(t);
        assert!(parse("").unwrap().usage.report());
        assert!(!parse("[usage]\nreport = false\n").unwrap().usage.report());
        assert!(parse("[usage]\nreport = true\n").unwrap().usage.report());
        assert!(parse("[usage]\nreports = false\n").is_err());
    }

    #[test]
    fn parses_server_and_local() {
        let c = parse(
            Path::new("/r/.helix.toml"),
            "server = \"http://h:1/\"\nprojects = [\"a\", \"b\"]\n",
        )
        .unwrap();
        assert_eq!(c.server.as_deref(), Some("http://h:1"));
        assert_eq!(c.projects, vec!["a", "b"]);
        let c = parse(
            Path::new("/r/.helix.toml"),
            "local = \"kb\"\nproject = \"mine\"\n",
        )
        .unwrap();
        assert_eq!(c.local.as_deref(), Some(Path::new("/r/kb")));
        assert_eq!(c.projects, vec!["mine"]);
        assert!(
            parse(
                Path::new("/r/.helix.toml"),
                "projects = [\"../x\"]\nserver=\"http://h\""
            )
            .is_err()
        );
        assert!(parse(Path::new("/r/.helix.toml"), "").is_err());
    }
}
