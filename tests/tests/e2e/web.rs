//! The web view over real HTTP: sign-in and its cookie, what each token may see (and
//! what it may not even learn exists), search ranked as `helix search` ranks, entry pages
//! with their lifecycle and git history, the health page, forms that refuse other sites
//! and missing CSRF tokens, sessions that die with their token, and the read API.

use serde_json::Value;

use super::harness::{Dev, Server, Upstream, wait_for};
use super::site::{ALPHA, BRAVO, Site, cookie_value, csrf_of, session_cookie};

/// The entry ids a search results page links, in order.
fn hit_ids(page: &str) -> Vec<String> {
    let marker = format!("<li><h2><a href=\"/p/{ALPHA}/e/");
    page.split(&marker)
        .skip(1)
        .map(|rest| rest[..rest.find('"').expect("end of href")].to_string())
        .collect()
}

/// The first tag of `html` that could run script or load something: a tag outside the
/// page's own vocabulary, an `on…` attribute, a `style` or `src` attribute, or a link to
/// anything but this site, http(s) or mailto. Text is escaped, so every `<` is a tag.
pub fn executable_markup(html: &str) -> Option<String> {
    const TAGS: &[&str] = &[
        "html",
        "head",
        "meta",
        "title",
        "link",
        "body",
        "header",
        "nav",
        "main",
        "footer",
        "a",
        "span",
        "div",
        "form",
        "label",
        "input",
        "button",
        "select",
        "option",
        "datalist",
        "ul",
        "ol",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "p",
        "table",
        "caption",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "dl",
        "dt",
        "dd",
        "code",
        "pre",
        "em",
        "strong",
        "del",
        "blockquote",
        "hr",
        "br",
        "sup",
        "section",
        "article",
        "textarea",
    ];
    let lower = html.to_ascii_lowercase();
    let head_end = lower.find("</head>").unwrap_or(0);
    let mut rest = &lower[head_end..];
    while let Some(at) = rest.find('<') {
        let tail = &rest[at + 1..];
        let end = tail.find('>').unwrap_or(tail.len());
        let tag = &tail[..end];
        rest = &tail[end..];
        if tag.starts_with('/') || tag.starts_with('!') {
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if !TAGS.contains(&name.as_str()) || matches!(name.as_str(), "meta" | "link") {
            return Some(format!("tag <{tag}>"));
        }
        for (key, value) in attributes(&tag[name.len()..]) {
            if key.starts_with("on") || matches!(key, "style" | "src" | "srcdoc" | "formaction") {
                return Some(format!("attribute {key} in <{tag}>"));
            }
            let safe = ["/", "#", "http://", "https://", "mailto:"]
                .iter()
                .any(|p| value.starts_with(p))
                && !value.starts_with("//");
            if matches!(key, "href" | "action") && !safe {
                return Some(format!("{key} {value:?} in <{tag}>"));
            }
        }
    }
    None
}

/// The attributes of a start tag's text after its name, values unquoted, as a browser
/// reads them (a quoted value may hold spaces, `=` and other attributes' names).
fn attributes(mut t: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    loop {
        t = t.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
        if t.is_empty() {
            return out;
        }
        let key_end = t
            .find(|c: char| c.is_ascii_whitespace() || c == '=')
            .unwrap_or(t.len());
        let key = &t[..key_end];
        t = t[key_end..].trim_start();
        let Some(after) = t.strip_prefix('=') else {
            out.push((key, ""));
            continue;
        };
        let after = after.trim_start();
        let (value, rest) = match after.chars().next() {
            Some(q @ ('"' | '\'')) => {
                let body = &after[1..];
                let end = body.find(q).unwrap_or(body.len());
                (&body[..end], body.get(end + 1..).unwrap_or(""))
            }
            _ => {
                let end = after
                    .find(|c: char| c.is_ascii_whitespace())
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        out.push((key, value));
        t = rest;
    }
}

#[test]
fn pages_show_each_token_its_own_project_ranked_as_the_cli_ranks() {
    let site = Site::start();

    // Nobody signed in: every page leads to the sign-in form, which sets its own cookie.
    let home = site.get("/", &[]);
    assert_eq!(
        (home.status, home.header("location")),
        (303, Some("/signin"))
    );
    let p = site.get(&format!("/p/{ALPHA}/search?q=x"), &[]);
    assert_eq!(p.status, 303);
    assert_eq!(
        p.header("location"),
        Some(format!("/signin?next=%2Fp%2F{ALPHA}%2Fsearch%3Fq%3Dx").as_str())
    );
    let form = site.get("/signin", &[]);
    let form_cookie = form.header("set-cookie").expect("form cookie");
    assert!(
        form_cookie.contains("HttpOnly") && form_cookie.contains("SameSite=Strict"),
        "{form_cookie}"
    );
    assert!(form.text().contains("type=\"password\""), "{}", form.text());

    // Sign-in: a strict, HttpOnly session cookie, no token in any URL, straight to the project.
    let signed = site.sign_in_answer(&site.reader, &[]);
    assert_eq!(signed.status, 303, "{}", signed.text());
    assert_eq!(
        signed.header("location"),
        Some(format!("/p/{ALPHA}").as_str())
    );
    let set = signed
        .all("set-cookie")
        .into_iter()
        .find(|c| c.starts_with("helix_session="))
        .expect("session cookie")
        .to_string();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(set.contains(attr), "{attr} missing: {set}");
    }
    assert!(
        !set.contains("Secure"),
        "plain HTTP gets no Secure cookie: {set}"
    );
    assert!(!set.contains(&site.reader), "the token is not the cookie");
    let behind_tls = site.sign_in_answer(&site.reader, &[("X-Forwarded-Proto", "https")]);
    assert!(
        behind_tls
            .all("set-cookie")
            .iter()
            .any(|c| c.starts_with("helix_session=") && c.contains("; Secure")),
        "{:?}",
        behind_tls.headers
    );
    let me = session_cookie(&signed).expect("cookie");
    let h = [("Cookie", me.as_str())];

    // Every page sends the strict CSP, and the reader sees alpha and nothing of bravo.
    let home = site.get("/", &h);
    assert_eq!(home.status, 200);
    let csp = home.header("content-security-policy").expect("CSP");
    assert!(
        csp.contains("default-src 'none'") && !csp.contains("script-src"),
        "{csp}"
    );
    assert!(
        home.text().contains(&format!("href=\"/p/{ALPHA}\"")),
        "{}",
        home.text()
    );
    assert!(!home.text().contains(BRAVO), "{}", home.text());
    let hidden = site.get(&format!("/p/{BRAVO}"), &h);
    let missing = site.get("/p/no-such-project", &h);
    assert_eq!((hidden.status, missing.status), (404, 404));
    assert_eq!(
        hidden.text(),
        missing.text(),
        "a hidden project looks like a missing one"
    );
    assert!(!hidden.text().contains(BRAVO));
    for path in ["e/secret/plans.md", "search?q=plans", "health", "proposals"] {
        let a = site.get(&format!("/p/{BRAVO}/{path}"), &h);
        assert_eq!(a.status, 404, "{path}");
        assert!(
            !a.text().contains("Bravo plans") && !a.text().contains(BRAVO),
            "{path}"
        );
    }
    // The API agrees, with its own codes.
    let (code, _) = site
        .server
        .request(
            "GET",
            &format!("/v1/projects/{BRAVO}/search?q=plans"),
            b"",
            Some(&site.reader),
        )
        .expect("answer");
    assert_eq!(code, 403);

    // Bravo's reader sees bravo, and nothing of alpha.
    let theirs = site.sign_in(&site.other);
    let bravo_home = site.get("/", &[("Cookie", theirs.as_str())]).text();
    assert!(
        bravo_home.contains(BRAVO) && !bravo_home.contains(&format!("/p/{ALPHA}\"")),
        "{bravo_home}"
    );
    assert_eq!(
        site.get(&format!("/p/{ALPHA}"), &[("Cookie", theirs.as_str())])
            .status,
        404
    );
    let plans = site.get(
        &format!("/p/{BRAVO}/e/secret/plans.md"),
        &[("Cookie", theirs.as_str())],
    );
    assert!(
        plans.status == 200 && plans.text().contains("Only bravo reads this."),
        "{}",
        plans.text()
    );
    // Its forge gives the edit link.
    assert!(
        plans
            .text()
            .contains("href=\"https://github.com/acme/bravo/edit/main/secret/plans.md\""),
        "{}",
        plans.text()
    );

    // The project page: topics, entries newest first, retired and superseded kept apart.
    let project = site.get(&format!("/p/{ALPHA}"), &h).text();
    assert!(project.contains("Run CI on the new runner"), "{project}");
    assert!(
        !project.contains("Run CI on the old runner"),
        "superseded mixed in: {project}"
    );
    assert!(project.contains("3 retired or superseded"), "{project}");
    let apart = site.get(&format!("/p/{ALPHA}?show=hidden"), &h).text();
    for (title, badge) in [
        ("Run CI on the old runner", "superseded"),
        ("Run CI on the mid runner", "superseded"),
        ("Runner flags for the old pipeline", "retired"),
    ] {
        let at = apart
            .find(title)
            .unwrap_or_else(|| panic!("{title} missing: {apart}"));
        let item = &apart[at..at + apart[at..].find("</li>").expect("item end")];
        assert!(item.contains(&format!("badge {badge}")), "{item}");
    }
    let ops = site.get(&format!("/p/{ALPHA}?topic=ops"), &h).text();
    assert!(
        ops.contains("Redis must evict") && !ops.contains("new runner"),
        "{ops}"
    );

    // Search: the same entries in the same order as the API and as `helix search`.
    let dev = Dev::new("rhea", &site.server.url, &[ALPHA], &site.reader);
    dev.run(&["sync"]).ok("sync");
    for query in ["runner cache", "redis memory evicts", "cache"] {
        let cli: Vec<String> = dev
            .run(&["search", "--json", "--project", ALPHA, "-n", "20", query])
            .ok("helix search")
            .json()["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["id"].as_str().expect("id").to_string())
            .collect();
        let q = query.replace(' ', "+");
        let api: Value = site.server.json(
            "GET",
            &format!("/v1/projects/{ALPHA}/search?q={q}&limit=20"),
            Some(&site.reader),
            200,
        );
        let api: Vec<String> = api["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["id"].as_str().expect("id").to_string())
            .collect();
        let web = hit_ids(&site.get(&format!("/p/{ALPHA}/search?q={q}"), &h).text());
        assert!(cli.len() >= 2, "{query}: too few hits to compare: {cli:?}");
        assert_eq!(api, cli, "{query}: API vs helix search");
        assert_eq!(web, cli, "{query}: web vs helix search");
    }
    // `project:topic` filters as the CLI's --topic does; `all` brings the hidden ones, marked.
    let only_ops = hit_ids(
        &site
            .get(
                &format!("/p/{ALPHA}/search?q=runner+redis&topic={ALPHA}:ops"),
                &h,
            )
            .text(),
    );
    assert!(
        !only_ops.is_empty() && only_ops.iter().all(|id| id.starts_with("ops/")),
        "{only_ops:?}"
    );
    let with_all = site
        .get(&format!("/p/{ALPHA}/search?q=runner&all=1"), &h)
        .text();
    assert!(
        hit_ids(&with_all).contains(&"ci/runner-old.md".to_string()),
        "{with_all}"
    );
    assert!(with_all.contains("badge superseded"), "{with_all}");

    // An entry: chain both ways, review due, tags, sources, Markdown, history by author.
    let mid = site
        .get(&format!("/p/{ALPHA}/e/ci/runner-mid.md"), &h)
        .text();
    assert!(
        mid.contains("<strong>Superseded</strong> by <a href=\"/p/alpha/e/ci/runner-new.md\">"),
        "{mid}"
    );
    assert!(
        mid.contains("<dt>Supersedes</dt><dd><ul><li><a href=\"/p/alpha/e/ci/runner-old.md\">"),
        "{mid}"
    );
    let new = site
        .get(&format!("/p/{ALPHA}/e/ci/runner-new.md"), &h)
        .text();
    assert!(
        new.contains("Due for review</strong> since 2026-02-01"),
        "{new}"
    );
    assert!(
        new.contains("<code>.ci/run</code>") && new.contains("<span class=\"tag\">runner</span>"),
        "{new}"
    );
    assert!(
        new.contains("<table>") && new.contains("href=\"/p/alpha/e/ops/redis-eviction.md\""),
        "{new}"
    );
    assert!(
        new.contains("ci/runner-mid.md</a></li><li><a href=\"/p/alpha/e/ci/runner-old.md\""),
        "chain: {new}"
    );
    let redis = site
        .get(&format!("/p/{ALPHA}/e/ops/redis-eviction.md"), &h)
        .text();
    let history = &redis[redis.find("id=\"history\"").expect("history section")..];
    let bob = history.find("Bob Builder").expect("Bob's change");
    let ada = history.find("Ada Admin").expect("Ada's change");
    assert!(bob < ada, "newest first: {history}");
    assert!(
        history.contains("changed: Redis: name the version"),
        "{history}"
    );
    assert!(
        history.contains("added: Seed the team&#39;s knowledge")
            || history.contains("added: Seed the team&#x27;s knowledge"),
        "{history}"
    );
    let gone = site.get(&format!("/p/{ALPHA}/e/ops/flags.md"), &h).text();
    assert!(gone.contains("<strong>Retired.</strong>"), "{gone}");
    let none = site.get(&format!("/p/{ALPHA}/e/ci/nothing.md"), &h);
    assert_eq!(none.status, 404);

    // Hostile entries: nothing executable survives into any page (shown as text is fine).
    for (id, _) in super::site::hostile() {
        let page = site.get(&format!("/p/{ALPHA}/e/{id}"), &h);
        assert_eq!(page.status, 200, "{id}");
        if let Some(bad) = executable_markup(&page.text()) {
            panic!("{id}: {bad}");
        }
    }

    // The read API: one entry, as JSON, with its lifecycle.
    let e = site.server.json(
        "GET",
        &format!("/v1/projects/{ALPHA}/entries/ci/runner-mid.md"),
        Some(&site.reader),
        200,
    );
    assert_eq!(e["status"], "superseded");
    assert_eq!(e["superseded_by"][0], "ci/runner-new.md");
    assert_eq!(e["supersedes"][0], "ci/runner-old.md");
    let missing = site.server.json(
        "GET",
        &format!("/v1/projects/{ALPHA}/entries/ci/none.md"),
        Some(&site.reader),
        404,
    );
    assert_eq!(missing["error"]["code"], "no_such_entry");
    let bad = site.server.json(
        "GET",
        &format!("/v1/projects/{ALPHA}/search?q=x&limit=1000"),
        Some(&site.reader),
        400,
    );
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("limit"),
        "{bad}"
    );

    // Health: skipped files by reason, the invalid file with its error, a refused secret
    // by provider and kind without its value, the near-duplicate pair.
    let secret = ["glpat-", "Qm4xZ7pL2vR9tKs8Wd3N"].concat();
    let body = serde_json::json!({"topic": "ops", "title": "Deploy key", "body": format!("Use {secret} to deploy.")}).to_string();
    let (code, _) = site
        .server
        .request(
            "POST",
            &format!("/v1/projects/{ALPHA}/entries"),
            body.as_bytes(),
            Some(&site.writer),
        )
        .expect("answer");
    assert_eq!(code, 422);
    let health = wait_for("near-duplicates on the health page", || {
        let t = site.get(&format!("/p/{ALPHA}/health"), &h).text();
        (!t.contains("Being computed")).then_some(t)
    });
    assert!(
        health.contains("<td>README, index or template</td><td>1</td>")
            && health.contains("<td>hidden</td><td>1</td>"),
        "{health}"
    );
    assert!(
        health.contains("build/broken.md") && health.contains("sideways"),
        "{health}"
    );
    assert!(
        health.contains("GitLab")
            && health.contains("personal access token")
            && health.contains("wes"),
        "{health}"
    );
    assert!(
        !health.contains("Qm4xZ7pL2vR9"),
        "the value leaked: {health}"
    );
    assert!(
        health.contains("ops/redis-eviction-copy.md") && health.contains("ops/redis-eviction.md"),
        "{health}"
    );

    // Sign-out ends the session: the old cookie leads to the sign-in form again.
    let page = site.get(&format!("/p/{ALPHA}"), &h).text();
    let out = site.post("/signout", &h, &[("csrf", &csrf_of(&page))]);
    assert_eq!(out.status, 303);
    assert!(
        out.all("set-cookie")
            .iter()
            .any(|c| c.starts_with("helix_session=;") && c.contains("Max-Age=0")),
        "{:?}",
        out.headers
    );
    assert_eq!(site.get(&format!("/p/{ALPHA}"), &h).status, 303);
}

#[test]
fn forms_refuse_other_sites_missing_tokens_and_readers() {
    let site = Site::start();
    let reader = site.sign_in(&site.reader);
    let reviewer = site.sign_in(&site.reviewer);
    let queue = |cookie: &str| {
        site.get(&format!("/p/{ALPHA}/proposals"), &[("Cookie", cookie)])
            .text()
    };

    // A reader learns only how many wait; a reviewer reads them with their forms.
    let seen = queue(&reader);
    assert!(seen.contains("2 proposals are waiting"), "{seen}");
    assert!(!seen.contains("Pin the runner image digest"), "{seen}");
    let rq = queue(&reviewer);
    assert!(
        rq.contains("Pin the runner image digest") && rq.contains("<code>runner@sha256:…</code>"),
        "{rq}"
    );
    let csrf = csrf_of(&rq);
    let approve = format!("/p/{ALPHA}/proposals/1/approve");

    type Attempt<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, u16);
    let attempts: [Attempt<'_>; 4] = [
        ("no CSRF token", &[("Cookie", reviewer.as_str())], "", 403),
        (
            "another session's token",
            &[("Cookie", reviewer.as_str())],
            "0000",
            403,
        ),
        (
            "another site",
            &[
                ("Cookie", reviewer.as_str()),
                ("Origin", "http://evil.example"),
            ],
            csrf.as_str(),
            403,
        ),
        (
            "a cross-site fetch",
            &[
                ("Cookie", reviewer.as_str()),
                ("Sec-Fetch-Site", "cross-site"),
            ],
            csrf.as_str(),
            403,
        ),
    ];
    for (what, headers, token, want) in attempts {
        let a = site.post(&approve, headers, &[("csrf", token)]);
        assert_eq!(a.status, want, "{what}: {}", a.text());
    }
    // A reader's own valid form token does not make them a reviewer.
    let reader_csrf = csrf_of(
        &site
            .get(&format!("/p/{ALPHA}"), &[("Cookie", reader.as_str())])
            .text(),
    );
    let a = site.post(
        &approve,
        &[("Cookie", reader.as_str())],
        &[("csrf", &reader_csrf)],
    );
    assert_eq!(a.status, 403, "{}", a.text());
    assert!(
        queue(&reviewer).contains("Pin the runner image digest"),
        "nothing was decided"
    );

    // The reviewer's real form: approved, then the entry is served.
    let a = site.post(
        &approve,
        &[("Cookie", reviewer.as_str())],
        &[("csrf", &csrf)],
    );
    assert_eq!(a.status, 303, "{}", a.text());
    assert_eq!(
        a.header("location"),
        Some(format!("/p/{ALPHA}/proposals?done=approved&id=1").as_str())
    );
    let after = site
        .get(
            a.header("location").expect("location"),
            &[("Cookie", reviewer.as_str())],
        )
        .text();
    assert!(
        after.contains("Proposal 1 approved.") && !after.contains("Pin the runner image digest"),
        "{after}"
    );
    let again = site.post(
        &approve,
        &[("Cookie", reviewer.as_str())],
        &[("csrf", &csrf)],
    );
    assert_eq!(again.status, 409, "{}", again.text());
    assert!(
        again.text().contains("already approved"),
        "{}",
        again.text()
    );
    let reject = site.post(
        &format!("/p/{ALPHA}/proposals/2/reject"),
        &[("Cookie", reviewer.as_str())],
        &[("csrf", &csrf), ("reason", "Not team knowledge")],
    );
    assert_eq!(reject.status, 303, "{}", reject.text());
    let decided = site
        .get(
            &format!("/p/{ALPHA}/proposals?all=1"),
            &[("Cookie", reviewer.as_str())],
        )
        .text();
    assert!(
        decided.contains("rejected by rita: Not team knowledge"),
        "{decided}"
    );
    assert!(decided.contains("approved by rita"), "{decided}");
}

#[test]
fn sessions_die_with_their_token_and_failed_sign_ins_are_limited() {
    let site = Site::start();
    let cookie = site.sign_in(&site.reviewer);
    let h = [("Cookie", cookie.as_str())];
    assert_eq!(site.get(&format!("/p/{ALPHA}"), &h).status, 200);
    // The token is revoked in the config file and the server reloads it: the session dies.
    let config = site.dir().join("server.toml");
    let text = std::fs::read_to_string(&config).expect("config");
    let lines: Vec<&str> = text.lines().collect();
    let kept: Vec<&str> = {
        // Drop rita's `[[projects.tokens]]` table.
        let at = lines
            .iter()
            .position(|l| l.replace(' ', "") == "name=\"rita\"")
            .unwrap_or_else(|| panic!("rita's token in {text}"));
        let start = (0..at)
            .rev()
            .find(|&i| lines[i].starts_with("[["))
            .expect("table start");
        let end = (at..lines.len())
            .find(|&i| lines[i].starts_with("[["))
            .unwrap_or(lines.len());
        lines[..start]
            .iter()
            .chain(&lines[end..])
            .copied()
            .collect()
    };
    std::fs::write(&config, kept.join("\n") + "\n").expect("write config");
    site.server.reload();
    wait_for("the revoked token's session to end", || {
        (site.get(&format!("/p/{ALPHA}"), &h).status == 303).then_some(())
    });

    // A sign-in form posted from another site is refused before the token is looked at.
    let cross = site.sign_in_answer(&site.reader, &[("Origin", "http://evil.example")]);
    assert_eq!(cross.status, 403, "{}", cross.text());
    assert!(cookie_value(&cross, "helix_session").is_none());

    // Five wrong tokens, then even the right one waits.
    for _ in 0..5 {
        let a = site.sign_in_answer("hx_not-a-token", &[]);
        assert_eq!(a.status, 401, "{}", a.text());
        assert!(a.text().contains("not valid"), "{}", a.text());
        assert!(cookie_value(&a, "helix_session").is_none());
    }
    let limited = site.sign_in_answer(&site.reader, &[]);
    assert_eq!(limited.status, 429, "{}", limited.text());
    assert!(limited.header("retry-after").is_some());
    assert!(cookie_value(&limited, "helix_session").is_none());
}

#[test]
fn anonymous_loopback_pages_need_a_loopback_host_name() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let up = Upstream::new(dir);
    let head = up.commit_as(
        "Ada",
        &[("ops/a.md", "---\ntitle: A note\n---\nText.\n")],
        "Seed",
    );
    let config = Server::configure(
        dir,
        &format!(
            "anonymous_loopback = true\n[[projects]]\nname = \"team\"\nupstream = {:?}\npoll_interval_secs = 3600\n",
            up.bare.display().to_string()
        ),
    );
    let token = Server::token_add(&config, "team", "ada", "read");
    let server = Server::start(&config, &dir.join("data"), dir);
    server.wait_serving("team", &token, &head);
    let get = |host: &str| {
        helix_test_support::exchange(
            &server.url,
            "GET",
            "/p/team",
            &[("Host", host)],
            b"",
            super::harness::WAIT,
        )
        .expect("answer")
    };
    let port = server.url.rsplit(':').next().expect("port").to_string();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let a = get(&host);
        assert_eq!(a.status, 200, "{host}: {}", a.text());
        assert!(a.text().contains("A note") && a.text().contains("Anonymous (loopback)"));
    }
    // A name that resolves to loopback for a rebinding attacker gets nothing.
    let a = get(&format!("attacker.example:{port}"));
    assert_eq!(a.status, 303, "{}", a.text());
}

