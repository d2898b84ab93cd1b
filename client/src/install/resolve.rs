//! Where Claude Code keeps its files, and how it will start `helix`: a handler's program is a
//! path, or a bare name that Claude Code's shell looks up on PATH. The installer writes only
//! programs that resolve; `hooks status` and `helix doctor` check that they still do.

use anyhow::{Context, Result, anyhow};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The binary `helix` runs for `mcp`, `sync` and `doctor`, found beside it.
pub const NET_BINARY: &str = "helix-net";

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            anyhow!("HOME is not set; cannot find Claude Code's user settings (use --project)")
        })
}

/// `CLAUDE_CONFIG_DIR` when set (Claude Code then keeps its user files there).
fn config_dir_override() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}

/// The user's settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`.
pub fn user_settings() -> Result<PathBuf> {
    Ok(match config_dir_override() {
        Some(d) => d.join("settings.json"),
        None => home()?.join(".claude").join("settings.json"),
    })
}

/// Claude Code's own state file, which holds user-scope MCP servers:
/// `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`.
pub fn global_config() -> Result<PathBuf> {
    Ok(match config_dir_override() {
        Some(d) => d.join(".claude.json"),
        None => home()?.join(".claude.json"),
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

/// This running binary, as an absolute path with symlinks resolved.
pub fn this_binary() -> Result<PathBuf> {
    std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .context("finding the path of this helix binary")
}

fn is_executable(p: &Path) -> bool {
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` on PATH, as the shell that runs a hook would find it.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// What `program` (as written in a handler or MCP entry) runs: itself when it is a path,
/// else the PATH entry; `None` when it would fail with "not found".
pub fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let p = Path::new(program);
        is_executable(p).then(|| p.to_path_buf())
    } else {
        on_path(program)
    }
}

/// Whether the `helix-net` that the `helix` at `helix` runs (beside its real path) exists.
pub fn net_beside(helix: &Path) -> bool {
    let real = helix.canonicalize().unwrap_or_else(|_| helix.to_path_buf());
    is_executable(&real.with_file_name(NET_BINARY))
}

/// Quotes `s` for `sh` when it holds anything but safe characters.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@%,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The directory of `p`, for "add it to PATH" advice.
pub fn dir_of(p: &Path) -> String {
    p.parent()
        .map_or_else(|| p.display().to_string(), |d| d.display().to_string())
}
