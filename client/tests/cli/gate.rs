//! The hooks' relevance gate, no repeats within a session, the injection log (`helix log`)
//! and `helix search --explain/--project/--topic`, through the real binary.

use serde_json::{Value, json};

use crate::hooks::{Fixture, context};

/// The hook fixture plus twenty notes that each mention running the tests in passing:
/// everyday words the knowledge is full of.
fn noisy() -> Fixture {
    let f = Fixture::uncompiled();
    for i in 0..20 {
        f.write(
            &format!("knowledge/misc/note-{i:02}.md"),
            &format!(
                "# Widget {i} behaviour\n\nRun the tests after changing widget{i}; the tests take a minute to run.\n"
            ),
        );
    }
    f.compile();
    f
}

/// A prompt in `session`, with its own `prompt_id` as Claude Code sends (else an identical
/// prompt moments later would be a duplicate call, silenced before the gate runs).
fn prompt(f: &Fixture, session: &str, text: &str) -> String {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut input = f.input(
        "UserPromptSubmit",
        json!({ "prompt": text, "prompt_id": format!("p{n}") }),
    );
    input["session_id"] = json!(session);
    f.hook("prompt", &input)
}

fn read(f: &Fixture, session: &str, file: &str) -> String {
    let mut input = f.input(
        "PreToolUse",
        json!({"tool_name": "Read", "tool_input": {"file_path": f.root.join(file)}}),
    );
    input["session_id"] = json!(session);
    f.hook("ambient", &input)
}

const TARGETED: &str = "why do our integration tests hang on the connection pool in CI?";

#[test]
fn everyday_prompts_and_errors_are_gated_out_targeted_ones_pass() {
    let f = noisy();
    for everyday in [
        "Run the tests.",
        "Run all the tests after changing it",
        "Rename calcTotal to computeOrderTotal in src/cart.ts and update every call site.",
    ] {
        assert_eq!(prompt(&f, "s1", everyday), "", "{everyday}");
    }
    let error = f.input(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "npm test"},
               "error": "Exit code 1\nFAIL src/cart.test.ts\n  3 tests failed, run the tests again with --verbose",
               "is_interrupt": false}),
    );
    assert_eq!(f.hook("error", &error), "");
    let text = context(&prompt(&f, "s1", TARGETED), "UserPromptSubmit");
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("- kb:db/pool-exhaustion.md")),
        "{text}"
    );
    assert!(
        !text.contains("kb:misc/"),
        "no widget note rides along: {text}"
    );
}

#[test]
fn an_entry_is_not_injected_twice_in_a_session_until_a_compaction() {
    let f = noisy();
    let first = prompt(&f, "a", TARGETED);
    assert!(first.contains("kb:db/pool-exhaustion.md"), "{first}");
    // The same prompt, or another about the same entry: nothing new to say.
    assert_eq!(prompt(&f, "a", TARGETED), "");
    assert_eq!(
        prompt(
            &f,
            "a",
            "Is the connection pool exhausted in integration tests?"
        ),
        ""
    );
    // Another session has not seen it.
    assert!(prompt(&f, "b", TARGETED).contains("kb:db/pool-exhaustion.md"));
    // After a compaction it may come back, once.
    let compact = f.input("PreCompact", json!({"trigger": "auto"}));
    let mut compact = compact;
    compact["session_id"] = json!("a");
    assert_eq!(f.hook("pre-compact", &compact), "");
    assert!(prompt(&f, "a", TARGETED).contains("kb:db/pool-exhaustion.md"));
    assert_eq!(prompt(&f, "a", TARGETED), "");
    // SessionStart after a compaction counts too.
    let mut start = f.input("SessionStart", json!({"source": "compact"}));
    start["session_id"] = json!("a");
    assert!(!f.hook("session-start", &start).is_empty());
    assert!(prompt(&f, "a", TARGETED).contains("kb:db/pool-exhaustion.md"));
    // The state is one small file per session.
    let seen = f.home.join(".cache/helix/sessions/a.seen");
    let size = std::fs::metadata(&seen).expect("seen file").len();
    assert!(size < 200, "{size} bytes");
}

