//! Semantic search on the real server (docs/operations.md, "Semantic search"): a tiny random
//! model from `helix_embed::tiny`; the artifact's `VECTORS` (one row per entry, reused for
//! unchanged entries, the same bytes on a replica that compiled cold), `GET /v1/model` and
//! its files, and the search API's fusion. Without `[semantic]` nothing changes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

use helix_index_format::Index;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::harness::{Dev, Server, Upstream, WAIT};

const PROJECT: &str = "team";

/// `GET path` with extra headers: status, lower-cased headers, body.
fn get(
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, BTreeMap<String, String>, Vec<u8>) {
    let host = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).expect("connect");
    s.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).expect("read");
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n").expect("head");
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = text.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status");
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = buf[end + 4..].to_vec();
    if headers
        .get("transfer-encoding")
        .is_some_and(|t| t == "chunked")
    {
        body = dechunk(&body);
    }
    (status, headers, body)
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n").expect("chunk size");
        let size = usize::from_str_radix(
            std::str::from_utf8(&b[..nl])
                .expect("utf-8")
                .split(';')
                .next()
                .unwrap()
                .trim(),
            16,
        )
        .expect("hex size");
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[nl + 2..nl + 2 + size]);
        b = &b[nl + 2 + size + 2..];
    }
}

fn artifact(server: &Server, token: &str) -> Vec<u8> {
    let auth = format!("Bearer {token}");
    let (code, _, body) = get(
        &server.url,
        &format!("/v1/projects/{PROJECT}/index"),
        &[("Authorization", &auth)],
    );
    assert_eq!(code, 200);
    body
}

fn config(dir: &Path, up: &Upstream, semantic: Option<&Path>) -> std::path::PathBuf {
    let semantic = semantic
        .map(|m| {
            format!(
                "[semantic]\nmodel = {:?}\nbody_chars = 300\n\n",
                m.to_str().unwrap()
            )
        })
        .unwrap_or_default();
    std::fs::create_dir_all(dir).expect("dir");
    Server::configure(
        dir,
        &format!(
            "{semantic}[[projects]]\nname = {PROJECT:?}\nupstream = {:?}\npoll_interval_secs = 3600\n",
            up.bare.to_str().expect("utf-8 path")
        ),
    )
}

/// A server in `tmp/<name>` following `up` (with `model` as its `[semantic]` model), with a
/// token of `scopes`, once it serves `commit`.
fn serve(
    tmp: &Path,
    name: &str,
    up: &Upstream,
    model: Option<&Path>,
    scopes: &str,
    commit: &str,
) -> (Server, String) {
    let cfg = config(&tmp.join(name), up, model);
    let token = Server::token_add(&cfg, PROJECT, "ada", scopes);
    let server = Server::start(&cfg, &tmp.join(name).join("data"), tmp);
    server.wait_serving(PROJECT, &token, commit);
    (server, token)
}

const ENTRIES: &[(&str, &str)] = &[
    (
        "git/rebase.md",
        "# Rebase onto main\n\nUse `git rebase -i` to squash fixups before merging.\n",
    ),
    (
        "ci/cache.md",
        "---\ntags: [ci, cache]\ndescription: Why CI builds are slow\n---\n# Cache the cargo registry\n\nThe runner's cache key must include Cargo.lock.\n",
    ),
    (
        "db/migrate.md",
        "# Migrations run in a transaction\n\nPostgres DDL is transactional; a failed migration rolls back.\n",
    ),
    (
        "ops/oom.md",
        "# Release linker killed out of memory\n\nSet codegen-units = 4 and use mold.\n",
    ),
];

