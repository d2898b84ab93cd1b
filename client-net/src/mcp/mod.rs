//! `helix mcp`: a stdio MCP server (rmcp) giving the model `search`, `store`, `read`, `brief`
//! and `topics` over the same cache, overlay and pending path as the CLI and the hooks.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

const TOOL_NAMES: [&str; 6] = ["search", "store", "edit", "read", "brief", "topics"];

const INSTRUCTIONS: &str = "helix holds the team's hard-won knowledge about this code base: \
build and test gotchas, root causes of past failures, decisions and why they were made, \
fragile files and how to change them safely. It answers from a local cache in milliseconds.\n\
Search helix (`search`) before non-trivial work in an unfamiliar area, when a command or test \
fails with an error you do not immediately understand, and before editing files you have not \
touched before. Use `read` for an entry's full text, `brief` or `topics` for an overview.\n\
Store (`store`) what the next person would otherwise rediscover the hard way: the root cause \
of a non-obvious failure and its fix, a decision and its reason, a fragile spot and how to \
work with it. One fact per entry, a specific title, no secrets, no transient chatter. \
Search first so you do not store a duplicate; correct an entry that is wrong or outdated with \
`edit` (change it, `status: \"retired\"` it, or have a new entry `supersedes` it).";

/// The MCP server: stateless apart from the working directory and the client's name; every
/// call re-opens the knowledge (cheap: mmap) so it reflects syncs and stores made meanwhile.
#[derive(Debug, Clone)]
pub struct HelixMcp {
    cwd: PathBuf,
    /// helix's name of the agent, from the client name it gave at initialize (`None`: not
    /// one helix knows), learned at its first tool call.
    agent: Arc<OnceLock<Option<&'static str>>>,
    tool_router: ToolRouter<HelixMcp>,
}

/// helix's name of the agent (`claude`, `codex`, …) an MCP client name is of, e.g.
/// `claude-code` → `claude`; `None` for a client helix has no adapter for.
fn agent_of_client(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    helix_client::hook::agent::ADAPTERS
        .iter()
        .map(|a| a.name)
        .find(|a| name.contains(a))
}

/// Runs `helix mcp` on stdin/stdout until the client closes the connection.
pub fn run() -> anyhow::Result<()> {
    let cwd = std::env::current_dir()?;
    // An embedder this long-lived process starts is reaped, not left a zombie.
    helix_client::semantic::reap_children();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let service = HelixMcp::new(cwd)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("MCP initialization failed: {e}"))?;
        service.waiting().await?;
        anyhow::Ok(())
    })?;
    // Stdin reads run on the blocking pool; do not wait for a read that will never finish.
    rt.shutdown_background();
    Ok(())
}

/// Runs a tool body on the blocking pool (file I/O, mmap) and turns it into a tool result.
async fn run_tool(
    f: impl FnOnce() -> ToolOutcome + Send + 'static,
    tool: &'static str,
) -> Result<CallToolResult, ErrorData> {
    let outcome = match tokio::task::spawn_blocking(f).await {
        Ok(o) => o,
        Err(e) => Err(ToolError(format!("internal error: {e}"))),
    };
    Ok(match outcome {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(ToolError(msg)) => {
            eprintln!("helix mcp: {tool}: {msg}");
            CallToolResult::error(vec![ContentBlock::text(format!("helix {tool}: {msg}"))])
        }
    })
}

#[tool_router]
impl HelixMcp {
    pub fn new(cwd: PathBuf) -> Self {
        HelixMcp {
            cwd,
            agent: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        description = "Search the team's knowledge base (all followed projects plus entries stored \
        but not yet synced) with BM25 keyword ranking. Use before non-trivial work in an unfamiliar \
        area, on an error you do not recognise (pass the distinctive part of the message), or before \
        editing an unfamiliar file (pass its name and key symbols). Returns the best hits with id, \
        project, topic, date, title and a snippet; pass an id to `read` for the full entry.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        run_tool(move || search_tool(&cwd, args), "search").await
    }

    #[tool(
        description = "Store a new knowledge entry for the team: the root cause of a non-obvious \
        failure and its fix, a decision and its reason, or a fragile spot and how to work with it. \
        The entry becomes a pending entry, visible to `search` and the hooks at once, and is pushed \
        to the team's knowledge repository by `helix sync` (started in the background when a server \
        is configured). One fact per entry; search first to avoid duplicates; never include secrets \
        (entries with keys or tokens are rejected). Returns the new entry's id.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn store(
        &self,
        Parameters(args): Parameters<StoreArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        run_tool(move || store_tool(&cwd, args), "store").await
    }

    #[tool(
        description = "Correct an existing knowledge entry: pass the fields to change (title, body, \
        tags, sources), `status: \"retired\"` for an entry that is simply wrong now, or `supersedes` \
        (ids this entry replaces); or the whole new file as `content` (see `read` with `file: true`). \
        Retired and superseded entries leave search and the hooks (still readable). The edit is \
        pending, visible at once, and pushed by `helix sync`; it names the version it starts from, so \
        if someone changed the entry meanwhile it is refused and kept, never overwriting theirs.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn edit(
        &self,
        Parameters(args): Parameters<EditArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        run_tool(move || edit_tool(&cwd, args), "edit").await
    }

    #[tool(
        description = "Read one knowledge entry in full: title, topic, tags, sources (code paths it is \
        about), author, date and the whole Markdown body. Pass an id from `search` or `brief`, e.g. \
        \"backend:build/linker-errors.md\" or \"build/linker-errors.md\".",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn read(
        &self,
        Parameters(args): Parameters<ReadArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        let agent = self.agent.get().copied().flatten();
        run_tool(move || read_tool(&cwd, args, agent), "read").await
    }

    #[tool(
        description = "Compact overview of the knowledge base. Without a topic: entry counts per \
        project and the largest topics. With a topic: that topic's entries (id, date, title), newest \
        first. Use it to get oriented at the start of work or before storing into a topic.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn brief(
        &self,
        Parameters(args): Parameters<BriefArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        run_tool(move || brief_tool(&cwd, args), "brief").await
    }

    #[tool(
        description = "List every topic with its entry count, per followed project (pending entries \
        included). Use it to pick a `topic` filter for `search` or an existing topic for `store`.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn topics(
        &self,
        Parameters(_args): Parameters<TopicsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let cwd = self.cwd.clone();
        run_tool(move || topics_tool(&cwd), "topics").await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for HelixMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("helix", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.tool_router.get(&request.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`; helix offers: {}",
                    request.name,
                    TOOL_NAMES.join(", ")
                ),
                None,
            ));
        }
        self.agent.get_or_init(|| {
            context
                .peer
                .peer_info()
                .and_then(|info| agent_of_client(&info.client_info.name))
        });
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        self.tool_router.call(tcc).await
    }
}

mod background;
mod tools;

use tools::{
    BriefArgs, EditArgs, ReadArgs, SearchArgs, StoreArgs, ToolError, ToolOutcome, TopicsArgs,
    brief_tool, edit_tool, read_tool, search_tool, store_tool, topics_tool,
};

#[cfg(test)]
mod tests {
    #[test]
    fn client_names_map_to_helix_agents() {
        use super::agent_of_client as a;
        assert_eq!(a("claude-code"), Some("claude"));
        assert_eq!(a("codex-mcp-client"), Some("codex"));
        assert_eq!(a("gemini-cli-mcp-client"), Some("gemini"));
        assert_eq!(a("GitHub Copilot CLI"), Some("copilot"));
        assert_eq!(a("cursor-vscode"), Some("cursor"));
        assert_eq!(a("helix-e2e"), None);
    }
}
