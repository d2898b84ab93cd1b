//! Matchers for the token formats that need more than "prefix + run of characters":
//! structured tokens (JWT, SendGrid, GitLab's routable form, webhook URLs…) and the formats
//! without a prefix, recognised by shape at a token boundary (Telegram, Discord, Azure…).

use super::text::{
    ALNUM, B64, B64URL, DASH, DIGIT, DOT, EQ, HEX, HEXL, Kind, LOWER, PLUS, SLASH, UPPER, at,
    b64_decode, contains_ignore_case, ends_at, is, is_token_char, looks_placeholder, random_enough,
    run,
};

/// `(provider, kind)` of the formats matched here, for the catalogue.
pub(super) const KINDS: &[Kind] = &[
    ("Telegram", "bot token"),
    ("Discord", "bot token"),
    ("Terraform Cloud", "API token"),
    ("Azure DevOps", "personal access token"),
    ("Azure", "Entra ID client secret"),
    ("Mailchimp", "API key"),
    ("New Relic", "license key"),
];

/// Formats without a prefix of their own, recognised by shape at a token boundary.
pub(super) fn structural(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    let c = b[i];
    if c.is_ascii_digit()
        && let Some(len) = telegram(&b[i..])
    {
        return Some((("Telegram", "bot token"), i + len));
    }
    if matches!(c, b'M' | b'N' | b'O')
        && let Some(end) = discord_bot(b, i)
    {
        return Some((("Discord", "bot token"), end));
    }
    if !c.is_ascii_alphanumeric() {
        return None;
    }
    let n = run(b, i, ALNUM, 85);
    let w = &b[i..i + n];
    match n {
        14 if at(b, i + 14, b".atlasv1.") => {
            let m = run(b, i + 23, B64URL | EQ, 71);
            let body = &b[i + 23..i + 23 + m];
            ((60..=70).contains(&m) && ends_at(b, i + 23 + m) && random_enough(body))
                .then_some((("Terraform Cloud", "API token"), i + 23 + m))
        }
        32 if w.iter().all(|&c| is(c, HEXL))
            && at(b, i + 32, b"-us")
            && (1..=2).contains(&run(b, i + 35, DIGIT, 3)) =>
        {
            let end = i + 35 + run(b, i + 35, DIGIT, 3);
            (ends_at(b, end) && !looks_placeholder(w) && random_enough(w))
                .then_some((("Mailchimp", "API key"), end))
        }
        40 if w[36..] == *b"NRAL" && w[..36].iter().all(|&c| is(c, HEX)) => {
            let body = &w[..36];
            (!looks_placeholder(body) && random_enough(body))
                .then_some((("New Relic", "license key"), i + 40))
        }
        84 if w[76..80] == *b"AZDO" => {
            let body = &w[..76];
            (!looks_placeholder(body) && random_enough(body))
                .then_some((("Azure DevOps", "personal access token"), i + 84))
        }
        _ => None,
    }
}

/// `123456789:AA` + 33 base64url characters.
fn telegram(s: &[u8]) -> Option<usize> {
    let d = run(s, 0, DIGIT, 11);
    if !(8..=10).contains(&d) || !at(s, d, b":AA") {
        return None;
    }
    let n = run(s, d + 1, B64URL, 36);
    (n == 35 && !s.get(d + 1 + n).is_some_and(|&c| is_token_char(c))).then_some(d + 1 + n)
}

/// Telegram's API URLs put the token after `bot`: `api.telegram.org/bot123456:AA…`.
pub(super) fn telegram_in_url(s: &[u8]) -> Option<usize> {
    telegram(&s[3..]).map(|n| 3 + n)
}

