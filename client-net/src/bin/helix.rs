//! `helix`: the helix client: offline cache, Claude Code hooks, CLI. The commands that talk
//! to a server (`sync`, `doctor`, `mcp`) run in `helix-net`, installed beside this binary,
//! so that this one — started for every hook — links no HTTP, TLS or async runtime.
//!
//! The process starts at a C `main` rather than Rust's: std's start-up (finding the main
//! thread's stack guard by parsing /proc/self/maps, an alternate signal stack, checks of
//! fds 0-2, SIGPIPE) costs about a sixth of a hook's whole fork+exec budget, and a hook
//! needs none of it. The few parts that matter are done here, explicitly. Only where glibc
//! hands the arguments to std without that start-up (through `.init_array`); elsewhere
//! (musl, macOS) `helix` keeps Rust's `main`.
#![cfg_attr(all(target_os = "linux", target_env = "gnu"), no_main)]

use clap::Parser;
use helix_client::cli::{self, Cli};
use helix_client::hook;
use std::process::ExitCode;

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() -> ExitCode {
    run()
}

fn run() -> ExitCode {
    // Hooks run on every tool call: skip building the whole CLI parser for them.
    if let Some(code) = hook::fast_path() {
        return code;
    }
    cli::run(Cli::parse(), |_| exec_net())
}

/// The C entry point and the parts of std's start-up that `helix` still needs.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod c_main {
    use std::ffi::{c_char, c_int};
    use std::io::Write;
    use std::process::ExitCode;

    /// The process entry point, called by the C runtime. std still works without its start-up:
    /// arguments come from glibc through `.init_array`, allocation and I/O need no set-up.
    #[unsafe(no_mangle)]
    #[allow(unsafe_code)]
    extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
        reopen_closed_std_fds();
        // As std's start-up does; `cli::run` restores the default for the printing commands.
        ignore_sigpipe();
        // std's `main` turns a panic into exit status 101 after printing it; do the same.
        let code = std::panic::catch_unwind(super::run).unwrap_or(ExitCode::from(101));
        // std flushes stdout at exit; returning from a C main does not.
        let _ = std::io::stdout().flush();
        exit_status(code)
    }

    /// `ExitCode` has no accessor for its value; every code helix makes is one of these.
    fn exit_status(code: ExitCode) -> c_int {
        (0..=u8::MAX)
            .find(|&n| ExitCode::from(n) == code)
            .map_or(1, c_int::from)
    }

    /// As std does for Rust programs: a closed stdin, stdout or stderr is reopened on
    /// /dev/null, so that no file helix opens later (a session state file) takes its number
    /// and receives what was meant for the terminal.
    fn reopen_closed_std_fds() {
        for fd in 0..=2 {
            if !fd_is_open(fd) {
                // Opening takes the lowest free number: the closed one. Leaked on purpose.
                let _ = std::fs::OpenOptions::new()
                    .read(fd == 0)
                    .write(fd != 0)
                    .open("/dev/null")
                    .map(std::mem::ManuallyDrop::new);
            }
        }
    }

    #[allow(unsafe_code)]
    fn fd_is_open(fd: c_int) -> bool {
        // SAFETY: F_GETFD only reads the descriptor's flags; any fd number is a valid argument.
        unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
    }

    /// A hook's reader closing the pipe early must not kill the hook (hooks exit 0): writes
    /// then fail with EPIPE, which the hook ignores.
    #[allow(unsafe_code)]
    fn ignore_sigpipe() {
        // SAFETY: called at start-up on the only thread; setting SIG_IGN has no memory-safety
        // preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    }
}

/// Replaces this process with `helix-net` and the same arguments (stdio, environment and
/// exit status carry over; `helix mcp` keeps speaking on the same pipes).
fn exec_net() -> anyhow::Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe()?;
    let net = exe.with_file_name("helix-net");
    let err = std::process::Command::new(&net)
        .args(std::env::args_os().skip(1))
        .exec();
    anyhow::bail!(
        "cannot run {}: {err} (helix runs it for sync, review, usage, doctor and mcp; install it next to helix: `cargo install --locked --path client-net`)",
        net.display()
    )
}
