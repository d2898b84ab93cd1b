//! The README's console examples, run as written: each `$ command` of its ```` ```console ````
//! blocks runs against the binaries under test, with the server started as the README
//! says, and what it prints is compared with the README's text once both are normalised
//! for what differs from run to run — commit ids, sizes, dates and scores, the server's
//! address, the code directory and where the binaries are installed. A README that drifts
//! from the build fails here.
//!
//! `cargo install --path DIR` lines are not run (the binaries under test are already built);
//! instead every program the examples call must be a binary of a package they install.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::harness::bins;

/// The address, code directory and install directory the README writes.
const README_SERVER: &str = "http://127.0.0.1:7700";
const README_CODE: &str = "/path/to/code";
const README_BIN: &str = "/home/you/.cargo/bin";

/// One `$ command` and the lines the README shows it printing.
#[derive(Debug)]
struct Step {
    command: String,
    expect: Vec<String>,
}

/// The steps of every ```` ```console ```` block, in order.
fn console_steps(readme: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut inside = false;
    for line in readme.lines() {
        if !inside {
            inside = line.trim_end() == "```console";
            continue;
        }
        if line.starts_with("```") {
            inside = false;
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            steps.push(Step {
                command: strip_comment(cmd).trim().to_string(),
                expect: Vec::new(),
            });
        } else if let Some(step) = steps.last_mut() {
            step.expect.push(line.to_string());
        }
    }
    steps
}

/// `cmd` without a trailing `# comment` (a `#` after whitespace, outside quotes).
fn strip_comment(cmd: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in cmd.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &cmd[..i],
            _ => {}
        }
        prev = c;
    }
    cmd
}

/// The `[[bin]]` names of the package in `dir` (its `Cargo.toml`), or its package name.
fn package_bins(dir: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("{}/Cargo.toml: {e}", dir.display()));
    let mut bins = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(v) = line.strip_prefix("name = ") {
            bins.push(v.trim_matches('"').to_string());
        }
    }
    bins
}

/// The programs a shell command line runs: the first word of each pipeline stage or
/// command (`|`, `;` and `&&` outside quotes separate them).
fn programs(command: &str) -> Vec<&str> {
    let (mut single, mut double) = (false, false);
    let mut starts = vec![0];
    for (i, c) in command.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '|' | ';' | '&' if !single && !double => starts.push(i + 1),
            _ => {}
        }
    }
    starts.push(command.len() + 1);
    starts
        .windows(2)
        .filter_map(|w| command.get(w[0]..w[1] - 1))
        .filter_map(|stage| stage.split_whitespace().next())
        .collect()
}

