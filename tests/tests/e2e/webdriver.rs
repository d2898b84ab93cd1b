//! A small W3C WebDriver client for the browser tests: headless Chromium driven by its own
//! chromedriver on loopback, spoken to with `helix_test_support::http_request`.
//!
//! Every WebDriver error answer panics with the command, the W3C error code and message,
//! and the page's URL; the browser lives in a temporary directory (home, profile, `TMPDIR`,
//! chromedriver's log) and reaches nothing but loopback. Axe-core is vendored in
//! `tests/vendor/axe-core/`.
//!
//! The self-test at the bottom proves that each detector (alert, console, CSP refusal, axe,
//! screenshot) can fail a test.
// The web tests use the API piecemeal; the self-test does not reach every method.
#![allow(dead_code)]

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

/// WebDriver key codes for [`Browser::keys`] and [`Element::send_keys`].
pub const TAB: &str = "\u{E004}";
pub const ENTER: &str = "\u{E007}";
pub const ESCAPE: &str = "\u{E00C}";

/// The W3C web element identifier key.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// Longest a single command may take to answer (page loads and script runs time out in the
/// browser first, after [`BROWSER_TIMEOUT_MS`]).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);
const BROWSER_TIMEOUT_MS: u64 = 60_000;
const INSTALL: &str = "install them with `apt-get install chromium chromium-driver`";

/// Headless Chromium under a chromedriver of its own; quits both on drop.
#[derive(Debug)]
pub struct Browser {
    driver: Child,
    /// `http://127.0.0.1:PORT` of chromedriver.
    base: String,
    /// Empty until the session exists.
    session: String,
    dir: TempDir,
}

/// A web element of the current page (stale after navigating away).
#[derive(Debug, Clone)]
pub struct Element<'b> {
    browser: &'b Browser,
    id: String,
    /// How it was found, for messages.
    what: String,
}

/// A WebDriver error answer: W3C error code and message.
#[derive(Debug)]
struct WdError {
    error: String,
    message: String,
}

