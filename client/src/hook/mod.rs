//! `helix hook <event>`: the Claude Code hooks. One process per event: bounded stdin,
//! lenient JSON, mmap the cached artifacts, query, print one JSON object, exit 0.
//!
//! A hook must never break or slow a session, so every problem ends in "print nothing".

pub mod ambient;
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
    /// `--mcp <prefix>|none`: the name of helix's MCP tools in this session (see
    /// `hook::tools`); anything else is ignored, so a future installer's extra arguments never
    /// break an older binary.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

/// Runs one hook and always exits 0.
pub fn run(args: &HookArgs) -> ExitCode {
    run_event(&args.event, tools::flag_value(&args.rest))
}

/// Runs the hook `event` reading stdin (`mcp`: the `--mcp` value); prints its answer, if
/// any; always exits 0.
pub fn run_event(event: &str, mcp: Option<&str>) -> ExitCode {
    exit_quietly_on_sigbus();
    let tools = tools::Tools::from_flag(mcp);
    // Last resort: handlers avoid panics, but a panic must still end in "print nothing".
    let out = std::panic::catch_unwind(|| answer(event, tools))
        .ok()
        .flatten();
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

fn answer(event: &str, tools: tools::Tools) -> Option<String> {
    let Some(bytes) = input::read_stdin() else {
        log(event, "stdin unreadable or over 1 MiB; ignored");
        return None;
    };
    let Some(input) = input::Input::parse(&bytes) else {
        log(event, "stdin is not a JSON object; ignored");
        return None;
    };
    let Some(hook) = table::find(event) else {
        log(event, "unknown hook; ignored");
        return None;
    };
    if is_duplicate(hook, &input, &bytes) {
        log(
            event,
            "duplicate of a call with the same input moments ago; silent",
        );
        return None;
    }
    let event_name = table::answer_event(hook, input.str("hook_event_name"));
    let out = (hook.run)(&ctx::Ctx::new(&input, event_name, tools));
    log(
        event,
        if out.is_some() {
            "answered"
        } else {
            "nothing to say"
        },
    );
    out
}

/// Whether this call repeats one made moments ago in the same session with the same stdin:
/// the same hook installed twice (user and project settings, a plugin) runs twice.
fn is_duplicate(hook: &table::Hook, input: &input::Input, bytes: &[u8]) -> bool {
    hook.once
        && input
            .session_id()
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

/// `helix hook <event>`, optionally with `--mcp <value>`, handled without clap. `None` for
/// any other command line (clap then parses it, `--help` included).
pub fn fast_path() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()?.to_str()? != "hook" {
        return None;
    }
    let event = args.next()?.into_string().ok()?;
    if event.starts_with('-') {
        return None;
    }
    let mcp = match args.next() {
        None => None,
        Some(flag) if flag == "--mcp" => Some(args.next()?.into_string().ok()?),
        Some(_) => return None,
    };
    if args.next().is_some() {
        return None;
    }
    Some(run_event(&event, mcp.as_deref()))
}