/// `text` with what changes from run to run replaced by placeholders: hex ids of 7 or more
/// digits, `YYYY-MM-DD` dates, sizes (`13 KB`), scores (`score 1.48`).
fn normalize(text: &str) -> String {
    let words: Vec<String> = split_keep(text)
        .into_iter()
        .map(|w| {
            if w.len() >= 7 && w.len() <= 40 && w.bytes().all(|b| b.is_ascii_hexdigit()) {
                "<id>".to_string()
            } else if is_date(w) {
                "<date>".to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for w in words {
        let unit = matches!(w.as_str(), "B" | "KB" | "MB" | "GB" | "bytes");
        // `13 KB`, `score 1.48`: the number before (or after) the marker word.
        if unit && out.len() >= 2 && out[out.len() - 1] == " " && is_number(&out[out.len() - 2]) {
            let n = out.len();
            out[n - 2] = "<size>".to_string();
        }
        if is_number(&w) && out.len() >= 2 && out[out.len() - 2] == "score" {
            out.push("<score>".to_string());
            continue;
        }
        out.push(w);
    }
    out.concat()
}

/// Splits `text` into runs of word characters (alphanumerics, `-`, and `.` inside a word:
/// `1.48`, not a sentence's full stop) and single other characters, keeping everything.
fn split_keep(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        let next_alnum = chars
            .get(k + 1)
            .is_some_and(|&(_, n)| n.is_ascii_alphanumeric());
        let word =
            c.is_ascii_alphanumeric() || c == '-' || (c == '.' && start.is_some() && next_alnum);
        match (word, start) {
            (true, None) => start = Some(i),
            (true, Some(_)) => {}
            (false, s) => {
                if let Some(s) = s {
                    out.push(&text[s..i]);
                }
                start = None;
                out.push(&text[i..i + c.len_utf8()]);
            }
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

fn is_number(w: &str) -> bool {
    !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
}

fn is_date(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

#[test]
fn normalize_hides_ids_dates_sizes_and_scores_only() {
    assert_eq!(
        normalize("default: 8 entries, commit bca18ba, downloaded 13 KB zstd"),
        "default: 8 entries, commit <id>, downloaded <size> KB zstd"
    );
    assert_eq!(
        normalize("(testing, 2025-11-03, score 1.48)"),
        "(testing, <date>, score <score>)"
    );
    assert_eq!(
        normalize("updated 8 → 9 entries (+1)"),
        "updated 8 → 9 entries (+1)"
    );
    assert_eq!(strip_comment("helix sync   # pushes it"), "helix sync   ");
    assert_eq!(
        strip_comment("echo '# not a comment'"),
        "echo '# not a comment'"
    );
    assert_eq!(programs("echo '{}' | helix hook prompt"), ["echo", "helix"]);
    assert_eq!(
        programs("helix store --body \"a; b | c\" && helix sync"),
        ["helix", "helix"]
    );
}

#[test]
fn the_readme_console_examples_print_what_the_readme_shows() {
    let root = helix_test_support::workspace_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let steps = console_steps(&readme);
    assert!(
        steps.len() >= 10,
        "only {} console steps found",
        steps.len()
    );

    // What the README's install lines (in any code block) put on PATH.
    let mut installed: BTreeSet<String> = BTreeSet::new();
    for line in readme.lines().map(|l| l.trim_start_matches("$ ")) {
        // `cargo xtask install`: the client's and the server's packages in one build.
        if let Some(rest) = line.strip_prefix("cargo xtask install") {
            let rest = strip_comment(rest);
            installed.extend(package_bins(&root.join("client-net")));
            if !rest.contains("--client") {
                installed.extend(package_bins(&root.join("server")));
            }
            continue;
        }
        if !line.starts_with("cargo install") {
            continue;
        }
        let words: Vec<&str> = strip_comment(line).split_whitespace().collect();
        let dir = words
            .iter()
            .position(|w| *w == "--path")
            .and_then(|i| words.get(i + 1))
            .unwrap_or_else(|| panic!("`{line}` names no --path"));
        installed.extend(package_bins(&root.join(dir)));
    }
    assert!(
        installed.contains("helix-server") && readme.contains("```sh\nhelix-server\n```"),
        "the README installs and starts helix-server as this test does"
    );
    for s in &steps {
        if s.command.starts_with("cargo ") || s.command.starts_with("cd ") {
            continue;
        }
        for p in programs(&s.command) {
            let shell = matches!(p, "echo" | "command" | "cat" | "ls");
            assert!(
                shell || installed.contains(p),
                "the README runs `{p}` ({}), which its install lines do not install ({installed:?})",
                s.command
            );
        }
    }

    // The binaries under test, installed as the README's lines would: in one directory on PATH.
    let tmp = tempfile::tempdir().expect("temp dir");
    let bin_dir = tmp.path().join("bin");
    std::fs::create_dir_all(&bin_dir).expect("mkdir");
    let built = bins().helix.parent().expect("bin dir").to_path_buf();
    for b in &installed {
        std::os::unix::fs::symlink(built.join(b), bin_dir.join(b)).expect("link binary");
    }
    let home = tmp.path().join("home");
    let code = tmp.path().join("code");
    let server_dir = tmp.path().join("server");
    for d in [&home, &code, &server_dir] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());

    // The server as the README starts it: no config, the embedded default.
    let mut cmd = Command::new(bin_dir.join("helix-server"));
    let mut server = helix_test_support::isolate(&mut cmd, &home)
        .args(["--listen", "127.0.0.1:0"])
        .current_dir(&server_dir)
        .env("PATH", &path)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start helix-server");
    let url = helix_test_support::listen_url(&mut server, super::harness::WAIT, "helix-server");
    let _kill = KillOnDrop(server);
    // As a person would: the server has compiled its project before they sync.
    super::harness::wait_for("the default project to be served", || {
        helix_test_support::http_request(
            &url,
            "GET",
            "/v1/projects/default/status",
            b"",
            None,
            super::harness::WAIT,
        )
        .filter(|(code, body)| {
            *code == 200 && !String::from_utf8_lossy(body).contains("\"commit\":null")
        })
    });

    let mut cwd: PathBuf = home.clone();
    let subs = |text: &str| {
        text.replace(&url, README_SERVER)
            .replace(code.to_str().expect("utf-8"), README_CODE)
            .replace(bin_dir.to_str().expect("utf-8"), README_BIN)
    };
    let mut ran = 0;
    for s in &steps {
        if s.command.starts_with("cargo ") {
            continue;
        }
        if let Some(dir) = s.command.strip_prefix("cd ") {
            assert_eq!(dir.trim(), README_CODE, "the README's code directory");
            cwd = code.clone();
            continue;
        }
        let command = s
            .command
            .replace(README_SERVER, &url)
            .replace(README_CODE, code.to_str().expect("utf-8"));
        let mut sh = Command::new("sh");
        let out = helix_test_support::isolate(&mut sh, &home)
            .arg("-c")
            .arg(format!("{command} 2>&1"))
            .current_dir(&cwd)
            .env("PATH", &path)
            // `helix edit` opens the editor: this one adds tags, which the hook lines
            // do not show.
            .env("VISUAL", "sed -i '/^title:/a tags: [linker, memory]'")
            .env("HELIX_SYNC_MAX_AGE", "off")
            .stdin(Stdio::null())
            .output()
            .expect("run sh");
        let got = normalize(&subs(&String::from_utf8_lossy(&out.stdout)));
        let want = normalize(&s.expect.join("\n"));
        assert_eq!(
            got.trim_end(),
            want.trim_end(),
            "README step `{}` printed something else (exit {:?})",
            s.command,
            out.status.code()
        );
        assert!(out.status.success(), "README step `{}` failed", s.command);
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} README steps ran");
}

struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
