//! Secrets known by the name they are assigned to: `DB_PASSWORD = …`, `api_key: …`,
//! `AWS_SECRET_ACCESS_KEY=…`, `Authorization: Basic …`. Key names are split into words and
//! classified; values must look like literals, not placeholders, variables or code.

use super::blocks::weak_password;
use super::rules::token_at;
use super::text::{
    B64, EQ, Kind, at_ignore_case, b64_decode, char_classes, contains_ignore_case, entropy, is,
    looks_placeholder,
};

/// How a key name is treated.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Class {
    /// `password`, `passwd`, `pwd`, `passphrase`: shorter values count.
    Password,
    /// `secret`, `token`, `api_key`, `private_key`…: long random-looking values count.
    Secret,
    /// `auth` (Docker's `config.json`): base64 of `user:password`, or a token.
    Auth,
    /// `Authorization`: `Basic <base64>` or `Bearer <token>`.
    Authorization,
}

/// `(kind with a provider, kind without one)`.
pub(super) const KINDS: [(&str, &str); 14] = [
    ("password", "hard-coded password"),
    ("API key", "hard-coded API key"),
    ("token", "hard-coded token"),
    ("access token", "hard-coded access token"),
    ("auth token", "hard-coded auth token"),
    ("secret", "hard-coded secret"),
    ("client secret", "hard-coded client secret"),
    ("secret key", "hard-coded secret key"),
    ("private key", "hard-coded private key"),
    ("access key", "hard-coded access key"),
    ("secret access key", "hard-coded secret access key"),
    ("webhook secret", "hard-coded webhook secret"),
    ("signing key", "hard-coded signing key"),
    ("credential", "hard-coded credential"),
];

/// Substrings of a key name that name the provider the secret belongs to.
#[rustfmt::skip]
const PROVIDERS: [(&[u8], &str); 64] = [
    (b"aws", "AWS"), (b"amazon", "AWS"), (b"azure", "Azure"),
    (b"gcp", "Google Cloud"), (b"google", "Google"), (b"firebase", "Firebase"),
    (b"github", "GitHub"), (b"gitlab", "GitLab"), (b"bitbucket", "Bitbucket"),
    (b"atlassian", "Atlassian"), (b"jira", "Atlassian"), (b"confluence", "Atlassian"),
    (b"slack", "Slack"), (b"discord", "Discord"), (b"telegram", "Telegram"),
    (b"twilio", "Twilio"), (b"sendgrid", "SendGrid"), (b"mailgun", "Mailgun"),
    (b"mailchimp", "Mailchimp"), (b"postmark", "Postmark"), (b"stripe", "Stripe"),
    (b"paypal", "PayPal"), (b"braintree", "Braintree"), (b"shopify", "Shopify"),
    (b"openai", "OpenAI"), (b"anthropic", "Anthropic"), (b"claude", "Anthropic"),
    (b"cohere", "Cohere"), (b"mistral", "Mistral"), (b"huggingface", "Hugging Face"),
    (b"datadog", "Datadog"), (b"dd_api", "Datadog"), (b"dd_app", "Datadog"),
    (b"newrelic", "New Relic"), (b"new_relic", "New Relic"), (b"sentry", "Sentry"),
    (b"heroku", "Heroku"), (b"digitalocean", "DigitalOcean"), (b"cloudflare", "Cloudflare"),
    (b"okta", "Okta"), (b"auth0", "Auth0"), (b"algolia", "Algolia"),
    (b"supabase", "Supabase"), (b"vercel", "Vercel"), (b"netlify", "Netlify"),
    (b"npm", "npm"), (b"pypi", "PyPI"), (b"docker", "Docker"),
    (b"circleci", "CircleCI"), (b"travis", "Travis CI"), (b"sonar", "SonarQube"),
    (b"snyk", "Snyk"), (b"pagerduty", "PagerDuty"), (b"linear", "Linear"),
    (b"notion", "Notion"), (b"vault", "HashiCorp Vault"), (b"doppler", "Doppler"),
    (b"pulumi", "Pulumi"), (b"terraform", "Terraform"), (b"mongo", "MongoDB"),
    (b"postgres", "PostgreSQL"), (b"mysql", "MySQL"), (b"redis", "Redis"),
    (b"databricks", "Databricks"),
];

