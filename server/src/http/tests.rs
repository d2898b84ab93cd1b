//! Router tests: every route through `app` with `oneshot`, on a started `AppState` with two
//! projects and their tokens.

use std::net::SocketAddr;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::extract::connect_info::MockConnectInfo;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use tower::ServiceExt;

use super::{INDEX_CONTENT_TYPE, app};
use crate::auth::tokens::hash_token;
use crate::config::{Config, ProjectConfig, Scope, TokenConfig};
use crate::state::AppState;
use crate::transfer;

mod usage;

async fn state(dir: &std::path::Path, anonymous: bool) -> AppState {
    let mut cfg = Config::embedded_default();
    cfg.data_dir = dir.to_path_buf();
    cfg.anonymous_loopback = anonymous;
    let base = cfg.projects[0].clone();
    cfg.projects = vec![
        ProjectConfig {
            name: "a".into(),
            seed_examples: false,
            writes: Default::default(),
            show_proposals: false,
            forge: None,
            tokens: vec![
                TokenConfig {
                    name: "alice".into(),
                    sha256: hash_token("tok-a-rw"),
                    scopes: vec![Scope::Read, Scope::Write],
                },
                TokenConfig {
                    name: "reader".into(),
                    sha256: hash_token("tok-a-r"),
                    scopes: vec![Scope::Read],
                },
            ],
            ..base.clone()
        },
        ProjectConfig {
            name: "b".into(),
            seed_examples: false,
            writes: Default::default(),
            show_proposals: false,
            forge: None,
            tokens: vec![TokenConfig {
                name: "bob".into(),
                sha256: hash_token("tok-b"),
                scopes: vec![Scope::Read, Scope::Write],
            }],
            ..base
        },
    ];
    AppState::start(cfg).await.expect("state")
}

/// A reload puts new tokens in force at once and says which other changes wait for a
/// restart.
#[tokio::test]
async fn reload_swaps_credentials_and_warns_about_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path(), false).await;
    let app = app(s.clone());
    let status = |tok: &'static str| {
        let app = app.clone();
        async move {
            call(app, req("GET", "/v1/projects/b/status", Some(tok), ""))
                .await
                .0
        }
    };
    assert_eq!(status("tok-b").await, StatusCode::OK);
    assert_eq!(status("tok-b2").await, StatusCode::UNAUTHORIZED);
    let mut new = s.config.clone();
    new.projects[1].tokens[0].sha256 = hash_token("tok-b2");
    new.projects[0].branch = "trunk".into();
    new.projects.push(ProjectConfig {
        name: "c".into(),
        ..new.projects[1].clone()
    });
    let warnings = s.reload(new);
    assert_eq!(status("tok-b").await, StatusCode::UNAUTHORIZED);
    assert_eq!(status("tok-b2").await, StatusCode::OK);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("\"a\"") && warnings[0].contains("restart"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("\"c\" is new"), "{warnings:?}");
    s.shutdown().await;
}

async fn call(app: Router, req: Request) -> (StatusCode, HeaderMap, Vec<u8>) {
    let resp = app.oneshot(req).await.expect("infallible");
    let status = resp.status();
    let headers = resp.headers().clone();
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .expect("body");
    (status, headers, body.to_vec())
}

fn req(method: &str, uri: &str, token: Option<&str>, body: &str) -> Request {
    let mut b = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json");
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    b.body(Body::from(body.to_string())).expect("request")
}

fn code(body: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(body).expect("json error body");
    v["error"]["code"].as_str().expect("code").to_string()
}

