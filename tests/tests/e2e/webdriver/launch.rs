//! Finding chromedriver and Chromium, and the flags that keep the browser headless, isolated
//! and off the network (everything but loopback goes to a dead proxy).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::INSTALL;

/// chromedriver: `$CHROMEDRIVER`, `PATH`, `/usr/bin/chromedriver`.
pub(super) fn find_chromedriver() -> PathBuf {
    helix_test_support::find_program("chromedriver")
        .or_else(|| Some(PathBuf::from("/usr/bin/chromedriver")).filter(|p| p.is_file()))
        .unwrap_or_else(|| {
            panic!(
                "the browser tests need chromedriver and Chromium: chromedriver is not on PATH \
                 (nor $CHROMEDRIVER, /usr/bin/chromedriver); {INSTALL}"
            )
        })
}

/// Chromium: `$CHROME`, else `chromium`, `chromium-browser`, `google-chrome` on `PATH`.
/// Debian's `/usr/bin/chromium` is a shell launcher that sources `/etc/chromium.d` (API keys,
/// extension flags); its real binary `/usr/lib/chromium/chromium` is used instead.
pub(super) fn find_chrome() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| helix_test_support::find_program(name))
        .unwrap_or_else(|| {
            panic!(
                "the browser tests need Chromium and chromedriver: none of chromium, \
                 chromium-browser, google-chrome is on PATH (nor $CHROME); {INSTALL}"
            )
        });
    let debian = Path::new("/usr/lib/chromium/chromium");
    let mut magic = [0u8; 2];
    let is_script = std::fs::File::open(&found)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == b"#!");
    if is_script && debian.is_file() {
        return debian.to_path_buf();
    }
    found
}

/// Chromium's command line: headless, unsandboxed (tests run as root in CI), a throwaway
/// profile, and background services off. What Chromium still tries on its own (Google
/// `ListAccounts`, the default search engine's start page, an on-device-model manifest
/// check) and anything a page asks for off loopback goes to a dead proxy (127.0.0.1:9, bypassed
/// for loopback only), and no name resolves but localhost. Chromedriver
/// talks to it over `--remote-debugging-port=0`; `--remote-debugging-pipe` is not needed.
pub(super) fn chrome_args(profile: &Path) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-component-extensions-with-background-pages",
        "--disable-default-apps",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-client-side-phishing-detection",
        "--safebrowsing-disable-auto-update",
        "--disable-domain-reliability",
        "--disable-breakpad",
        "--no-pings",
        "--metrics-recording-only",
        "--password-store=basic",
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,\
         AutofillServerCommunication,CertificateTransparencyComponentUpdater,\
         InterestFeedContentSuggestions,PrivacySandboxSettings4,NetworkTimeServiceQuerying",
        "--proxy-server=http://127.0.0.1:9",
        // Not the implicit bypass list: it also lets link-local through (169.254.169.254).
        "--proxy-bypass-list=<-loopback>;localhost;127.0.0.1/8;[::1]",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]",
    ]
    .map(String::from)
    .to_vec();
    args.push(format!("--user-data-dir={}", profile.display()));
    args
}
