//! Server configuration: the TOML file's plain types (projects, token hashes and scopes,
//! webhook secrets), its checks, and the embedded default used when no file is given.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Why a configuration cannot be used: which file, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {}: {error}", .path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Not TOML, or not the shape of a configuration (an unknown key, a wrong type).
    #[error("{origin}: invalid config: {error}")]
    Parse {
        origin: String,
        error: toml::de::Error,
    },
    /// Well-formed, but breaking a rule (a project name, a branch, a limit...).
    #[error("{origin}: invalid config: {reason}")]
    Invalid { origin: String, reason: String },
}

/// Default poll interval for upstream projects, seconds.
pub const DEFAULT_POLL_SECS: u64 = 60;

/// What a token may do on its project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Read,
    Write,
    /// List, approve and reject proposals (projects whose writes are reviewed).
    Review,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Review => "review",
        }
    }
    pub fn parse(s: &str) -> Option<Scope> {
        match s.trim() {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            "review" => Some(Scope::Review),
            _ => None,
        }
    }
}

/// The whole configuration file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    #[serde(default = "default_data_dir")]
    pub data_dir: PathBuf,
    /// Requests from loopback peers without a token get read and write on every project.
    #[serde(default)]
    pub anonymous_loopback: bool,
    /// Largest request body accepted, bytes.
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
    /// Per-request timeout, seconds.
    #[serde(default = "default_timeout")]
    pub request_timeout_secs: u64,
    /// Longest a client may take to send a request's headers, seconds (also the idle time
    /// allowed between two requests on a kept-alive connection).
    #[serde(default = "default_header_timeout")]
    pub header_timeout_secs: u64,
    /// Most connections open at once (lowered to fit the open-file limit).
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Artifacts kept per project (including the current one): for pinned clients, and as
    /// bases that patches to the current one start from.
    #[serde(default = "default_keep")]
    pub keep_artifacts: usize,
    /// Serve the web view (`/`, `/p/…`): pages to browse, search, read and review.
    #[serde(default = "default_true")]
    pub web: bool,
    /// How long a browser session of the web view lasts after sign-in, hours.
    #[serde(default = "default_session_hours")]
    pub session_hours: u64,
    /// Days of usage counts kept (`usage.redb`): older days are pruned.
    #[serde(default = "default_usage_retention")]
    pub usage_retention_days: u32,
    /// Semantic search: the sentence-embedding model entries and queries are embedded with
    /// (docs/operations.md, "Semantic search"). None: lexical search only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticConfig>,
    #[serde(default)]
    pub projects: Vec<ProjectConfig>,
}

/// `[semantic]`: the model, and how much of an entry is embedded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemanticConfig {
    /// Directory holding the model's `config.json`, `model.safetensors` and `tokenizer.json`.
    pub model: PathBuf,
    /// Tokens a text is cut to (default: the model crate's, 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    /// Characters of an entry's body embedded, from its start.
    #[serde(default = "default_body_chars")]
    pub body_chars: usize,
}

/// Default `[semantic] body_chars`.
pub use helix_index_format::vectors::DEFAULT_BODY_CHARS;

fn default_body_chars() -> usize {
    DEFAULT_BODY_CHARS
}

impl SemanticConfig {
    fn check(&self) -> Result<(), String> {
        if self.model.as_os_str().is_empty() {
            return Err("[semantic] model must name the model's directory".into());
        }
        if let Some(t) = self.max_tokens
            && !(2..=8192).contains(&t)
        {
            return Err(format!("[semantic] max_tokens = {t} must be 2 to 8192"));
        }
        if !(1..=100_000).contains(&self.body_chars) {
            return Err(format!(
                "[semantic] body_chars = {} must be 1 to 100000",
                self.body_chars
            ));
        }
        Ok(())
    }
}

