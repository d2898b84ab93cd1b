//! Semantic candidates end to end: a cached artifact with vectors from the tiny test model,
//! the real `helix-net embedder` on the per-user socket, and `helix search` and the prompt
//! hook reading both. Without an embedder (absent, garbled, late) everything answers as
//! the lexical search does, exit 0, nothing on stderr.

use crate::hooks::Fixture;
use helix_embed::Embedder;
use helix_index_format::{Embeddings, Index, build_with_embeddings};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A text no entry contains a word of: the vector of [`ODD_TITLE`]'s entry is this text's.
const ODD: &str = "purple walrus tangerine";
const ODD_TITLE: &str = "CI times out on the arm runner";
const PROMPT: &str = "Can you please check why the integration tests hang on the connection pool?";

/// Rebuilds the fixture's cached artifact with a vector for every entry, made by the model
/// in `model` (the odd entry's from [`ODD`]). Returns the odd entry's id.
fn add_vectors(f: &Fixture, model: &Path) -> String {
    let path = f.cache_file();
    let bytes = std::fs::read(&path).expect("read the cache");
    let index = Index::open(&bytes[..]).expect("open the cache");
    let (entries, info) =
        helix_client::knowledge::owned_entries(&index).expect("the cache's entries");
    let embedder = Embedder::load(model).expect("load the tiny model");
    let mut vectors = HashMap::new();
    let mut odd = String::new();
    for e in &entries {
        let text = if e.title == ODD_TITLE {
            odd = e.id.clone();
            ODD.to_string()
        } else {
            format!("{}\n{}", e.title, e.body)
        };
        vectors.insert(e.id.clone(), embedder.embed_one(&text).expect("embed"));
    }
    assert!(!odd.is_empty(), "the fixture has the odd entry");
    let embeddings = Embeddings {
        model: embedder.id().to_string(),
        dim: embedder.dim(),
        vectors,
    };
    let out = build_with_embeddings(&entries, &info, Some(&embeddings)).expect("build");
    std::fs::write(&path, out).expect("write the cache");
    odd
}

fn tiny_model(f: &Fixture) -> PathBuf {
    let dir = f.home.join("model");
    helix_embed::tiny::write_tiny_model(&dir, 7).expect("write the tiny model");
    dir
}

fn socket(f: &Fixture) -> PathBuf {
    f.home.join("run/helix/embed.sock")
}

/// A `helix` command of the fixture with `env`: exit status, stdout, stderr.
fn run(f: &Fixture, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = f.command();
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn helix");
    let mut pipe = child.stdin.take().expect("stdin");
    let _ = pipe.write_all(stdin.as_bytes());
    drop(pipe);
    let out = child.wait_with_output().expect("wait helix");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The prompt hook's stdout for `prompt` (a fresh session each time: nothing is "seen").
fn prompt_hook(f: &Fixture, prompt: &str, session: &str, env: &[(&str, &str)]) -> String {
    let mut input = f.input("UserPromptSubmit", json!({ "prompt": prompt }));
    input["session_id"] = json!(session);
    let (code, out, err) = run(f, &["hook", "prompt"], &input.to_string(), env);
    assert_eq!(code, 0, "the hook exits 0; stderr: {err}");
    assert_eq!(err, "", "the hook prints nothing on stderr");
    out
}

fn search_ids(f: &Fixture, query: &str, env: &[(&str, &str)]) -> Vec<String> {
    let mut args = vec!["search", "--json"];
    args.extend(query.split_whitespace());
    let (code, out, err) = run(f, &args, "", env);
    assert_eq!(code, 0, "helix search: {err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    v["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["id"].as_str().expect("id").to_string())
        .collect()
}

/// `helix-net embedder` in the foreground on the fixture's socket; killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_embedder(f: &Fixture, model: &Path) -> Running {
    let net = helix_test_support::workspace_binary("helix-net");
    let mut cmd = Command::new(net);
    helix_test_support::isolate(&mut cmd, &f.home);
    let child = cmd
        .args(["embedder", "--foreground", "--idle-secs", "60"])
        .env("HELIX_MODEL_DIR", model)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn helix-net embedder");
    let running = Running(child);
    wait_for_socket(f);
    running
}

