//! `helix hooks install|uninstall|status|plugin`: puts helix into a coding agent — its hook
//! handlers in the agent's hooks file and the MCP server in the matching registration — for
//! the user or for a project, and takes exactly that out again, keeping everything else.
//! This module does Claude Code (the default agent); `agents` the others, with the same
//! plans, backups and checks.
//!
//! It refuses to write a command the agent could not start (`resolve`), warns when helix is
//! already installed in the other scope or as a plugin (the hooks then answer only once,
//! `hook::once`), and keeps backups outside the repository (`files`).

pub mod agents;
pub mod files;
pub mod mcp;
pub mod ordered;
pub mod plugin;
pub mod resolve;
pub mod settings;
pub mod status;

use crate::hook::agent::McpNames;
use crate::hook::agent::claude::{ADAPTER as CLAUDE, DEFAULT_PREFIX};
use crate::hook::tools::Tools;
use anyhow::{Context, Result, bail};
use ordered::Value;
use resolve::{NET_BINARY, shell_quote};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `helix hooks ...`
#[derive(Debug, clap::Subcommand)]
pub enum HooksCommand {
    /// Install the helix hooks and MCP server for an agent (Claude Code unless --agent; for
    /// you unless --project).
    Install(InstallArgs),
    /// Remove exactly what `install` added in that scope.
    Uninstall(Target),
    /// Say where helix is installed, for every agent, and whether it will run; exit 1 if
    /// something will not.
    Status,
    /// Write helix as a Claude Code plugin inside a marketplace directory, to commit.
    Plugin(PluginArgs),
}

