//! Secret scanning for everything helix writes to git: `validate_new_entry` (`helix store`,
//! MCP `store`, the server's POST) and `helix check` call [`find_secrets`]; docs/secrets.md.

mod assign;
mod blocks;
mod cli;
mod formats;
mod rules;
mod text;

use text::{ALNUM, Kind, US, at, is, is_token_char, word_at};

/// Something in a text that looks like a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretFinding {
    /// Who issues it (`"GitLab"`); empty for generic kinds (`"hard-coded password"`).
    pub provider: &'static str,
    /// What it is (`"personal access token"`).
    pub kind: &'static str,
    /// 1-based line within the scanned text.
    pub line: u32,
}

impl SecretFinding {
    /// `"a GitLab personal access token"`, `"an AWS access key id"`.
    pub fn description(&self) -> String {
        describe(self.provider, self.kind)
    }
}

/// `provider kind` with its indefinite article: `"an AWS access key id"`,
/// `"a hard-coded password"`, `"an npm access token"`.
pub fn describe(provider: &str, kind: &str) -> String {
    let phrase = if provider.is_empty() {
        kind.to_string()
    } else {
        format!("{provider} {kind}")
    };
    format!("{} {phrase}", article(&phrase))
}

/// "a" or "an" by how the first word is spoken: acronyms by their first letter's name
/// ("an RSA", "a PGP", "a URL"), other words by their first letter ("an OpenSSH").
fn article(phrase: &str) -> &'static str {
    let word = phrase.split([' ', '-']).next().unwrap_or("");
    let bytes = word.as_bytes();
    let Some(&first) = bytes.first() else {
        return "a";
    };
    let acronym = bytes.len() >= 2
        && bytes
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        || word == "npm"
        || (first == b'x' && bytes.get(1).is_some_and(u8::is_ascii_uppercase));
    if acronym {
        return if b"AEFHILMNORSXaefhilmnorsx".contains(&first) {
            "an"
        } else {
            "a"
        };
    }
    let lower = word.to_ascii_lowercase();
    let vowel = matches!(first.to_ascii_lowercase(), b'a' | b'e' | b'i' | b'o' | b'u');
    let spoken_consonant = ["uni", "use", "usu", "eu", "one"]
        .iter()
        .any(|p| lower.starts_with(p));
    if vowel && !spoken_consonant {
        "an"
    } else {
        "a"
    }
}

/// The first credential in `text`, if any.
pub fn find_secret(text: &str) -> Option<SecretFinding> {
    find_secrets(text).next()
}

/// Every credential in `text`, in order (a multi-line private key counts once).
pub fn find_secrets(text: &str) -> Secrets<'_> {
    Secrets {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        st: LineState {
            first: true,
            ..LineState::default()
        },
    }
}

/// Everything [`find_secrets`] can report, as `(provider, kind)`; for documentation and
/// tests. Provider names from key names (`DATADOG_API_KEY=…`) come with a summary kind.
pub fn catalogue() -> Vec<(&'static str, &'static str)> {
    let mut all: Vec<_> = rules::kinds()
        .chain(assign::kinds())
        .chain(cli::KINDS.iter().copied())
        .collect();
    let mut seen = std::collections::HashSet::new();
    all.retain(|k| seen.insert(*k));
    all
}

/// What the scan knows about the current line.
#[derive(Debug, Clone, Copy, Default)]
struct LineState {
    /// Only blanks so far: the next word is the line's first.
    first: bool,
    /// The line (or the one it continues with `\`) runs `curl`.
    curl: bool,
    /// This line is part of a `.netrc` block (it starts with `machine`, `default`, or a
    /// netrc keyword right after such lines).
    netrc_line: bool,
    netrc_block: bool,
    /// `login` was seen on this netrc line.
    login: bool,
    /// `docker`/`podman` was seen (their `login` takes `-p`).
    docker: bool,
    /// The password option of a command seen on this line.
    short_flag: cli::ShortFlag,
}

