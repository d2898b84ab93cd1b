//! A prompt as the prompt hook reads it: its search terms, its form (a question, a
//! request for work or a statement) and the names of the user's own code it mentions.

use super::terms::{candidates, pick, useful};

/// Most terms taken from a prompt.
pub const PROMPT_TERMS: usize = 16;

/// Search terms of a prompt: stop words, meta-language and numbers removed, at most
/// [`PROMPT_TERMS`].
/// Empty when the prompt is under 10 or over 500 characters or yields fewer than 2 terms.
pub fn prompt_terms(prompt: &str) -> Vec<String> {
    prompt_terms_up_to(prompt, PROMPT_TERMS)
}

/// [`prompt_terms`] keeping at most `max` terms.
pub fn prompt_terms_up_to(prompt: &str, max: usize) -> Vec<String> {
    let prompt = prompt.trim();
    let n = prompt.chars().count();
    if !(10..=500).contains(&n) {
        return Vec::new();
    }
    let cands = candidates(prompt, |w| {
        useful(w) && !w.chars().all(|c| c.is_ascii_digit())
    });
    let terms = pick(cands, max);
    if terms.len() < 2 { Vec::new() } else { terms }
}

/// Whether a prompt asks for knowledge (a question) rather than for work: it has a question
/// mark or opens with a question word.
pub fn is_question(prompt: &str) -> bool {
    const OPENERS: &[&str] = &[
        "any", "are", "can", "could", "do", "does", "how", "is", "should", "what", "when", "where",
        "which", "why",
    ];
    let p = prompt.trim();
    p.contains('?')
        || p.split(|c: char| !c.is_alphanumeric())
            .next()
            .is_some_and(|w| OPENERS.contains(&w.to_ascii_lowercase().as_str()))
}

/// Verbs that open a request for work on the code rather than for knowledge.
const WORK_VERBS: &[&str] = &[
    "add",
    "build",
    "bump",
    "change",
    "clean",
    "commit",
    "continue",
    "convert",
    "create",
    "debug",
    "delete",
    "deploy",
    "describe",
    "document",
    "draft",
    "extract",
    "finish",
    "fix",
    "generate",
    "implement",
    "improve",
    "increase",
    "migrate",
    "move",
    "open",
    "optimize",
    "push",
    "reduce",
    "refactor",
    "remove",
    "rename",
    "replace",
    "review",
    "rewrite",
    "run",
    "shrink",
    "simplify",
    "sort",
    "split",
    "summarise",
    "summarize",
    "translate",
    "turn",
    "update",
    "wire",
    "write",
];

/// Words a request may open with before its verb (`please`, `can you`, `let's`, `ok now`).
const REQUEST_LEADS: &[&str] = &[
    "ahead", "also", "and", "can", "could", "first", "go", "just", "let's", "lets", "next", "now",
    "ok", "okay", "please", "pls", "so", "then", "would", "you",
];

/// Whether a prompt asks for work on the code: one of its sentences or clauses opens,
/// after polite openers, with a verb such as `add`, `rename`, `write`, `fix`, `refactor`
/// (see `WORK_VERBS`): "Why is it undefined? Add a guard.", "the header is missing,
/// add it".
pub fn is_work_request(prompt: &str) -> bool {
    prompt
        .split(['.', '?', '!', ';', ',', ':', '\n'])
        .any(|clause| {
            clause
                .split_whitespace()
                .map(|w| {
                    w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                        .to_lowercase()
                })
                .find(|w| !REQUEST_LEADS.contains(&w.as_str()))
                .is_some_and(|w| WORK_VERBS.contains(&w.as_str()))
        })
}

/// The whitespace-separated chunks of `text` that name code: a `camelCase`, multi-hump
/// `PascalCase` or `snake_case` name before any `.` (`LoginForm.tsx`, `User.where` is not:
/// one hump), trimmed of quotes and punctuation; of a path its file's name
/// (`app/services/sync_scheduler.rb`), of a method reference its class
/// (`OrdersController#create`).
pub fn code_names(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .map(|w| w.split('#').next().unwrap_or(w))
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| is_code_name(w.split('.').next().unwrap_or_default()))
}

fn is_code_name(w: &str) -> bool {
    if w.is_empty() || !w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return false;
    }
    let b = w.as_bytes();
    // snake_case: an underscore between letters or digits.
    let snake = b
        .windows(3)
        .any(|x| x[1] == b'_' && x[0].is_ascii_alphanumeric() && x[2].is_ascii_alphanumeric());
    // A lowercase letter followed by an uppercase one: a hump.
    let humps = b
        .windows(2)
        .filter(|x| x[0].is_ascii_lowercase() && x[1].is_ascii_uppercase())
        .count();
    let camel = b[0].is_ascii_lowercase() && humps >= 1;
    let pascal = b[0].is_ascii_uppercase() && humps >= 1 && b[1].is_ascii_lowercase();
    snake || camel || pascal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_camel_pascal_or_snake_case() {
        let names: Vec<&str> = code_names(
            "Why is `currentUser` undefined in LoginForm.tsx? parse_invoice, User.where, \
             src/app/orderList.ts, GitHub, JSON, re-parent, Rails, OrdersController#create, \
             ~/.config/nvim/init.lua",
        )
        .collect();
        assert_eq!(
            names,
            [
                "currentUser",
                "LoginForm.tsx",
                "parse_invoice",
                "orderList.ts",
                "GitHub",
                "OrdersController"
            ]
        );
    }

    #[test]
    fn prompt_keywords() {
        assert_eq!(
            prompt_terms("Can you please help me fix the flaky rebase test in GitSync?"),
            ["fix", "flaky", "rebase", "test", "GitSync"]
        );
        // Identifiers stay as written, so the search splits them as the index did.
        assert_eq!(
            prompt_terms("how do I re-parent commits with cherry-picking"),
            ["re-parent", "commits", "cherry-picking"]
        );
        assert!(prompt_terms("hi there").is_empty());
        assert!(prompt_terms("please can you help me").is_empty());
        assert!(prompt_terms(&"word ".repeat(120)).is_empty());
        let many = prompt_terms(
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon",
        );
        assert_eq!(many.len(), PROMPT_TERMS);
    }

    #[test]
    fn questions_and_requests() {
        for q in [
            "How do I rebase?",
            "is it safe to vacuum",
            "what's the limit",
            "x?",
        ] {
            assert!(is_question(q), "{q}");
        }
        for q in ["Rename calcTotal", "Run the tests.", "showcase the app"] {
            assert!(!is_question(q), "{q}");
        }
        for w in [
            "Rename calcTotal",
            "please add a test",
            "can you write a docstring?",
            "ok, let's refactor the parser",
            "Why is it undefined sometimes? Add a guard.",
            "the header row is missing, add it",
        ] {
            assert!(is_work_request(w), "{w}");
        }
        for w in [
            "how do I add a remote?",
            "adding a column locks the table",
            "my rebase went wrong",
        ] {
            assert!(!is_work_request(w), "{w}");
        }
    }
}