/// `base64(user id).timestamp.hmac`: the first segment must decode to a 17–20 digit id.
fn discord_bot(b: &[u8], i: usize) -> Option<usize> {
    let s1 = run(b, i, B64URL, 29);
    if !(23..=28).contains(&s1) || b.get(i + s1) != Some(&b'.') {
        return None;
    }
    let j = i + s1 + 1;
    let s2 = run(b, j, B64URL, 8);
    if !(6..=7).contains(&s2) || b.get(j + s2) != Some(&b'.') {
        return None;
    }
    let k = j + s2 + 1;
    let s3 = run(b, k, B64URL, 39);
    if !(27..=38).contains(&s3) || b.get(k + s3).is_some_and(|&c| is_token_char(c)) {
        return None;
    }
    let mut id = [0u8; 24];
    let n = b64_decode(&b[i..i + s1], &mut id);
    let digits = (17..=20).contains(&n) && id[..n].iter().all(u8::is_ascii_digit);
    (digits && random_enough(&b[k..k + s3])).then_some(k + s3)
}

/// Entra ID (Azure AD) client secrets: three characters, a digit, `Q~`, then 31–34
/// characters. `q` is the index of the `Q`; called for every `Q~` in the text.
pub(super) fn azure_client_secret(b: &[u8], q: usize) -> Option<(Kind, usize)> {
    let secret_char = |c: u8| is(c, B64URL | DOT) || c == b'~';
    let start = q.checked_sub(4)?;
    let head = &b[start..q];
    if !head[..3].iter().all(|&c| secret_char(c) && c != b'-') || !head[3].is_ascii_digit() {
        return None;
    }
    if start > 0 && secret_char(b[start - 1]) {
        return None;
    }
    let p = q + 2;
    let n = b
        .get(p..)?
        .iter()
        .take(35)
        .take_while(|&&c| secret_char(c))
        .count();
    if !(31..=34).contains(&n) {
        return None;
    }
    let whole = &b[start..p + n];
    (!looks_placeholder(whole) && random_enough(whole))
        .then_some((("Azure", "Entra ID client secret"), p + n))
}

pub(super) fn firebase_fcm(s: &[u8]) -> Option<usize> {
    let n = run(s, 4, B64URL, 8);
    if n != 7 || !at(s, 11, b":APA91b") {
        return None;
    }
    let m = run(s, 18, B64URL, 141);
    ((130..=140).contains(&m) && ends_at(s, 18 + m)).then_some(18 + m)
}

/// 86 base64 characters and `==`: the 64-byte key of an Azure storage account.
pub(super) fn azure_account_key(s: &[u8]) -> Option<usize> {
    let p = 11;
    (run(s, p, B64, 87) == 86
        && at(s, p + 86, b"==")
        && !s.get(p + 88).is_some_and(|&c| is(c, B64 | EQ)))
    .then_some(p + 88)
}

/// 43 base64 characters and `=`: a 32-byte Service Bus / Event Hubs key.
pub(super) fn azure_shared_key(s: &[u8]) -> Option<usize> {
    let p = 16;
    (run(s, p, B64, 44) == 43
        && at(s, p + 43, b"=")
        && !s.get(p + 44).is_some_and(|&c| is(c, B64 | EQ)))
    .then_some(p + 44)
}

/// `LS0tLS1CRUdJTi` is base64 of `-----BEGIN`; a private key if the label says so.
pub(super) fn base64_pem(s: &[u8]) -> Option<usize> {
    // Decode the head first: a miss costs 64 bytes, not the whole (16 KiB) run.
    let head_len = run(s, 0, B64, 64);
    let mut head = [0u8; 48];
    let m = b64_decode(&s[..head_len], &mut head);
    if !contains_ignore_case(&head[..m], b"PRIVATE KEY") {
        return None;
    }
    Some(run(s, 0, B64 | EQ, 16 * 1024))
}

/// A PuTTY key file: `PuTTY-User-Key-File-<n>:` and, within the file, `Private-Lines: <n>`
/// followed by a line of key material.
pub(super) fn putty(s: &[u8]) -> Option<usize> {
    if !s.get(20).is_some_and(u8::is_ascii_digit) || s.get(21) != Some(&b':') {
        return None;
    }
    // Public-Lines of an RSA-4096 key take about 800 bytes.
    let window = &s[..s.len().min(1024)];
    let p =
        (0..window.len()).find(|&k| window[k] == b'P' && at(window, k, b"Private-Lines:"))? + 14;
    // ` 1`, then the line break.
    let q = p + s[p..]
        .iter()
        .take(8)
        .take_while(|&&c| c.is_ascii_digit() || c == b' ')
        .count();
    let q = q + s[q..]
        .iter()
        .take(2)
        .take_while(|&&c| matches!(c, b'\r' | b'\n'))
        .count();
    (run(s, q, B64 | EQ, 4096) >= 40).then_some(q)
}