/// Iterator over the credentials in a text; see [`find_secrets`].
#[derive(Debug, Clone)]
pub struct Secrets<'a> {
    b: &'a [u8],
    i: usize,
    line: u32,
    st: LineState,
}

// One pass over the bytes. At every token boundary the first byte selects the few formats
// that can start there (`rules`, `formats`); `=` and `:` trigger the context rules
// (`assign`), `://` the URL rule and `-----BEGIN` the private-key rule (`blocks`), `-` the
// command-line rules (`cli`). Each matcher looks ahead a bounded distance, or over a run no
// later matcher rescans, so the cost is linear in the input whatever it holds
// (`benches/index.rs` measures the worst repeated triggers). Findings hold only static
// strings: the value is never copied anywhere.
impl Iterator for Secrets<'_> {
    type Item = SecretFinding;

    fn next(&mut self) -> Option<SecretFinding> {
        let b = self.b;
        while self.i < b.len() {
            let i = self.i;
            let c = b[i];
            if c == b'\n' {
                self.newline(i);
                self.i += 1;
                continue;
            }
            if let Some(((provider, kind), end)) = self.check(i) {
                let line = self.line;
                self.skip_to(end.max(i + 1));
                return Some(SecretFinding {
                    provider,
                    kind,
                    line,
                });
            }
            if !matches!(c, b' ' | b'\t' | b'\r') {
                self.st.first = false;
            }
            self.i += 1;
            // Inside a word nothing starts (no boundary; `-`, `:`, `=` are not skipped):
            // skip to its end, stopping at `Q`, which may open an Entra ID secret's `Q~`.
            if is(c, ALNUM | US) {
                while self.i < b.len() && is(b[self.i], ALNUM | US) && b[self.i] != b'Q' {
                    self.i += 1;
                }
            }
        }
        None
    }
}

