//! One hook call as the engine sees it, whatever the agent: every agent adapter
//! (`hook::agent`) reads its agent's stdin into a [`Call`], and turns the engine's
//! [`Answer`] into its agent's output. The engine reads nothing else of the input and knows
//! no agent's field names.

use std::borrow::Cow;

/// What the agent told the hook.
#[derive(Debug, Default)]
pub struct Call<'a> {
    /// The agent's session (or conversation) id, as given; see [`Call::session`].
    pub session: Option<&'a str>,
    /// The session's working directory (or workspace root), as given.
    pub cwd: Option<&'a str>,
    /// The agent's own name for the event, when its input carries one.
    pub event: Option<&'a str>,
    /// Why a session started: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<&'a str>,
    /// The user's prompt, without what the agent itself put before it.
    pub prompt: Option<Cow<'a, str>>,
    /// The tool the event is about.
    pub tool: Option<Tool<'a>>,
    /// What a tool call that failed printed: its error and output.
    pub failure: Option<Cow<'a, str>>,
    /// The user interrupted the tool (a failure no one needs explained).
    pub interrupted: bool,
    /// A stop hook's continuation is already running.
    pub stop_active: bool,
}

impl Call<'_> {
    /// The session id, when it is safe as a file name (`[A-Za-z0-9._-]`, at most 128 chars).
    pub fn session(&self) -> Option<&str> {
        self.session
            .filter(|id| helix_index_format::wire::is_safe_file_stem(id))
    }

    /// The command line of a shell tool (or of a file read done with one).
    pub fn command(&self) -> Option<&str> {
        self.tool.as_ref().and_then(|t| t.command.as_deref())
    }
}

/// What a tool does, in helix's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Action {
    /// Reads a file.
    Read,
    /// Changes part of a file (old text replaced by new).
    Edit,
    /// Writes a whole file.
    Write,
    /// Looks for files or text by a pattern, maybe under a path.
    Search,
    /// Runs a shell command.
    Shell,
    /// One of helix's own MCP tools (named in [`Tool::helix`]).
    Helix,
    /// Anything else.
    #[default]
    Other,
}

/// The tool of a tool event.
#[derive(Debug, Default)]
pub struct Tool<'a> {
    /// The agent's name for it (`Read`, `view`, `read_file`, `Bash`…).
    pub name: &'a str,
    pub action: Action,
    /// The file it reads, changes or writes, or the path it searches under.
    pub file: Option<Cow<'a, str>>,
    /// What a search looks for.
    pub pattern: Option<&'a str>,
    /// The shell command line (a file read through `cat` keeps it too).
    pub command: Option<Cow<'a, str>>,
    /// `(old, new)` text of an edit, when the agent gives it.
    pub edits: Vec<(&'a str, &'a str)>,
    /// For [`Action::Helix`]: which helix tool (`search`, `store`…).
    pub helix: Option<&'a str>,
}

/// What a hook has to say; each agent adapter prints it in its agent's form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Text for the model's context.
    Context(String),
    /// Do not stop yet: the reason goes to the model (a stop hook).
    Block(String),
    /// Allow the tool without asking the user (helix's own MCP tools).
    Allow,
}
