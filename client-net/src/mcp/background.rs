//! Background `helix sync` runs started after a `store`, so an entry reaches the server
//! soon without the tool call waiting on the network. Each run is a whole `helix sync
//! --quiet`, so it also sends the projects' usage reports (docs/usage.md).

use std::path::Path;

/// Background `helix sync` runs started by this server: at most one at a time; a store made
/// while one runs asks for one more run afterwards, so no entry waits for the next manual sync.
#[derive(Debug, Default)]
struct SyncState {
    running: bool,
    again: bool,
}

static SYNC: std::sync::Mutex<SyncState> = std::sync::Mutex::new(SyncState {
    running: false,
    again: false,
});

/// Starts `helix sync --quiet` detached (or queues one more run), so a reachable server gets
/// the entry soon without making the tool call wait on the network. Returns whether a run
/// is under way or queued.
pub(super) fn spawn_background_sync(root: &Path) -> bool {
    let mut state = SYNC.lock().unwrap_or_else(|e| e.into_inner());
    if state.running {
        state.again = true;
        return true;
    }
    let Some(child) = start_sync(root) else {
        return false;
    };
    state.running = true;
    drop(state);
    let root = root.to_path_buf();
    std::thread::spawn(move || {
        let mut child = child;
        loop {
            // Reaping here also keeps zombies from lingering for the life of the server.
            let _ = child.wait();
            let mut state = SYNC.lock().unwrap_or_else(|e| e.into_inner());
            if !state.again {
                state.running = false;
                return;
            }
            state.again = false;
            match start_sync(&root) {
                Some(next) => child = next,
                None => {
                    state.running = false;
                    return;
                }
            }
        }
    });
    true
}

fn start_sync(root: &Path) -> Option<std::process::Child> {
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new(exe);
    cmd.args(["sync", "--quiet"])
        .current_dir(root)
        // stdout is our JSON-RPC channel: the child must never write to it.
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: an interrupt aimed at the session does not cut a push short.
        cmd.process_group(0);
    }
    match cmd.spawn() {
        Ok(child) => Some(child),
        Err(e) => {
            eprintln!("helix mcp: could not start background `helix sync`: {e}");
            None
        }
    }
}