/// Last words that make a name about a secret rather than the secret itself
/// (`api_key_header`, `password_min_length`, `token_url`).
#[rustfmt::skip]
const NOT_SECRET_LAST: [&[u8]; 71] = [
    b"id", b"ids", b"name", b"names", b"url", b"uri", b"urls", b"endpoint", b"host",
    b"hostname", b"port", b"path", b"file", b"filename", b"dir", b"directory", b"length",
    b"len", b"size", b"count", b"type", b"types", b"header", b"headers", b"field",
    b"fields", b"env", b"var", b"variable", b"policy", b"ttl", b"timeout", b"expiry",
    b"expires", b"expiration", b"format", b"prefix", b"suffix", b"version", b"mode",
    b"enabled", b"required", b"regex", b"pattern", b"label", b"hint", b"description",
    b"min", b"max", b"limit", b"ref", b"arn", b"provider", b"store", b"manager",
    b"location", b"source", b"param", b"method", b"hash", b"digest", b"at", b"on", b"date",
    b"time", b"timestamp", b"since", b"until", b"updated", b"created", b"changed",
];

/// Words before `token`/`secret` that make it something else (`csrf_token`, `next_token`).
#[rustfmt::skip]
const NOT_SECRET_BEFORE: [&[u8]; 15] = [
    b"csrf", b"xsrf", b"page", b"next", b"pagination", b"continuation", b"cancellation",
    b"public", b"publishable", b"max", b"min", b"num", b"idempotency", b"sync", b"cursor",
];

#[rustfmt::skip]
const GLUED_KEYS: [&[u8]; 11] = [
    b"apikey", b"secretkey", b"privatekey", b"accesskey", b"signingkey", b"masterkey",
    b"encryptionkey", b"authkey", b"sharedkey", b"subscriptionkey", b"accountkey",
];

#[rustfmt::skip]
const KEY_QUALIFIERS: [&[u8]; 19] = [
    b"api", b"secret", b"private", b"access", b"signing", b"master", b"encryption", b"auth",
    b"shared", b"subscription", b"account", b"storage", b"license", b"webhook", b"hmac",
    b"jwt", b"admin", b"write", b"server",
];

const MAX_WORDS: usize = 16;