#[test]
fn ambient_does_not_repeat_itself_for_the_same_file() {
    let f = noisy();
    let first = context(&read(&f, "a", "src/db/pool.rs"), "PreToolUse");
    assert!(first.contains("kb:db/pool-exhaustion.md"), "{first}");
    assert!(first.contains("Topics sharing sources"), "{first}");
    assert_eq!(read(&f, "a", "src/db/pool.rs"), "");
    // Another file of the session still gets its own entries.
    let other = context(&read(&f, "a", "src/db/migrate.rs"), "PreToolUse");
    assert!(other.contains("kb:db/migration-order.md"), "{other}");
    // A prompt that showed an entry does not silence ambient for a file it is about.
    assert!(prompt(&f, "c", TARGETED).contains("kb:db/pool-exhaustion.md"));
    assert!(read(&f, "c", "src/db/pool.rs").contains("kb:db/pool-exhaustion.md"));
}

fn helix_log(f: &Fixture, args: &[&str]) -> (String, String) {
    let out = f
        .command()
        .arg("log")
        .args(args)
        .output()
        .expect("helix log");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).expect("utf-8"),
        String::from_utf8(out.stderr).expect("utf-8"),
    )
}

#[test]
fn injections_are_logged_and_helix_log_shows_them() {
    let f = noisy();
    assert_eq!(
        helix_log(&f, &["--json"]).0.trim(),
        r#"{
  "injections": []
}"#
    );
    assert!(prompt(&f, "one", TARGETED).contains("pool-exhaustion"));
    assert_eq!(prompt(&f, "one", "Run the tests."), "");
    assert!(read(&f, "two", "src/db/pool.rs").contains("pool-exhaustion"));
    let (out, _) = helix_log(&f, &["--json"]);
    let v: Value = serde_json::from_str(&out).expect("json");
    let all = v["injections"].as_array().expect("array");
    assert_eq!(all.len(), 2, "gated-out calls are not logged: {out}");
    let p = &all[0];
    assert_eq!(
        (p["hook"].as_str(), p["session"].as_str()),
        (Some("prompt"), Some("one"))
    );
    assert_eq!(p["cwd"], json!(f.root));
    assert_eq!(p["entries"][0]["id"], "kb:db/pool-exhaustion.md");
    assert!(p["entries"][0]["points"].as_f64().unwrap() >= 3.2, "{p}");
    assert!(p["entries"][0]["score"].as_f64().unwrap() > 0.0, "{p}");
    assert!(
        !p["entries"][0]["signal"].as_str().unwrap().is_empty(),
        "{p}"
    );
    let a = &all[1];
    assert_eq!(
        (a["hook"].as_str(), a["file"].as_str()),
        (Some("ambient"), Some("src/db/pool.rs"))
    );
    assert_eq!(a["entries"][0]["signal"], "source");
    let (one, _) = helix_log(&f, &["--session", "two", "--json"]);
    let one: Value = serde_json::from_str(&one).expect("json");
    assert_eq!(one["injections"].as_array().map(Vec::len), Some(1));
    let (human, _) = helix_log(&f, &["--session", "one"]);
    assert!(
        human.contains("prompt") && human.contains("session one"),
        "{human}"
    );
    assert!(
        human.contains("kb:db/pool-exhaustion.md  (score "),
        "{human}"
    );
}

#[test]
fn the_hook_still_answers_when_the_log_is_unwritable() {
    let f = noisy();
    // A directory where the log file should be: every write fails.
    std::fs::create_dir_all(f.home.join(".cache/helix/injections.log")).expect("mkdir");
    let text = context(&prompt(&f, "x", TARGETED), "UserPromptSubmit");
    assert!(text.contains("kb:db/pool-exhaustion.md"), "{text}");
    let (_, err) = helix_log(&f, &[]);
    assert!(err.contains("nothing injected"), "{err}");
}

fn search(f: &Fixture, args: &[&str]) -> std::process::Output {
    f.command()
        .arg("search")
        .args(args)
        .output()
        .expect("helix search")
}