#[test]
fn entries_are_embedded_reused_served_and_searched() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let model = tmp.path().join("model");
    helix_embed::tiny::write_tiny_model(&model, 7).expect("tiny model");
    let up = Upstream::new(tmp.path());
    let first = up.commit_as("Ada", ENTRIES, "seed");
    let (mut server, token) = serve(tmp.path(), "a", &up, Some(&model), "read,write", &first);

    // One vector per entry, of the loaded model.
    let embedder = helix_embed::Embedder::load(&model).expect("load tiny model");
    let one = artifact(&server, &token);
    let index = Index::open(&one[..]).expect("artifact");
    let vectors = index.vectors().expect("VECTORS section");
    assert_eq!(vectors.model(), embedder.id());
    assert_eq!(vectors.dim(), embedder.dim());
    assert_eq!(vectors.count_present(), ENTRIES.len());

    // A one-entry commit: the other rows are the same bytes.
    let second = up.commit_as(
        "Ada",
        &[(
            "db/migrate.md",
            "# Migrations run in a transaction\n\nMySQL DDL is not transactional.\n",
        )],
        "edit",
    );
    let (code, _) = server
        .request(
            "POST",
            &format!("/v1/projects/{PROJECT}/refresh?wait=1"),
            b"",
            Some(&token),
        )
        .expect("refresh");
    assert!((200..300).contains(&code), "refresh: {code}");
    server.wait_serving(PROJECT, &token, &second);
    let two = artifact(&server, &token);
    let index2 = Index::open(&two[..]).expect("artifact");
    let vectors2 = index2.vectors().expect("VECTORS section");
    assert_eq!(vectors2.count_present(), ENTRIES.len());
    for (id, _) in ENTRIES {
        let a = index.entry_by_id(id).unwrap().unwrap().doc;
        let b = index2.entry_by_id(id).unwrap().unwrap().doc;
        let (va, vb) = (vectors.get(a).unwrap(), vectors2.get(b).unwrap());
        let same = va.codes == vb.codes && va.scale.to_bits() == vb.scale.to_bits();
        assert_eq!(same, *id != "db/migrate.md", "{id}");
    }

    // A replica that compiles the second commit cold builds the same bytes.
    let (replica, token_b) = serve(tmp.path(), "b", &up, Some(&model), "read", &second);
    assert!(
        artifact(&replica, &token_b) == two,
        "replica's artifact differs"
    );
    drop(replica);

    // The model's manifest and files.
    let manifest = server.json("GET", "/v1/model", Some(&token), 200);
    assert_eq!(manifest["id"], embedder.id());
    assert_eq!(manifest["dim"], embedder.dim());
    let files = manifest["files"].as_array().expect("files");
    assert_eq!(files.len(), helix_embed::MODEL_FILES.len());
    let auth = format!("Bearer {token}");
    for (f, name) in files.iter().zip(helix_embed::MODEL_FILES) {
        assert_eq!(f["name"], name);
        let bytes = std::fs::read(model.join(name)).expect("model file");
        let sha = hex::encode(Sha256::digest(&bytes));
        assert_eq!(f["sha256"], sha.as_str());
        assert_eq!(f["bytes"], bytes.len());
        let path = format!("/v1/model/{name}");
        let (code, h, body) = get(&server.url, &path, &[("Authorization", &auth)]);
        assert_eq!(
            (code, h.get("etag").cloned()),
            (200, Some(format!("\"{sha}\"")))
        );
        assert!(body == bytes, "{name} downloads as its bytes");
        let (code, h, body) = get(
            &server.url,
            &path,
            &[("Authorization", &auth), ("Accept-Encoding", "zstd")],
        );
        assert_eq!(
            (code, h.get("content-encoding").map(String::as_str)),
            (200, Some("zstd"))
        );
        assert!(
            zstd::decode_all(&body[..]).expect("zstd") == bytes,
            "{name} zstd"
        );
        let etag = format!("\"{sha}\"");
        let (code, _, body) = get(
            &server.url,
            &path,
            &[("Authorization", &auth), ("If-None-Match", &etag)],
        );
        assert_eq!((code, body.len()), (304, 0));
    }
    for bad in [
        "/v1/model/..%2Fserver.toml",
        "/v1/model/vocab.txt",
        "/v1/model/a/b",
    ] {
        let (code, _, _) = get(&server.url, bad, &[("Authorization", &auth)]);
        assert_eq!(code, 404, "{bad}");
    }
    let (code, _, _) = get(&server.url, "/v1/model", &[]);
    assert_eq!(code, 401);

    // Search: fused with the vector search, containing every lexical hit, deterministic.
    let q = format!("/v1/projects/{PROJECT}/search?q=migration+transaction");
    let fused = server.json("GET", &q, Some(&token), 200);
    assert_eq!(fused["semantic"], true, "{fused}");
    let ids = |v: &Value| -> Vec<String> {
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    };
    let fused_ids = ids(&fused);
    assert!(fused_ids.contains(&"db/migrate.md".to_string()), "{fused}");
    let migrate = &fused["hits"][fused_ids.iter().position(|i| i == "db/migrate.md").unwrap()];
    assert_eq!(migrate["lexical_rank"], 1, "{fused}");
    assert_eq!(server.json("GET", &q, Some(&token), 200), fused);
    server.stop();

    // Without [semantic]: as before — no vectors, no `semantic` field, no model.
    let (plain, token_c) = serve(tmp.path(), "c", &up, None, "read", &second);
    let bytes = artifact(&plain, &token_c);
    assert!(Index::open(&bytes[..]).unwrap().vectors().is_none());
    let lexical = plain.json("GET", &q, Some(&token_c), 200);
    assert!(lexical.get("semantic").is_none(), "{lexical}");
    assert_eq!(ids(&lexical), vec!["db/migrate.md".to_string()]);
    assert!(
        lexical["hits"][0].get("lexical_rank").is_none(),
        "{lexical}"
    );
    let none = plain.json("GET", "/v1/model", Some(&token_c), 404);
    assert_eq!(none["error"]["code"], "no_model", "{none}");
}

