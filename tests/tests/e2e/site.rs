//! The team the web view's tests look at: a knowledge repository with every case a page
//! must show (a supersedes chain, a retired entry, an entry due for review, history by two
//! authors, an invalid file, skipped files, near-duplicates, the hostile Markdown corpus),
//! a second project no one else may see, a server in review mode with two proposals, and
//! its tokens. Shared by the HTTP tests (`web.rs`) and the browser tests (`browser.rs`).

use std::path::Path;

use helix_test_support::{Answer, exchange, form};
use tempfile::TempDir;

use super::harness::{Server, Upstream, WAIT};

pub const ALPHA: &str = "alpha";
/// A project whose name must never reach a viewer of `alpha`.
pub const BRAVO: &str = "bravo-secret-team";

/// The server and the tokens of each role.
#[derive(Debug)]
pub struct Site {
    pub tmp: TempDir,
    pub server: Server,
    /// `alpha`: read.
    pub reader: String,
    /// `alpha`: read and review.
    pub reviewer: String,
    /// `alpha`: read and write (its entries become proposals).
    pub writer: String,
    /// `bravo-secret-team`: read.
    pub other: String,
}

const OLD: &str = "---\ntitle: Run CI on the old runner\ndate: 2024-01-10\ntags: [ci]\n---\nThe old CI runner needs docker and a warm cache.\n";
const MID: &str = "---\ntitle: Run CI on the mid runner\ndate: 2025-01-10\ntags: [ci]\nsupersedes: ci/runner-old.md\n---\nThe mid CI runner needs podman; the cache is remote.\n";
const NEW: &str = "---\ntitle: Run CI on the new runner\ndate: 2026-01-10\ntags: [ci, runner]\nsources: [.ci/run]\nsupersedes: ci/runner-mid.md\nreview_after: 2026-02-01\n---\nThe new CI runner needs nothing but the repository.\n\nSee [the Redis policy](../ops/redis-eviction.md) and:\n\n| runner | needs |\n|---|---|\n| new | nothing |\n";
const FLAGS: &str = "---\ntitle: Runner flags for the old pipeline\nstatus: retired\ndate: 2023-05-01\n---\nPass --privileged to the runner container.\n";
const REDIS: &str = "---\ntitle: Redis must evict with allkeys-lru\ndate: 2025-06-01\ntags: [redis, ops]\n---\nOur Redis holds disposable cache entries and rate-limit buckets: run it with maxmemory-policy allkeys-lru so that a full memory evicts cache entries instead of refusing writes.\n";
const REDIS2: &str = "---\ntitle: Redis must evict with allkeys-lru\ndate: 2025-06-02\ntags: [redis, ops]\n---\nOur Redis holds disposable cache entries and rate-limit buckets: run it with maxmemory-policy allkeys-lru so that a full memory evicts cache entries instead of refusing any writes.\n";
const BROKEN: &str = "---\ntitle: Sideways\nstatus: sideways\n---\nA status no one knows.\n";

/// The hostile Markdown corpus of `tests/fixtures/hostile/`, as `(id, text)`.
pub fn hostile() -> Vec<(String, String)> {
    let dir = helix_test_support::workspace_root().join("tests/fixtures/hostile/knowledge");
    let mut out = Vec::new();
    for topic in std::fs::read_dir(&dir).expect("hostile corpus") {
        let topic = topic.expect("dir entry").path();
        for f in std::fs::read_dir(&topic).expect("topic dir") {
            let f = f.expect("dir entry").path();
            let id = f
                .strip_prefix(&dir)
                .expect("under the corpus")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((id, std::fs::read_to_string(&f).expect("read corpus file")));
        }
    }
    out.sort();
    assert!(out.len() >= 10, "hostile corpus too small: {}", out.len());
    out
}

