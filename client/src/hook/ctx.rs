//! What one hook call knows: the agent's input read into a [`Call`] and, resolved lazily
//! and at most once, the session's working directory, the `.helix.toml` it follows and the
//! mapped knowledge.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use super::agent::Adapter;
use super::call::Call;
use super::tools::Tools;
use crate::config::ProjectConfig;
use crate::knowledge::Knowledge;

/// One hook call.
#[derive(Debug)]
pub struct Ctx<'i> {
    pub call: &'i Call<'i>,
    /// The agent that called.
    agent: &'static Adapter,
    /// Which helix tools the texts may name (from the agent and the hook's command line).
    tools: Tools,
    cwd: OnceCell<Option<PathBuf>>,
    config: OnceCell<Option<ProjectConfig>>,
    knowledge: OnceCell<Option<Knowledge>>,
}

impl<'i> Ctx<'i> {
    pub fn new(call: &'i Call<'i>, agent: &'static Adapter, tools: Tools) -> Ctx<'i> {
        Ctx {
            call,
            agent,
            tools,
            cwd: OnceCell::new(),
            config: OnceCell::new(),
            knowledge: OnceCell::new(),
        }
    }

    /// The session's working directory: the call's when it is an existing absolute
    /// directory, else this process's.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd
            .get_or_init(|| {
                if let Some(c) = self.call.cwd {
                    let p = Path::new(c);
                    if p.is_absolute() && p.is_dir() {
                        return Some(p.to_path_buf());
                    }
                }
                std::env::current_dir().ok()
            })
            .as_deref()
    }

    /// The `.helix.toml` the session follows; `None` (the hook stays silent) without one or
    /// when it does not parse.
    pub fn config(&self) -> Option<&ProjectConfig> {
        self.config
            .get_or_init(|| crate::config::find(self.cwd()?).ok().flatten())
            .as_ref()
    }

    /// The followed projects' cached artifacts and pending overlays, mapped.
    pub fn knowledge(&self) -> Option<&Knowledge> {
        self.knowledge
            .get_or_init(|| self.config().map(Knowledge::from_config))
            .as_ref()
    }

    /// The session id, when it is safe as a file name.
    pub fn session(&self) -> Option<&str> {
        self.call.session()
    }

    /// The agent that called.
    pub fn agent(&self) -> &'static Adapter {
        self.agent
    }

    /// Which helix tools the texts may name.
    pub fn tools(&self) -> Tools {
        self.tools
    }

    /// How a text says to read a whole entry: with `<project:id>` where the agent shows
    /// markup as written, else without angle brackets (Gemini CLI escapes them).
    pub fn read_hint(&self) -> &'static str {
        if self.agent.markup {
            "`helix read <project:id>` shows a whole entry"
        } else {
            "`helix read PROJECT:ID` shows a whole entry"
        }
    }
}