/// The entry of `artifact` whose vector is nearest `query`'s under `model`, as the server
/// embeds entries (`entry_text`, read back as `entry_ref_text`; the config's `body_chars = 300`): with random weights,
/// whichever it is.
fn nearest(model: &Path, artifact: &[u8], query: &str) -> String {
    use helix_index_format::vectors::entry_ref_text;
    let embedder = helix_embed::Embedder::load(model).expect("load tiny model");
    let q = embedder.embed_one(query).expect("embed the query");
    let index = Index::open(artifact).expect("artifact");
    let mut best = (f32::MIN, String::new());
    for d in 0..index.len() {
        let e = index.entry(d).expect("entry");
        let v = embedder.embed_one(&entry_ref_text(&e, 300)).expect("embed");
        let cos: f32 = q.iter().zip(&v).map(|(a, b)| a * b).sum();
        if cos > best.0 {
            best = (cos, e.id.to_string());
        }
    }
    best.1
}

/// Words no entry has: only a vector can find anything for them.
const ODD: &str = "zebra quantum lantern";

#[test]
fn a_client_syncs_the_model_and_searches_by_meaning_offline() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let model = tmp.path().join("model");
    helix_embed::tiny::write_tiny_model(&model, 7).expect("tiny model");
    let up = Upstream::new(tmp.path());
    let head = up.commit_as("Ada", ENTRIES, "seed");
    let (mut server, token) = serve(tmp.path(), "a", &up, Some(&model), "read", &head);
    let want = nearest(&model, &artifact(&server, &token), ODD);

    let dev = Dev::new("ada", &server.url, &[PROJECT], &token);
    let r = dev.run(&["sync"]).ok("helix sync");
    assert!(
        r.stderr.contains("embedding model") && r.stderr.contains("downloaded"),
        "the sync says it fetched the model: {}",
        r.stderr
    );
    let id = helix_embed::Embedder::load(&model)
        .expect("load")
        .id()
        .to_string();
    for f in helix_embed::MODEL_FILES {
        let synced = dev.cache_home().join("helix/model").join(&id).join(f);
        assert_eq!(
            std::fs::read(&synced).expect("synced model file"),
            std::fs::read(model.join(f)).expect("model file"),
            "{f}"
        );
    }

    // `helix search` starts the embedder (which exits soon after the test) and waits for it.
    let search = |what: &str| {
        let mut args = vec!["search", "--json"];
        args.extend(ODD.split_whitespace());
        let mut cmd = dev.cmd(&args);
        cmd.env("HELIX_EMBED_IDLE_SECS", "20");
        let out = cmd.output().expect("helix search");
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let first = v["hits"][0].clone();
        assert!(first["cosine"].is_number(), "{what}: {v}");
        first["id"].as_str().expect("id").to_string()
    };
    let lexical = dev
        .cmd(&["search", "--json", "zebra", "quantum", "lantern"])
        .env("HELIX_EMBED", "off")
        .output()
        .expect("helix search");
    let lexical: Value = serde_json::from_slice(&lexical.stdout).expect("JSON");
    assert_eq!(
        lexical["hits"],
        serde_json::json!([]),
        "no entry has the words"
    );
    assert_eq!(search("online"), want);

    // MCP `search` fuses the same way.
    let mut mcp = dev.mcp();
    let answer = mcp.call("search", serde_json::json!({ "query": ODD }));
    let text = answer["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(text.contains(&want), "{answer}");
    drop(mcp);

    // Offline: the server gone, the cache and the synced model answer alike.
    server.stop();
    assert_eq!(search("offline"), want);
}