fn wait_for_socket(f: &Fixture) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(socket(f)).is_err() {
        assert!(Instant::now() < deadline, "the embedder never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

const OFF: &[(&str, &str)] = &[("HELIX_EMBED", "off")];

#[test]
fn with_the_embedder_a_hit_no_word_matches_is_found_and_its_meaning_passes_the_gate() {
    let f = Fixture::new();
    let model = tiny_model(&f);
    let odd = add_vectors(&f, &model);
    // Lexically, nothing: no entry has any of the words.
    assert_eq!(search_ids(&f, ODD, OFF), Vec::<String>::new());
    let lexical = prompt_hook(&f, PROMPT, "s-off", OFF);
    assert!(lexical.contains("pool-exhaustion"), "{lexical}");

    let _embedder = start_embedder(&f, &model);
    let ids = search_ids(&f, ODD, &[]);
    assert_eq!(
        ids.first(),
        Some(&odd),
        "the entry whose vector is the query's"
    );
    // The socket and its directory are the user's alone.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket(&f)), 0o600);
    assert_eq!(mode(socket(&f).parent().unwrap()), 0o700);
    // A second embedder exits quietly and leaves the first one serving.
    let net = helix_test_support::workspace_binary("helix-net");
    let mut second = Command::new(net);
    helix_test_support::isolate(&mut second, &f.home);
    let out = second
        .args(["embedder", "--foreground"])
        .env("HELIX_MODEL_DIR", &model)
        .output()
        .expect("run a second embedder");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(search_ids(&f, ODD, &[]).first(), Some(&odd));

    // The hooks: the gate weighs each hit's cosine with its lexical evidence. The entry
    // the prompt's words point to still comes first; a hit whose meaning is the prompt's
    // passes on that alone.
    // (A budget no loaded test machine misses: the 20 ms one is for a person's machine.)
    let patient = [("HELIX_EMBED_BUDGET_MS", "20000")];
    let fused = prompt_hook(&f, PROMPT, "s-on", &patient);
    assert!(fused.contains("pool-exhaustion"), "{fused}");
    let odd_prompt = prompt_hook(&f, ODD, "s-odd", &patient);
    assert!(odd_prompt.contains(&odd), "{odd_prompt}");
    assert_eq!(
        prompt_hook(&f, ODD, "s-odd-off", OFF),
        "",
        "lexically nothing"
    );
    // The hooks that ask are a setting: none, and the prompt hook is lexical again.
    let none = [("HELIX_EMBED_HOOKS", "")];
    assert_eq!(prompt_hook(&f, ODD, "s-odd-none", &none), "");
    let listed = [
        ("HELIX_EMBED_HOOKS", "error, prompt"),
        ("HELIX_EMBED_BUDGET_MS", "20000"),
    ];
    assert!(prompt_hook(&f, ODD, "s-odd-listed", &listed).contains(&odd));
    // The injection log names why it passed.
    let (_, log, _) = run(&f, &["log", "--json"], "", &[]);
    assert!(log.contains("\"meaning\""), "{log}");
}

#[test]
fn an_absent_embedder_costs_the_hook_nothing_and_is_started_for_next_time() {
    let f = Fixture::new();
    let model = tiny_model(&f);
    let odd = add_vectors(&f, &model);
    let lexical = prompt_hook(&f, PROMPT, "s-off", OFF);
    let model_env = model.to_str().unwrap();
    let env = [
        ("HELIX_MODEL_DIR", model_env),
        ("HELIX_EMBED_IDLE_SECS", "5"),
    ];
    assert!(!socket(&f).exists());
    assert_eq!(prompt_hook(&f, PROMPT, "s-1", &env), lexical);
    // The hook started one (detached), which comes up and serves the next search.
    wait_for_socket(&f);
    assert_eq!(search_ids(&f, ODD, &env).first(), Some(&odd));
}

#[test]
fn no_vectors_no_embedder_no_start() {
    let f = Fixture::new();
    let model = tiny_model(&f);
    let env = [("HELIX_MODEL_DIR", model.to_str().unwrap())];
    let lexical = prompt_hook(&f, PROMPT, "s-off", OFF);
    assert_eq!(prompt_hook(&f, PROMPT, "s-1", &env), lexical);
    std::thread::sleep(Duration::from_millis(300));
    let marker = socket(&f).with_file_name("embed.started");
    assert!(
        !socket(&f).exists() && !marker.exists(),
        "nothing is started for an artifact without vectors"
    );
}

/// The fixture's cache with vectors, its lexical answer to [`PROMPT`], and a listener on
/// the embedder's socket for the test to answer as it likes.
fn with_a_fake_embedder(f: &Fixture) -> (String, UnixListener) {
    let model = tiny_model(f);
    add_vectors(f, &model);
    let lexical = prompt_hook(f, PROMPT, "s-off", OFF);
    let sock = socket(f);
    std::fs::create_dir_all(sock.parent().expect("the socket is in a directory"))
        .expect("create the socket's directory");
    let listener = UnixListener::bind(&sock).expect("bind the embedder's socket");
    (lexical, listener)
}

#[test]
fn a_garbled_or_late_embedder_leaves_the_lexical_answer() {
    let f = Fixture::new();
    let (lexical, listener) = with_a_fake_embedder(&f);
    let server = std::thread::spawn(move || {
        // The first caller gets garbage, the second nothing until long after its budget.
        let (mut garbled, _) = listener.accept().unwrap();
        let _ = garbled.write_all(b"\x00\x05\x00hello\xff\xff\xff\xff");
        drop(garbled);
        let (late, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(2));
        drop(late);
    });
    assert_eq!(prompt_hook(&f, PROMPT, "s-1", &[]), lexical);
    let begin = Instant::now();
    assert_eq!(prompt_hook(&f, PROMPT, "s-2", &[]), lexical);
    assert!(
        begin.elapsed() < Duration::from_millis(1500),
        "the hook does not wait for a late embedder"
    );
    server.join().unwrap();
}

#[test]
fn the_prompt_hook_asks_the_embedder_for_its_kept_words() {
    let f = Fixture::new();
    let (lexical, listener) = with_a_fake_embedder(&f);
    let server = std::thread::spawn(move || {
        use std::io::Read;
        let (mut conn, _) = listener.accept().unwrap();
        let mut len = [0u8; 4];
        conn.read_exact(&mut len).unwrap();
        let mut text = vec![0u8; u32::from_le_bytes(len) as usize];
        conn.read_exact(&mut text).unwrap();
        // Status 1: no vector; the hook answers lexically.
        let _ = conn.write_all(&[1]);
        String::from_utf8(text).unwrap()
    });
    let patient = [("HELIX_EMBED_BUDGET_MS", "20000")];
    let padded = format!("  {PROMPT}\n");
    assert_eq!(prompt_hook(&f, &padded, "s-1", &patient), lexical);
    // The words the lexical search kept, not the sentence: the model reads a sentence
    // better, but embeds its every token, and a prompt's sentence missed the hooks' 20 ms
    // more often than it found more (docs/benchmarks.md, "Semantic candidates in the hooks").
    assert_eq!(
        server.join().unwrap(),
        "check integration tests hang connection pool"
    );
}

/// Each entry's stored vector codes in the cached artifact, by id (none: no VECTORS).
fn cached_vectors(f: &Fixture) -> Option<(String, HashMap<String, Vec<i8>>)> {
    let bytes = std::fs::read(f.cache_file()).expect("read the cache");
    let index = Index::open(&bytes[..]).expect("open the cache");
    let v = index.vectors()?;
    let rows = (0..index.len())
        .filter_map(|d| {
            let row = v.get(d)?;
            Some((index.entry(d).ok()?.id.to_string(), row.codes.to_vec()))
        })
        .collect();
    Some((v.model().to_string(), rows))
}

#[test]
fn local_mode_sync_embeds_with_the_model_and_reuses_what_did_not_change() {
    let f = Fixture::uncompiled();
    let model = tiny_model(&f);
    let model_env = [("HELIX_MODEL_DIR", model.to_str().expect("utf-8 path"))];
    let (code, out, err) = run(&f, &["sync"], "", &model_env);
    assert_eq!(code, 0, "{out}{err}");
    let (id, first) = cached_vectors(&f).expect("local mode embedded the entries");
    assert_eq!(id, Embedder::load(&model).expect("load").id());
    let bytes = std::fs::read(f.cache_file()).expect("read the cache");
    let entries = Index::open(&bytes[..]).expect("open").len() as usize;
    assert!(entries >= 3);
    assert_eq!(first.len(), entries, "every entry has a vector");

    // One entry changes: only its vector is new.
    let changed = "db/pool-exhaustion.md";
    let path = f.root.join("knowledge").join(changed);
    let text = std::fs::read_to_string(&path).expect("read");
    std::fs::write(&path, text + "Or run the tests with --test-threads=4.\n").expect("write");
    let (code, out, err) = run(&f, &["sync"], "", &model_env);
    assert_eq!(code, 0, "{out}{err}");
    let (_, second) = cached_vectors(&f).expect("vectors");
    for (entry, codes) in &first {
        if entry == changed {
            assert_ne!(&second[entry], codes, "{entry} was embedded again");
        } else {
            assert_eq!(&second[entry], codes, "{entry} kept its vector");
        }
    }

    // `helix store` (no model in the `helix` binary) recompiles: the others keep theirs,
    // and the next sync with the model embeds the new entry.
    let (code, out, err) = run(
        &f,
        &[
            "store",
            "--topic",
            "ci",
            "--title",
            "Arm runner is slow",
            "--body",
            "Raise the job timeout.",
        ],
        "",
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    let (_, third) = cached_vectors(&f).expect("vectors kept by store");
    assert_eq!(third, second);
    let (code, out, err) = run(&f, &["sync"], "", &model_env);
    assert_eq!(code, 0, "{out}{err}");
    let (_, fourth) = cached_vectors(&f).expect("vectors");
    assert_eq!(
        fourth.len(),
        second.len() + 1,
        "the stored entry is embedded"
    );

    // A model that does not load: the sync still compiles, keeping the vectors it had.
    let broken = f.home.join("broken-model");
    std::fs::create_dir_all(&broken).expect("mkdir");
    let (code, out, err) = run(
        &f,
        &["sync"],
        "",
        &[("HELIX_MODEL_DIR", broken.to_str().expect("utf-8"))],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("compiling without new embeddings"), "{err}");
    assert_eq!(cached_vectors(&f).expect("kept").1, fourth);
}
