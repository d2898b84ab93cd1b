//! The secret scanner the current one replaced (nine rules in `validate.rs`, commit
//! 0d7ac13), kept only as the baseline of the `secrets` benches. Not used by the crate.

const PRIVATE_KEY: &str = "private key";
const AWS_KEY: &str = "AWS access key id";
const GITHUB_TOKEN: &str = "GitHub token";
const SLACK_TOKEN: &str = "Slack token";
const API_KEY: &str = "OpenAI/Anthropic API key";
const GOOGLE_KEY: &str = "Google API key";
const STRIPE_KEY: &str = "Stripe secret key";
const JWT: &str = "JSON Web Token";
const ASSIGNMENT: &str = "password or secret assignment";

/// Finds the first thing in `text` that looks like a credential: private key blocks, AWS
/// access key ids, GitHub/Slack/OpenAI/Anthropic/Google/Stripe tokens, JWTs, and
/// `password=`/`secret=`/`api_key=`/`token=` assignments of long random-looking values.
/// What the old scanner found: kind and 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretFinding {
    pub kind: &'static str,
    pub line: u32,
}

pub fn find_secret(text: &str) -> Option<SecretFinding> {
    for (i, line) in text.split('\n').enumerate() {
        if let Some(kind) = scan_line(line.as_bytes()) {
            return Some(SecretFinding {
                kind,
                line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            });
        }
    }
    None
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of the run of bytes satisfying `f` starting at `i`.
fn run(b: &[u8], i: usize, f: impl Fn(u8) -> bool) -> usize {
    b.get(i..)
        .map_or(0, |s| s.iter().take_while(|&&c| f(c)).count())
}

fn starts_with_at(b: &[u8], i: usize, pat: &[u8]) -> bool {
    b.get(i..i + pat.len()) == Some(pat)
}

fn scan_line(b: &[u8]) -> Option<&'static str> {
    if let Some(p) = find(b, b"-----BEGIN ")
        && find(&b[p..], b"PRIVATE KEY-----").is_some()
    {
        return Some(PRIVATE_KEY);
    }
    for i in 0..b.len() {
        // Every pattern starts at a token boundary.
        if i > 0 && is_token_char(b[i - 1]) {
            continue;
        }
        if let Some(kind) = token_at(b, i) {
            return Some(kind);
        }
    }
    assignment(b)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn token_at(b: &[u8], i: usize) -> Option<&'static str> {
    let alnum = |c: u8| c.is_ascii_alphanumeric();
    let upper_digit = |c: u8| c.is_ascii_uppercase() || c.is_ascii_digit();
    let end_ok = |j: usize| b.get(j).is_none_or(|&c| !c.is_ascii_alphanumeric());
    match b[i] {
        b'A' => {
            if (starts_with_at(b, i, b"AKIA") || starts_with_at(b, i, b"ASIA"))
                && run(b, i + 4, upper_digit) == 16
                && end_ok(i + 20)
            {
                return Some(AWS_KEY);
            }
            if starts_with_at(b, i, b"AIza") && run(b, i + 4, is_token_char) >= 35 {
                return Some(GOOGLE_KEY);
            }
        }
        b'g' => {
            for prefix in [
                &b"ghp_"[..],
                b"gho_",
                b"ghu_",
                b"ghs_",
                b"ghr_",
                b"github_pat_",
            ] {
                if starts_with_at(b, i, prefix)
                    && run(b, i + prefix.len(), |c| alnum(c) || c == b'_') >= 20
                {
                    return Some(GITHUB_TOKEN);
                }
            }
        }
        b'x' if starts_with_at(b, i, b"xox")
            && matches!(b.get(i + 3), Some(b'a' | b'b' | b'p' | b'r' | b's'))
            && b.get(i + 4) == Some(&b'-')
            && run(b, i + 5, |c| alnum(c) || c == b'-') >= 10 =>
        {
            return Some(SLACK_TOKEN);
        }
        b's' => {
            if starts_with_at(b, i, b"sk_live_") && run(b, i + 8, alnum) >= 10 {
                return Some(STRIPE_KEY);
            }
            if starts_with_at(b, i, b"sk-") {
                let n = run(b, i + 3, is_token_char);
                let tok = &b[i + 3..i + 3 + n];
                if n >= 20
                    && tok.iter().any(u8::is_ascii_digit)
                    && tok.iter().any(u8::is_ascii_alphabetic)
                    && mixed_enough(tok)
                {
                    return Some(API_KEY);
                }
            }
        }
        b'r' if starts_with_at(b, i, b"rk_live_") && run(b, i + 8, alnum) >= 10 => {
            return Some(STRIPE_KEY);
        }
        b'e' if starts_with_at(b, i, b"eyJ") => {
            let b64 = |c: u8| alnum(c) || c == b'_' || c == b'-';
            let s1 = run(b, i, b64);
            if s1 >= 10 && b.get(i + s1) == Some(&b'.') {
                let j = i + s1 + 1;
                let s2 = run(b, j, b64);
                if s2 >= 10 && b.get(j + s2) == Some(&b'.') && run(b, j + s2 + 1, b64) >= 10 {
                    return Some(JWT);
                }
            }
        }
        _ => {}
    }
    None
}

