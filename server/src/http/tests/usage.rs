//! `POST …/usage` and `GET …/usage` through the router: every refusal with its status and
//! code, a key counted once, the summary's figures, and a project with `usage = false`.

use std::net::SocketAddr;

use axum::extract::connect_info::MockConnectInfo;
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::{call, code, req};
use crate::auth::tokens::hash_token;
use crate::config::{Config, ProjectConfig, Scope, TokenConfig};
use crate::http::app;
use crate::state::AppState;
use crate::usage::{day_text, today};

fn token(name: &str, plain: &str, scopes: &[Scope]) -> TokenConfig {
    TokenConfig {
        name: name.into(),
        sha256: hash_token(plain),
        scopes: scopes.to_vec(),
    }
}

/// Projects `a` (alice writes, rhea reads), `b` (bob reads) and `off` (`usage = false`).
async fn state(dir: &std::path::Path) -> AppState {
    let mut cfg = Config::embedded_default();
    cfg.data_dir = dir.to_path_buf();
    cfg.anonymous_loopback = true;
    let base = ProjectConfig {
        seed_examples: false,
        ..cfg.projects[0].clone()
    };
    let project = |name: &str, usage: bool, tokens: Vec<TokenConfig>| ProjectConfig {
        name: name.into(),
        usage,
        tokens,
        ..base.clone()
    };
    cfg.projects = vec![
        project(
            "a",
            true,
            vec![
                token("alice", "tok-a-rw", &[Scope::Read, Scope::Write]),
                token("rhea", "tok-a-r", &[Scope::Read]),
            ],
        ),
        project("b", true, vec![token("bob", "tok-b", &[Scope::Read])]),
        project(
            "off",
            false,
            vec![token("olive", "tok-off", &[Scope::Read])],
        ),
    ];
    AppState::start(cfg).await.expect("state")
}

fn report(key: &str, rows: Value) -> String {
    json!({"key": key, "rows": rows}).to_string()
}

fn day(offset: i64) -> String {
    day_text(u32::try_from(i64::from(today()) + offset).expect("a day"))
}

