//! The one tokenizer used for indexing and for queries, so both sides always agree.
//! Unicode-aware, lowercased, identifiers split into parts while the whole is kept.
//!
//! A run of letters and digits joined by `_ - . :` is one identifier. It is split on the
//! connectors and on camelCase boundaries into parts; when there is more than one part, the
//! parts joined without separators are emitted as well (`CachedEntry`, `cached_entry` and
//! `cached-entry` all give `cachedentry` + `cached` + `entry`). Letters and digits are not
//! split from each other (`sha256`, `utf8`, `ipv4` stay whole). CJK ideographs and kana are
//! one token per character.
//!
//! Version 2 adds light English stemming ([`stem`]: plurals, `-ed`, `-ing`, a final `-e`) of
//! plain words and identifier parts; whole identifiers, tokens with digits and non-ASCII
//! words are kept as written. docs/benchmarks.md has the measurement that chose it.

use std::ops::Range;

/// Written into every artifact; bump on any change that alters the terms or term
/// frequencies of some entry (the tokenizer, stemming, field weights).
/// 1: no stemming; 2: light stemming, field weights (`build::TITLE_WEIGHT`); 3: the topic's
/// words indexed with the tags.
pub const TOKENIZER_VERSION: u32 = 3;

/// How text becomes tokens: the rules of one tokenizer version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Analyzer {
    /// Light stemming of words and identifier parts (version 2 on).
    pub stem: bool,
}

impl Analyzer {
    /// The current tokenizer, [`TOKENIZER_VERSION`].
    pub const CURRENT: Analyzer = Analyzer { stem: true };
    /// Surface forms: words as written, lowercased (version 1; what the hooks pick query
    /// words from, since a stemmed word must not be stemmed again).
    pub const SURFACE: Analyzer = Analyzer { stem: false };

    /// The rules of artifacts written with `version`. A version newer than this code knows
    /// gets the current rules: the closest this reader can do.
    pub fn for_version(version: u32) -> Analyzer {
        if version <= 1 {
            Analyzer::SURFACE
        } else {
            Analyzer::CURRENT
        }
    }

    /// Calls `emit` for every token of `text`, in order.
    pub fn tokens(self, text: &str, mut emit: impl FnMut(&str, TokenKind)) {
        self.spans_until(text, |t, kind, _| {
            emit(t, kind);
            true
        });
    }

    /// Like [`Analyzer::tokens`] with the byte range of the run each token came from,
    /// stopping after the run in which `emit` returns `false`.
    pub fn spans_until(self, text: &str, emit: impl FnMut(&str, TokenKind, Range<usize>) -> bool) {
        spans_until(text, self, emit);
    }
}

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

/// Calls `emit` for every token of `text`, in order (the current tokenizer). No allocation
/// per token.
pub fn tokenize_with(text: &str, emit: impl FnMut(&str, TokenKind)) {
    Analyzer::CURRENT.tokens(text, emit);
}

/// Like [`tokenize_with`], also passing the byte range of the run each token came from.
pub fn tokenize_spans(text: &str, mut emit: impl FnMut(&str, TokenKind, Range<usize>)) {
    Analyzer::CURRENT.spans_until(text, |t, kind, span| {
        emit(t, kind, span);
        true
    });
}

fn spans_until(
    text: &str,
    analyzer: Analyzer,
    mut emit: impl FnMut(&str, TokenKind, Range<usize>) -> bool,
) {
    let go = std::cell::Cell::new(true);
    let mut emit = |t: &str, kind, span| {
        if go.get() {
            go.set(emit(t, kind, span));
        }
    };
    let mut scratch = Scratch {
        stem: analyzer.stem,
        ..Scratch::default()
    };
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
    /// Stem words and parts ([`Analyzer::stem`]).
    stem: bool,
    stemmed: String,
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
            let mut ahead = chars.clone();
            let next = ahead.next();
            // `NULLs`, `URLs`, `IDs`: a lone `s` after capitals is a plural, not a word.
            let plural = next == Some('s') && !ahead.next().is_some_and(|n| n.is_lowercase());
            let next_lower = next.is_some_and(|n| n.is_lowercase()) && !plural;
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
            let plural = word.get(k + 1) == Some(&b's')
                && !word.get(k + 2).is_some_and(u8::is_ascii_lowercase);
            let next_lower = word.get(k + 1).is_some_and(u8::is_ascii_lowercase) && !plural;
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
            let w = stemmed(s.stem, w, &mut s.stemmed);
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
            let p = stemmed(s.stem, p, &mut s.stemmed);
            emit(p, TokenKind::Part, span.clone());
        }
    }
}