pub(super) fn postman(s: &[u8]) -> Option<usize> {
    let p = 5;
    (run(s, p, HEX, 25) == 24
        && at(s, p + 24, b"-")
        && run(s, p + 25, HEX, 35) == 34
        && ends_at(s, p + 59))
    .then_some(p + 59)
}

/// `SG.` + 22 + `.` + 43 base64url characters.
pub(super) fn sendgrid(s: &[u8]) -> Option<usize> {
    (run(s, 3, B64URL, 23) == 22 && at(s, 25, b".") && run(s, 26, B64URL, 44) == 43)
        .then_some(69)
        .filter(|&e| !s.get(e).is_some_and(|&c| is_token_char(c)))
}

pub(super) fn braintree(s: &[u8]) -> Option<usize> {
    let p = 24;
    (run(s, p, ALNUM, 17) == 16 && at(s, p + 16, b"$") && run(s, p + 17, HEXL, 33) == 32)
        .then_some(p + 49)
        .filter(|&e| ends_at(s, e))
}

/// `dapi` + 32 lowercase hex, optionally `-` and a digit.
pub(super) fn databricks(s: &[u8]) -> Option<usize> {
    if run(s, 4, HEXL, 33) != 32 {
        return None;
    }
    let mut e = 36;
    if s.get(e) == Some(&b'-') && s.get(e + 1).is_some_and(u8::is_ascii_digit) {
        e += 2;
    }
    ends_at(s, e).then_some(e)
}

pub(super) fn discord_hook(s: &[u8]) -> Option<usize> {
    let p = s.iter().position(|&c| c == b'/')? + "/api/webhooks/".len();
    let d = run(s, p, DIGIT, 21);
    if !(17..=20).contains(&d) || s.get(p + d) != Some(&b'/') {
        return None;
    }
    let q = p + d + 1;
    let n = run(s, q, B64URL, 69);
    ((60..=68).contains(&n) && !s.get(q + n).is_some_and(|&c| is_token_char(c))).then_some(q + n)
}

/// Doppler service tokens: `dp.st.` + optional `<config>.` + 40–44 alphanumerics.
pub(super) fn doppler_service(s: &[u8]) -> Option<usize> {
    let p = 6;
    let n = run(s, p, ALNUM, 45);
    if (40..=44).contains(&n) && ends_at(s, p + n) && s.get(p + n) != Some(&b'.') {
        return Some(p + n);
    }
    // `dp.st.<environment>.<token>`
    let env = run(s, p, B64URL, 65);
    if env == 0 || s.get(p + env) != Some(&b'.') {
        return None;
    }
    let q = p + env + 1;
    let m = run(s, q, ALNUM, 45);
    ((40..=44).contains(&m) && ends_at(s, q + m)).then_some(q + m)
}

pub(super) fn dynatrace(s: &[u8]) -> Option<usize> {
    (run(s, 7, ALNUM, 25) == 24 && at(s, 31, b".") && run(s, 32, ALNUM, 65) == 64)
        .then_some(96)
        .filter(|&e| ends_at(s, e))
}

