//! The one tokenizer used for indexing and for queries, so both sides always agree.
//! Unicode-aware, lowercased, identifiers split into parts while the whole is kept.
//!
//! A run of letters and digits joined by `_ - . :` is one identifier. It is split on the
//! connectors and on camelCase boundaries into parts; when there is more than one part, the
//! parts joined without separators are emitted as well (`CachedEntry`, `cached_entry` and
//! `cached-entry` all give `cachedentry` + `cached` + `entry`). Letters and digits are not
//! split from each other (`sha256`, `utf8`, `ipv4` stay whole). CJK ideographs and kana are
//! one token per character. No stemming: see docs/benchmarks.md for the measurement.

use std::ops::Range;

/// Written into every artifact; bump on any change that alters the tokens of some text.
pub const TOKENIZER_VERSION: u32 = 1;

/// Tokens longer than this (hashes, base64 blobs) are dropped.
pub const MAX_TOKEN_BYTES: usize = 64;

/// How a token came out of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// A plain word or number: a run with a single part.
    Word,
    /// A whole multi-part identifier, separators removed (`cachedentry`).
    Compound,
    /// One part of a multi-part identifier (`cached`).
    Part,
}

/// One token with its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub kind: TokenKind,
}

/// English function words, plus contraction remnants (`don't` gives `don` + `t`).
/// Deliberately small: identifiers such as `if`, `for` or `use` matter in code knowledge.
/// A `match` compiles to a length switch plus a few compares: this runs once per token.
pub fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "about"
            | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "been"
            | "but"
            | "by"
            | "can"
            | "d"
            | "did"
            | "do"
            | "does"
            | "from"
            | "had"
            | "has"
            | "have"
            | "how"
            | "i"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "ll"
            | "m"
            | "me"
            | "my"
            | "of"
            | "on"
            | "or"
            | "our"
            | "re"
            | "s"
            | "so"
            | "t"
            | "than"
            | "that"
            | "the"
            | "their"
            | "them"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "those"
            | "to"
            | "too"
            | "us"
            | "ve"
            | "was"
            | "we"
            | "were"
            | "what"
            | "when"
            | "where"
            | "which"
            | "who"
            | "why"
            | "will"
            | "with"
            | "would"
            | "you"
            | "your"
    )
}

/// Tokenizes `text` into owned tokens. Convenience over [`tokenize_with`].
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    tokenize_with(text, |t, kind| {
        out.push(Token {
            text: t.to_owned(),
            kind,
        })
    });
    out
}

/// Calls `emit` for every token of `text`, in order. No allocation per token.
pub fn tokenize_with(text: &str, mut emit: impl FnMut(&str, TokenKind)) {
    tokenize_spans(text, |t, kind, _| emit(t, kind));
}

/// Like [`tokenize_with`], also passing the byte range of the run each token came from.
pub fn tokenize_spans(text: &str, mut emit: impl FnMut(&str, TokenKind, Range<usize>)) {
    tokenize_spans_until(text, |t, kind, span| {
        emit(t, kind, span);
        true
    });
}

/// Like [`tokenize_spans`], stopping after the run in which `emit` returns `false`.
pub fn tokenize_spans_until(
    text: &str,
    mut emit: impl FnMut(&str, TokenKind, Range<usize>) -> bool,
) {
    let go = std::cell::Cell::new(true);
    let mut emit = |t: &str, kind, span| {
        if go.get() {
            go.set(emit(t, kind, span));
        }
    };
    let mut scratch = Scratch::default();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && go.get() {
        let b = bytes[i];
        if b.is_ascii() {
            if b.is_ascii_alphanumeric() {
                i = run(text, i, &mut scratch, &mut emit);
            } else {
                i += 1;
            }
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if is_cjk(c) {
            let mut buf = [0u8; 4];
            emit(
                c.encode_utf8(&mut buf),
                TokenKind::Word,
                i..i + c.len_utf8(),
            );
            i += c.len_utf8();
        } else if c.is_alphanumeric() {
            i = run(text, i, &mut scratch, &mut emit);
        } else {
            i += c.len_utf8();
        }
    }
}

#[derive(Default)]
struct Scratch {
    /// Lowercased parts, back to back.
    parts: String,
    /// End offsets of each part in `parts`.
    ends: Vec<usize>,
    whole: String,
}

fn is_connector(c: char) -> bool {
    matches!(c, '_' | '-' | '.' | ':')
}

/// Combining diacritics (decomposed accents) belong to the word they follow; slugs drop
/// them. One definition, so slugs and tokens agree on what an accent is.
pub(crate) fn is_combining_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2FFFF) // extensions B..
}