/// Which agent and scope to edit.
#[derive(Debug, clap::Args)]
pub struct Target {
    /// The agent: claude, codex, copilot, gemini, cursor, or `all` (every one installed on
    /// this machine).
    #[arg(long, default_value = "claude", value_parser = agent_name)]
    pub agent: String,
    /// The project's files (for Claude Code `.claude/settings.json` and `.mcp.json`), to
    /// commit for the team.
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Your own files (for Claude Code `~/.claude/settings.json` and `~/.claude.json`; the
    /// default).
    #[arg(long)]
    pub user: bool,
    /// Print the resulting file(s) on stdout and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `helix hooks install` arguments.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub target: Target,
    /// With --project: name this binary by its absolute path instead of `helix` from PATH
    /// (machine-specific; the user scope always does).
    #[arg(long)]
    pub absolute: bool,
    /// Register no MCP server (and remove helix's registration in this scope); the hooks
    /// then point the model at the helix CLI only.
    #[arg(long)]
    pub no_mcp: bool,
    /// With --project, for Claude Code: approve the project's MCP server for everyone using
    /// the committed settings (`enabledMcpjsonServers`), so Claude Code does not ask each user.
    #[arg(long, requires = "project", conflicts_with = "no_mcp")]
    pub enable_mcp: bool,
    /// Write even when the agent would not find `helix` on PATH.
    #[arg(long)]
    pub force: bool,
}

/// The names `--agent` takes.
fn agent_name(name: &str) -> Result<String, String> {
    if name == ALL || crate::hook::agent::find(name).is_some() {
        Ok(name.to_string())
    } else {
        let names: Vec<&str> = crate::hook::agent::ADAPTERS
            .iter()
            .map(|a| a.name)
            .collect();
        Err(format!("unknown agent; one of {}, {ALL}", names.join(", ")))
    }
}

/// `--agent all`.
const ALL: &str = "all";

/// `helix hooks plugin` arguments.
#[derive(Debug, clap::Args)]
pub struct PluginArgs {
    /// The directory to write: for Claude Code a marketplace (`.claude-plugin/marketplace.json`
    /// and `plugins/helix/`), for Gemini CLI an extension (`gemini-extension.json`,
    /// `hooks/hooks.json`); created if missing, generated files overwritten.
    pub dir: PathBuf,
    /// The agent whose package to write: claude (a plugin) or gemini (an extension).
    #[arg(long, default_value = "claude", value_parser = ["claude", "gemini"])]
    pub agent: String,
}

/// Entry point of `helix hooks`.
pub fn run(cmd: &HooksCommand) -> Result<ExitCode> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    match cmd {
        HooksCommand::Install(a) => for_agents(&a.target.agent, |name| {
            if name == claude_name() {
                install(a, &cwd)
            } else {
                install_agent(agents::find(name).expect("checked by clap"), a, &cwd)
            }
        }),
        HooksCommand::Uninstall(t) => for_agents(&t.agent, |name| {
            if name == claude_name() {
                uninstall(t, &cwd)
            } else {
                uninstall_agent(agents::find(name).expect("checked by clap"), t, &cwd)
            }
        }),
        HooksCommand::Status => {
            let report = status::scan_all(&cwd);
            status::print(&report);
            Ok(if report.has_problems() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        HooksCommand::Plugin(a) if a.agent == "gemini" => write_gemini_extension(&a.dir),
        HooksCommand::Plugin(a) => write_plugin(&a.dir),
    }
}

fn claude_name() -> &'static str {
    CLAUDE.name
}

/// Runs `each` for the agent `name`, or for every agent installed on this machine (`all`).
fn for_agents(name: &str, mut each: impl FnMut(&str) -> Result<ExitCode>) -> Result<ExitCode> {
    if name != ALL {
        return each(name);
    }
    let mut found = Vec::new();
    if agents::present("claude", ".claude") {
        found.push(claude_name());
    }
    found.extend(
        agents::INSTALLERS
            .iter()
            .filter(|i| (i.detect)())
            .map(|i| i.adapter.name),
    );
    if found.is_empty() {
        bail!(
            "no coding agent found on this machine (none of claude, codex, copilot, gemini, cursor on PATH, nor their ~/.<agent> folders); name one with --agent"
        );
    }
    eprintln!("helix hooks: agents found: {}", found.join(", "));
    let mut code = ExitCode::SUCCESS;
    for agent in found {
        match each(agent) {
            Ok(c) if c != ExitCode::SUCCESS => code = c,
            Ok(_) => {}
            Err(e) => {
                eprintln!("helix hooks: {agent}: {e:#}");
                code = ExitCode::FAILURE;
            }
        }
    }
    Ok(code)
}

/// The files of one scope: the settings file and the MCP registration file.
struct Scope {
    project: bool,
    settings: PathBuf,
    registry: PathBuf,
}

impl Scope {
    fn of(project: bool, cwd: &Path) -> Result<Scope> {
        Ok(if project {
            let dir = resolve::project_dir(cwd);
            Scope {
                project,
                settings: dir.join(".claude").join("settings.json"),
                registry: dir.join(".mcp.json"),
            }
        } else {
            Scope {
                project,
                settings: resolve::user_settings()?,
                registry: resolve::global_config()?,
            }
        })
    }

    fn flag(&self) -> &'static str {
        if self.project { " --project" } else { "" }
    }
}

/// One planned file change.
pub(crate) struct Plan {
    path: PathBuf,
    previous: Option<String>,
    /// New content; `None` deletes the file (uninstall left nothing of it).
    next: Option<String>,
    /// What `--dry-run` shows instead of the whole new file (Claude Code's large state file).
    preview: Option<String>,
}

fn plan(path: &Path, previous: Option<String>, doc: &Value) -> Result<Plan> {
    let next = if *doc == Value::Object(Vec::new()) && previous.is_some() {
        None
    } else {
        Some(files::render(doc)?)
    };
    Ok(Plan {
        path: path.to_path_buf(),
        previous,
        next,
        preview: None,
    })
}