#[test]
fn search_explain_shows_terms_fields_and_the_gate() {
    let f = noisy();
    let out = search(&f, &["--explain", "connection", "pool", "exhausted"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let first = text.lines().next().expect("a hit");
    assert!(first.contains("kb:db/pool-exhaustion.md"), "{text}");
    assert!(text.contains("    matched: connect"), "{text}");
    assert!(text.contains("title 1×"), "{text}");
    assert!(text.contains("gate pass"), "{text}");

    let out = search(&f, &["--explain", "--json", "run", "tests"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let hit = &v["hits"][0];
    let terms = hit["explain"]["terms"].as_array().expect("terms");
    assert!(
        terms
            .iter()
            .any(|t| t["term"] == "test" && t["body"]["count"].as_u64() >= Some(1)),
        "{hit}"
    );
    assert_eq!(hit["explain"]["gate"]["pass"], false, "{hit}");
    // "run tests" is a request for work; the gap and the matched idf are shown.
    assert_eq!(hit["explain"]["gate"]["work"], true, "{hit}");
    assert!(hit["explain"]["gate"]["mass"].as_f64() > Some(0.0), "{hit}");
    assert!(
        hit["explain"]["gate"]["gap"].is_null()
            || hit["explain"]["gate"]["gap"].as_f64() >= Some(1.0),
        "{hit}"
    );
    let sum: f64 = terms.iter().map(|t| t["score"].as_f64().unwrap()).sum();
    assert!(
        (sum - hit["explain"]["bm25"].as_f64().unwrap()).abs() < 1e-3,
        "{hit}"
    );
}

/// The topic is searchable (the note never says `tmux`), and `--explain` shows the gate's
/// cues: the prompt names the hit's topic; it names code no entry has (a known name is
/// not the user's own). What each cue is worth is tested in `hook::gate`.
#[test]
fn explain_shows_the_topic_and_unknown_code_cues() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/tmux/escape-delay.md",
        "# Remove the delay on the escape key\n\nSet `escape-time` to 0 so vim gets Esc at once.\n",
    );
    f.compile();
    let explain = |query: &str| -> Value {
        let out = search(&f, &["--explain", "--json", query]);
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v["hits"]
            .as_array()
            .and_then(|h| h.iter().find(|h| h["id"] == "tmux/escape-delay.md"))
            .cloned()
            .unwrap_or_else(|| panic!("{query}: {v}"))
    };
    let hit = explain("tmux escape lag");
    let tmux = hit["explain"]["terms"]
        .as_array()
        .expect("terms")
        .iter()
        .find(|t| t["term"] == "tmux")
        .cloned()
        .expect("tmux matched");
    assert_eq!(tmux["tags"]["count"], 1, "{hit}");
    assert_eq!(tmux["body"]["count"], 0, "{hit}");
    assert_eq!(hit["explain"]["gate"]["topic"], true, "{hit}");
    assert_eq!(explain("escape lag")["explain"]["gate"]["topic"], false);

    let known = explain("why does escape-time lag in escapeTime")["explain"]["gate"].clone();
    let unknown = explain("why does escape-time lag in escapeTimer")["explain"]["gate"].clone();
    assert_eq!(unknown["own_code"], true, "{unknown}");
    assert_eq!(known["own_code"], false, "{known}");
    assert_eq!(
        explain("why does escape-time lag")["explain"]["gate"]["own_code"],
        false
    );
}

#[test]
fn search_filters_by_project_and_project_topic() {
    let f = noisy();
    let ids = |args: &[&str]| -> Vec<String> {
        let out = search(&f, args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    };
    let all = ids(&["--json", "tests"]);
    assert!(all.iter().any(|i| i.starts_with("misc/")) && all.iter().any(|i| i.starts_with("db/")));
    let db = ids(&["--json", "--topic", "kb:db", "tests"]);
    assert!(
        !db.is_empty() && db.iter().all(|i| i.starts_with("db/")),
        "{db:?}"
    );
    assert_eq!(
        db,
        ids(&["--json", "--topic", "db", "--project", "kb", "tests"])
    );
    let out = search(&f, &["--project", "nope", "tests"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown project `nope`") && err.contains("kb"),
        "{err}"
    );
    let out = search(&f, &["--project", "other", "--topic", "kb:db", "tests"]);
    assert_eq!(out.status.code(), Some(2));
}

/// An artifact built by a newer helix (a tokenizer version this one does not know) is
/// still searched, with this helix's own rules, and `helix status` says to update.
#[test]
fn an_artifact_of_a_newer_tokenizer_is_searched_and_reported() {
    let f = noisy();
    let cache = f.cache_file();
    let mut bytes = std::fs::read(&cache).expect("cache");
    // Header: magic (8), version (4), min_reader_version (4), tokenizer_version (4).
    bytes[16..20].copy_from_slice(&99u32.to_le_bytes());
    std::fs::write(&cache, &bytes).expect("write");
    let text = context(&prompt(&f, "new", TARGETED), "UserPromptSubmit");
    assert!(text.contains("kb:db/pool-exhaustion.md"), "{text}");
    let out = f.command().arg("status").output().expect("status");
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains("built by a newer helix (tokenizer 99"),
        "{status}"
    );
    let out = f
        .command()
        .args(["status", "--json"])
        .output()
        .expect("status");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["projects"][0]["tokenizer_version"], 99);
}

#[test]
fn ambient_names_a_config_file_through_notes_whose_title_says_what_it_is() {
    let f = Fixture::uncompiled();
    // `.tmux.conf` is named by five notes: more than a literal mention alone may claim,
    // so only the ones whose title or topic says `tmux` are shown.
    f.write(
        "knowledge/tmux/prefix.md",
        "# Change the tmux prefix key\n\nPut `set -g prefix C-a` in ~/.tmux.conf.\n",
    );
    f.write(
        "knowledge/tmux/vi-mode.md",
        "# Vi keys in copy mode\n\nAdd `setw -g mode-keys vi` to .tmux.conf and reload it.\n",
    );
    for i in 0..3 {
        f.write(
            &format!("knowledge/misc/dotfiles-{i}.md"),
            &format!(
                "# Keep machine {i} set up\n\nSymlink .tmux.conf, .vimrc and .zshrc from the dotfiles repository.\n"
            ),
        );
    }
    // `user.rb` named in passing by five notes about other things: nothing.
    for i in 0..5 {
        f.write(
            &format!("knowledge/git/history-{i}.md"),
            &format!(
                "# Look at history {i}\n\nFor example `git log -p app/models/user.rb` shows each change.\n"
            ),
        );
    }
    f.compile();
    let text = context(&read(&f, "a", "config/.tmux.conf"), "PreToolUse");
    assert!(text.contains("Entries that name it:"), "{text}");
    assert!(
        text.contains("kb:tmux/prefix.md") && text.contains("kb:tmux/vi-mode.md"),
        "{text}"
    );
    assert!(!text.contains("kb:misc/"), "{text}");
    assert_eq!(read(&f, "a", "app/models/user.rb"), "");
    // The log says why they passed.
    let (log, _) = helix_log(&f, &["--json"]);
    assert!(log.contains("\"file-title\""), "{log}");
}

/// A tool's file whose name says little (`config`, `ignore`, `exclude`), outside the project
/// or in a dot-directory at its top: the entries about its tool (from the path) that say
/// every word of it.
#[test]
fn ambient_finds_a_user_config_file_through_its_tool() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/unix/ssh-aliases.md",
        "# Shorten SSH commands with aliases\n\nAdd a `Host` block to the ssh config file.\n",
    );
    f.write(
        "knowledge/unix/ssh-keys.md",
        "# SSH with a specific key\n\nPass `-i` to ssh to pick the key.\n",
    );
    f.write(
        "knowledge/web/config-reload.md",
        "# Reload the server config\n\nSend SIGHUP to reload its config.\n",
    );
    f.write(
        "knowledge/git/exclude-locally.md",
        "# Ignore files only on this machine\n\nList them in git's info exclude file.\n",
    );
    // `exclude` alone is too common here to name the file.
    for (name, tool) in [("rsync", "rsync"), ("tar", "tar"), ("rg", "ripgrep")] {
        f.write(
            &format!("knowledge/misc/{name}.md"),
            &format!("# Skip paths with {tool}\n\nPass --exclude to {tool}.\n"),
        );
    }
    f.write(
        "knowledge/github/ci.md",
        "# Run CI on GitHub\n\nA workflow file under .github/workflows runs the ci job.\n",
    );
    // The path says `nvim`, the topic says `neovim`.
    f.write(
        "knowledge/neovim/open-config.md",
        "# Open the config from anywhere\n\nA user command in nvim's init.lua that opens it.\n",
    );
    f.write(
        "knowledge/vim/mappings.md",
        "# Leader mappings\n\nThe same init mappings work in nvim.\n",
    );
    f.compile();
    let nvim = f.home.join(".config/nvim");
    std::fs::create_dir_all(&nvim).unwrap();
    std::fs::write(nvim.join("init.lua"), "").unwrap();
    let text = context(
        &read(&f, "n", nvim.join("init.lua").to_str().unwrap()),
        "PreToolUse",
    );
    assert!(text.contains("kb:neovim/open-config.md"), "{text}");
    // Every word, but neither its title nor its topic names the tool.
    assert!(!text.contains("kb:vim/mappings.md"), "{text}");
    let ssh = f.home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("config"), "").unwrap();
    let text = context(
        &read(&f, "t", ssh.join("config").to_str().unwrap()),
        "PreToolUse",
    );
    assert!(text.contains("Entries about ssh:"), "{text}");
    assert!(text.contains("kb:unix/ssh-aliases.md"), "{text}");
    // It does not say `config`; the server note does not say `ssh`.
    assert!(!text.contains("kb:unix/ssh-keys.md"), "{text}");
    assert!(!text.contains("kb:web/"), "{text}");
    // A file of the project with the same generic name gets nothing from this rule.
    assert_eq!(read(&f, "t", "app/config"), "");
    // A file in a dot-directory at the project's top belongs to its tool too; a name of
    // under three letters (`ci`) leaves one word, too few to search.
    let text = context(&read(&f, "g", ".git/info/exclude"), "PreToolUse");
    assert!(text.contains("kb:git/exclude-locally.md"), "{text}");
    assert_eq!(read(&f, "g", ".github/workflows/ci.yml"), "");
    let (log, _) = helix_log(&f, &["--json"]);
    assert!(log.contains("\"tool-file\""), "{log}");
}

