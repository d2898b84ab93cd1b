//! The phrases of a failure's output that an entry may quote: runs of six words on one line,
//! nearly all of them informative (`warning block supersedes default value argument`). A
//! note that quotes one is about that very message, whatever the ranking thinks.

use std::collections::HashSet;

/// Words in a phrase: five are seldom shared by chance between an output and a note, six
/// never were over the judged errors (`docs/benchmarks.md`, "Seventh pass").
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

/// The lowercase ASCII words of `text` (letters, digits, `_`), as phrases are compared.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
}

fn key(run: &[String]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(run.join(" ").as_bytes())
}

/// The quotable phrases of `output` (a failure's output, `Exit code` line included or
/// not), as keys for [`quotes`]: every run of [`PHRASE_WORDS`] words on one line of which
/// at most one is glue or a number.
pub fn phrases(output: &str) -> HashSet<u64> {
    let mut out = HashSet::new();
    let mut cut = output.len().min(MAX_BYTES);
    while !output.is_char_boundary(cut) {
        cut -= 1;
    }
    for line in output[..cut].lines().take(MAX_LINES) {
        let w: Vec<String> = words(line).collect();
        for run in w.windows(PHRASE_WORDS) {
            let weak = run
                .iter()
                .filter(|x| {
                    GLUE.binary_search(&x.as_str()).is_ok() || x.bytes().all(|b| b.is_ascii_digit())
                })
                .count();
            if weak <= 1 {
                out.insert(key(run));
            }
        }
    }
    out
}

/// Whether `text` (an entry's body or title) quotes one of `phrases` on one of its lines.
pub fn quotes(text: &str, phrases: &HashSet<u64>) -> bool {
    !phrases.is_empty()
        && text.lines().any(|line| {
            let w: Vec<String> = words(line).collect();
            w.windows(PHRASE_WORDS)
                .any(|run| phrases.contains(&key(run)))
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
        assert_eq!(phrases("no schema has been selected to create in").len(), 1);
        assert!(GLUE.windows(2).all(|w| w[0] < w[1]), "sorted");
    }

    #[test]
    fn long_output_is_cut_on_a_character_boundary() {
        let big = "é".repeat(MAX_BYTES);
        assert!(phrases(&big).is_empty());
    }
}