#[tokio::test]
async fn health_metrics_and_unknown_routes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path(), false).await;
    let app = app(s.clone());
    let (st, _, body) = call(app.clone(), req("GET", "/healthz", None, "")).await;
    assert_eq!((st, body.as_slice()), (StatusCode::OK, &b"ok"[..]));
    let (st, _, body) = call(app.clone(), req("GET", "/nope", None, "")).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(code(&body), "not_found");
    let (st, _, body) = call(app.clone(), req("DELETE", "/healthz", None, "")).await;
    assert_eq!(st, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(code(&body), "method_not_allowed");
    let (_, _, body) = call(app, req("GET", "/metrics", None, "")).await;
    let text = String::from_utf8(body).expect("utf8");
    assert!(
        text.contains(
            "helix_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"} 1"
        ),
        "{text}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn auth_is_checked_per_project_and_scope() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path(), false).await;
    let app = app(s.clone());
    let entry = r#"{"topic":"ops","title":"t","body":"b"}"#;
    // Webhook payloads may exceed the entry body limit; entries may not.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(400 * 1024));
    // A table reads better than rustfmt's one field per line.
    #[rustfmt::skip]
    let refusals = [
        ("GET /v1/projects/a/status",    None,             "",    401, "unauthorized"),
        ("GET /v1/projects/a/status",    Some("wrong"),    "",    401, "unauthorized"),
        ("GET /v1/projects/a/status",    Some("tok-b"),    "",    403, "forbidden"),
        ("GET /v1/projects/zz/status",   Some("tok-b"),    "",    404, "not_found"),
        ("POST /v1/projects/a/entries",  Some("tok-a-r"),  entry, 403, "forbidden"),
        ("POST /v1/projects/a/refresh",  Some("tok-a-r"),  "",    403, "forbidden"),
        ("POST /v1/projects/a/entries",  Some("tok-a-rw"), &big,  413, "payload_too_large"),
    ];
    for (target, token, body, status, error) in refusals {
        let (method, uri) = target.split_once(' ').expect("method and path");
        let (st, _, answer) = call(app.clone(), req(method, uri, token, body)).await;
        assert_eq!(
            (st.as_u16(), code(&answer).as_str()),
            (status, error),
            "{target} with {token:?}"
        );
    }
    let (st, _, _) = call(
        app.clone(),
        req("POST", "/v1/projects/a/refresh", Some("tok-a-rw"), &big),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED);
    let (st, _, body) = call(
        app.clone(),
        req("GET", "/v1/projects/a/status", Some("tok-a-r"), ""),
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["project"], "a");
    assert_eq!(v["entries"], 0);
    let (st, _, body) = call(app, req("GET", "/v1/projects", Some("tok-a-r"), "")).await;
    assert_eq!(st, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["projects"].as_array().map(Vec::len), Some(1));
    s.shutdown().await;
}

