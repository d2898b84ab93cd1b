//! The web view in a real browser (headless Chromium through WebDriver): a reviewer signs
//! in, searches, reads, approves one proposal and rejects another, signs out — by mouse
//! and by keyboard, at desktop and phone width, with axe-core finding no serious or
//! critical accessibility violation; and the hostile Markdown corpus renders with no
//! script run, no dialog, no console error and no unsafe attribute in the DOM.
//!
//! `HELIX_SCREENSHOTS=DIR` also writes screenshots of the main pages there (`web-*.png`, as
//! docs/images holds them).

use std::path::PathBuf;

use serde_json::{Value, json};

use super::site::{ALPHA, Site, hostile};
use super::webdriver::{Browser, ENTER, TAB};

/// The axe-core violations of the current page that are serious or critical.
fn serious(b: &Browser) -> Vec<Value> {
    b.axe()
        .into_iter()
        .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
        .collect()
}

/// Checks what every page must be: no dialog, no console error, no serious accessibility
/// violation, no horizontal scrolling.
#[track_caller]
fn clean(b: &Browser, what: &str) {
    assert_eq!(b.alert_text(), None, "{what}: a dialog opened");
    let errors: Vec<(String, String)> = b
        .console()
        .into_iter()
        .filter(|(level, _)| level == "SEVERE")
        .collect();
    assert!(errors.is_empty(), "{what}: console errors {errors:?}");
    let v = serious(b);
    assert!(v.is_empty(), "{what}: accessibility violations {v:#?}");
    let overflow = b.execute(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
        &[],
    );
    assert!(
        overflow.as_i64().unwrap_or(0) <= 0,
        "{what}: the page scrolls sideways by {overflow} px"
    );
}

fn shots() -> Option<PathBuf> {
    std::env::var_os("HELIX_SCREENSHOTS").map(PathBuf::from)
}

fn shot(b: &Browser, name: &str) {
    if let Some(dir) = shots() {
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        b.screenshot_png(&dir.join(format!("web-{name}.png")));
    }
}