/// `header.payload.signature`, base64url; the header must decode to JSON naming an `alg`.
/// The jwt.io example token and Supabase's public `anon` keys are not secrets.
pub(super) fn jwt(s: &[u8]) -> Option<usize> {
    const MAX: usize = 8 * 1024;
    let s1 = run(s, 0, B64URL, MAX);
    if s1 < 10 || s.get(s1) != Some(&b'.') {
        return None;
    }
    let j = s1 + 1;
    let s2 = run(s, j, B64URL, MAX);
    if s2 < 10 || s.get(j + s2) != Some(&b'.') {
        return None;
    }
    let k = j + s2 + 1;
    let s3 = run(s, k, B64URL, MAX);
    if s3 < 16
        || s.get(k + s3)
            .is_some_and(|&c| is_token_char(c) || c == b'.')
    {
        return None;
    }
    let mut header = [0u8; 192];
    let n = b64_decode(&s[..s1], &mut header);
    let header = &header[..n];
    if !header.starts_with(b"{") || !contains_ignore_case(header, b"\"alg\"") {
        return None;
    }
    let mut payload = [0u8; 512];
    let n = b64_decode(&s[j..j + s2], &mut payload);
    let payload = &payload[..n];
    let example =
        contains_ignore_case(payload, b"John Doe") && contains_ignore_case(payload, b"1516239022");
    let public = contains_ignore_case(payload, b"\"role\":\"anon\"");
    (!example && !public).then_some(k + s3)
}

/// GitLab tokens: 20 characters (legacy) or the routable form
/// `<27–300 chars>.<2-char length><7-char CRC>` (GitLab 17.x).
pub(super) fn gitlab(s: &[u8]) -> Option<usize> {
    let p = s.iter().take(10).position(|&c| c == b'-')? + 1;
    let n = run(s, p, B64URL, 301);
    if n == 20 && s.get(p + n).is_none_or(|&c| c != b'.') {
        return Some(p + n);
    }
    if (27..=300).contains(&n) && s.get(p + n) == Some(&b'.') {
        let q = p + n + 1;
        let m = run(s, q, DIGIT | LOWER, 10);
        return (m == 9 && ends_at(s, q + m)).then_some(q + m);
    }
    None
}

/// `glcbt-` + 1–5 alphanumerics + `_` + 20 characters.
pub(super) fn gitlab_job(s: &[u8]) -> Option<usize> {
    let p = 6;
    let a = run(s, p, ALNUM, 6);
    if !(1..=5).contains(&a) || s.get(p + a) != Some(&b'_') {
        return None;
    }
    let q = p + a + 1;
    (run(s, q, B64URL, 21) == 20).then_some(q + 20)
}

pub(super) fn grafana_cloud(s: &[u8]) -> Option<usize> {
    let n = run(s, 4, B64, 401);
    if !(32..=400).contains(&n) {
        return None;
    }
    let e = 4 + n + run(s, 4 + n, EQ, 3);
    ends_at(s, e).then_some(e)
}

pub(super) fn grafana_sa(s: &[u8]) -> Option<usize> {
    (run(s, 5, ALNUM, 33) == 32 && at(s, 37, b"_") && run(s, 38, HEX, 9) == 8)
        .then_some(46)
        .filter(|&e| ends_at(s, e))
}

pub(super) fn notion(s: &[u8]) -> Option<usize> {
    (run(s, 4, DIGIT, 12) >= 11 && run(s, 4, ALNUM, 47) == 46)
        .then_some(50)
        .filter(|&e| ends_at(s, e))
}

pub(super) fn sourcegraph(s: &[u8]) -> Option<usize> {
    let p = 4;
    if run(s, p, HEX, 41) == 40 && ends_at(s, p + 40) && s.get(p + 40) != Some(&b'_') {
        return Some(p + 40);
    }
    let a = if at(s, p, b"local_") {
        5
    } else {
        run(s, p, HEX, 17)
    };
    (matches!(a, 5 | 16) && s.get(p + a) == Some(&b'_') && run(s, p + a + 1, HEX, 41) == 40)
        .then_some(p + a + 41)
        .filter(|&e| ends_at(s, e))
}

/// Anthropic keys: `sk-ant-<type><version>-` + 80–120 characters ending in `AA`.
pub(super) fn anthropic(s: &[u8]) -> Option<usize> {
    let mut dashes = 0;
    let p = s.iter().take(20).position(|&c| {
        dashes += usize::from(c == b'-');
        dashes == 3
    })? + 1;
    let n = run(s, p, B64URL, 121);
    ((80..=120).contains(&n) && s[..p + n].ends_with(b"AA")).then_some(p + n)
}