/// `word` stemmed into `buf` when `on` (and the word is stemmable), else `word` itself.
fn stemmed<'a>(on: bool, word: &'a str, buf: &'a mut String) -> &'a str {
    if on && stem(word, buf) { buf } else { word }
}

/// Light English stemming, Porter's (1980) steps 1 and 5: plurals and `-ed`/`-ing` (with
/// their spelling repairs), `y` → `i`, a final `-e` and `-ll`. Nothing derivational
/// (`-ation`, `-ize`, `-er` stay), so `build`, `builder` and `building` remain apart where
/// code tells them apart, while `ranking`/`rank`, `entries`/`entry` and
/// `Dockerfiles`/`Dockerfile` meet. Only all-lowercase ASCII words of 4+ letters; writes
/// the stem into `out` and returns whether it differs from `word`.
pub fn stem(word: &str, out: &mut String) -> bool {
    let bytes = word.as_bytes();
    // Every step starts from one of these endings: most tokens end otherwise (it runs once
    // per token when an artifact is built).
    if bytes.len() < 4
        || !matches!(bytes.last(), Some(b's' | b'd' | b'g' | b'y' | b'e' | b'l'))
        || !bytes.iter().all(u8::is_ascii_lowercase)
    {
        return false;
    }
    out.clear();
    out.push_str(word);
    let w = out;
    let ends = |w: &String, s: &str| w.ends_with(s);
    // Step 1a: plurals.
    if ends(w, "sses") || ends(w, "ies") {
        w.truncate(w.len() - 2);
    } else if ends(w, "s") && !ends(w, "ss") {
        w.pop();
    }
    // Step 1b: -eed, -ed, -ing.
    if ends(w, "eed") {
        if measure(&w.as_bytes()[..w.len() - 3]) > 0 {
            w.pop();
        }
    } else if let Some(suffix) = ["ed", "ing"].into_iter().find(|s| ends(w, s))
        && has_vowel(&w.as_bytes()[..w.len() - suffix.len()])
    {
        w.truncate(w.len() - suffix.len());
        if ends(w, "at") || ends(w, "bl") || ends(w, "iz") {
            w.push('e');
        } else if double_consonant(w.as_bytes()) && !(ends(w, "l") || ends(w, "s") || ends(w, "z"))
        {
            w.pop();
        } else if measure(w.as_bytes()) == 1 && cvc(w.as_bytes()) {
            w.push('e');
        }
    }
    // Step 1c: y -> i after a vowel somewhere in the stem.
    if ends(w, "y") && has_vowel(&w.as_bytes()[..w.len() - 1]) {
        w.pop();
        w.push('i');
    }
    // Step 5a: a final e.
    if ends(w, "e") {
        let rest = &w.as_bytes()[..w.len() - 1];
        let m = measure(rest);
        if m > 1 || (m == 1 && !cvc(rest)) {
            w.pop();
        }
    }
    // Step 5b: -ll -> -l.
    if ends(w, "ll") && measure(w.as_bytes()) > 1 {
        w.pop();
    }
    w != word
}

/// Porter's consonant: not a vowel, and `y` only after a vowel (or first).
fn consonant(w: &[u8], i: usize) -> bool {
    match w[i] {
        b'a' | b'e' | b'i' | b'o' | b'u' => false,
        b'y' => i == 0 || !consonant(w, i - 1),
        _ => true,
    }
}

/// Porter's m: the number of vowel-consonant sequences in `w`.
fn measure(w: &[u8]) -> usize {
    let mut m = 0;
    let mut i = 0;
    while i < w.len() && consonant(w, i) {
        i += 1;
    }
    loop {
        while i < w.len() && !consonant(w, i) {
            i += 1;
        }
        if i >= w.len() {
            return m;
        }
        while i < w.len() && consonant(w, i) {
            i += 1;
        }
        m += 1;
    }
}

