//! No test touches the user's real directories: every process under test gets HOME and every
//! XDG directory inside its temp dir (`helix_test_support::isolate`), whatever the developer's
//! own environment says, and helix writes nowhere else. Here the "developer's environment"
//! points every variable at an `outside/` folder; a run of the commands that write state
//! (sync, store, a failed edit, hooks install, hooks, log, doctor) must leave it empty.

use super::common::{ProjectSpec, Server, Upstream, helix};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Every file and directory under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap_or(&p).to_path_buf());
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
    out
}

#[test]
fn a_run_writes_nothing_outside_its_temp_dir() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let outside = tmp.path().join("outside");
    let home = tmp.path().join("inside");
    let repo = tmp.path().join("repo");
    for d in [&outside, &home, &repo] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let upstream = Upstream::new(
        tmp.path(),
        &[(
            "build/linker.md",
            "# Release linker runs out of memory\n\nUse lld for release builds.\n",
        )],
    );
    let server = Server::start(&[ProjectSpec {
        name: "kb",
        upstream: Some(&upstream.bare),
    }]);
    server.wait_ready("kb");
    let helix_dir = Path::new(helix()).parent().expect("helix has a directory");
    let run = |args: &[&str], stdin: &str, env: &[(&str, &str)]| -> Output {
        let mut c = Command::new(helix());
        // What a developer's shell might export: all of it must be overridden.
        for var in [
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
            "XDG_RUNTIME_DIR",
        ] {
            c.env(var, outside.join(var.to_ascii_lowercase()));
        }
        c.env("HELIX_LOG", outside.join("hooks.log"));
        helix_test_support::isolate(&mut c, &home)
            .args(args)
            .current_dir(&repo)
            .env("PATH", format!("{}:/usr/bin:/bin", helix_dir.display()))
            .env("HELIX_SYNC_MAX_AGE", "off")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("spawn helix");
        {
            use std::io::Write;
            let mut input = child.stdin.take().expect("stdin");
            input.write_all(stdin.as_bytes()).expect("write stdin");
        }
        child.wait_with_output().expect("helix runs")
    };
    let ok = |args: &[&str], stdin: &str, env: &[(&str, &str)]| {
        let out = run(args, stdin, env);
        assert!(
            out.status.success(),
            "helix {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    ok(
        &["init", "--server", &server.url, "--project", "kb"],
        "",
        &[],
    );
    ok(&["sync"], "", &[]);
    ok(
        &[
            "store",
            "--topic",
            "build",
            "--title",
            "Mold links faster than gold",
            "--body",
            "Switch the release profile to mold when links are slow.",
        ],
        "",
        &[],
    );
    ok(&["sync"], "", &[]);
    // A failed edit keeps its text in `$XDG_STATE_HOME/helix/edits/`.
    let failed = run(
        &["edit", "build/linker.md"],
        "",
        &[("VISUAL", "sed -i 's/^title:/status: bogus\\ntitle:/'")],
    );
    assert_eq!(failed.status.code(), Some(2));
    ok(&["hooks", "install"], "", &[]);
    let repo_json = serde_json::to_string(&repo).expect("path as JSON");
    for (event, input) in [
        (
            "session-start",
            format!(
                r#"{{"session_id":"s1","cwd":{repo_json},"hook_event_name":"SessionStart","source":"startup"}}"#
            ),
        ),
        (
            "prompt",
            format!(
                r#"{{"session_id":"s1","cwd":{repo_json},"hook_event_name":"UserPromptSubmit","prompt":"why does the release linker run out of memory?"}}"#
            ),
        ),
    ] {
        let out = ok(&["hook", event], &input, &[]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("additionalContext"),
            "{event} answered"
        );
    }
    ok(&["log"], "", &[]);
    let _ = run(&["doctor"], "", &[]);
    ok(&["status"], "", &[]);
    ok(&["hooks", "uninstall"], "", &[]);

    assert_eq!(tree(&outside), Vec::<PathBuf>::new(), "written outside");
    let inside = tree(&home);
    for expected in [
        ".local/state/helix/edits",
        ".local/state/helix/backups",
        ".cache/helix/sessions",
    ] {
        assert!(
            inside.iter().any(|p| p.starts_with(expected)),
            "nothing under {expected}: {inside:?}"
        );
    }
}