/// The status's generation and the served artifact of `server`, once every one of its
/// `entries` entries has a vector.
fn wait_all_vectors(server: &Server, token: &str, entries: usize) -> (u64, Vec<u8>) {
    super::harness::wait_for(&format!("{entries} entries with vectors"), || {
        let bytes = artifact(server, token);
        let index = Index::open(&bytes[..]).ok()?;
        let v = index.vectors()?;
        (index.len() as usize == entries && v.count_present() == entries).then_some(())?;
        let status = server.json(
            "GET",
            &format!("/v1/projects/{PROJECT}/status"),
            Some(token),
            200,
        );
        Some((status["generation"].as_u64()?, bytes))
    })
}

#[test]
fn a_large_compile_embeds_in_the_background_without_holding_up_writes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let model = tmp.path().join("model");
    helix_embed::tiny::write_tiny_model(&model, 7).expect("tiny model");
    let up = Upstream::new(tmp.path());
    // More than a compile embeds itself: the first artifact is served without their
    // vectors, and they are compiled in when the background job ends.
    let notes: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                format!("topic{}/note-{i}.md", i % 4),
                format!("# Note {i} on caching\n\nThe runner's cache key {i} must include the lock file.\n"),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = notes
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let first = up.commit_as("Ada", &files, "seed");
    let (mut server, token) = serve(tmp.path(), "a", &up, Some(&model), "read,write", &first);

    // A store while the entries may still be embedding: acknowledged, and compiled with
    // the others, every entry with its vector.
    let body = br#"{"topic":"ci","title":"Pin the toolchain","body":"A rust-toolchain file keeps CI and laptops on one compiler."}"#;
    let (code, answer) = server
        .request(
            "POST",
            &format!("/v1/projects/{PROJECT}/entries"),
            body,
            Some(&token),
        )
        .expect("POST entry");
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&answer));
    let (generation, bytes) = wait_all_vectors(&server, &token, 41);
    let second = up.head();
    server.wait_serving(PROJECT, &token, &second);
    // The same commit compiled again for its vectors keeps its generation (its depth).
    assert_eq!(generation, 2, "generation of the second commit");

    // A replica compiling the same commit cold ends with the same bytes.
    let (replica, token_b) = serve(tmp.path(), "b", &up, Some(&model), "read", &second);
    let (_, replica_bytes) = wait_all_vectors(&replica, &token_b, 41);
    assert!(replica_bytes == bytes, "replica's artifact differs");
    drop(replica);

    // After a restart the served artifact (every vector in it) stays as it is.
    server.restart(tmp.path());
    server.wait_serving(PROJECT, &token, &second);
    let (code, _) = server
        .request(
            "POST",
            &format!("/v1/projects/{PROJECT}/refresh?wait=1"),
            b"",
            Some(&token),
        )
        .expect("refresh");
    assert!((200..300).contains(&code), "refresh: {code}");
    assert!(
        artifact(&server, &token) == bytes,
        "restart changed the artifact"
    );
}