fn has_vowel(w: &[u8]) -> bool {
    (0..w.len()).any(|i| !consonant(w, i))
}

fn double_consonant(w: &[u8]) -> bool {
    let n = w.len();
    n >= 2 && w[n - 1] == w[n - 2] && consonant(w, n - 1)
}

/// Consonant-vowel-consonant at the end, the last not `w`, `x` or `y` (`hop`, not `tax`).
fn cvc(w: &[u8]) -> bool {
    let n = w.len();
    n >= 3
        && consonant(w, n - 3)
        && !consonant(w, n - 2)
        && consonant(w, n - 1)
        && !matches!(w[n - 1], b'w' | b'x' | b'y')
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
        let alphabet = b"aZb_-.:9 xY/Q(u8,HTTPServer)\nIDsURLs";
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

    /// Surface tokens (no stemming): the splitting rules alone.
    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        Analyzer::SURFACE.tokens(text, |t, _| out.push(t.to_owned()));
        out
    }

    fn stems(text: &str) -> Vec<String> {
        tokenize(text).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn light_stemming_meets_inflected_forms() {
        for (a, b) in [
            ("ranking", "rank"),
            ("extracting", "extract"),
            ("Dockerfiles", "Dockerfile"),
            ("entries", "entry"),
            ("caches", "cache"),
            ("cached", "caching"),
            ("branches", "branch"),
            ("rebased", "rebasing"),
            ("hopping", "hop"),
            ("stopped", "stop"),
            ("created", "create"),
        ] {
            assert_eq!(stems(a), stems(b), "{a} / {b}");
        }
        // Nothing derivational: these stay apart.
        for (a, b) in [("build", "builder"), ("optimize", "optimization")] {
            assert_ne!(stems(a), stems(b), "{a} / {b}");
        }
    }

    #[test]
    fn identifiers_digits_and_short_words_stay_intact() {
        // The whole identifier is never stemmed; its parts are.
        assert_eq!(stems("CachedEntries"), ["cachedentries", "cach", "entri"]);
        assert_eq!(
            stems("utf8 sha256 v1.2.3"),
            ["utf8", "sha256", "v123", "v1", "2", "3"]
        );
        assert_eq!(stems("ies bus gas"), ["ies", "bus", "gas"]);
        assert_eq!(stems("Straße naïve"), ["straße", "naïve"]);
        let mut buf = String::new();
        assert!(!stem("rank", &mut buf));
        assert!(stem("ranks", &mut buf) && buf == "rank");
    }

    /// Porter's published examples for the steps implemented.
    #[test]
    fn porter_examples() {
        let mut buf = String::new();
        for (w, want) in [
            ("caresses", "caress"),
            ("ponies", "poni"),
            ("caress", "caress"),
            ("cats", "cat"),
            ("feed", "feed"),
            ("agreed", "agre"),
            ("plastered", "plaster"),
            ("bled", "bled"),
            ("motoring", "motor"),
            ("sing", "sing"),
            ("conflated", "conflat"),
            ("troubled", "troubl"),
            ("sized", "size"),
            ("hopping", "hop"),
            ("tanned", "tan"),
            ("falling", "fall"),
            ("hissing", "hiss"),
            ("fizzed", "fizz"),
            ("failing", "fail"),
            ("filing", "file"),
            ("happy", "happi"),
            ("probate", "probat"),
            ("rate", "rate"),
            ("cease", "ceas"),
            ("controll", "control"),
            ("roll", "roll"),
        ] {
            let out = if stem(w, &mut buf) {
                buf.clone()
            } else {
                w.to_owned()
            };
            assert_eq!(out, want, "{w}");
        }
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
    fn acronym_plurals_stay_one_word() {
        assert_eq!(words("NULLs URLs IDs"), ["nulls", "urls", "ids"]);
        assert_eq!(words("getURLs"), ["geturls", "get", "urls"]);
        assert_eq!(words("URLsToFetch"), ["urlstofetch", "urls", "fetch"]);
        // Still split where the lowercase run is a word.
        assert_eq!(words("HTTPSession"), ["httpsession", "http", "session"]);
        assert_eq!(stems("NULLs"), ["null"]);
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