/// A file whose name says little (`config.ts`) or that no note names (`order_preview.rb`):
/// the notes that write out its project path, or its deep folder, are about it; a path many
/// notes show in passing, or a shallow folder, is not.
#[test]
fn ambient_finds_notes_that_write_out_a_files_path_or_folder() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/astro/content-types.md",
        "# Generate types for a content collection\n\nDefine the collection in `src/content/config.ts`, then run `astro sync`.\n",
    );
    f.write(
        "knowledge/rails/previews.md",
        "# Keep mailer previews out of the database\n\nWrap them in a transaction in `test/mailers/previews/base_preview.rb`.\n",
    );
    f.write(
        "knowledge/misc/latest.md",
        "# Old snapshots\n\nThey live under `latest/mailers/previews/` and `my-src/content/config.ts`.\n",
    );
    for i in 0..4 {
        f.write(
            &format!("knowledge/git/blame-{i}.md"),
            &format!("# Blame trick {i}\n\nFor example `git blame src/app/main.ts` on line {i}.\n"),
        );
    }
    f.write(
        "knowledge/rails/models.md",
        "# Model callbacks\n\nCallbacks in `app/models/order.rb` run in order.\n",
    );
    f.compile();
    let text = context(&read(&f, "a", "src/content/config.ts"), "PreToolUse");
    assert!(text.contains("Entries that write out its path:"), "{text}");
    assert!(text.contains("kb:astro/content-types.md"), "{text}");
    assert!(!text.contains("kb:misc/"), "{text}");
    let text = context(
        &read(&f, "b", "test/mailers/previews/order_preview.rb"),
        "PreToolUse",
    );
    assert!(
        text.contains("Entries about its folder test/mailers/previews/:"),
        "{text}"
    );
    assert!(text.contains("kb:rails/previews.md"), "{text}");
    assert!(!text.contains("kb:misc/"), "{text}");
    // Four notes show `src/app/main.ts` in passing; `app/models/` is a shallow folder.
    assert_eq!(read(&f, "c", "src/app/main.ts"), "");
    assert_eq!(read(&f, "d", "app/models/user.rb"), "");
    let (log, _) = helix_log(&f, &["--json"]);
    assert!(log.contains("\"file-path\""), "{log}");
}