fn apply(plans: Vec<Plan>, dry_run: bool, verb: &str) -> Result<()> {
    if plans.is_empty() {
        eprintln!("helix hooks: nothing to {verb}; already up to date");
        return Ok(());
    }
    for p in plans {
        if dry_run {
            match (&p.preview, &p.next) {
                (Some(preview), _) => print!("--- {}\n{preview}", p.path.display()),
                (None, Some(text)) => print!("--- {}\n{text}", p.path.display()),
                (None, None) => println!("--- {}\n(file would be removed)", p.path.display()),
            }
            continue;
        }
        let bak = match (&p.next, &p.previous) {
            (Some(text), prev) => {
                let bak = files::save(&p.path, text, prev.as_deref())?;
                eprintln!("helix hooks: {verb}: wrote {}", p.path.display());
                bak
            }
            (None, Some(prev)) => {
                let bak = files::remove(&p.path, prev)?;
                eprintln!(
                    "helix hooks: {verb}: removed {} (nothing else was in it)",
                    p.path.display()
                );
                // A `.claude/` directory left empty goes too (fails, harmlessly, if not empty).
                if let Some(dir) = p.path.parent()
                    && dir.file_name().is_some_and(|n| n == ".claude")
                    && std::fs::remove_dir(dir).is_ok()
                {
                    eprintln!("helix hooks: {verb}: removed {} (empty)", dir.display());
                }
                Some(bak)
            }
            (None, None) => None,
        };
        if let Some(b) = bak {
            eprintln!("      previous content kept in {}", b.display());
        }
    }
    Ok(())
}

/// The program the handlers and the MCP server run (unquoted), checked the way the agent
/// (`title`) will start it.
fn program_for(a: &InstallArgs, project: bool, tools: Tools, title: &str) -> Result<String> {
    let this = resolve::this_binary()?;
    let program = if project && !a.absolute {
        "helix".to_string()
    } else {
        this.to_string_lossy().into_owned()
    };
    let found = resolve::resolve(&program);
    match &found {
        None => {
            let msg = format!(
                "`{program}` is not on PATH here, so {title} (which runs the hooks and the MCP server \
                 with this PATH) could not start it: every hook would fail with `helix: not found`.\n\
                 Fix: put {} on PATH (cargo installs into ~/.cargo/bin) and run this again, or pass \
                 --absolute to write this binary's path ({}) instead — machine-specific, not for a file \
                 the whole team uses. --force writes it anyway.",
                resolve::dir_of(&this),
                this.display()
            );
            if !a.force {
                bail!("{msg}");
            }
            eprintln!("helix hooks: WARNING: {msg}");
        }
        Some(p) if p.canonicalize().ok().as_deref() != Some(this.as_path()) => eprintln!(
            "helix hooks: note: {title} will run `helix` from PATH: {}, not this binary ({})",
            p.display(),
            this.display()
        ),
        Some(_) => {}
    }
    if tools != Tools::Cli
        && let Some(p) = &found
        && !resolve::net_beside(p)
    {
        eprintln!(
            "helix hooks: WARNING: {NET_BINARY} is missing beside {}: `helix mcp` (the MCP server), `sync` and \
             `doctor` need it. Fix: `cargo install --locked --path client-net` from the helix repository.",
            p.display()
        );
    }
    Ok(program)
}