#[test]
fn a_reviewer_searches_reads_and_decides_in_a_real_browser() {
    let site = Site::start();
    let b = Browser::start();
    let url = &site.server.url;
    b.set_window_size(1280, 900);

    // Not signed in: the sign-in form, whose token field is a password field.
    b.goto(&format!("{url}/p/{ALPHA}/proposals"));
    assert!(b.url().contains("/signin?next="), "{}", b.url());
    assert_eq!(b.find("#token").attr("type").as_deref(), Some("password"));
    clean(&b, "sign-in");
    b.find("#token").send_keys(&site.reviewer);
    b.find("form.signin button[type=submit]").click();
    // Back where the reviewer was going; the cookie is HttpOnly and SameSite=Strict.
    assert!(
        b.url().ends_with(&format!("/p/{ALPHA}/proposals")),
        "{}",
        b.url()
    );
    let cookie = b
        .cookies()
        .into_iter()
        .find(|c| c["name"] == "helix_session")
        .expect("session cookie");
    assert_eq!(
        (cookie["httpOnly"].clone(), cookie["sameSite"].clone()),
        (json!(true), json!("Strict"))
    );
    assert!(!b.url().contains(&site.reviewer) && !b.source().contains(&site.reviewer));

    // The projects, then the project by keyboard: Tab reaches the skip link first.
    b.goto(&format!("{url}/"));
    assert!(b.find("main h1").text().contains("Projects"));
    clean(&b, "projects");
    b.find("table.projects a").click();
    assert!(b.url().ends_with(&format!("/p/{ALPHA}")), "{}", b.url());
    clean(&b, "project");
    shot(&b, "project");
    b.keys(TAB);
    assert_eq!(b.active_element().text(), "Skip to content");
    b.keys(ENTER);
    b.wait_url("#main");

    // Search from the box, by keyboard.
    b.find("#q").send_keys("runner cache");
    b.keys(ENTER);
    b.wait_url("/search?q=runner+cache");
    let hits: Vec<String> = b
        .find_all("ol.hits h2 a")
        .iter()
        .map(|a| a.text())
        .collect();
    assert_eq!(
        hits.first().map(String::as_str),
        Some("Run CI on the new runner"),
        "{hits:?}"
    );
    clean(&b, "search");
    shot(&b, "search");

    // The entry: Markdown rendered, the chain both ways, the history.
    b.find("ol.hits h2 a").click();
    assert_eq!(b.find("h1").text(), "Run CI on the new runner");
    assert!(b.find("dl.facts").text().contains("ci/runner-mid.md"));
    assert_eq!(b.find_all(".body table td").len(), 2);
    assert!(b.find("section.history").text().contains("Bob Builder"));
    clean(&b, "entry");
    shot(&b, "entry");
    b.find(".body a[href$='redis-eviction.md']").click();
    assert_eq!(b.find("h1").text(), "Redis must evict with allkeys-lru");

    // The review queue: approve the first proposal, reject the second with a reason.
    b.find(".tabs a[href$='/proposals']").click();
    assert_eq!(b.find_all("article.proposal").len(), 2);
    clean(&b, "proposals");
    shot(&b, "proposals");
    b.find("form[action$='/proposals/1/approve'] button")
        .click();
    // The flash of the page before may still be found until the answer replaces it.
    b.wait_url("done=approved");
    assert!(
        b.find(".flash").text().contains("Proposal 1 approved."),
        "{}",
        b.source()
    );
    assert_eq!(b.find_all("article.proposal").len(), 1);
    b.find("#reason-2").send_keys("Not team knowledge");
    b.find("form[action$='/proposals/2/reject'] button").click();
    b.wait_url("done=rejected");
    assert!(b.find(".flash").text().contains("Proposal 2 rejected."));
    assert!(b.source().contains("Nothing waits for review"));
    b.goto(&format!("{url}/p/{ALPHA}/proposals?all=1"));
    let decided = b.find("main").text();
    assert!(
        decided.contains("rejected by rita: Not team knowledge"),
        "{decided}"
    );
    assert!(decided.contains("approved by rita"), "{decided}");
    clean(&b, "decided proposals");

    // Health.
    b.find(".tabs a[href$='/health']").click();
    assert!(b.find("#h-invalid").text().contains("(1)"));
    clean(&b, "health");
    shot(&b, "health");

    // Usage: two teammates' reports name two entries; the rest are candidates to retire.
    let today = helix_index_format::format_day(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs() as i64,
    );
    for (token, key, n, reads) in [
        (&site.reader, "shot-a", 5, 1),
        (&site.writer, "shot-b", 3, 0),
    ] {
        let body = json!({"key": key, "rows": [
            {"day": today, "id": "ci/runner-new.md", "sessions": n, "reads": reads,
             "injections": [{"hook": "prompt", "agent": "claude", "n": n}]},
            {"day": today, "id": "ops/redis-eviction.md", "sessions": 1, "reads": 0,
             "injections": [{"hook": "error", "agent": "codex", "n": 1}]}]})
        .to_string();
        let auth = format!("Bearer {token}");
        let a = helix_test_support::exchange(
            url,
            "POST",
            &format!("/v1/projects/{ALPHA}/usage"),
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
            super::harness::WAIT,
        )
        .expect("usage answer");
        assert_eq!(a.status, 200, "{}", a.text());
    }
    b.find(".tabs a[href$='/usage']").click();
    assert!(b.find("#u-most").text().contains("Most used"));
    let page = b.source();
    assert!(page.contains("Run CI on the new runner"), "{page}");
    assert!(
        b.find("#u-quiet")
            .text()
            .contains("Not injected in the last 90 days")
    );
    clean(&b, "usage");
    shot(&b, "usage");

    // A phone: the same pages fit, nothing scrolls sideways.
    b.emulate_width(Some(375));
    for path in [
        format!("/p/{ALPHA}"),
        format!("/p/{ALPHA}/search?q=runner"),
        format!("/p/{ALPHA}/e/ci/runner-new.md"),
        format!("/p/{ALPHA}/health"),
        format!("/p/{ALPHA}/usage"),
    ] {
        b.goto(&format!("{url}{path}"));
        clean(&b, &format!("{path} at 375 px"));
    }
    b.goto(&format!("{url}/p/{ALPHA}/e/ci/runner-new.md"));
    shot(&b, "entry-phone");
    b.emulate_width(None);

    // Sign out: the session is gone, pages lead to the sign-in form again.
    b.find(".who button").click();
    b.wait_url("/signin");
    assert!(b.cookies().iter().all(|c| c["name"] != "helix_session"));
    b.goto(&format!("{url}/p/{ALPHA}"));
    assert!(b.url().contains("/signin"), "{}", b.url());
}