/// A configuration file that no note names or writes out (`honeybadger.yml`): the notes
/// whose title says its name are about its tool. Not for the project's own source files
/// (`Dashboard.vue`), nor for a name that many titles say (`deploy.yml`).
#[test]
fn ambient_finds_a_configuration_files_tool_by_the_titles_that_name_it() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/ruby/honeybadger-context.md",
        "# Include extra context in a Honeybadger notify\n\nPass `context:` to Honeybadger.notify.\n",
    );
    f.write(
        "knowledge/ruby/unrelated.md",
        "# Retry a block after an exception\n\nWrap it in `retry` with a counter.\n",
    );
    f.write(
        "knowledge/heroku/dashboard.md",
        "# Open the dashboard for an add-on\n\n`heroku addons:open` opens its dashboard.\n",
    );
    for i in 0..4 {
        f.write(
            &format!("knowledge/devops/deploy-{i}.md"),
            &format!("# Deploy trick {i}\n\nA way to deploy number {i}.\n"),
        );
    }
    f.compile();
    let text = context(&read(&f, "a", "config/honeybadger.yml"), "PreToolUse");
    assert!(text.contains("Entries about honeybadger:"), "{text}");
    assert!(text.contains("kb:ruby/honeybadger-context.md"), "{text}");
    assert!(!text.contains("kb:ruby/unrelated.md"), "{text}");
    assert_eq!(read(&f, "b", "src/views/Dashboard.vue"), "");
    assert_eq!(read(&f, "c", ".github/workflows/deploy.yml"), "");
    let (log, _) = helix_log(&f, &["--json"]);
    assert!(log.contains("\"config-title\""), "{log}");
}