/// OpenAI's keys carry `T3BlbkFJ`, base64 of "OpenAI".
pub(super) fn openai_marked(s: &[u8]) -> Option<usize> {
    let n = run(s, 3, B64URL, 301);
    let tok = &s[3..3 + n];
    ((20..=300).contains(&n) && tok.windows(8).any(|w| w == b"T3BlbkFJ")).then_some(3 + n)
}

/// Other `sk-` keys (OpenAI's older ones, DeepSeek, Moonshot…): 20+ characters mixing
/// letters and digits, not a kebab-case name like `sk-learn-style-name`.
pub(super) fn sk_generic(s: &[u8]) -> Option<usize> {
    let n = run(s, 3, B64URL, 301);
    let tok = &s[3..3 + n];
    let digits = tok.iter().filter(|c| c.is_ascii_digit()).count();
    let mixed = tok.iter().any(u8::is_ascii_uppercase) || digits * 12 >= n;
    ((20..=300).contains(&n) && digits > 0 && tok.iter().any(u8::is_ascii_alphabetic) && mixed)
        .then_some(3 + n)
}

pub(super) fn mapbox(s: &[u8]) -> Option<usize> {
    let a = run(s, 3, B64URL, 400);
    if a < 20 || s.get(3 + a) != Some(&b'.') {
        return None;
    }
    let m = run(s, 4 + a, B64URL, 100);
    (m >= 20 && !s.get(4 + a + m).is_some_and(|&c| is_token_char(c))).then_some(4 + a + m)
}

/// `hooks.slack.com/services/T…/B…/<24>` or `/workflows/…`, `/triggers/…`.
pub(super) fn slack_hook(s: &[u8]) -> Option<usize> {
    let p = 16;
    if at(s, p, b"services/T") {
        let q = p + 10;
        let t = run(s, q, UPPER | DIGIT, 13);
        if !(8..=12).contains(&t) || !at(s, q + t, b"/B") {
            return None;
        }
        let r = q + t + 2;
        let bid = run(s, r, UPPER | DIGIT, 13);
        if !(8..=12).contains(&bid) || !at(s, r + bid, b"/") {
            return None;
        }
        let k = r + bid + 1;
        return (run(s, k, ALNUM, 25) == 24 && ends_at(s, k + 24)).then_some(k + 24);
    }
    let q = if at(s, p, b"workflows/") {
        p + 10
    } else if at(s, p, b"triggers/") {
        p + 9
    } else {
        return None;
    };
    let n = run(s, q, ALNUM | PLUS | SLASH, 57);
    ((43..=56).contains(&n) && ends_at(s, q + n)).then_some(q + n)
}

/// `<tenant>.webhook.office.com/webhookb2/…/IncomingWebhook/<32>/…`
pub(super) fn teams_hook(s: &[u8]) -> Option<usize> {
    let window = &s[..s.len().min(300)];
    let p = window.windows(17).position(|w| w == b"/IncomingWebhook/")? + 17;
    (run(s, p, ALNUM, 33) == 32).then_some(p + 32)
}

pub(super) fn slack(s: &[u8]) -> Option<usize> {
    let p = s.iter().position(|&c| c == b'-')? + 1;
    let n = run(s, p, ALNUM | DASH, 256);
    let body = &s[p..p + n];
    ((10..=255).contains(&n) && body.iter().any(u8::is_ascii_digit) && ends_at(s, p + n))
        .then_some(p + n)
}

/// `xapp-<digit>-<id>-<digits>-<secret>`.
pub(super) fn slack_app(s: &[u8]) -> Option<usize> {
    let n = run(s, 5, ALNUM | DASH, 200);
    let body = &s[5..5 + n];
    let parts = body.split(|&c| c == b'-').count();
    (n >= 30 && parts == 4 && body[0].is_ascii_digit()).then_some(5 + n)
}

pub(super) fn brevo(s: &[u8]) -> Option<usize> {
    let p = 8;
    (run(s, p, HEXL, 65) == 64 && at(s, p + 64, b"-") && run(s, p + 65, ALNUM, 17) == 16)
        .then_some(p + 81)
        .filter(|&e| ends_at(s, e))
}