/// What a page's DOM holds that could run or load something: elements that should never
/// be there, `on…` attributes anywhere, `style` in the entry, links to other schemes.
const DOM_CHECK: &str = r#"
const bad = [];
for (const el of document.querySelectorAll('main *')) {
  const tag = el.tagName.toLowerCase();
  if (['script','svg','math','iframe','frame','object','embed','img','style','link','meta',
       'base','video','audio','source','template','noscript','textarea','select','details',
       'dialog'].includes(tag) && !el.closest('form.filters, form.search, form.signin, .decide')) {
    bad.push('element ' + tag);
  }
  for (const a of el.attributes) {
    const n = a.name.toLowerCase();
    if (n.startsWith('on') || n === 'style' || n === 'srcdoc' || n === 'formaction' || n === 'src') {
      bad.push('attribute ' + n + ' on ' + tag);
    }
  }
  if (tag === 'a' && el.hasAttribute('href') &&
      !['http:', 'https:', 'mailto:'].includes(new URL(el.href, location.href).protocol)) {
    bad.push('link ' + el.getAttribute('href'));
  }
  if (tag === 'form' && !el.closest('header') && !el.matches('form.filters, .decide form')) {
    bad.push('form ' + el.getAttribute('action'));
  }
}
return {bad: bad, pwned: window.__pwned === undefined ? null : String(window.__pwned),
        title: document.title, scripts: document.scripts.length};
"#;

#[test]
fn hostile_markdown_runs_nothing_in_a_real_browser() {
    let site = Site::start();
    let corpus = hostile();
    // A proposal of hostile Markdown too: the review queue renders entries.
    let worst = corpus
        .iter()
        .find(|(id, _)| id.ends_with("script-tags.md"))
        .map(|(_, t)| t.split("\n---\n").nth(1).unwrap_or(t).to_string())
        .expect("script-tags.md in the corpus");
    let body = json!({"topic": "hostile", "title": "<script>alert('proposal-title')</script>", "body": worst}).to_string();
    let (code, answer) = site
        .server
        .request(
            "POST",
            &format!("/v1/projects/{ALPHA}/entries"),
            body.as_bytes(),
            Some(&site.writer),
        )
        .expect("propose");
    assert!(
        (200..300).contains(&code),
        "{code} {}",
        String::from_utf8_lossy(&answer)
    );

    let b = Browser::start();
    let url = &site.server.url;
    b.goto(&format!("{url}/signin"));
    b.find("#token").send_keys(&site.reviewer);
    b.find("form.signin button[type=submit]").click();
    let mut pages: Vec<String> = corpus
        .iter()
        .map(|(id, _)| format!("/p/{ALPHA}/e/{id}"))
        .collect();
    pages.extend([
        format!("/p/{ALPHA}?topic=hostile"),
        format!("/p/{ALPHA}/search?q=alert+script+onerror&topic=hostile"),
        format!("/p/{ALPHA}/search?q=%3Cscript%3Ealert(1)%3C/script%3E"),
        format!("/p/{ALPHA}/proposals"),
    ]);
    let (mut executed, mut unsafe_dom) = (0, 0);
    for path in &pages {
        b.goto(&format!("{url}{path}"));
        // Hover and focus everything an event handler could hang on.
        b.execute(
            "for (const el of document.querySelectorAll('main *')) { \
               for (const t of ['mouseover','mouseenter','focus','click','toggle','animationstart']) { \
                 if (t !== 'click' || el.tagName !== 'A') el.dispatchEvent(new Event(t)); } }",
            &[],
        );
        if let Some(text) = b.alert_text() {
            executed += 1;
            b.dismiss_alert();
            eprintln!("{path}: alert {text:?}");
        }
        let dom = b.execute(DOM_CHECK, &[]);
        if dom["pwned"] != Value::Null || dom["title"] == "pwned" {
            executed += 1;
            eprintln!("{path}: script ran: {dom}");
        }
        let bad = dom["bad"].as_array().cloned().unwrap_or_default();
        if !bad.is_empty() || dom["scripts"] != 0 {
            unsafe_dom += bad.len().max(1);
            eprintln!("{path}: unsafe DOM {bad:?}, {} scripts", dom["scripts"]);
        }
        let errors: Vec<(String, String)> = b
            .console()
            .into_iter()
            .filter(|(level, _)| level == "SEVERE")
            .collect();
        assert!(errors.is_empty(), "{path}: console errors {errors:?}");
    }
    eprintln!(
        "hostile corpus: {} pages ({} entries), {executed} executed scripts, {unsafe_dom} unsafe elements or attributes",
        pages.len(),
        corpus.len()
    );
    assert_eq!((executed, unsafe_dom), (0, 0));
    // The benign entry of the corpus still renders as Markdown.
    b.goto(&format!("{url}/p/{ALPHA}/e/hostile/benign.md"));
    assert!(!b.find_all(".body table").is_empty() && !b.find_all(".body pre code").is_empty());
    assert!(!b.find_all(".body a[href^='https://']").is_empty());
}