/// A source file that no note names (`config/initializers/flipper.rb`): the notes whose title
/// says its name's words and that show code in its language are about it. A title word in
/// another language is a homonym (`queue.rs` and Elixir's message queue).
#[test]
fn ambient_finds_a_source_files_subject_by_title_and_language() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/rails/flipper-actors.md",
        "# Flipper discards actors when a feature is fully enabled\n\nAfter enabling:\n\n```ruby\nFlipper.enable(:search)\n```\n",
    );
    f.write(
        "knowledge/elixir/message-queue.md",
        "# Inspect the process message queue\n\nAsk the process:\n\n```elixir\nProcess.info(self(), :messages)\n```\n",
    );
    f.write(
        "knowledge/rails/unrelated.md",
        "# Retry a job after an exception\n\n```ruby\nretry_on Timeout::Error\n```\n",
    );
    f.compile();
    let text = context(
        &read(&f, "a", "config/initializers/flipper.rb"),
        "PreToolUse",
    );
    assert!(text.contains("Entries about flipper:"), "{text}");
    assert!(text.contains("kb:rails/flipper-actors.md"), "{text}");
    assert!(!text.contains("kb:rails/unrelated.md"), "{text}");
    assert_eq!(read(&f, "b", "src/lib/queue.rs"), "");
    // The same name in a language the note does not show is not its subject.
    assert_eq!(read(&f, "c", "pkg/flipper.go"), "");
    let (log, _) = helix_log(&f, &["--json"]);
    assert!(log.contains("\"name-language\""), "{log}");
}

fn failure(f: &Fixture, session: &str, output: &str) -> String {
    let mut input = f.input(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "bin/rails runner x.rb"},
               "error": output, "is_interrupt": false}),
    );
    input["session_id"] = json!(session);
    f.hook("error", &input)
}