/// Reads one identifier run starting at `start` (an alphanumeric char), emits its tokens and
/// returns the byte offset after it.
fn run(
    text: &str,
    start: usize,
    s: &mut Scratch,
    emit: &mut impl FnMut(&str, TokenKind, Range<usize>),
) -> usize {
    #[cfg(test)]
    let fast = !tests::FORCE_GENERAL.get();
    #[cfg(not(test))]
    let fast = true;
    if fast && let Some(after) = ascii_run(text, start, s, emit) {
        return after;
    }
    // Find the run's extent: alphanumerics, with connectors only between alphanumerics.
    let mut end = start;
    let mut pending_connector_from: Option<usize> = None;
    for (off, c) in text[start..].char_indices() {
        let at = start + off;
        if (c.is_alphanumeric() && !is_cjk(c)) || is_combining_mark(c) {
            pending_connector_from = None;
            end = at + c.len_utf8();
        } else if is_connector(c) {
            pending_connector_from.get_or_insert(at);
        } else {
            break;
        }
    }
    let after = pending_connector_from.map_or(end, |p| p.max(end));
    let word = &text[start..end];

    // Split into parts on connectors and camelCase boundaries, lowercasing as we go.
    s.parts.clear();
    s.ends.clear();
    let mut prev: Option<char> = None;
    let mut chars = word.chars().peekable();
    let mut all_numeric = true;
    while let Some(c) = chars.next() {
        if is_connector(c) {
            close_part(s);
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let next_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower);
            if boundary {
                close_part(s);
            }
        }
        if !c.is_numeric() {
            all_numeric = false;
        }
        if c.is_ascii() {
            s.parts.push(c.to_ascii_lowercase());
        } else {
            s.parts.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    close_part(s);

    emit_parts(s, all_numeric, start..end, emit);
    after
}

/// The common case, runs of ASCII only: byte-wise, no Unicode tables. `None` when the run
/// holds a non-ASCII character (the general path then handles the whole run).
fn ascii_run(
    text: &str,
    start: usize,
    s: &mut Scratch,
    emit: &mut impl FnMut(&str, TokenKind, Range<usize>),
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = start;
    let mut end = start;
    let mut pending_connector_from: Option<usize> = None;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_alphanumeric() {
            pending_connector_from = None;
            i += 1;
            end = i;
        } else if matches!(b, b'_' | b'-' | b'.' | b':') {
            pending_connector_from.get_or_insert(i);
            i += 1;
        } else if b >= 0x80 {
            return None;
        } else {
            break;
        }
    }
    let after = pending_connector_from.map_or(end, |p| p.max(end));
    let word = &bytes[start..end];
    s.parts.clear();
    s.ends.clear();
    let mut all_numeric = true;
    for (k, &b) in word.iter().enumerate() {
        if !b.is_ascii_alphanumeric() {
            close_part(s);
            continue;
        }
        if k > 0 {
            let p = word[k - 1];
            let next_lower = word.get(k + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = (p.is_ascii_lowercase() && b.is_ascii_uppercase())
                || (p.is_ascii_uppercase() && b.is_ascii_uppercase() && next_lower);
            if boundary {
                close_part(s);
            }
        }
        all_numeric &= b.is_ascii_digit();
        s.parts.push(b.to_ascii_lowercase() as char);
    }
    close_part(s);
    emit_parts(s, all_numeric, start..end, emit);
    Some(after)
}

/// Emits the tokens of one split run: the word, or the whole identifier and its parts.
fn emit_parts(
    s: &mut Scratch,
    all_numeric: bool,
    span: Range<usize>,
    emit: &mut impl FnMut(&str, TokenKind, Range<usize>),
) {
    if s.ends.len() == 1 {
        let w = &s.parts[..];
        if w.len() <= MAX_TOKEN_BYTES && !is_stop_word(w) {
            emit(w, TokenKind::Word, span.clone());
        }
        return;
    }
    // The whole identifier: parts joined; dotted numbers (versions) keep their dots.
    s.whole.clear();
    let mut from = 0;
    for (n, &e) in s.ends.iter().enumerate() {
        if n > 0 && all_numeric {
            s.whole.push('.');
        }
        s.whole.push_str(&s.parts[from..e]);
        from = e;
    }
    if s.whole.len() <= MAX_TOKEN_BYTES {
        emit(&s.whole, TokenKind::Compound, span.clone());
    }
    let mut from = 0;
    for &e in &s.ends {
        let p = &s.parts[from..e];
        from = e;
        if p.len() <= MAX_TOKEN_BYTES && !is_stop_word(p) {
            emit(p, TokenKind::Part, span.clone());
        }
    }
}

fn close_part(s: &mut Scratch) {
    let last = s.ends.last().copied().unwrap_or(0);
    if s.parts.len() > last {
        s.ends.push(s.parts.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        pub(super) static FORCE_GENERAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_general_path() {
        let alphabet = b"aZb_-.:9 xY/Q(u8,HTTPServer)\n";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let len = (state % 24) as usize;
            let text: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize] as char
                })
                .collect();
            let mut fast = Vec::new();
            tokenize_spans(&text, |t, k, r| fast.push((t.to_owned(), k, r)));
            FORCE_GENERAL.set(true);
            let mut general = Vec::new();
            tokenize_spans(&text, |t, k, r| general.push((t.to_owned(), k, r)));
            FORCE_GENERAL.set(false);
            assert_eq!(fast, general, "{text:?}");
        }
    }

    fn words(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn stop_words() {
        assert!(is_stop_word("the") && is_stop_word("your") && is_stop_word("t"));
        assert!(!is_stop_word("for") && !is_stop_word("use") && !is_stop_word("thee"));
    }

    #[test]
    fn identifier_styles_meet() {
        for id in [
            "CachedEntry",
            "cached_entry",
            "cached-entry",
            "cached.entry",
            "cached::entry",
        ] {
            assert_eq!(words(id), ["cachedentry", "cached", "entry"], "{id}");
        }
        assert_eq!(words("cached"), ["cached"]);
    }

    #[test]
    fn acronyms_and_digits() {
        assert_eq!(words("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(
            words("parseJSONBody"),
            ["parsejsonbody", "parse", "json", "body"]
        );
        assert_eq!(words("sha256 utf8 404"), ["sha256", "utf8", "404"]);
        assert_eq!(
            words("v1.2.3 and 1.2.3"),
            ["v123", "v1", "2", "3", "1.2.3", "1", "2", "3"]
        );
    }

    #[test]
    fn punctuation_stop_words_and_trailing_connectors() {
        assert_eq!(words("The rebase, of a branch."), ["rebase", "branch"]);
        assert_eq!(
            words("--force-with-lease"),
            ["forcewithlease", "force", "lease"]
        );
        assert_eq!(words("don't"), ["don"]);
        assert_eq!(words("std::fs::File"), ["stdfsfile", "std", "fs", "file"]);
    }

    #[test]
    fn unicode_lowercase_and_cjk() {
        assert_eq!(words("Straße ÜBER"), ["straße", "über"]);
        assert_eq!(words("日本語 text"), ["日", "本", "語", "text"]);
        assert_eq!(words("ÉtéCafé"), ["étécafé", "été", "café"]);
    }

    #[test]
    fn kinds_are_reported() {
        let t = tokenize("get_value now");
        let kinds: Vec<_> = t.iter().map(|t| t.kind).collect();
        assert_eq!(
            kinds,
            [
                TokenKind::Compound,
                TokenKind::Part,
                TokenKind::Part,
                TokenKind::Word
            ]
        );
    }

    #[test]
    fn long_tokens_are_dropped_and_odd_input_is_safe() {
        let long = "a".repeat(200);
        assert!(words(&long).is_empty());
        assert!(words("").is_empty());
        assert!(words("::--..__").is_empty());
        assert_eq!(words("x\u{0301}y"), ["x\u{0301}y"]);
    }
}