fn install(a: &InstallArgs, cwd: &Path) -> Result<ExitCode> {
    let scope = Scope::of(a.target.project, cwd)?;
    let tools = if a.no_mcp {
        Tools::Cli
    } else {
        Tools::Mcp(McpNames::Prefix(DEFAULT_PREFIX))
    };
    let program = program_for(a, scope.project, tools, CLAUDE.title)?;
    let quoted = shell_quote(&program);
    // Load (and so validate) every file before changing any.
    let (mut doc, previous) = files::load_or_empty(&scope.settings)?;
    let (mut reg, reg_previous) = files::load_or_empty(&scope.registry)?;
    let mut plans = Vec::new();
    let ctx = |p: &Path| p.display().to_string();
    let mut changed = settings::merge_hooks(&mut doc, &quoted, &CLAUDE, tools)
        .with_context(|| ctx(&scope.settings))?;
    if a.enable_mcp {
        changed |=
            settings::enable_mcpjson_server(&mut doc).with_context(|| ctx(&scope.settings))?;
    }
    if changed {
        plans.push(plan(&scope.settings, previous, &doc)?);
    }
    let reg_changed = if a.no_mcp {
        mcp::remove(&mut reg)
    } else if scope.project {
        mcp::merge(&mut reg, mcp::project_entry(&program)).with_context(|| ctx(&scope.registry))?
    } else {
        mcp::merge(&mut reg, mcp::user_entry(&program)).with_context(|| ctx(&scope.registry))?
    };
    if reg_changed {
        let mut p = plan(&scope.registry, reg_previous, &reg)?;
        if !scope.project {
            p.preview = Some(format!(
                "mcpServers.helix = {}\n",
                mcp::entry(&reg).map_or_else(
                    || "(removed)".into(),
                    |e| serde_json::to_string(e).unwrap_or_default()
                )
            ));
        }
        plans.push(p);
    }
    apply(plans, a.target.dry_run, "install")?;
    if !a.target.dry_run {
        offer_to_remove_duplicates(&scope, cwd)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `helix hooks install --agent NAME` for an agent other than Claude Code.
fn install_agent(inst: &agents::Installer, a: &InstallArgs, cwd: &Path) -> Result<ExitCode> {
    if a.enable_mcp {
        bail!(
            "--enable-mcp is for Claude Code's .mcp.json approval; {} has no such setting",
            inst.adapter.title
        );
    }
    let dir = resolve::project_dir(cwd);
    let files = (inst.files)(a.target.project, &dir)?;
    let tools = if a.no_mcp {
        Tools::Cli
    } else {
        Tools::Mcp(inst.adapter.mcp)
    };
    let program = program_for(a, files.project, tools, inst.adapter.title)?;
    let plans = agents::plan_install(inst, &files, &program, &shell_quote(&program), tools)?;
    apply(plans, a.target.dry_run, "install")?;
    if !a.target.dry_run
        && let Some(gate) = (inst.gate)(files.project, &dir)
    {
        eprintln!(
            "helix hooks: NOTE: {} will not run these hooks yet: {gate}",
            inst.adapter.title
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `helix hooks uninstall --agent NAME` for an agent other than Claude Code.
fn uninstall_agent(inst: &agents::Installer, t: &Target, cwd: &Path) -> Result<ExitCode> {
    let files = (inst.files)(t.project, &resolve::project_dir(cwd))?;
    apply(agents::plan_uninstall(&files)?, t.dry_run, "uninstall")?;
    Ok(ExitCode::SUCCESS)
}

fn uninstall(t: &Target, cwd: &Path) -> Result<ExitCode> {
    let scope = Scope::of(t.project, cwd)?;
    let mut plans = Vec::new();
    if let Some((mut doc, text)) = files::load(&scope.settings)? {
        let mut changed = settings::remove_hooks(&mut doc);
        if scope.project {
            changed |= settings::disable_mcpjson_server(&mut doc);
        }
        if changed {
            plans.push(plan(&scope.settings, Some(text), &doc)?);
        }
    }
    if let Some((mut reg, text)) = files::load(&scope.registry)?
        && mcp::remove(&mut reg)
    {
        let mut p = plan(&scope.registry, Some(text), &reg)?;
        if !scope.project {
            // Claude Code's state file stays, even if helix's entry was all it held.
            p.next.get_or_insert(files::render(&reg)?);
            p.preview = Some("mcpServers.helix removed\n".into());
        }
        plans.push(p);
    }
    apply(plans, t.dry_run, "uninstall")?;
    Ok(ExitCode::SUCCESS)
}

/// After installing in one scope: helix's hooks in the other scope, or a helix plugin, make
/// Claude Code run every hook twice. helix answers only once, but say so, and offer to remove
/// the other installation when someone is at the terminal.
fn offer_to_remove_duplicates(scope: &Scope, cwd: &Path) -> Result<()> {
    let other = Scope::of(!scope.project, cwd)?;
    let mut found = Vec::new();
    let mut candidates = vec![other.settings.clone()];
    let local = resolve::project_dir(cwd)
        .join(".claude")
        .join("settings.local.json");
    candidates.push(local);
    let mut other_has_hooks = false;
    for path in &candidates {
        let Ok(Some((doc, _))) = files::load(path) else {
            continue;
        };
        if !settings::helix_commands(&doc).is_empty() && *path != scope.settings {
            other_has_hooks |= *path == other.settings;
            found.push(format!("helix hooks in {}", path.display()));
        }
        for id in settings::helix_plugins(&doc) {
            found.push(format!("the plugin {id} (enabled in {})", path.display()));
        }
    }
    if let Ok(Some((doc, _))) = files::load(&scope.settings) {
        for id in settings::helix_plugins(&doc) {
            found.push(format!(
                "the plugin {id} (enabled in {})",
                scope.settings.display()
            ));
        }
    }
    if found.is_empty() {
        return Ok(());
    }
    eprintln!(
        "helix hooks: WARNING: helix is also installed as {}. Claude Code runs every installed handler, so each \
         helix hook now starts twice; helix answers only the first (the duplicate exits at once, printing \
         nothing), but one installation is enough.",
        found.join(" and ")
    );
    let remove = format!("helix hooks uninstall{}", other.flag());
    if !other_has_hooks {
        eprintln!("      to keep only this one, disable the plugin (`/plugin` in Claude Code)");
        return Ok(());
    }
    eprintln!("      to keep only this one: `{remove}`");
    if !std::io::stdin().is_terminal() {
        return Ok(());
    }
    eprint!("Remove the other installation now ({remove})? [y/N] ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    if matches!(line.trim(), "y" | "Y" | "yes") {
        uninstall(
            &Target {
                agent: claude_name().to_string(),
                project: other.project,
                user: !other.project,
                dry_run: false,
            },
            cwd,
        )?;
    }
    Ok(())
}

/// Writes `files` (relative path, text) under `dir`, saying so for each.
fn write_files(dir: &Path, files: Vec<(PathBuf, String)>, what: &str) -> Result<()> {
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        crate::sys::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("helix hooks: {what}: wrote {}", path.display());
    }
    Ok(())
}

fn write_gemini_extension(dir: &Path) -> Result<ExitCode> {
    write_files(dir, agents::gemini::extension_files()?, "extension")?;
    eprintln!(
        "next: `gemini extensions install {}` (trust that folder when Gemini asks). Its hooks' context reaches the model \
         as a project's does; an extension's MCP server cannot be marked trusted, so `gemini -p` offers its tools only with \
         a policy rule allowing them (docs/agents.md, Gemini CLI)",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn write_plugin(dir: &Path) -> Result<ExitCode> {
    // As a `claude plugin marketplace add` argument, a relative directory needs its `./`.
    let shown = if dir.is_absolute() || dir.starts_with(".") {
        dir.display().to_string()
    } else {
        format!("./{}", dir.display())
    };
    write_files(dir, plugin::files()?, "plugin")?;
    eprintln!(
        "next: commit {shown}, then in Claude Code `/plugin marketplace add {shown}` and `/plugin install {}@{}` \
         (or `claude plugin marketplace add {shown} --scope project` and `claude plugin install {}@{} --scope project`, \
         which record both in .claude/settings.json for the team)",
        plugin::NAME,
        plugin::MARKETPLACE,
        plugin::NAME,
        plugin::MARKETPLACE,
    );
    Ok(ExitCode::SUCCESS)
}