/// One project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    pub name: String,
    /// Git URL or path of the upstream; none: a server-owned repository under the data dir.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    #[serde(default = "default_branch")]
    pub branch: String,
    /// Only entries under this repository subdirectory are read (and written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdir: Option<String>,
    #[serde(default = "default_poll")]
    pub poll_interval_secs: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret: Option<String>,
    /// Seed an empty server-owned repository with the embedded example entries.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seed_examples: bool,
    /// Whether an accepted write lands on the branch (`direct`) or becomes a proposal on its
    /// own branch for someone to approve (`review`).
    #[serde(default, skip_serializing_if = "WriteMode::is_direct")]
    pub writes: WriteMode,
    /// Review mode: serve the open proposals to every client of the project, whose hooks
    /// show them marked "proposed, unreviewed" (default: only their authors see them).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub show_proposals: bool,
    /// The forge where proposals get a pull/merge request (review mode with an upstream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<ForgeConfig>,
    /// Accept its clients' usage reports (counts of entries injected and read) and show
    /// them; `false` refuses every report (`403 usage_disabled`).
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub usage: bool,
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
}

/// What becomes of an accepted write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteMode {
    /// Committed onto the project's branch at once.
    #[default]
    Direct,
    /// Committed onto a proposal branch of its own; lands when approved or merged.
    Review,
}

impl WriteMode {
    pub fn is_direct(&self) -> bool {
        *self == WriteMode::Direct
    }
}

/// Which forge API opens the pull/merge requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    Github,
    Gitlab,
}

/// `[projects.forge]`: where and how proposals become pull/merge requests. The token is
/// never in this file: an environment variable or a file names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForgeConfig {
    pub kind: ForgeKind,
    /// API base URL; default `https://api.github.com` or `https://gitlab.com/api/v4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// GitHub `owner/repo`; GitLab the project's path (`group/project`) or numeric id.
    pub repository: String,
    /// Environment variable that holds the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// File that holds the token (trailing whitespace ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    /// Label put on every request.
    #[serde(default = "default_label")]
    pub label: String,
    /// Base URL of the forge's web pages, for the web view's "edit" links; default: derived
    /// from `api` (`https://github.com`, `https://gitlab.com`, or `api` without `/api/v3`
    /// or `/api/v4` on a self-hosted forge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<String>,
}

fn default_label() -> String {
    "helix-proposal".into()
}

impl ForgeConfig {
    /// The API base without a trailing slash.
    pub fn api_base(&self) -> String {
        let base = self.api.clone().unwrap_or_else(|| {
            match self.kind {
                ForgeKind::Github => "https://api.github.com",
                ForgeKind::Gitlab => "https://gitlab.com/api/v4",
            }
            .to_string()
        });
        base.trim_end_matches('/').to_string()
    }

    /// The forge page that edits `path` (a repository path) on `branch`; `None` for a GitLab
    /// project named by numeric id (its web path is unknown).
    pub fn edit_url(&self, branch: &str, path: &str) -> Option<String> {
        let web = match &self.web {
            Some(w) => w.trim_end_matches('/').to_string(),
            None => {
                let api = self.api_base();
                match api.as_str() {
                    "https://api.github.com" => "https://github.com".into(),
                    _ => api
                        .strip_suffix("/api/v3")
                        .or_else(|| api.strip_suffix("/api/v4"))
                        .unwrap_or(&api)
                        .to_string(),
                }
            }
        };
        let repo = self.repository.trim().trim_matches('/');
        let enc = |s: &str| -> String {
            s.bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect()
        };
        match self.kind {
            ForgeKind::Github => Some(format!("{web}/{repo}/edit/{}/{}", enc(branch), enc(path))),
            ForgeKind::Gitlab if repo.bytes().all(|b| b.is_ascii_digit()) => None,
            ForgeKind::Gitlab => Some(format!("{web}/{repo}/-/edit/{}/{}", enc(branch), enc(path))),
        }
    }