/// A note that quotes the failure's message (six words of one of its lines) is about it,
/// however the ranking and the gate weigh the rest of the output; a phrase that many notes
/// quote is a banner, and five words are not a quote.
#[test]
fn an_error_whose_message_a_note_quotes_injects_that_note() {
    let f = Fixture::uncompiled();
    f.write(
        "knowledge/ruby/fetch-block.md",
        "# Fetch warns about its block\n\nRuby prints `warning: block supersedes default value argument` when `fetch` gets both.\n",
    );
    for i in 0..30 {
        f.write(
            &format!("knowledge/misc/shipping-{i:02}.md"),
            &format!("# Shipping label {i}\n\nThe shipping label carrier falls back to usps for zone {i}.\n"),
        );
    }
    for i in 0..4 {
        f.write(
            &format!("knowledge/ci/banner-{i}.md"),
            &format!("# Runner {i}\n\nThe log starts with `booting the worker pool for jobs` on runner {i}.\n"),
        );
    }
    f.compile();
    let output = "Exit code 1\napp/services/shipping_label.rb:14: warning: block supersedes default value argument\n\
                  Failures:\n  1) ShippingLabel carrier falls back to usps\n     expected: \"usps\"\n          got: nil\n";
    let text = context(&failure(&f, "q1", output), "PostToolUseFailure");
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("- kb:ruby/fetch-block.md")),
        "{text}"
    );
    let (log, _) = helix_log(&f, &["--json"]);
    assert!(log.contains("\"quote\""), "{log}");
    // Four notes quote the banner (the gate may still pass them on their words, but not as
    // a quote); five words of the message are not a quote.
    failure(
        &f,
        "q2",
        "Exit code 1\nbooting the worker pool for jobs\nfatal: lost",
    );
    let (log, _) = helix_log(&f, &["--json", "--session", "q2"]);
    assert!(!log.contains("\"quote\""), "{log}");
    failure(
        &f,
        "q3",
        "Exit code 1\nwarning: block supersedes default value\nfatal: lost",
    );
    let (log, _) = helix_log(&f, &["--json", "--session", "q3"]);
    assert!(!log.contains("\"quote\""), "{log}");
}

fn failure_of(f: &Fixture, session: &str, command: &str, output: &str) -> String {
    let mut input = f.input(
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": command},
               "error": output, "is_interrupt": false}),
    );
    input["session_id"] = json!(session);
    f.hook("error", &input)
}

/// A failure of a tool the knowledge has a topic for (`psql` → `postgres/`) counts that
/// topic's entries more, by `TOOL_POINTS`; the same output from the user's own
/// program or a test run does not, though it names the tool.
#[test]
fn an_error_of_a_tool_counts_the_tools_topic() {
    let f = noisy();
    f.write(
        "knowledge/postgres/fuzzy-match.md",
        "# Fuzzy matching names\n\nThe `fuzzystrmatch` extension gives `levenshtein(a, b)`; create the extension first or the function does not exist.\n",
    );
    f.write(
        "knowledge/python/string-distance.md",
        "# String distance in Python\n\nCompare names with `difflib`; a function that takes a character argument is not an extension.\n",
    );
    f.compile();
    let output = "Exit code 1\nERROR:  function levenshtein(character varying, unknown) does not exist\n\
                  LINE 1: select name from products order by levenshtein(name, 'chiar')\n\
                  psql: hint: see the postgres log\n";
    let points = |session: &str, command: &str| -> f64 {
        let text = context(
            &failure_of(&f, session, command, output),
            "PostToolUseFailure",
        );
        assert!(
            text.contains("kb:postgres/fuzzy-match.md"),
            "{command}: {text}"
        );
        let (log, _) = helix_log(&f, &["--json", "--session", session]);
        let log: Value = serde_json::from_str(&log).expect("helix log --json");
        log["injections"][0]["entries"]
            .as_array()
            .and_then(|e| e.iter().find(|e| e["id"] == "kb:postgres/fuzzy-match.md"))
            .and_then(|e| e["points"].as_f64())
            .unwrap_or_else(|| panic!("{log}"))
    };
    let psql = points("t1", "psql -d shop_dev -c \"select …\"");
    let own = points("t2", "python scripts/report.py");
    let test = points("t3", "pytest tests/test_names.py");
    let cue = f64::from(helix_client::hook::gate::TOOL_POINTS);
    assert!((psql - own - cue).abs() < 1e-3, "{psql} {own}");
    assert!((test - own).abs() < 1e-6, "{test} {own}");
}