#[tokio::test]
async fn reports_are_checked_counted_once_and_summarised() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path()).await;
    let loopback = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
    for title in ["Deploy freeze", "Backups at night"] {
        let e = json!({"topic": "ops", "title": title, "body": format!("{title}: the rule.")});
        let (st, _, body) = call(
            loopback.clone(),
            req(
                "POST",
                "/v1/projects/a/entries",
                Some("tok-a-rw"),
                &e.to_string(),
            ),
        )
        .await;
        assert_eq!(
            st,
            StatusCode::CREATED,
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
    let rows = json!([
        {"day": day(0), "id": "ops/deploy-freeze.md", "sessions": 2, "reads": 1,
         "injections": [{"hook": "prompt", "agent": "claude", "n": 3},
                        {"hook": "error", "agent": "codex", "n": 1}]},
        {"day": day(-1), "id": "ops/deploy-freeze.md", "sessions": 1,
         "injections": [{"hook": "ambient", "agent": "claude", "n": 1}]},
        {"day": day(0), "id": "ops/gone-since.md", "sessions": 1,
         "injections": [{"hook": "prompt", "agent": "claude", "n": 5}]},
        {"day": day(-500), "id": "ops/deploy-freeze.md", "sessions": 1,
         "injections": [{"hook": "prompt", "agent": "claude", "n": 7}]},
    ]);
    let post = |token: Option<&'static str>, body: String| {
        let app = loopback.clone();
        async move {
            let (st, _, answer) =
                call(app, req("POST", "/v1/projects/a/usage", token, &body)).await;
            let v: Value = serde_json::from_slice(&answer).expect("json answer");
            (st.as_u16(), v)
        }
    };
    let first = post(Some("tok-a-r"), report("k1", rows.clone())).await;
    assert_eq!(
        first,
        (200, json!({"key": "k1", "rows": 3, "duplicate": false}))
    );
    let retry = post(Some("tok-a-r"), report("k1", rows.clone())).await;
    assert_eq!(
        retry,
        (200, json!({"key": "k1", "rows": 3, "duplicate": true}))
    );
    for (token, body) in [
        (Some("tok-a-r"), report("k1", json!([]))),
        (Some("tok-a-rw"), report("k1", rows.clone())),
    ] {
        let (st, v) = post(token, body).await;
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (422, Some("idempotency_key_reused"))
        );
    }
    let alice = json!([{"day": day(0), "id": "ops/deploy-freeze.md", "sessions": 1,
                        "injections": [{"hook": "prompt", "agent": "claude", "n": 1}]}]);
    assert_eq!(post(Some("tok-a-rw"), report("k2", alice)).await.0, 200);
    // Anonymous loopback counts as `anonymous`, reading only.
    let anon = json!([{"day": day(0), "id": "ops/backups-at-night.md", "reads": 2}]);
    assert_eq!(post(None, report("k3", anon)).await.0, 200);

    let (st, _, body) = call(
        loopback.clone(),
        req("GET", "/v1/projects/a/usage", Some("tok-a-r"), ""),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        v,
        json!({
            "project": "a", "days": 30, "since": day(-29), "people": 3,
            "entries": [
                {"id": "ops/deploy-freeze.md", "title": "Deploy freeze", "injections": 6,
                 "people": 2, "sessions": 4, "reads": 1, "last_injected": day(0),
                 "by_hook": {"ambient": 1, "error": 1, "prompt": 4},
                 "by_agent": {"claude": 5, "codex": 1}},
                {"id": "ops/backups-at-night.md", "title": "Backups at night", "injections": 0,
                 "people": 0, "sessions": 0, "reads": 2, "last_injected": "",
                 "by_hook": {}, "by_agent": {}},
            ],
            "not_injected": [
                {"id": "ops/backups-at-night.md", "title": "Backups at night", "date": day(0)},
            ],
        })
    );
    let (_, _, body) = call(
        loopback.clone(),
        req("GET", "/v1/projects/a/usage?days=1", Some("tok-a-r"), ""),
    )
    .await;
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        (v["days"].as_u64(), v["since"].as_str()),
        (Some(1), Some(day(0).as_str()))
    );
    assert_eq!(v["entries"][0]["injections"], 5);

    let (_, _, body) = call(loopback, req("GET", "/metrics", None, "")).await;
    let text = String::from_utf8(body).expect("utf8");
    for line in [
        "helix_usage_reports_total{project=\"a\",outcome=\"accepted\"} 3",
        "helix_usage_reports_total{project=\"a\",outcome=\"duplicate\"} 1",
        "helix_usage_reports_total{project=\"a\",outcome=\"refused\"} 2",
        "helix_usage_rows_total{project=\"a\"} 5",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn every_refusal_has_its_status_and_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = state(dir.path()).await;
    let remote = app(s.clone()).layer(MockConnectInfo(SocketAddr::from(([10, 0, 0, 1], 9))));
    let ok = report("k", json!([]));
    let row = |r: Value| report("k", json!([r]));
    let big = report(
        "k",
        json!([{"day": day(0), "id": format!("a/{}.md", "x".repeat(5 << 20))}]),
    );
    let many: Vec<Value> = (0..5001)
        .map(|i| json!({"day": day(0), "id": format!("t/{i}.md")}))
        .collect();
    let many = report("k", Value::Array(many));
    type Case<'a> = (&'a str, Option<&'a str>, String, u16, &'a str, &'a str);
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        ("POST /v1/projects/a/usage", None, ok.clone(), 401, "unauthorized", "missing token"),
        ("POST /v1/projects/zz/usage", Some("tok-b"), ok.clone(), 404, "not_found", "zz"),
        ("POST /v1/projects/a/usage", Some("tok-b"), ok.clone(), 403, "forbidden", "may not read"),
        ("GET /v1/projects/a/usage", Some("tok-b"), String::new(), 403, "forbidden", "may not read"),
        ("POST /v1/projects/off/usage", Some("tok-off"), ok.clone(), 403, "usage_disabled", "usage = false"),
        ("GET /v1/projects/off/usage", Some("tok-off"), String::new(), 403, "usage_disabled", "usage = false"),
        ("POST /v1/projects/b/usage", Some("tok-b"), "{not json".into(), 400, "bad_request", "malformed JSON"),
        ("POST /v1/projects/b/usage", Some("tok-b"), r#"{"key":"k","rows":{}}"#.into(), 422, "invalid_usage", "invalid type"),
        ("POST /v1/projects/b/usage", Some("tok-b"), big, 413, "payload_too_large", "larger than"),
        ("POST /v1/projects/b/usage", Some("tok-b"), many, 422, "invalid_usage", "at most 5000"),
        ("POST /v1/projects/b/usage", Some("tok-b"), report("a b", json!([])), 422, "invalid_usage", "key \"a b\""),
        ("POST /v1/projects/b/usage", Some("tok-b"), row(json!({"day": "yesterday", "id": "a/b.md"})), 422, "invalid_usage", "rows[0].day \"yesterday\""),
        ("POST /v1/projects/b/usage", Some("tok-b"), row(json!({"day": day(2), "id": "a/b.md"})), 422, "invalid_usage", "after tomorrow"),
        ("POST /v1/projects/b/usage", Some("tok-b"), row(json!({"day": day(0), "id": "/etc/passwd.md"})), 422, "invalid_usage", "rows[0].id"),
        ("POST /v1/projects/b/usage", Some("tok-b"), row(json!({"day": day(0), "id": "a/b.md", "injections": [{"hook": "x y", "agent": "claude", "n": 1}]})), 422, "invalid_usage", "rows[0].injections[0].hook"),
        ("POST /v1/projects/b/usage", Some("tok-b"), row(json!({"day": day(0), "id": "a/b.md", "sessions": 2_000_000})), 422, "invalid_usage", "rows[0].sessions"),
        ("POST /v1/projects/b/usage", Some("tok-b"), row(json!({"day": day(0), "id": "a/b.md", "reads": -1})), 422, "invalid_usage", "invalid value"),
        ("GET /v1/projects/b/usage?days=0", Some("tok-b"), String::new(), 400, "bad_request", "from 1 to 400"),
        ("GET /v1/projects/b/usage?days=401", Some("tok-b"), String::new(), 400, "bad_request", "from 1 to 400"),
    ];
    for (target, token, body, status, error, says) in cases {
        let (method, uri) = target.split_once(' ').expect("method and path");
        let (st, _, answer) = call(remote.clone(), req(method, uri, token, &body)).await;
        let v: Value = serde_json::from_slice(&answer).expect("json error");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(
            (st.as_u16(), code(&answer).as_str()),
            (status, error),
            "{target}: {message}"
        );
        assert!(
            message.contains(says),
            "{target}: {message:?} should say {says:?}"
        );
    }
    // The right Content-Type is required, as for writes.
    let mut r = req("POST", "/v1/projects/b/usage", Some("tok-b"), &ok);
    r.headers_mut()
        .insert("content-type", "text/plain".parse().expect("value"));
    let (st, _, answer) = call(remote.clone(), r).await;
    assert_eq!((st.as_u16(), code(&answer).as_str()), (400, "bad_request"));
    // Nothing refused was counted.
    let (st, _, body) = call(
        remote,
        req("GET", "/v1/projects/b/usage", Some("tok-b"), ""),
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        (v["people"].as_u64(), v["entries"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
    s.shutdown().await;
}