    /// In review mode the forge opens pull/merge requests and needs a token; a direct
    /// project's forge only gives the web view its edit links.
    fn check(&self, writes: WriteMode) -> Result<(), String> {
        if let Some(web) = &self.web
            && !(web.starts_with("https://") || web.starts_with("http://"))
        {
            return Err(format!("forge: web {web:?} is not an http(s) URL"));
        }
        if self.token_env.is_some() && self.token_file.is_some() {
            return Err("forge: set exactly one of token_env and token_file".into());
        }
        if writes == WriteMode::Review && self.token_env.is_none() && self.token_file.is_none() {
            return Err(
                "forge: set exactly one of token_env and token_file (review mode opens pull/merge requests)"
                    .into(),
            );
        }
        let api = self.api_base();
        if !(api.starts_with("https://") || api.starts_with("http://")) {
            return Err(format!("forge: api {api:?} is not an http(s) URL"));
        }
        let repo = self.repository.trim();
        let github_ok = repo.split('/').count() == 2 && !repo.split('/').any(str::is_empty);
        if repo.is_empty() || (self.kind == ForgeKind::Github && !github_ok) {
            return Err(format!(
                "forge: repository {:?} must be `owner/repo` (GitHub) or the project's path or id (GitLab)",
                self.repository
            ));
        }
        if self.label.trim().is_empty() || self.label.contains(',') {
            return Err(format!(
                "forge: label {:?} must be non-empty, without commas",
                self.label
            ));
        }
        Ok(())
    }
}
/// A token, stored only as the sha256 of its plaintext.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// Who holds it; becomes the git author of their writes.
    pub name: String,
    /// Lower-case hex sha256 of the token.
    pub sha256: String,
    pub scopes: Vec<Scope>,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 7700))
}
fn default_data_dir() -> PathBuf {
    PathBuf::from("./helix-data")
}
fn default_max_body() -> usize {
    256 * 1024
}
fn default_timeout() -> u64 {
    60
}
fn default_header_timeout() -> u64 {
    10
}
fn default_max_connections() -> usize {
    4096
}
fn default_keep() -> usize {
    10
}
fn default_true() -> bool {
    true
}
fn default_session_hours() -> u64 {
    12
}
fn is_true(b: &bool) -> bool {
    *b
}

/// Usage counts kept by default, days: a year and a season, for year-on-year looks.
pub const DEFAULT_USAGE_RETENTION_DAYS: u32 = 400;
/// The bounds of `usage_retention_days`: the web view's 30-day figures need 30 at least.
pub const USAGE_RETENTION_RANGE: std::ops::RangeInclusive<u32> = 30..=3650;

fn default_usage_retention() -> u32 {
    DEFAULT_USAGE_RETENTION_DAYS
}
fn default_branch() -> String {
    "main".into()
}
fn default_poll() -> u64 {
    DEFAULT_POLL_SECS
}

impl Config {
    /// The configuration used when none is given: project `default` in a server-owned
    /// repository seeded with the examples, on loopback, no tokens needed from loopback.
    pub fn embedded_default() -> Config {
        Config {
            listen: default_listen(),
            data_dir: default_data_dir(),
            anonymous_loopback: true,
            max_body_bytes: default_max_body(),
            request_timeout_secs: default_timeout(),
            header_timeout_secs: default_header_timeout(),
            max_connections: default_max_connections(),
            keep_artifacts: default_keep(),
            web: true,
            session_hours: default_session_hours(),
            usage_retention_days: default_usage_retention(),
            semantic: None,
            projects: vec![ProjectConfig {
                name: "default".into(),
                upstream: None,
                branch: default_branch(),
                subdir: None,
                poll_interval_secs: default_poll(),
                webhook_secret: None,
                seed_examples: true,
                writes: WriteMode::Direct,
                show_proposals: false,
                forge: None,
                usage: true,
                tokens: Vec::new(),
            }],
        }
    }