impl Secrets<'_> {
    fn check(&mut self, i: usize) -> Option<(Kind, usize)> {
        let b = self.b;
        let c = b[i];
        let hit = match c {
            b'-' => blocks::private_key_at(b, i),
            b':' if at(b, i + 1, b"//") => blocks::url_credentials_at(b, i),
            b':' | b'=' => assign::assignment_at(b, i),
            b'Q' if b.get(i + 1) == Some(&b'~') => formats::azure_client_secret(b, i),
            _ => None,
        };
        if hit.is_some() {
            return hit;
        }
        if i > 0 && is_token_char(b[i - 1]) {
            return None;
        }
        if c == b'-' {
            let hit = if self.st.curl {
                cli::curl_user(b, i)
            } else {
                None
            };
            return hit
                .or_else(|| cli::long_flag(b, i))
                .or_else(|| cli::short_flag(b, i, self.st.short_flag));
        }
        if !c.is_ascii_alphanumeric() {
            return None;
        }
        if c.is_ascii_lowercase()
            && let Some(hit) = self.word(i)
        {
            return Some(hit);
        }
        rules::token_at(b, i)
    }

    /// Line context from the word starting at `i`: `curl`, and the `.netrc` keywords.
    fn word(&mut self, i: usize) -> Option<(Kind, usize)> {
        let b = self.b;
        // netrc keywords are lowercase; prose rarely starts a line with them.
        let kw =
            |w: &[u8]| at(b, i, w) && !b.get(i + w.len()).is_some_and(u8::is_ascii_alphanumeric);
        let st = &mut self.st;
        if st.first {
            if kw(b"machine") || kw(b"default") {
                st.netrc_line = true;
                st.netrc_block = true;
            } else if st.netrc_block
                && (kw(b"login") || kw(b"password") || kw(b"account") || kw(b"macdef"))
            {
                st.netrc_line = true;
            } else {
                st.netrc_block = false;
            }
        }
        // Commands whose options carry passwords; one comparison for most words.
        let mysql = || {
            [&b"mysql"[..], b"mysqldump", b"mysqladmin", b"mariadb"]
                .iter()
                .any(|w| word_at(b, i, w))
        };
        match b[i] {
            b'c' if word_at(b, i, b"curl") => st.curl = true,
            b'm' if mysql() => st.short_flag = cli::ShortFlag::MysqlP,
            b's' if word_at(b, i, b"sshpass") => st.short_flag = cli::ShortFlag::SpaceP,
            b'l' if st.docker && kw(b"login") => st.short_flag = cli::ShortFlag::SpaceP,
            b'd' if word_at(b, i, b"docker") => st.docker = true,
            b'p' if word_at(b, i, b"podman") => st.docker = true,
            b'r' if at(b, i, b"redis-cli") => st.short_flag = cli::ShortFlag::RedisA,
            _ => {}
        }
        if st.netrc_line {
            if kw(b"login") {
                st.login = true;
            } else if kw(b"password") && (st.login || st.first) {
                return cli::netrc_password(b, i);
            }
        }
        None
    }

    fn newline(&mut self, at: usize) {
        let b = self.b;
        let continued =
            at > 0 && (b[at - 1] == b'\\' || (b[at - 1] == b'\r' && at > 1 && b[at - 2] == b'\\'));
        self.line = self.line.saturating_add(1);
        self.st = LineState {
            first: true,
            curl: self.st.curl && continued,
            netrc_block: self.st.netrc_block,
            ..LineState::default()
        };
    }

    fn skip_to(&mut self, end: usize) {
        let end = end.min(self.b.len());
        while self.i < end {
            if self.b[self.i] == b'\n' {
                self.newline(self.i);
            } else {
                self.st.first = false;
            }
            self.i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_follow_pronunciation() {
        for (provider, kind, want) in [
            ("AWS", "access key id", "an AWS access key id"),
            ("npm", "access token", "an npm access token"),
            (
                "GitLab",
                "personal access token",
                "a GitLab personal access token",
            ),
            (
                "",
                "URL with an embedded password",
                "a URL with an embedded password",
            ),
            ("", "encrypted private key", "an encrypted private key"),
            ("RSA", "private key", "an RSA private key"),
            ("PGP", "private key block", "a PGP private key block"),
            ("OpenAI-style", "API key", "an OpenAI-style API key"),
            ("xAI", "API key", "an xAI API key"),
            ("age", "secret key", "an age secret key"),
            (
                "1Password",
                "service account token",
                "a 1Password service account token",
            ),
            ("", ".netrc password", "a .netrc password"),
            (
                "SSH2",
                "encrypted private key",
                "an SSH2 encrypted private key",
            ),
            ("", "hard-coded password", "a hard-coded password"),
            (
                "Hugging Face",
                "access token",
                "a Hugging Face access token",
            ),
        ] {
            assert_eq!(describe(provider, kind), want);
        }
        // Every catalogue entry reads grammatically by these rules (no "a AWS").
        for (p, k) in catalogue() {
            let d = describe(p, k);
            assert!(
                !d.starts_with("a A") && !d.starts_with("a E") && !d.starts_with("a O"),
                "{d}"
            );
        }
    }

    #[test]
    fn lines_count_across_skipped_blocks() {
        let pem = format!(
            "intro\n-----BEGIN RSA {}-----\n{}\n{}\n-----END RSA PRIVATE KEY-----\nthen\nDB_PASSWORD=hT9x!kQ2vL7pZ4mW\n",
            "PRIVATE KEY",
            "c3ludGhldGljIHRlc3Qga2V5IG1hdGVyaWFsLCBub3QgYSBrZXk6IGhlbGl4IGZpeHR1cmVzISE=",
            "c3ludGhldGljIHRlc3Qga2V5IG1hdGVyaWFsLCBub3QgYSBrZXk6IGhlbGl4IGZpeHR1cmVzISE="
        );
        let found: Vec<_> = find_secrets(&pem).collect();
        assert_eq!(
            found,
            [
                SecretFinding {
                    provider: "RSA",
                    kind: "private key",
                    line: 2
                },
                SecretFinding {
                    provider: "",
                    kind: "hard-coded password",
                    line: 7
                }
            ]
        );
    }
}