impl Site {
    /// Builds the repository (three commits by two authors), starts the server in review
    /// mode for `alpha`, waits until both projects serve, and proposes two entries.
    pub fn start() -> Site {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path();
        let up = Upstream::new(dir);
        let hostile = hostile();
        let mut first: Vec<(&str, &str)> = vec![
            ("README.md", "# Team knowledge\n"),
            ("ci/.draft.md", "---\ntitle: Draft\n---\nNot yet.\n"),
            ("ci/runner-old.md", OLD),
            ("ci/runner-mid.md", MID),
            ("ops/flags.md", FLAGS),
            ("ops/redis-eviction.md", REDIS),
            ("build/broken.md", BROKEN),
        ];
        first.extend(hostile.iter().map(|(p, t)| (p.as_str(), t.as_str())));
        up.commit_as("Ada Admin", &first, "Seed the team's knowledge");
        up.commit_as(
            "Bob Builder",
            &[
                ("ci/runner-new.md", NEW),
                ("ops/redis-eviction-copy.md", REDIS2),
            ],
            "Move CI to the new runner",
        );
        let head = up.commit_as(
            "Bob Builder",
            &[(
                "ops/redis-eviction.md",
                &REDIS.replace("Our Redis", "Our Redis 7"),
            )],
            "Redis: name the version",
        );
        let bravo_up = Upstream::new(&dir.join("bravo"));
        let bravo_head = bravo_up.commit_as(
            "Zed",
            &[(
                "secret/plans.md",
                "---\ntitle: Bravo plans\n---\nOnly bravo reads this.\n",
            )],
            "Bravo",
        );
        let config = Server::configure(
            dir,
            &format!(
                "[[projects]]\nname = {ALPHA:?}\nupstream = {:?}\npoll_interval_secs = 3600\nwrites = \"review\"\n\n\
                 [[projects]]\nname = {BRAVO:?}\nupstream = {:?}\npoll_interval_secs = 3600\n\
                 [projects.forge]\nkind = \"github\"\nrepository = \"acme/bravo\"\n",
                up.bare.display().to_string(),
                bravo_up.bare.display().to_string(),
            ),
        );
        let reader = Server::token_add(&config, ALPHA, "rhea", "read");
        let reviewer = Server::token_add(&config, ALPHA, "rita", "read,review");
        let writer = Server::token_add(&config, ALPHA, "wes", "read,write");
        let other = Server::token_add(&config, BRAVO, "bob", "read");
        let server = Server::start(&config, &dir.join("data"), dir);
        server.wait_serving(ALPHA, &reader, &head);
        server.wait_serving(BRAVO, &other, &bravo_head);
        for (title, body) in [
            (
                "Pin the runner image digest",
                "Tag drift broke CI twice: pin `runner@sha256:…` in `.ci/run`.",
            ),
            (
                "Use tabs in the Makefile",
                "Make wants tabs; the editorconfig says so.",
            ),
        ] {
            let body = serde_json::json!({"topic": "ci", "title": title, "body": body}).to_string();
            let (code, answer) = server
                .request(
                    "POST",
                    &format!("/v1/projects/{ALPHA}/entries"),
                    body.as_bytes(),
                    Some(&writer),
                )
                .expect("propose");
            assert!(
                code == 201 || code == 202,
                "proposal: {code} {}",
                String::from_utf8_lossy(&answer)
            );
        }
        Site {
            tmp,
            server,
            reader,
            reviewer,
            writer,
            other,
        }
    }

    pub fn dir(&self) -> &Path {
        self.tmp.path()
    }

    /// `GET path` with the given request headers.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        exchange(&self.server.url, "GET", path, headers, b"", WAIT)
            .unwrap_or_else(|| panic!("GET {path}: no answer"))
    }

    /// `POST path` of a form with the given headers.
    pub fn post(&self, path: &str, headers: &[(&str, &str)], pairs: &[(&str, &str)]) -> Answer {
        let mut h = vec![("Content-Type", "application/x-www-form-urlencoded")];
        h.extend_from_slice(headers);
        exchange(
            &self.server.url,
            "POST",
            path,
            &h,
            form(pairs).as_bytes(),
            WAIT,
        )
        .unwrap_or_else(|| panic!("POST {path}: no answer"))
    }

    /// Signs in through the form with `token`: the session cookie (`helix_session=…`).
    pub fn sign_in(&self, token: &str) -> String {
        let a = self.sign_in_answer(token, &[]);
        assert_eq!(a.status, 303, "sign-in: {}", a.text());
        session_cookie(&a).unwrap_or_else(|| panic!("no session cookie: {:?}", a.headers))
    }

    /// The answer to a sign-in with `token` (after fetching the form for its CSRF cookie).
    pub fn sign_in_answer(&self, token: &str, headers: &[(&str, &str)]) -> Answer {
        let f = self.get("/signin", &[]);
        assert_eq!(f.status, 200, "{}", f.text());
        let nonce = cookie_value(&f, "helix_signin").expect("sign-in form cookie");
        let bound = format!("helix_signin={nonce}");
        let mut h = vec![("Cookie", bound.as_str())];
        h.extend_from_slice(headers);
        self.post(
            "/signin",
            &h,
            &[("token", token), ("csrf", &nonce), ("next", "")],
        )
    }
}

/// The value a `Set-Cookie` of `a` gives cookie `name`.
pub fn cookie_value(a: &Answer, name: &str) -> Option<String> {
    a.all("set-cookie").into_iter().find_map(|c| {
        let (kv, _) = c.split_once(';').unwrap_or((c, ""));
        kv.strip_prefix(&format!("{name}="))
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    })
}

/// `helix_session=…` from a sign-in answer, ready for a `Cookie` header.
pub fn session_cookie(a: &Answer) -> Option<String> {
    cookie_value(a, "helix_session").map(|v| format!("helix_session={v}"))
}

/// The value of the hidden `csrf` input of a page.
pub fn csrf_of(page: &str) -> String {
    let at = page
        .find("name=\"csrf\" value=\"")
        .unwrap_or_else(|| panic!("no csrf field in page: {page}"));
    let rest = &page[at + "name=\"csrf\" value=\"".len()..];
    rest[..rest.find('"').expect("end of value")].to_string()
}