/// Splits a key name into words: at non-alphanumerics, `camelCase` humps, acronym ends
/// (`AWSSecret` → `AWS`, `Secret`) and letter/digit changes.
fn words(key: &[u8]) -> ([(usize, usize); MAX_WORDS], usize) {
    let mut out = [(0, 0); MAX_WORDS];
    let mut n = 0;
    let mut start: Option<usize> = None;
    for (j, &c) in key.iter().enumerate() {
        let alnum = c.is_ascii_alphanumeric();
        let split = start.is_some() && alnum && {
            let p = key[j - 1];
            (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || (p.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && key.get(j + 1).is_some_and(u8::is_ascii_lowercase))
                || (p.is_ascii_digit() != c.is_ascii_digit())
        };
        if (!alnum || split)
            && let Some(s) = start.take()
            && n < MAX_WORDS
        {
            out[n] = (s, j);
            n += 1;
        }
        if alnum && start.is_none() {
            start = Some(j);
        }
    }
    if let Some(s) = start
        && n < MAX_WORDS
    {
        out[n] = (s, key.len());
        n += 1;
    }
    (out, n)
}

fn ends_with_ic(w: &[u8], suffix: &[u8]) -> bool {
    w.len() >= suffix.len() && w[w.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

fn eq_ic(w: &[u8], x: &[u8]) -> bool {
    w.eq_ignore_ascii_case(x)
}

fn is_password_word(w: &[u8], only: bool) -> bool {
    ends_with_ic(w, b"password")
        || ends_with_ic(w, b"passwd")
        || ends_with_ic(w, b"passphrase")
        || eq_ic(w, b"pwd")
        || (!only && (eq_ic(w, b"pass") || eq_ic(w, b"pw")))
}

/// Classifies a key name; `None` when it does not name a secret.
pub(super) fn classify(key: &[u8]) -> Option<(Class, usize)> {
    let (ws, n) = words(key);
    if n == 0 {
        return None;
    }
    let w = |k: usize| &key[ws[k].0..ws[k].1];
    let last = w(n - 1);
    if NOT_SECRET_LAST.iter().any(|x| eq_ic(last, x)) {
        return None;
    }
    if eq_ic(last, b"authorization") {
        return Some((Class::Authorization, 13));
    }
    if eq_ic(last, b"auth") {
        return Some((Class::Auth, 13));
    }
    let has = |x: &[u8]| (0..n).any(|k| eq_ic(w(k), x));
    let mut class = None;
    for k in 0..n {
        let word = w(k);
        if is_password_word(word, n == 1) {
            class = Some(Class::Password);
            continue;
        }
        let glued = GLUED_KEYS.iter().any(|g| eq_ic(word, g));
        let qualified_key =
            eq_ic(word, b"key") && k > 0 && KEY_QUALIFIERS.iter().any(|q| eq_ic(w(k - 1), q));
        let secretish = ends_with_ic(word, b"secret") || ends_with_ic(word, b"token");
        if secretish && k > 0 && NOT_SECRET_BEFORE.iter().any(|x| eq_ic(w(k - 1), x)) {
            continue;
        }
        if secretish || glued || qualified_key {
            class = class.or(Some(Class::Secret));
        }
    }
    let class = class?;
    let kind = if class == Class::Password {
        0
    } else if has(b"client") && has(b"secret") || (0..n).any(|k| eq_ic(w(k), b"clientsecret")) {
        6
    } else if has(b"webhook") && has(b"secret") {
        11
    } else if contains_ignore_case(key, b"aws") && contains_ignore_case(key, b"secret") {
        10
    } else if (has(b"api") && has(b"key")) || has(b"apikey") {
        1
    } else if (has(b"private") && has(b"key")) || has(b"privatekey") {
        8
    } else if (has(b"secret") && has(b"key")) || has(b"secretkey") {
        7
    } else if (has(b"access") && has(b"key")) || has(b"accesskey") {
        9
    } else if has(b"signing") && has(b"key") {
        12
    } else if (has(b"access") && has(b"token")) || has(b"accesstoken") {
        3
    } else if (has(b"auth") && has(b"token")) || has(b"authtoken") {
        4
    } else if (0..n).any(|k| ends_with_ic(w(k), b"token")) {
        2
    } else if (0..n).any(|k| ends_with_ic(w(k), b"secret")) {
        5
    } else {
        7
    };
    Some((class, kind))
}

fn provider_of(key: &[u8]) -> Option<&'static str> {
    PROVIDERS
        .iter()
        .find(|(needle, _)| contains_ignore_case(key, needle))
        .map(|&(_, p)| p)
}

/// References to where a secret lives, templates and code: not the secret itself.
/// Parentheses mark a call in an unquoted value, but are just characters inside quotes.
pub(super) fn is_reference(v: &[u8], quoted: bool) -> bool {
    const MARKERS: [&[u8]; 20] = [
        b"${",
        b"{{",
        b"}}",
        b"process.env",
        b"os.environ",
        b"getenv",
        b"env[",
        b"env.",
        b"secrets.",
        b"vars.",
        b"vault:",
        b"arn:",
        b"op://",
        b"keyvault",
        b"ssm:",
        b"file:",
        b"://",
        b"::",
        b"->",
        b"!ref",
    ];
    let call = !quoted && v.iter().any(|&c| c == b'(' || c == b')');
    let path = (v.starts_with(b"/") || v.starts_with(b"./") || v.starts_with(b"~/"))
        && v.iter().all(|&c| !c.is_ascii_uppercase());
    let file = [
        &b".pem"[..],
        b".key",
        b".json",
        b".txt",
        b".env",
        b".p12",
        b".pfx",
        b".crt",
        b".yaml",
        b".yml",
        b".toml",
        b".gpg",
    ]
    .iter()
    .any(|ext| ends_with_ic(v, ext));
    // `%VAR%` (Windows) and `%s` (printf) are references; `%2B…` is percent-encoding.
    let percent = v.first() == Some(&b'%') && (v.len() <= 3 || v.ends_with(b"%"));
    // YAML anchors, aliases and tags (`&a`, `*a`, `!vault`) exist only outside quotes.
    let yaml = !quoted && matches!(v.first(), Some(b'@' | b'&' | b'*' | b'#' | b'!'));
    call || percent
        || yaml
        || matches!(v.first(), Some(b'$' | b'{' | b'[' | b'<' | b'\\'))
        || path
        || file
        || MARKERS.iter().any(|m| contains_ignore_case(v, m))
}

/// A literal, not a name: names are letters with `_ . - :` and no digit (`config.password`,
/// `GITHUB_TOKEN`, `my-secret-name`), unless the letters change case like random output.
fn identifier_like(v: &[u8]) -> bool {
    if v.iter().any(u8::is_ascii_digit) {
        return false;
    }
    let letters_only = v.iter().all(u8::is_ascii_alphabetic);
    let changes = v
        .windows(2)
        .filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase())
        .count();
    let random_letters = letters_only && v.len() >= 20 && changes * 10 >= v.len() * 3;
    !random_letters
        && v.iter()
            .all(|&c| c.is_ascii_alphabetic() || matches!(c, b'_' | b'.' | b'-' | b':' | b'/'))
}

/// Whether a literal value assigned to a secret-named key is a real-looking secret.
/// `relaxed` (the key names a provider) accepts lower entropy: hex keys and UUIDs.
pub(super) fn value_is_secret(v: &[u8], quoted: bool, class: Class, relaxed: bool) -> bool {
    // Cheapest first: most candidates are too short to be a credential.
    if v.len() < if class == Class::Password { 8 } else { 16 } {
        return false;
    }
    // A JWT is judged by its own rule, which knows the documented examples.
    let jwt = v.starts_with(b"eyJ") && v.iter().filter(|&&c| c == b'.').count() == 2;
    // Dates and times (`2024-06-13T10:00:00Z`) are not secrets either.
    let date = v.len() >= 10
        && v[..4].iter().all(u8::is_ascii_digit)
        && v[4] == b'-'
        && v[5..7].iter().all(u8::is_ascii_digit)
        && v[7] == b'-';
    if v.is_empty()
        || jwt
        || date
        || is_reference(v, quoted)
        || looks_placeholder(v)
        || v.iter().any(|c| c.is_ascii_whitespace())
        || identifier_like(v)
        || v.iter().all(|c| c.is_ascii_digit() || *c == b'.')
    {
        return false;
    }
    let has_digit = v.iter().any(u8::is_ascii_digit);
    let has_alpha = v.iter().any(u8::is_ascii_alphabetic);
    match class {
        Class::Password => {
            !weak_password(v)
                && ((v.len() >= 8 && char_classes(v) >= 3)
                    || (v.len() >= 12 && char_classes(v) >= 2 && entropy(v) >= 3.0))
        }
        _ => {
            let floor = if relaxed { 2.5 } else { 3.0 };
            v.len() >= 16
                && v.len() <= 512
                && entropy(v) >= floor
                && has_alpha
                && (has_digit || !identifier_like(v))
        }
    }
}

/// Start and end of the value after an assignment operator ending at `from`, and whether
/// it was quoted. Unquoted values end at whitespace or a delimiter.
pub(super) fn value_at(b: &[u8], from: usize) -> Option<(usize, usize, bool)> {
    let mut v = from;
    while v < b.len() && v - from < 16 && matches!(b[v], b' ' | b'\t') {
        v += 1;
    }
    let q = *b.get(v)?;
    if matches!(q, b'"' | b'\'' | b'`') {
        let start = v + 1;
        let len = b
            .get(start..)?
            .iter()
            .take(513)
            .take_while(|&&c| c != q && c != b'\n')
            .count();
        return (b.get(start + len) == Some(&q)).then_some((start, start + len, true));
    }
    // An unquoted value also ends at `=`, `:` and `&` (the next assignment, a query string),
    // so `a=b=c=…` is not re-read from every `=`; base64 padding (`…==`) stays.
    let stop = |c: u8| {
        !c.is_ascii_graphic()
            || matches!(
                c,
                b',' | b';' | b')' | b']' | b'}' | b'"' | b'\'' | b'`' | b':' | b'&'
            )
    };
    let limit = b.len().min(v + 512);
    let mut end = v;
    while end < limit && !stop(b[end]) {
        if b[end] == b'=' {
            let pad = b[end..limit].iter().take_while(|&&c| c == b'=').count();
            if b.get(end + pad).is_none_or(|&c| stop(c)) {
                end += pad;
            }
            break;
        }
        end += 1;
    }
    if end > v && b[end - 1] == b'.' {
        end -= 1;
    }
    Some((v, end, false))
}

/// `KEY = VALUE`, `KEY: VALUE`, `"KEY": "VALUE"`, `KEY := VALUE`, `KEY => VALUE` with the
/// operator at `op` (`=` or `:`).
pub(super) fn assignment_at(b: &[u8], op: usize) -> Option<(Kind, usize)> {
    let c = b[op];
    let prev = op.checked_sub(1).map(|k| b[k]);
    let next = b.get(op + 1).copied();
    if matches!(prev, Some(b'=' | b'!' | b'<' | b'>' | b':')) || matches!(next, Some(b'~')) {
        return None;
    }
    let from = match (c, next) {
        (b':', Some(b'=')) | (b'=', Some(b'>')) => op + 2,
        (b':', Some(b':')) | (b'=', Some(b'=')) => return None,
        _ => op + 1,
    };
    // The key: back over spaces and a closing quote, then up to 64 name characters.
    let mut k = op;
    while k > 0 && op - k < 4 && matches!(b[k - 1], b' ' | b'\t') {
        k -= 1;
    }
    if k > 0 && matches!(b[k - 1], b'"' | b'\'') {
        k -= 1;
    }
    let key_end = k;
    while k > 0
        && key_end - k < 64
        && (b[k - 1].is_ascii_alphanumeric() || b"_.-".contains(&b[k - 1]))
    {
        k -= 1;
    }
    let key = &b[k..key_end];
    if !key.last().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    // The value first: no credential is shorter than 5 bytes (`Basic`/`Bearer` come with
    // theirs), and most candidates stop here before the key is classified.
    let (vs, ve, quoted) = value_at(b, from)?;
    if ve - vs < 5 {
        return None;
    }
    let (class, kind) = classify(key)?;
    if class == Class::Authorization {
        return authorization(b, vs, ve);
    }
    if let Some(hit) = token_at(b, vs) {
        return Some(hit);
    }
    let v = &b[vs..ve];
    if class == Class::Auth
        && let Some(hit) = encoded_credentials(v)
    {
        return Some((hit, ve));
    }
    if value_is_secret(v, quoted, class, false) {
        let kind = match provider_of(key) {
            Some(p) => (p, KINDS[kind].0),
            None => ("", KINDS[kind].1),
        };
        return Some((kind, ve));
    }
    // A key naming the provider makes lower-entropy values (hex keys, UUIDs) count.
    if class != Class::Password && value_is_secret(v, quoted, class, true) {
        return provider_of(key).map(|p| ((p, KINDS[kind].0), ve));
    }
    None
}

/// `base64(user:password)`, as in Docker's `auths` or an HTTP Basic header.
fn encoded_credentials(v: &[u8]) -> Option<Kind> {
    let n = v.iter().take_while(|&&c| is(c, B64 | EQ)).count();
    if n < 8 || n != v.len() {
        return None;
    }
    let mut out = [0u8; 192];
    let m = b64_decode(v, &mut out);
    let text = &out[..m];
    let colon = text.iter().position(|&c| c == b':')?;
    let (user, pass) = (&text[..colon], &text[colon + 1..]);
    let printable = text.iter().all(|c| c.is_ascii_graphic() || *c == b' ');
    (printable && !user.is_empty() && !weak_password(pass) && pass != user)
        .then_some(("", "base64-encoded username and password"))
}

/// `Authorization: Basic <base64>` / `Bearer <token>` / `token <token>`: the scheme, then
/// the credential (inside the quoted value, or the next word when unquoted).
fn authorization(b: &[u8], vs: usize, ve: usize) -> Option<(Kind, usize)> {
    let v = &b[vs..ve];
    let scheme = [&b"Basic"[..], b"Bearer", b"Token", b"Bot"]
        .into_iter()
        .find(|s| at_ignore_case(v, 0, s) && v.get(s.len()).is_none_or(|&c| c == b' '));
    let Some(s) = scheme else {
        return authorization_token(b, vs, ve, false);
    };
    let mut ts = vs + s.len();
    while ts < b.len() && ts - vs < s.len() + 8 && b[ts] == b' ' {
        ts += 1;
    }
    let te = ts
        + b[ts..]
            .iter()
            .take(1024)
            .take_while(|&&c| c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'`'))
            .count();
    authorization_token(b, ts, te, s.eq_ignore_ascii_case(b"Basic"))
}