/// A new server-owned project (no commit on its branch) serves an artifact of no entries at
/// once: clients sync it instead of waiting on a 503 until someone stores an entry.
#[tokio::test]
async fn an_empty_project_serves_an_empty_artifact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path(), false).await;
    let app = app(s.clone());
    let mut got = None;
    for _ in 0..200 {
        let (st, h, bytes) = call(
            app.clone(),
            req("GET", "/v1/projects/a/index", Some("tok-a-r"), ""),
        )
        .await;
        if st == StatusCode::OK {
            got = Some((h, bytes));
            break;
        }
        assert_eq!(
            st,
            StatusCode::SERVICE_UNAVAILABLE,
            "only until the first compile"
        );
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let (h, bytes) = got.expect("the empty project is served");
    assert_eq!(h["x-helix-generation"], "0");
    assert_eq!(
        h["etag"].to_str().expect("ascii"),
        format!("\"{}\"", crate::store::content_hash(&bytes))
    );
    let index = helix_index_format::Index::open(&bytes[..]).expect("a valid artifact");
    index.verify().expect("checksum");
    assert_eq!(index.len(), 0);
    assert_eq!(index.meta().expect("meta").project, "a");
    let (st, _, body) = call(
        app.clone(),
        req("GET", "/v1/projects/a/status", Some("tok-a-r"), ""),
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        (v["entries"].as_u64(), v["commit"].as_str()),
        (Some(0), Some(""))
    );
    // The first write replaces it with generation 1.
    let e = r#"{"topic":"ops","title":"Deploy freeze","body":"No deploys on Friday."}"#;
    let (st, _, body) = call(
        app.clone(),
        req("POST", "/v1/projects/a/entries", Some("tok-a-rw"), e),
    )
    .await;
    assert_eq!(
        st,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let (_, h, _) = call(app, req("GET", "/v1/projects/a/index", Some("tok-a-r"), "")).await;
    assert_eq!(h["x-helix-generation"], "1");
    s.shutdown().await;
}

#[tokio::test]
async fn write_then_download_with_etag_and_loopback_default() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path(), true).await;
    let loopback = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
    let remote = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([10, 0, 0, 1], 9))));
    let e =
        r#"{"topic":"ops","title":"Deploy freeze","body":"No deploys on Friday.","tags":["ops"]}"#;
    let (st, _, body) = call(remote, req("POST", "/v1/projects/b/entries", None, e)).await;
    assert_eq!(
        (st, code(&body).as_str()),
        (StatusCode::UNAUTHORIZED, "unauthorized")
    );
    let mut r = req("POST", "/v1/projects/b/entries", None, e);
    r.headers_mut()
        .insert("idempotency-key", HeaderValue::from_static("k1"));
    let (st, _, body) = call(loopback.clone(), r).await;
    assert_eq!(
        st,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&body)
    );
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(v["path"], "ops/deploy-freeze.md");
    assert_eq!(v["generation"], 1);
    let mut r = req("POST", "/v1/projects/b/entries", None, e);
    r.headers_mut()
        .insert("idempotency-key", HeaderValue::from_static("k1"));
    let (st, _, again) = call(loopback.clone(), r).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(again, body);
    let (st, h, bytes) = call(
        loopback.clone(),
        req("GET", "/v1/projects/b/index", None, ""),
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(h["content-type"], INDEX_CONTENT_TYPE);
    assert_eq!(h["x-helix-generation"], "1");
    assert_eq!(h["x-helix-commit"], v["commit"].as_str().expect("commit"));
    let etag = h["etag"].clone();
    assert_eq!(
        etag.to_str().expect("ascii"),
        format!("\"{}\"", crate::store::content_hash(&bytes))
    );
    let mut r = req("GET", "/v1/projects/b/index", None, "");
    r.headers_mut().insert("if-none-match", etag.clone());
    let (st, h, body) = call(loopback.clone(), r).await;
    assert_eq!(st, StatusCode::NOT_MODIFIED);
    assert_eq!(h["etag"], etag);
    assert!(body.is_empty());
    let (st, _, body) = call(
        loopback,
        req("POST", "/v1/projects/b/entries", None, "{not json"),
    )
    .await;
    assert_eq!(
        (st, code(&body).as_str()),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    s.shutdown().await;
    // The key is in the append-only log, and a restarted server still knows it.
    let log = std::fs::read_to_string(dir.path().join("projects/b/idempotency.jsonl"))
        .expect("idempotency log");
    assert_eq!(log.lines().count(), 1);
    assert!(
        log.contains("\"key\":\"k1\"") && log.contains("ops/deploy-freeze.md"),
        "{log}"
    );
    let s = state(dir.path(), true).await;
    let loopback = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
    let mut r = req("POST", "/v1/projects/b/entries", None, e);
    r.headers_mut()
        .insert("idempotency-key", HeaderValue::from_static("k1"));
    let (st, _, again) = call(loopback, r).await;
    assert_eq!(st, StatusCode::OK);
    let v2: serde_json::Value = serde_json::from_slice(&again).expect("json");
    assert_eq!(v2["path"], v["path"]);
    s.shutdown().await;
}

/// Codings and patches of the index: each decodes to the artifact the ETag names.
#[tokio::test]
async fn index_codings_and_patches_name_the_same_artifact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path(), true).await;
    let app = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
    let store = |title: &str| {
        let body = format!(r#"{{"topic":"ops","title":"{title}","body":"Words about {title}."}}"#);
        call(
            app.clone(),
            req("POST", "/v1/projects/b/entries", None, &body),
        )
    };
    let get = |uri: String, hdrs: Vec<(&'static str, String)>| {
        let mut r = req("GET", &uri, None, "");
        for (k, v) in hdrs {
            r.headers_mut()
                .insert(k, HeaderValue::from_str(&v).expect("value"));
        }
        call(app.clone(), r)
    };
    assert_eq!(store("First note").await.0, StatusCode::CREATED);
    let (_, h1, old) = get("/v1/projects/b/index".into(), vec![]).await;
    let old_hash = crate::store::content_hash(&old);
    assert_eq!(h1["etag"], format!("\"{old_hash}\""));
    assert_eq!(h1["vary"], "accept-encoding");
    assert!(h1.get("content-encoding").is_none());
    assert_eq!(store("Second note").await.0, StatusCode::CREATED);
    let (st, _, new) = get("/v1/projects/b/index".into(), vec![]).await;
    assert_eq!(st, StatusCode::OK);
    let new_hash = crate::store::content_hash(&new);
    let weak = format!("W/\"{new_hash}\"");

    let (st, h, z) = get(
        "/v1/projects/b/index".into(),
        vec![("accept-encoding", "gzip, zstd".into())],
    )
    .await;
    assert_eq!(
        (st, &h["content-encoding"], &h["etag"]),
        (
            StatusCode::OK,
            &HeaderValue::from_static("zstd"),
            &HeaderValue::from_str(&weak).expect("etag")
        )
    );
    assert_eq!(h["content-type"], INDEX_CONTENT_TYPE);
    assert_eq!(zstd::decode_all(&z[..]).expect("zstd body"), new);
    let (_, h, g) = get(
        "/v1/projects/b/index".into(),
        vec![("accept-encoding", "gzip".into())],
    )
    .await;
    assert_eq!(h["content-encoding"], "gzip");
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&g[..]), &mut out)
        .expect("gunzip");
    assert_eq!(out, new);
    // A weak or strong validator of the artifact matches whatever the coding.
    let (st, h, body) = get(
        "/v1/projects/b/index".into(),
        vec![
            ("accept-encoding", "zstd".into()),
            ("if-none-match", weak.clone()),
        ],
    )
    .await;
    assert_eq!((st, body.len()), (StatusCode::NOT_MODIFIED, 0));
    assert_eq!(
        (h["etag"].to_str().expect("etag"), &h["vary"]),
        (weak.as_str(), &HeaderValue::from_static("accept-encoding"))
    );

    // A patch from the artifact the client holds.
    let (st, h, patch) = get(
        format!("/v1/projects/b/index?from={old_hash}"),
        vec![
            ("accept-encoding", "zstd".into()),
            ("if-none-match", format!("\"{old_hash}\"")),
        ],
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(h["content-type"], transfer::PATCH_CONTENT_TYPE);
    assert!(h.get("content-encoding").is_none());
    assert_eq!(h["etag"].to_str().expect("etag"), weak);
    assert_eq!(
        h["x-helix-patch-from"].to_str().expect("base"),
        format!("\"{old_hash}\"")
    );
    assert_eq!(
        h["x-helix-artifact-length"].to_str().expect("len"),
        new.len().to_string()
    );
    let mut prefix = old.clone();
    helix_index_format::delta::to_delta_form(&mut prefix);
    let mut d = zstd::zstd_safe::DCtx::create();
    d.ref_prefix(&prefix).expect("prefix");
    let mut rebuilt = Vec::with_capacity(new.len());
    d.decompress(&mut rebuilt, &patch[..])
        .expect("patch decodes");
    helix_index_format::delta::from_delta_form(&mut rebuilt);
    assert_eq!(rebuilt, new);

    // An unknown base gets the artifact; a malformed one is refused.
    let unknown = "0".repeat(64);
    let (st, h, body) = get(format!("/v1/projects/b/index?from={unknown}"), vec![]).await;
    assert_eq!(
        (st, &h["content-type"]),
        (
            StatusCode::OK,
            &HeaderValue::from_static(INDEX_CONTENT_TYPE)
        )
    );
    assert_eq!(body, new);
    let (st, _, body) = get("/v1/projects/b/index?from=abc".into(), vec![]).await;
    assert_eq!(
        (st, code(&body).as_str()),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let (_, _, m) = call(app.clone(), req("GET", "/metrics", None, "")).await;
    let m = String::from_utf8(m).expect("utf8");
    assert!(
        m.contains(&format!(
            "helix_index_response_bytes_total{{project=\"b\",form=\"patch\"}} {}",
            patch.len()
        )),
        "{m}"
    );
    s.shutdown().await;
}
