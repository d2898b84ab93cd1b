//! The phrases of a failure's output that an entry may quote: runs of six words on one line,
//! nearly all of them informative (`warning block supersedes default value argument`). A
//! note that quotes one is about that very message, whatever the ranking thinks.

/// Words in a phrase: five are seldom shared by chance between an output and a note, six
/// never were over the judged errors (`docs/benchmarks.md`, "How the gate's constants were
/// chosen").
pub const PHRASE_WORDS: usize = 6;
/// Lines and bytes of output looked at: the message is near the top or the bottom, and a
/// hook must stay fast on a megabyte of log.
const MAX_LINES: usize = 200;
const MAX_BYTES: usize = 16 * 1024;

/// Words too common to make a phrase informative on their own. Sorted.
const GLUE: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "no", "not",
    "of", "on", "or", "that", "the", "this", "to", "with",
];

/// Each byte lowercased when it belongs to a word (ASCII letters, digits, `_`), else 0.
const WORD_BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] = c.to_ascii_lowercase();
        }
        b += 1;
    }
    t
};

/// Calls `f` with a hash of each lowercase ASCII word of `line` (letters, digits, `_`) and
/// the word itself, as phrases are compared. Byte by byte and without allocation: up to 50
/// entry bodies are read on every error hook call.
fn each_word(line: &[u8], mut f: impl FnMut(u64, &[u8])) {
    const START: u64 = 0xcbf2_9ce4_8422_2325;
    let mut h = START;
    let mut from = 0;
    for (i, &b) in line.iter().enumerate() {
        let folded = WORD_BYTE[usize::from(b)];
        if folded != 0 {
            // FNV-1a over the lowercased bytes.
            h = (h ^ u64::from(folded)).wrapping_mul(0x0100_0000_01b3);
        } else {
            if i > from {
                f(h, &line[from..i]);
            }
            h = START;
            from = i + 1;
        }
    }
    if line.len() > from {
        f(h, &line[from..]);
    }
}

/// Whether a word is weak in a phrase: glue or a number.
fn weak(w: &[u8]) -> bool {
    w.iter().all(u8::is_ascii_digit)
        || (w.len() <= 4 && GLUE.iter().any(|g| g.as_bytes().eq_ignore_ascii_case(w)))
}

/// One key for a run of word hashes, order-sensitive.
fn key(run: &[u64]) -> u64 {
    run.iter().fold(0u64, |k, &h| {
        (k.rotate_left(17) ^ h).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    })
}

/// The quotable phrases of a failure's output, as [`phrases`] finds them: sorted keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Phrases(Vec<u64>);

impl Phrases {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn contains(&self, k: u64) -> bool {
        self.0.binary_search(&k).is_ok()
    }
}

/// The quotable phrases of `output` (a failure's output, `Exit code` line included or
/// not): every run of [`PHRASE_WORDS`] words on one line of which at most one is glue or a
/// number.
pub fn phrases(output: &str) -> Phrases {
    let mut out = Vec::new();
    let mut words: Vec<(u64, bool)> = Vec::new();
    let mut run: Vec<u64> = Vec::with_capacity(PHRASE_WORDS);
    let text = &output.as_bytes()[..output.len().min(MAX_BYTES)];
    for line in text.split(|&b| b == b'\n').take(MAX_LINES) {
        words.clear();
        each_word(line, |h, w| words.push((h, weak(w))));
        for window in words.windows(PHRASE_WORDS) {
            if window.iter().filter(|w| w.1).count() <= 1 {
                run.clear();
                run.extend(window.iter().map(|w| w.0));
                out.push(key(&run));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Phrases(out)
}

/// Whether `text` (an entry's body or title) quotes one of `phrases` on one of its lines.
pub fn quotes(text: &str, phrases: &Phrases) -> bool {
    if phrases.is_empty() {
        return false;
    }
    let mut words: Vec<u64> = Vec::new();
    text.as_bytes().split(|&b| b == b'\n').any(|line| {
        words.clear();
        each_word(line, |h, _| words.push(h));
        words
            .windows(PHRASE_WORDS)
            .any(|run| phrases.contains(key(run)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_quoting_six_words_of_the_message_quotes_it() {
        let out = "Exit code 1\n/app/x.rb:14: warning: block supersedes default value argument\n";
        let p = phrases(out);
        assert!(quotes(
            "Ruby says `warning: block supersedes default value argument` when both are given.",
            &p
        ));
        // Five words of it, or the words on two lines, are not a quote.
        assert!(!quotes("a block supersedes default value", &p));
        assert!(!quotes(
            "block supersedes default\nvalue argument given",
            &p
        ));
    }

    #[test]
    fn runs_of_glue_and_numbers_are_not_phrases() {
        assert!(phrases("it is in the at 1 2 3").is_empty());
        assert!(phrases("Tests: 1 failed, 1 passed, 2 total").is_empty());
        assert_eq!(
            phrases("no schema has been selected to create in").0.len(),
            1
        );
        assert!(GLUE.windows(2).all(|w| w[0] < w[1]), "sorted");
    }

    #[test]
    fn long_output_is_cut_on_a_character_boundary() {
        let big = "é".repeat(MAX_BYTES);
        assert!(phrases(&big).is_empty());
    }
}