impl Browser {
    /// Starts chromedriver (`$CHROMEDRIVER`, `chromedriver` on `PATH`, `/usr/bin/chromedriver`)
    /// on a free loopback port and opens a session of headless Chromium (`$CHROME`, else
    /// `chromium`, `chromium-browser` or `google-chrome` on `PATH`) with console logging on
    /// and `unhandledPromptBehavior: ignore` (an alert stays open for [`Browser::alert_text`]).
    /// Panics naming what is missing.
    #[track_caller]
    pub fn start() -> Browser {
        let driver_bin = find_chromedriver();
        let chrome = find_chrome();
        let dir = tempfile::Builder::new()
            .prefix("helix-browser-")
            .tempdir()
            .expect("create the browser's temp dir");
        let home = dir.path().join("home");
        let tmp = dir.path().join("tmp");
        for d in [&home, &tmp] {
            std::fs::create_dir_all(d).expect("create the browser's directories");
        }
        let log_path = dir.path().join("chromedriver.log");
        let log = std::fs::File::create(&log_path).expect("create chromedriver.log");
        let mut cmd = Command::new(&driver_bin);
        // Port 0: chromedriver picks a free port and prints it (no race with other tests).
        cmd.args(["--port=0", "--log-level=INFO"]);
        helix_test_support::isolate(&mut cmd, &home);
        // Chromium inherits this environment: its scratch files land in our directory too.
        cmd.env("TMPDIR", &tmp)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("clone log handle"))
            .stderr(log);
        let driver = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL}", driver_bin.display()));
        let mut browser = Browser {
            driver,
            base: String::new(),
            session: String::new(),
            dir,
        };
        browser.base = format!("http://127.0.0.1:{}", browser.driver_port());
        browser.wait_ready();
        let profile = browser.dir.path().join("profile");
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "unhandledPromptBehavior": "ignore",
            "timeouts": {"pageLoad": BROWSER_TIMEOUT_MS, "script": BROWSER_TIMEOUT_MS, "implicit": 0},
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": chrome,
                "args": chrome_args(&profile),
            },
        }}});
        let answer = browser
            .raw("POST", "/session", Some(&caps))
            .unwrap_or_else(|e| {
                panic!(
                    "WebDriver new session with {} failed: {}: {} (are chromedriver and Chromium \
                     the same major version? {INSTALL})\n{}",
                    chrome.display(),
                    e.error,
                    e.message,
                    browser.log_tail()
                )
            });
        browser.session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("new session answered without a sessionId: {answer}"))
            .to_string();
        browser
    }

    /// Navigates to `url` and waits for its load event. An alert opened while loading is left
    /// open (see [`Browser::alert_text`]) instead of failing the navigation.
    #[track_caller]
    pub fn goto(&self, url: &str) {
        match self.try_cmd("POST", "/url", Some(&json!({"url": url}))) {
            Ok(_) => {}
            Err(e) if e.error == "unexpected alert open" => {}
            Err(e) => self.fail(&format!("POST /url {url}"), &e),
        }
    }

    /// The current page's URL.
    #[track_caller]
    pub fn url(&self) -> String {
        string(self.cmd("GET", "/url", None))
    }

    #[track_caller]
    pub fn title(&self) -> String {
        string(self.cmd("GET", "/title", None))
    }

    /// The current DOM, serialized.
    #[track_caller]
    pub fn source(&self) -> String {
        string(self.cmd("GET", "/source", None))
    }

    /// The first element matching `css`; panics with `css` and the page URL when none does.
    #[track_caller]
    pub fn find(&self, css: &str) -> Element<'_> {
        match self.try_find(css) {
            Some(e) => e,
            None => panic!(
                "no element matches {css:?} on {}\n{}",
                self.url_for_message(),
                excerpt(&self.source_for_message(), 2000)
            ),
        }
    }

    /// The first element matching `css`, if any (no waiting).
    #[track_caller]
    pub fn try_find(&self, css: &str) -> Option<Element<'_>> {
        self.find_all(css).into_iter().next()
    }

    /// Every element matching `css`, in document order.
    #[track_caller]
    pub fn find_all(&self, css: &str) -> Vec<Element<'_>> {
        let found = self.cmd(
            "POST",
            "/elements",
            Some(&json!({"using": "css selector", "value": css})),
        );
        found
            .as_array()
            .unwrap_or_else(|| panic!("find {css:?}: not a list: {found}"))
            .iter()
            .map(|e| self.element(e, css))
            .collect()
    }

    /// The focused element (`document.activeElement`, the body when nothing has focus).
    #[track_caller]
    pub fn active_element(&self) -> Element<'_> {
        let e = self.cmd("GET", "/element/active", None);
        self.element(&e, "(active element)")
    }

    /// Types `text` into whatever has focus, as key presses (an Actions chain), so that
    /// [`TAB`] moves focus and [`ENTER`] activates.
    #[track_caller]
    pub fn keys(&self, text: &str) {
        let presses: Vec<Value> = text
            .chars()
            .flat_map(|c| {
                let c = c.to_string();
                [
                    json!({"type": "keyDown", "value": c}),
                    json!({"type": "keyUp", "value": c}),
                ]
            })
            .collect();
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": presses}]});
        self.cmd("POST", "/actions", Some(&actions));
        self.cmd("DELETE", "/actions", None);
    }

    /// Runs `script` as the body of a function in the page (`arguments[i]` are `args`; an
    /// [`Element::arg`] becomes the element) and returns its value; a returned Promise is
    /// awaited. Not subject to the page's Content-Security-Policy.
    #[track_caller]
    pub fn execute(&self, script: &str, args: &[Value]) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(&json!({"script": script, "args": args})),
        )
    }

    /// Resizes the window (outer size, in CSS pixels).
    #[track_caller]
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.cmd(
            "POST",
            "/window/rect",
            Some(&json!({"width": width, "height": height})),
        );
    }

    /// Waits (up to a minute) until the current URL contains `part`, e.g. after a key press
    /// that submits a form (actions do not wait for the navigation they start); the URL.
    #[track_caller]
    pub fn wait_url(&self, part: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let url = self.url();
            if url.contains(part) {
                return url;
            }
            assert!(
                Instant::now() < deadline,
                "the page never reached a URL containing {part:?}; it is at {url}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Emulates a phone's viewport (`width` CSS pixels, touch, 2× pixels) through the
    /// DevTools protocol (`goog/cdp/execute`): headless windows are at least 500 px wide.
    /// `None` goes back to the window's own size.
    #[track_caller]
    pub fn emulate_width(&self, width: Option<u32>) {
        let (cmd, params) = match width {
            Some(w) => (
                "Emulation.setDeviceMetricsOverride",
                json!({"width": w, "height": 800, "deviceScaleFactor": 2, "mobile": true}),
            ),
            None => ("Emulation.clearDeviceMetricsOverride", json!({})),
        };
        self.cmd(
            "POST",
            "/goog/cdp/execute",
            Some(&json!({"cmd": cmd, "params": params})),
        );
    }

    /// Writes a PNG screenshot of the viewport to `path`.
    #[track_caller]
    pub fn screenshot_png(&self, path: &Path) {
        let png = base64_decode(&string(self.cmd("GET", "/screenshot", None)));
        std::fs::write(path, png)
            .unwrap_or_else(|e| panic!("write screenshot {}: {e}", path.display()));
    }

    /// The cookies visible to the current page, as WebDriver cookie objects (`name`, `value`,
    /// `httpOnly`, `sameSite`, …).
    #[track_caller]
    pub fn cookies(&self) -> Vec<Value> {
        match self.cmd("GET", "/cookie", None) {
            Value::Array(v) => v,
            other => panic!("GET /cookie: not a list: {other}"),
        }
    }

    /// Deletes the current page's cookies.
    #[track_caller]
    pub fn delete_cookies(&self) {
        self.cmd("DELETE", "/cookie", None);
    }

    /// The text of the open alert, confirm or prompt, if one is open.
    #[track_caller]
    pub fn alert_text(&self) -> Option<String> {
        match self.try_cmd("GET", "/alert/text", None) {
            Ok(v) => Some(string(v)),
            Err(e) if e.error == "no such alert" => None,
            Err(e) => self.fail("GET /alert/text", &e),
        }
    }

    /// Dismisses the open alert (panics when none is open).
    #[track_caller]
    pub fn dismiss_alert(&self) {
        self.cmd("POST", "/alert/dismiss", Some(&json!({})));
    }

    /// The browser's log entries since the last call (console calls, CSP refusals, failed
    /// loads, uncaught errors) as `(level, message)`, level `SEVERE`, `WARNING`, `INFO` or
    /// `DEBUG`. Chromedriver's `POST /session/{id}/se/log` with `{"type": "browser"}`: not
    /// W3C, it drains what `goog:loggingPrefs` collected.
    #[track_caller]
    pub fn console(&self) -> Vec<(String, String)> {
        let entries = self.cmd("POST", "/se/log", Some(&json!({"type": "browser"})));
        entries
            .as_array()
            .unwrap_or_else(|| panic!("POST /se/log: not a list: {entries}"))
            .iter()
            .map(|e| (string(e["level"].clone()), string(e["message"].clone())))
            .collect()
    }

    /// Axe-core's violations on the current page: `{id, impact, help, nodes: [selector…]}`
    /// each. The vendored `tests/vendor/axe-core/axe.min.js` is injected on every call, into
    /// the script's own scope (a page's `window.axe` or `define` cannot stand in for it).
    #[track_caller]
    pub fn axe(&self) -> Vec<Value> {
        static SCRIPT: OnceLock<String> = OnceLock::new();
        let script = SCRIPT.get_or_init(|| {
            let path =
                helix_test_support::workspace_root().join("tests/vendor/axe-core/axe.min.js");
            let axe = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            format!(
                "var module = {{exports: {{}}}}, define = undefined;\n{axe}\n;\n\
                 return module.exports.run(document, {{resultTypes: ['violations']}})\
                 .then(function (r) {{ return r.violations.map(function (v) {{ return {{\
                 id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(function (n) \
                 {{ return [].concat(n.target).flat(Infinity).join(' '); }}) }}; }}); }});"
            )
        });
        match self.execute(script, &[]) {
            Value::Array(v) => v,
            other => panic!("axe.run answered {other}"),
        }
    }

    /// The directory holding the browser's home, profile and `chromedriver.log`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    fn element(&self, e: &Value, what: &str) -> Element<'_> {
        let id = e[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("{what}: not an element reference: {e}"));
        Element {
            browser: self,
            id: id.to_string(),
            what: what.to_string(),
        }
    }

    /// A session command (`path` relative to `/session/{id}`); panics on an error answer.
    #[track_caller]
    fn cmd(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        match self.try_cmd(method, path, body) {
            Ok(v) => v,
            Err(e) => self.fail(&format!("{method} {path}"), &e),
        }
    }

    fn try_cmd(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, WdError> {
        self.raw(method, &format!("/session/{}{path}", self.session), body)
    }

    /// One request to chromedriver: the answer's `value`, or its error (also when chromedriver
    /// does not answer, or not in JSON).
    fn raw(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, WdError> {
        let body = match (method, body) {
            (_, Some(b)) => b.to_string(),
            ("POST", None) => "{}".to_string(),
            _ => String::new(),
        };
        let answer = helix_test_support::http_request(
            &self.base,
            method,
            path,
            body.as_bytes(),
            None,
            COMMAND_TIMEOUT,
        );
        let Some((status, answer)) = answer else {
            return Err(WdError {
                error: "chromedriver did not answer".into(),
                message: self.log_tail(),
            });
        };
        let answer: Value = serde_json::from_slice(&answer).map_err(|e| WdError {
            error: format!("HTTP {status}, not JSON ({e})"),
            message: excerpt(&String::from_utf8_lossy(&answer), 500),
        })?;
        let value = answer.get("value").cloned().unwrap_or(Value::Null);
        match value.get("error").and_then(Value::as_str) {
            Some(error) if status >= 400 => Err(WdError {
                error: error.to_string(),
                message: value["message"].as_str().unwrap_or_default().to_string(),
            }),
            _ => Ok(value),
        }
    }

    #[track_caller]
    fn fail(&self, command: &str, e: &WdError) -> ! {
        panic!(
            "WebDriver {command} failed: {}: {}\n  page: {}",
            e.error,
            e.message,
            self.url_for_message()
        )
    }

    /// The page URL for a message; never panics (the failure may be an open alert).
    fn url_for_message(&self) -> String {
        match self.try_cmd("GET", "/url", None) {
            Ok(v) => string(v),
            Err(e) => format!("(unknown: {})", e.error),
        }
    }

    fn source_for_message(&self) -> String {
        self.try_cmd("GET", "/source", None)
            .map(string)
            .unwrap_or_default()
    }

    /// The port chromedriver reports in its log (`… started successfully on port N.`).
    fn driver_port(&mut self) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let log = self.log();
            if let Some(rest) = log.split("started successfully on port ").nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if let Ok(port) = digits.parse() {
                    return port;
                }
            }
            self.check_alive("start");
            assert!(
                Instant::now() < deadline,
                "chromedriver printed no port within 30 s\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for `GET /status` to say `ready`.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let status = helix_test_support::http_request(
                &self.base,
                "GET",
                "/status",
                b"",
                None,
                Duration::from_secs(5),
            );
            if let Some((200, body)) = status {
                let v: Value = serde_json::from_slice(&body).unwrap_or_default();
                if v["value"]["ready"] == true {
                    return;
                }
            }
            self.check_alive("become ready");
            assert!(
                Instant::now() < deadline,
                "chromedriver not ready within 30 s\n{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn check_alive(&mut self, what: &str) {
        if let Ok(Some(status)) = self.driver.try_wait() {
            panic!(
                "chromedriver exited ({status}) before it could {what}\n{}",
                self.log_tail()
            );
        }
    }

    fn log(&self) -> String {
        let mut s = String::new();
        if let Ok(mut f) = std::fs::File::open(self.dir.path().join("chromedriver.log")) {
            let _ = f.read_to_string(&mut s);
        }
        s
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        // Lines cut: a logged `execute` carries the whole script (axe-core: 650 kB).
        let tail: Vec<String> = lines[lines.len().saturating_sub(40)..]
            .iter()
            .map(|l| excerpt(l, 300))
            .collect();
        format!("chromedriver.log (last 40 lines):\n{}", tail.join("\n"))
    }
}

impl Drop for Browser {
    /// Quits the browser (`DELETE /session`), then chromedriver (`GET /shutdown`, killed after
    /// 5 s), and reaps it. On a panic, prints chromedriver's log tail first.
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("browser: {}", self.log_tail());
        }
        let quick = Duration::from_secs(10);
        if !self.session.is_empty() && self.driver.try_wait().ok().flatten().is_none() {
            let path = format!("/session/{}", self.session);
            let _ = helix_test_support::http_request(&self.base, "DELETE", &path, b"", None, quick);
        }
        if !self.base.is_empty() {
            let _ =
                helix_test_support::http_request(&self.base, "GET", "/shutdown", b"", None, quick);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.driver.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Element<'_> {
    /// The rendered text (`innerText`-like: hidden text excluded).
    #[track_caller]
    pub fn text(&self) -> String {
        string(self.cmd("GET", "/text", None))
    }

    /// The attribute `name` as written in the DOM, or `None`.
    #[track_caller]
    pub fn attr(&self, name: &str) -> Option<String> {
        match self.cmd("GET", &format!("/attribute/{name}"), None) {
            Value::Null => None,
            v => Some(string(v)),
        }
    }

    /// The DOM property `name` (`value`, `checked`, `href` resolved, …).
    #[track_caller]
    pub fn property(&self, name: &str) -> Value {
        self.cmd("GET", &format!("/property/{name}"), None)
    }

    /// Scrolls the element into view and clicks its centre; fails when something covers it.
    /// (W3C WebDriver has no submit: click the form's submit button, or press [`ENTER`].)
    #[track_caller]
    pub fn click(&self) {
        self.cmd("POST", "/click", Some(&json!({})));
    }

    /// Focuses the element and types `text` (key codes such as [`ENTER`] allowed).
    #[track_caller]
    pub fn send_keys(&self, text: &str) {
        self.cmd("POST", "/value", Some(&json!({"text": text})));
    }

    /// Empties an editable element.
    #[track_caller]
    pub fn clear(&self) {
        self.cmd("POST", "/clear", Some(&json!({})));
    }

    /// The element as an [`Browser::execute`] argument.
    pub fn arg(&self) -> Value {
        json!({ ELEMENT: self.id })
    }

    #[track_caller]
    fn cmd(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let full = format!("/element/{}{path}", self.id);
        match self.browser.try_cmd(method, &full, body) {
            Ok(v) => v,
            Err(e) => (self.browser).fail(&format!("{method} {path} on {}", self.what), &e),
        }
    }
}

/// `value` as a string (panics otherwise: a WebDriver answer of the wrong type).
#[track_caller]
fn string(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => panic!("expected a string from WebDriver, got {other}"),
    }
}

fn excerpt(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Standard base64 (padding and line breaks ignored).
fn base64_decode(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\r' | b'\n' => continue,
            _ => panic!("not base64: byte {c:#04x}"),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

mod launch;
#[cfg(test)]
mod selftest;

use launch::{chrome_args, find_chrome, find_chromedriver};
