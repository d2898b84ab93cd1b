//! `helix hook <event>`: the hooks of every agent helix serves. One process per event:
//! bounded stdin, lenient JSON read by the agent's adapter (`agent`), mmap the cached
//! artifacts, query, print the answer in the agent's form, exit 0.
//!
//! A hook must never break or slow a session, so every problem ends in "print nothing".

pub mod agent;
pub mod ambient;
pub mod budget;
pub mod call;
pub mod ctx;
pub mod events;
pub mod fresh;
pub mod gate;
pub mod inject;
pub mod input;
pub mod keywords;
pub mod once;
pub mod output;
pub mod state;
pub mod table;
pub mod tools;

use std::io::Write;
use std::process::ExitCode;

/// `helix hook <event>` arguments.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[arg(long_help = table::help())]
    pub event: String,
    /// `--agent <name>` (whose input and output form; Claude Code by default) and `--mcp
    /// <prefix>|none` (the name of helix's MCP tools in this session, see `hook::tools`);
    /// anything else is ignored, so a future installer's extra arguments never break an
    /// older binary.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// Runs one hook and always exits 0.
pub fn run(args: &HookArgs) -> ExitCode {
    run_event(
        &args.event,
        tools::agent_value(&args.rest),
        tools::flag_value(&args.rest),
    )
}

/// Runs the hook `event` for `agent` (default Claude Code) reading stdin (`mcp`: the `--mcp`
/// value); prints its answer, if any; always exits 0. An unknown agent prints nothing: its
/// input and output forms are unknown.
pub fn run_event(event: &str, agent: Option<&str>, mcp: Option<&str>) -> ExitCode {
    exit_quietly_on_sigbus();
    let adapter = match agent {
        None => Some(agent::default()),
        Some(name) => agent::find(name),
    };
    // Last resort: handlers avoid panics, but a panic must still end in "print nothing".
    let out = adapter.and_then(|a| {
        std::panic::catch_unwind(|| answer(event, a, tools::Tools::from_flag(mcp, a)))
            .ok()
            .flatten()
    });
    if adapter.is_none() {
        log(event, "unknown --agent; ignored");
    }
    if let Some(text) = out {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.write_all(b"\n");
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// A mapped artifact that another program truncates or rewrites in place (`cp` over it, a
/// backup restore; helix itself only ever renames a new file over it) raises SIGBUS when a
/// page past the new end is read. A hook then exits 0 having printed nothing, as for any
/// other broken cache: the answer is printed only after every read of the mapping is done.
#[cfg(unix)]
#[allow(unsafe_code)]
fn exit_quietly_on_sigbus() {
    extern "C" fn on_sigbus(_: libc::c_int) {
        // SAFETY: `_exit` is async-signal-safe; nothing has been printed yet.
        unsafe { libc::_exit(0) }
    }
    // SAFETY: a zeroed sigaction with a plain handler and an empty mask is valid; this runs
    // on the hook's only thread before anything is mapped.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
fn exit_quietly_on_sigbus() {}

fn answer(event: &str, agent: &'static agent::Adapter, tools: tools::Tools) -> Option<String> {
    let Some(bytes) = input::read_stdin() else {
        log(event, "stdin unreadable or over 1 MiB; ignored");
        return None;
    };
    let Some(value) = input::parse(&bytes) else {
        log(event, "stdin is not a JSON object; ignored");
        return None;
    };
    let Some(hook) = table::find(event) else {
        log(event, "unknown hook; ignored");
        return None;
    };
    let call = (agent.read)(&value);
    if is_duplicate(hook, &call, &bytes) {
        log(
            event,
            "duplicate of a call with the same input moments ago; silent",
        );
        return None;
    }
    let cx = ctx::Ctx::new(&call, agent, tools);
    let Some(answer) = (hook.run)(&cx) else {
        log(event, "nothing to say");
        return None;
    };
    let chars = budget::chars(&answer);
    // The adapter only renders (`None`: its agent takes no such answer from this event);
    // what reaches the model is the engine's to decide, and to count.
    let Some(out) = (agent.render)(hook, &call, answer) else {
        log(event, "nothing this agent takes from this event");
        return None;
    };
    if chars > 0 {
        if !budget::allows(&cx, hook, chars) {
            inject::withhold(&cx, hook.name, chars);
            log(event, "the session's context budget is spent; silent");
            return None;
        }
        inject::record(&cx, hook.name, chars);
    }
    log(event, "answered");
    Some(out)
}

/// Whether this call repeats one made moments ago in the same session with the same stdin:
/// the same hook installed twice (user and project settings, a plugin) runs twice.
fn is_duplicate(hook: &table::Hook, call: &call::Call<'_>, bytes: &[u8]) -> bool {
    hook.once
        && call
            .session()
            .is_some_and(|s| !once::first_call(s, hook.name, bytes))
}

/// Diagnostics only when `HELIX_LOG` is set: appended to that file when it is an absolute
/// path, else written to stderr.
fn log(event: &str, msg: &str) {
    let Some(dest) = std::env::var_os("HELIX_LOG").filter(|v| !v.is_empty()) else {
        return;
    };
    let line = format!("helix hook {event}: {msg}\n");
    let path = std::path::Path::new(&dest);
    if path.is_absolute() {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    } else {
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// `helix hook <event>`, optionally with `--agent <name>` and `--mcp <value>` (in either
/// order), handled without clap. `None` for any other command line (clap then parses it,
/// `--help` included).
pub fn fast_path() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()?.to_str()? != "hook" {
        return None;
    }
    let event = args.next()?.into_string().ok()?;
    if event.starts_with('-') {
        return None;
    }
    let (mut agent, mut mcp) = (None, None);
    while let Some(flag) = args.next() {
        let slot = match flag.to_str()? {
            "--agent" => &mut agent,
            "--mcp" => &mut mcp,
            _ => return None,
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(args.next()?.into_string().ok()?);
    }
    Some(run_event(&event, agent.as_deref(), mcp.as_deref()))
}