/// A project of many topics: its pages name the largest and link to the list of all, so no
/// page grows with the number of topics; the search's topic list becomes a text field.
#[test]
fn many_topics_keep_every_page_short() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    let up = Upstream::new(dir);
    // 45 topics; topic tNN holds NN % 4 + 1 entries.
    let files: Vec<(String, String)> = (0..45)
        .flat_map(|t| {
            (0..t % 4 + 1).map(move |i| {
                (
                    format!("t{t:02}/e{i}.md"),
                    format!("---\ntitle: Note {i} of t{t:02}\n---\nText {t} {i}.\n"),
                )
            })
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let head = up.commit_as("Ada", &refs, "Seed");
    let config = Server::configure(
        dir,
        &format!(
            "[[projects]]\nname = \"team\"\nupstream = {:?}\npoll_interval_secs = 3600\n",
            up.bare.display().to_string()
        ),
    );
    let token = Server::token_add(&config, "team", "ada", "read");
    let server = Server::start(&config, &dir.join("data"), dir);
    server.wait_serving("team", &token, &head);
    let auth = format!("Bearer {token}");
    let get = |path: &str| {
        let a = helix_test_support::exchange(
            &server.url,
            "GET",
            path,
            &[("Authorization", auth.as_str())],
            b"",
            super::harness::WAIT,
        )
        .expect("answer");
        assert_eq!(a.status, 200, "{path}: {}", a.text());
        a.text()
    };
    let topic_links = |page: &str| -> Vec<String> {
        page.split("<a href=\"/p/team?topic=")
            .skip(1)
            .map(|r| r[..r.find('"').expect("end")].to_string())
            .collect()
    };
    let page = get("/p/team");
    assert!(page.contains("entries in 45 topics"), "{page}");
    let shown = topic_links(&page);
    // The 30 largest: the 11 topics of 4 entries (t03, t07, …, t43), the 11 of 3, and the
    // first 8 of 2 by name; in name order.
    let mut want: Vec<usize> = (0..45).collect();
    want.sort_by_key(|&t| (std::cmp::Reverse(t % 4), t));
    want.truncate(30);
    want.sort_unstable();
    let want: Vec<String> = want.iter().map(|t| format!("t{t:02}")).collect();
    assert_eq!(shown, want);
    assert!(
        page.contains("<a href=\"/p/team?topics=all\">every topic (45)</a>"),
        "{page}"
    );
    // The current topic is named even when it is not among the largest.
    let small = get("/p/team?topic=t00");
    assert!(topic_links(&small).contains(&"t00".to_string()));
    assert!(small.contains("Note 0 of t00"));
    // The list of all names every topic with its count.
    let all = get("/p/team?topics=all");
    let listed = topic_links(&all);
    assert_eq!(listed.len(), 45 + 30, "nav and list");
    assert!(all.contains("t44 <span class=\"count\">1</span>"), "{all}");
    // Search: a text field suggesting the largest, keeping the topic searched in.
    let search = get("/p/team/search?q=note&topic=t00");
    assert!(
        search.contains(
            "<input type=\"text\" id=\"topic\" name=\"topic\" list=\"topic-names\" value=\"t00\""
        ),
        "{search}"
    );
    assert_eq!(search.matches("<option value=").count(), 30);
    assert!(search.contains("Note 0 of t00") && !search.contains("Note 0 of t01"));
    for p in [&page, &all, &search] {
        assert_eq!(executable_markup(p), None);
    }
}