fn authorization_token(b: &[u8], ts: usize, te: usize, basic: bool) -> Option<(Kind, usize)> {
    let t = &b[ts..te];
    if basic {
        return encoded_credentials(t)
            .map(|_| (("", "Basic credentials in an Authorization header"), te));
    }
    if let Some(hit) = token_at(b, ts) {
        return Some(hit);
    }
    value_is_secret(t, false, Class::Secret, false)
        .then_some((("", "bearer token in an Authorization header"), te))
}

/// The catalogue entries contributed by this module.
pub(super) fn kinds() -> impl Iterator<Item = Kind> {
    let generic = KINDS.iter().map(|&(_, g)| ("", g));
    let providers = PROVIDERS
        .iter()
        .map(|&(_, p)| (p, "API key, token, secret or password"));
    let other = [
        ("", "base64-encoded username and password"),
        ("", "Basic credentials in an Authorization header"),
        ("", "bearer token in an Authorization header"),
    ];
    generic.chain(providers).chain(other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(key: &str) -> Option<(Class, &'static str)> {
        classify(key.as_bytes()).map(|(c, k)| (c, KINDS[k].0))
    }

    #[test]
    fn key_names() {
        use Class::*;
        for (key, want) in [
            ("DB_PASSWORD", Some((Password, "password"))),
            ("dbPassword", Some((Password, "password"))),
            ("PGPASSWORD", Some((Password, "password"))),
            ("root_pass", Some((Password, "password"))),
            ("api_key", Some((Secret, "API key"))),
            ("apiKey", Some((Secret, "API key"))),
            ("X-Api-Key", Some((Secret, "API key"))),
            ("AWS_SECRET_ACCESS_KEY", Some((Secret, "secret access key"))),
            ("AWSSecretKey", Some((Secret, "secret access key"))),
            ("client_secret", Some((Secret, "client secret"))),
            ("SECRET_KEY_BASE", Some((Secret, "secret key"))),
            ("GITHUB_TOKEN", Some((Secret, "token"))),
            ("access_token", Some((Secret, "access token"))),
            ("_authToken", Some((Secret, "auth token"))),
            ("private_key", Some((Secret, "private key"))),
            ("auth", Some((Auth, "credential"))),
            ("Authorization", Some((Authorization, "credential"))),
            ("api_key_header", None),
            ("password_min_length", None),
            ("token_url", None),
            ("max_tokens", None),
            ("csrf_token", None),
            ("next_page_token", None),
            ("nextToken", None),
            ("key", None),
            ("pass", None),
            ("bypass", None),
            ("author", None),
            ("tokenizer", None),
            ("secrets", None),
            ("monkey", None),
        ] {
            assert_eq!(class(key), want, "{key}");
        }
    }

    #[test]
    fn values() {
        use Class::*;
        for (v, class, want) in [
            ("hT9x!kQ2vL7pZ4mW", Password, true),
            ("Zq81!mmA", Password, true),
            ("hunter2", Password, false),
            ("password123", Password, false),
            ("changeme", Password, false),
            ("${DB_PASSWORD}", Password, false),
            ("config.db.password", Password, false),
            ("8f3Kd92LmQx7Zp1Vb6Ny", Secret, true),
            ("d41d8cd98f00b204e9800998ecf8427e", Secret, true),
            ("GITHUB_TOKEN", Secret, false),
            ("my-secret-name-here", Secret, false),
            ("get_token()", Secret, false),
            ("/run/secrets/api_key", Secret, false),
            ("secrets/api.key", Secret, false),
            ("qWeRtYuIoPaSdFgHjKlZxCv", Secret, true),
            ("AccessTokenProviderFactory", Secret, false),
        ] {
            assert_eq!(
                value_is_secret(v.as_bytes(), false, class, false),
                want,
                "{v}"
            );
        }
    }

    #[test]
    fn words_split_acronyms_humps_and_digits() {
        let key = b"AWSSecretKey2_api-Token";
        let (ws, n) = words(key);
        let got: Vec<&str> = ws[..n]
            .iter()
            .map(|&(s, e)| std::str::from_utf8(&key[s..e]).unwrap())
            .collect();
        assert_eq!(got, ["AWS", "Secret", "Key", "2", "api", "Token"]);
    }
}
