//! The client's own tests: the positive controls that prove a dialog, a console error, a
//! CSP refusal and an accessibility violation are seen, so the web view's tests can fail.
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;

#[test]
fn base64_decodes_padded_and_unpadded_input() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("aGVsbG8h"), b"hello!");
    assert_eq!(base64_decode("aGk=\r\n"), b"hi");
    assert_eq!(base64_decode("iVBORw0KGgo="), b"\x89PNG\r\n\x1a\n");
    assert_eq!(base64_decode("/+8="), [0xff, 0xef]);
}

/// A loopback HTTP server answering the fixed `PAGES`; stops on drop.
struct Site {
    url: String,
    stop: Arc<AtomicBool>,
}

/// `(path, extra headers, body)`.
const PAGES: &[(&str, &str, &str)] = &[
    (
        "/alert",
        "",
        "<!doctype html><script>alert(\"x\")</script><p>after",
    ),
    (
        "/console",
        "",
        "<!doctype html><script>console.error(\"boom\")</script>",
    ),
    (
        "/csp",
        "Content-Security-Policy: default-src 'none'\r\n",
        "<!doctype html><html lang=\"en\"><head><title>csp</title></head><body><main>\
         <h1>csp</h1><script>alert(\"csp\")</script><img src=\"/img.png\"></main></body></html>",
    ),
    (
        "/img",
        "",
        "<!doctype html><html lang=\"en\"><head><title>img</title></head><body><main>\
         <h1>img</h1><img src=\"/img.png\"></main></body></html>",
    ),
    (
        "/clean",
        "Set-Cookie: probe=1; Path=/; HttpOnly; SameSite=Strict\r\n",
        "<!doctype html><html lang=\"en\"><head><title>t</title></head><body><main>\
         <h1>t</h1></main></body></html>",
    ),
    (
        "/form",
        "",
        "<!doctype html><html lang=\"en\"><head><title>form</title></head><body><main>\
         <form onsubmit=\"event.preventDefault(); document.getElementById('out')\
         .textContent = 'got ' + this.q.value\"><label>Q <input name=\"q\" id=\"q\" \
         value=\"old\"></label> <button id=\"go\">Go</button></form><p id=\"out\"></p>\
         </main></body></html>",
    ),
];

impl Site {
    fn start() -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                // One thread a connection: Chromium opens spare connections it may never
                // send on.
                if let Ok(s) = conn {
                    std::thread::spawn(move || serve(s));
                }
            }
        });
        Site { url, stop }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
    }
}

fn serve(mut s: TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut req = Vec::new();
    let mut buf = [0u8; 4096];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => req.extend_from_slice(&buf[..n]),
        }
    }
    let req = String::from_utf8_lossy(&req);
    let path = req.split_whitespace().nth(1).unwrap_or("/");
    let (status, headers, body) = match PAGES.iter().find(|(p, _, _)| *p == path) {
        Some((_, h, b)) => ("200 OK", *h, *b),
        None => ("404 Not Found", "", "not found"),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n{headers}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(answer.as_bytes());
}

fn has(logs: &[(String, String)], level: &str, needle: &str) -> bool {
    logs.iter().any(|(l, m)| l == level && m.contains(needle))
}

fn ids(violations: &[Value]) -> Vec<&str> {
    violations.iter().filter_map(|v| v["id"].as_str()).collect()
}

