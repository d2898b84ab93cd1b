//! What one hook call knows: the agent's input read into a [`Call`] and, resolved lazily
//! and at most once, the session's working directory, the `.helix.toml` it follows, the
//! mapped knowledge and the session's ledger; and what the call's answer shows, until it
//! is printed and recorded (`inject`).

use std::cell::{OnceCell, RefCell};
use std::path::{Path, PathBuf};

use super::agent::Adapter;
use super::call::Call;
use super::inject::Shown;
use super::state::Seen;
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
    seen: OnceCell<Seen>,
    /// What the answer shows, recorded once it is printed.
    shown: RefCell<Option<Shown>>,
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
            seen: OnceCell::new(),
            shown: RefCell::new(None),
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

    /// The session's ledger: what it was shown, and how much context it was given
    /// (empty without a session).
    pub fn seen(&self) -> &Seen {
        self.seen
            .get_or_init(|| self.session().map(Seen::load).unwrap_or_default())
    }

    /// Keeps what the answer shows until it is printed (`inject::record`).
    pub(super) fn set_shown(&self, shown: Shown) {
        *self.shown.borrow_mut() = Some(shown);
    }

    /// What the answer shows, taken.
    pub(super) fn take_shown(&self) -> Option<Shown> {
        self.shown.borrow_mut().take()
    }

    /// The agent that called.
    pub fn agent(&self) -> &'static Adapter {
        self.agent
    }

    /// Which helix tools the texts may name.
    pub fn tools(&self) -> Tools {
        self.tools
    }

    /// How a text says to read a whole entry.
    pub fn read_hint(&self) -> String {
        self.own("`helix read <project:id>` shows a whole entry".to_string())
    }

    /// How a text says to search helix.
    pub fn search_hint(&self) -> String {
        self.own(self.tools.search_hint())
    }

    /// How a text says to store an entry.
    pub fn store_hint(&self) -> String {
        self.own(self.tools.store_hint())
    }

    /// helix's own wording for this agent: where it escapes `<` and `>` (Gemini CLI), a
    /// placeholder `<project:id>` becomes `PROJECT:ID`.
    fn own(&self, text: String) -> String {
        if self.agent.markup {
            text
        } else {
            unmarked(&text)
        }
    }
}

/// `text` with every `<placeholder>` (letters and `:`) written `PLACEHOLDER`.
pub fn unmarked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('>') {
            Some(close)
                if close > 0
                    && after[..close]
                        .bytes()
                        .all(|b| b.is_ascii_alphabetic() || b == b':') =>
            {
                out.push_str(&after[..close].to_ascii_uppercase());
                rest = &after[close + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn placeholders_lose_their_brackets() {
        assert_eq!(
            super::unmarked(
                "`helix store --topic <topic> --body <text>`; `helix read <project:id>`"
            ),
            "`helix store --topic TOPIC --body TEXT`; `helix read PROJECT:ID`"
        );
        assert_eq!(
            super::unmarked("a < b and Vec<u8> <>"),
            "a < b and Vec<u8> <>"
        );
    }
}