/// Whether an `sk-` token looks generated rather than like a kebab-case name
/// (`sk-learn-...`): it has an uppercase letter or at least one digit per 12 characters.
fn mixed_enough(tok: &[u8]) -> bool {
    tok.iter().any(u8::is_ascii_uppercase)
        || tok.iter().filter(|c| c.is_ascii_digit()).count() * 12 >= tok.len()
}

/// Key names whose long random-looking value is treated as a secret.
const SECRET_KEY_SUFFIXES: [&str; 11] = [
    "password",
    "passwd",
    "pwd",
    "secret",
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_key",
    "private_key",
    "auth",
];

/// `KEY = VALUE`, `KEY: VALUE`, `"KEY": "VALUE"` where KEY ends in a secret-ish word and
/// VALUE is a long, random-looking literal (not code like `get_token()` or `${VAR}`).
fn assignment(b: &[u8]) -> Option<&'static str> {
    let key_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.';
    for (i, &c) in b.iter().enumerate() {
        if c != b'=' && c != b':' {
            continue;
        }
        // `==`, `:=`/`::` are comparisons, walrus or paths; `=>`, `=~` neither.
        if b.get(i + 1)
            .is_some_and(|&n| n == b'=' || n == b':' || n == b'>' || n == b'~')
            || (i > 0 && matches!(b[i - 1], b'=' | b'!' | b'<' | b'>' | b':'))
        {
            continue;
        }
        // Key: walk back over optional closing quote and spaces.
        let mut k = i;
        while k > 0 && b[k - 1] == b' ' {
            k -= 1;
        }
        if k > 0 && matches!(b[k - 1], b'"' | b'\'') {
            k -= 1;
        }
        let key_end = k;
        while k > 0 && key_char(b[k - 1]) {
            k -= 1;
        }
        let key = String::from_utf8_lossy(&b[k..key_end]).to_ascii_lowercase();
        if !SECRET_KEY_SUFFIXES.iter().any(|s| key.ends_with(s)) {
            continue;
        }
        // Value: skip spaces and an opening quote.
        let mut v = i + 1;
        while b.get(v) == Some(&b' ') {
            v += 1;
        }
        if matches!(b.get(v), Some(b'"' | b'\'' | b'`')) {
            v += 1;
        }
        // Bounded: values longer than `looks_random` accepts need not be measured, and an
        // unbounded run per `=` would make `a=a=a=…` quadratic.
        let n = b.get(v..).map_or(0, |rest| {
            rest.iter()
                .take(513)
                .take_while(|&&c| {
                    c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'`' | b',' | b';' | b')')
                })
                .count()
        });
        let value = &b[v..v + n];
        if looks_random(value) {
            return Some(ASSIGNMENT);
        }
    }
    None
}

fn looks_random(v: &[u8]) -> bool {
    if v.len() < 16 || v.len() > 512 {
        return false;
    }
    // Code and placeholders, not literals: calls, env lookups, templates, paths, URLs.
    if v.iter()
        .any(|c| matches!(c, b'(' | b'{' | b'<' | b'[' | b'$' | b'%' | b'*'))
        || v.starts_with(b"process.env")
        || v.windows(3).any(|w| w == b"://")
        || v.iter().filter(|&&c| c == b'/').count() > 2
    {
        return false;
    }
    let lower = v.iter().any(u8::is_ascii_lowercase);
    let upper = v.iter().any(u8::is_ascii_uppercase);
    let digit = v.iter().any(u8::is_ascii_digit);
    let classes = usize::from(lower) + usize::from(upper) + usize::from(digit);
    classes >= 2 && digit && entropy(v) >= 3.0
}

/// Shannon entropy in bits per byte.
fn entropy(v: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &c in v {
        counts[usize::from(c)] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * libm::log2(p)
        })
        .sum()
}