    /// Parses TOML text and checks it; `origin` names the file in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text).map_err(|error| ConfigError::Parse {
            origin: origin.to_string(),
            error,
        })?;
        cfg.check().map_err(|reason| ConfigError::Invalid {
            origin: origin.to_string(),
            reason,
        })?;
        Ok(cfg)
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Config::parse(&text, &path.display().to_string())
    }

    /// The rules the file's shape does not say; the reason of the first one broken.
    fn check(&self) -> Result<(), String> {
        if !USAGE_RETENTION_RANGE.contains(&self.usage_retention_days) {
            return Err(format!(
                "usage_retention_days = {} must be {} to {}",
                self.usage_retention_days,
                USAGE_RETENTION_RANGE.start(),
                USAGE_RETENTION_RANGE.end()
            ));
        }
        if !(1..=24 * 90).contains(&self.session_hours) {
            return Err(format!(
                "session_hours = {} must be 1 to 2160 (90 days)",
                self.session_hours
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &self.projects {
            if !valid_project_name(&p.name) {
                return Err(format!(
                    "project name {:?} must be 1-64 characters of [A-Za-z0-9_-] and not start with '-'",
                    p.name
                ));
            }
            if !seen.insert(p.name.clone()) {
                return Err(format!("project {:?} is listed twice", p.name));
            }
            if p.branch.is_empty()
                || p.branch.contains("..")
                || p.branch.contains(char::is_whitespace)
            {
                return Err(format!(
                    "project {:?}: invalid branch {:?}",
                    p.name, p.branch
                ));
            }
            if let Some(s) = &p.subdir {
                let s = s.trim_matches('/');
                if s.is_empty() || s.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
                    return Err(format!(
                        "project {:?}: invalid subdir {:?}",
                        p.name, p.subdir
                    ));
                }
            }
            if let Some(secret) = &p.webhook_secret
                && secret.trim().is_empty()
            {
                // An empty key would make any signature made with "" (or an empty
                // X-Gitlab-Token) valid: an unauthenticated refresh.
                return Err(format!(
                    "project {:?}: webhook_secret is empty; set a long random value or remove the line",
                    p.name
                ));
            }
            if p.upstream
                .as_deref()
                .is_some_and(|u| u.trim().is_empty() || u.starts_with('-'))
            {
                return Err(format!(
                    "project {:?}: upstream {:?} is not a git URL or path",
                    p.name,
                    p.upstream.as_deref().unwrap_or("")
                ));
            }
            if p.poll_interval_secs == 0 {
                return Err(format!(
                    "project {:?}: poll_interval_secs must be at least 1",
                    p.name
                ));
            }
            if p.show_proposals && p.writes.is_direct() {
                return Err(format!(
                    "project {:?}: show_proposals needs writes = \"review\" (a direct project has no proposals)",
                    p.name
                ));
            }
            if let Some(f) = &p.forge {
                if p.upstream.is_none() {
                    return Err(format!(
                        "project {:?}: [projects.forge] needs an upstream (it names the forge that hosts it)",
                        p.name
                    ));
                }
                f.check(p.writes)
                    .map_err(|e| format!("project {:?}: {e}", p.name))?;
            }
            for t in &p.tokens {
                if t.sha256.len() != 64 || !t.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(format!(
                        "project {:?}: token {:?} has no valid sha256",
                        p.name, t.name
                    ));
                }
            }
        }
        if self.header_timeout_secs == 0 || self.max_connections == 0 {
            return Err("header_timeout_secs and max_connections must be at least 1".into());
        }
        if self.keep_artifacts == 0 {
            return Err("keep_artifacts must be at least 1".into());
        }
        if let Some(s) = &self.semantic {
            s.check()?;
        }
        Ok(())
    }

    pub fn project(&self, name: &str) -> Option<&ProjectConfig> {
        self.projects.iter().find(|p| p.name == name)
    }
}

impl ProjectConfig {
    /// The subdirectory as a clean prefix without slashes at either end, if any.
    pub fn subdir_prefix(&self) -> Option<String> {
        self.subdir
            .as_deref()
            .map(|s| s.trim_matches('/').to_string())
    }
}

/// Project names appear in URLs and directory names.
pub use helix_index_format::wire::is_valid_project_name as valid_project_name;

#[cfg(test)]
mod tests;