/// A failure of the user's own code that meets a note only in its example code (an
/// `Invoice` with a `total` and a `tax` rate) weighs `CODE_ONLY_PENALTY` less than the same
/// words in the note's prose: the example's names are the note author's choice.
#[test]
fn an_error_that_meets_a_note_only_in_its_example_code_weighs_less() {
    let f = noisy();
    let note = "knowledge/ruby/public-send.md";
    let code = "class Invoice\n  TAX_RATE = 0.08\n  def total\n    (subtotal + tax).round(2)\n  end\nend\n";
    let output = "Exit code 1\nFailures:\n\n  1) Invoice#total adds the tax rate to the subtotal\n     Failure/Error: expect(invoice.total).to eq(108.0)\n\n       expected: 108.0\n            got: 100.0\n";
    let command = "bundle exec rspec spec/models/invoice_spec.rb";
    // The same words either way (fence lines have none), so the same search evidence.
    let points = |session: &str, body: String| -> f64 {
        f.write(note, &format!("# Dispatch only to public methods\n\n`public_send` raises for private methods.\n\n{body}"));
        f.compile();
        let text = context(
            &failure_of(&f, session, command, output),
            "PostToolUseFailure",
        );
        assert!(text.contains("kb:ruby/public-send.md"), "{text}");
        let (log, _) = helix_log(&f, &["--json", "--session", session]);
        let log: Value = serde_json::from_str(&log).expect("helix log --json");
        log["injections"][0]["entries"][0]["points"]
            .as_f64()
            .unwrap_or_else(|| panic!("{log}"))
    };
    let fenced = points("c1", format!("```ruby\n{code}```\n"));
    let prose = points("c2", format!("ruby\n\n{code}"));
    let penalty = f64::from(helix_client::hook::gate::CODE_ONLY_PENALTY);
    assert!((prose - fenced - penalty).abs() < 1e-3, "{prose} {fenced}");
}

/// What the failed command asked for (`git rebase --onto`) is searched with its output:
/// a note on it is found though the output never says `rebase`; the same output from a
/// project script finds nothing.
#[test]
fn an_errors_command_words_are_searched() {
    let f = noisy();
    f.write(
        "knowledge/git/rebase-onto.md",
        "# Move a branch to a new base\n\n`git rebase --onto new-base old-base topic` replays only the topic's own commits.\n",
    );
    f.compile();
    let output = "Exit code 128\nfatal: invalid upstream 'release-2024'\n";
    let text = context(
        &failure_of(
            &f,
            "w1",
            "git rebase --onto release-2024 main topic",
            output,
        ),
        "PostToolUseFailure",
    );
    assert!(text.contains("kb:git/rebase-onto.md"), "{text}");
    assert_eq!(failure_of(&f, "w2", "./scripts/move-branch.sh", output), "");
}

/// A file nothing names: an entry sharing three words or more of its name and folders, with
/// the evidence gate's points, is about the work on it; a path that shares one or two words
/// with entries (`create_users`) gets nothing.
#[test]
fn ambient_finds_what_a_files_path_says() {
    let f = noisy();
    f.write(
        "knowledge/postgres/cascade.md",
        "# Add ON DELETE CASCADE to a foreign key\n\nDrop the constraint and add it again with `on delete cascade`; orders then go with their customer.\n",
    );
    f.write(
        "knowledge/misc/users.md",
        "# Users sign in with email\n\nUsers create an account with their email address.\n",
    );
    f.compile();
    let text = context(
        &read(
            &f,
            "p1",
            "db/migrate/20240312101500_add_on_delete_cascade_to_orders.rb",
        ),
        "PreToolUse",
    );
    assert!(text.contains("kb:postgres/cascade.md"), "{text}");
    assert!(text.contains("Entries about what its path says:"), "{text}");
    let (log, _) = helix_log(&f, &["--json", "--session", "p1"]);
    assert!(log.contains("\"path-words\""), "{log}");
    assert_eq!(
        read(&f, "p2", "db/migrate/20240101120000_create_users.rb"),
        ""
    );
}