/// Positive controls: each detector the hostile-content tests rely on sees what it must.
#[test]
fn webdriver_detects_alerts_console_errors_csp_refusals_and_axe_violations() {
    let started = Instant::now();
    let site = Site::start();
    let b = Browser::start();
    let up = started.elapsed();

    b.goto(&site.url("/alert"));
    assert_eq!(b.alert_text().as_deref(), Some("x"), "the alert is seen");
    b.dismiss_alert();
    assert_eq!(b.alert_text(), None, "dismissed");
    assert_eq!(
        b.find("p").text(),
        "after",
        "the page goes on after the alert"
    );
    b.console();

    b.goto(&site.url("/console"));
    let logs = b.console();
    assert!(
        has(&logs, "SEVERE", "boom"),
        "console.error is seen: {logs:?}"
    );
    assert_eq!(b.console(), vec![], "console() drains");

    // The inline script is refused (no alert, a console entry), and axe still runs:
    // WebDriver scripts are not subject to the page's CSP.
    b.goto(&site.url("/csp"));
    assert_eq!(b.alert_text(), None, "CSP stops the inline script");
    let logs = b.console();
    assert!(
        has(&logs, "SEVERE", "Content Security Policy"),
        "the CSP refusal is logged: {logs:?}"
    );
    assert_eq!(b.execute("return 6 * 7", &[]), json!(42));
    assert_eq!(
        b.execute("return Promise.resolve(arguments[0])", &[json!("p")]),
        json!("p"),
        "a returned Promise is awaited"
    );
    let v = b.axe();
    assert!(ids(&v).contains(&"image-alt"), "axe under CSP: {v:#?}");

    b.goto(&site.url("/img"));
    let v = b.axe();
    let img = v.iter().find(|v| v["id"] == "image-alt");
    let img = img.unwrap_or_else(|| panic!("image-alt reported: {v:#?}"));
    assert_eq!(img["impact"], "critical");
    assert_eq!(img["nodes"], json!(["img"]));

    b.goto(&site.url("/clean"));
    assert_eq!(b.title(), "t");
    let v = b.axe();
    let bad: Vec<_> = v
        .iter()
        .filter(|v| v["impact"] == "serious" || v["impact"] == "critical")
        .collect();
    assert!(
        bad.is_empty(),
        "a clean page has no serious violation: {bad:#?}"
    );
    let shot = b.dir().join("clean.png");
    b.screenshot_png(&shot);
    let png = std::fs::read(&shot).expect("read screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
    assert!(png.len() > 100, "{} bytes", png.len());
    let cookies = b.cookies();
    assert!(
        cookies
            .iter()
            .any(|c| c["name"] == "probe" && c["httpOnly"] == true),
        "{cookies:?}"
    );
    b.delete_cookies();
    assert!(b.cookies().is_empty(), "cookies deleted");

    // Loopback by name works; nothing else is reachable (a dead proxy, no name resolves).
    b.goto(&site.url("/clean").replace("127.0.0.1", "localhost"));
    assert_eq!(b.title(), "t");
    let out = b.execute(
        "return fetch('http://example.com/', {mode: 'no-cors'})\
         .then(() => 'reached', e => 'blocked: ' + e)",
        &[],
    );
    assert!(
        out.as_str().is_some_and(|s| s.starts_with("blocked")),
        "{out}"
    );

    // The interaction API: typing, focus moves, clicking, reading back.
    b.console();
    b.goto(&site.url("/form"));
    let q = b.find("#q");
    assert_eq!(q.attr("value").as_deref(), Some("old"));
    q.clear();
    q.send_keys("hello");
    assert_eq!(q.property("value"), json!("hello"));
    assert_eq!(b.active_element().attr("id").as_deref(), Some("q"));
    b.keys(TAB);
    assert_eq!(b.active_element().attr("id").as_deref(), Some("go"));
    b.keys(ENTER);
    assert_eq!(b.find("#out").text(), "got hello");
    b.find("#q").send_keys(" again");
    b.find("#go").click();
    assert_eq!(b.find("#out").text(), "got hello again");
    assert_eq!(b.find_all("input, button").len(), 2);
    assert!(b.try_find("#missing").is_none());
    b.set_window_size(640, 700);
    let width = b.execute("return window.outerWidth", &[]);
    assert_eq!(width, json!(640));
    assert!(b.url().ends_with("/form"));
    assert!(b.source().contains("id=\"out\""));
    let logs = b.console();
    assert!(
        !logs.iter().any(|(l, _)| l == "SEVERE"),
        "no errors on the form page: {logs:?}"
    );

    drop(b);
    drop(site);
    eprintln!(
        "browser self-test: browser up in {up:?}, all checks in {:?}",
        started.elapsed()
    );
}
