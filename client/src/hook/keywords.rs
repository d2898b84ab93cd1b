//! Query terms for the hooks: keywords of a prompt or an error, symbols an edit removes,
//! the searchable stem of a file path, and whether a shell command is a build.

use helix_index_format::tokenize::{Analyzer, TokenKind, is_stop_word};

/// Most terms taken from a prompt.
pub const PROMPT_TERMS: usize = 12;
/// Most terms taken from an error text.
pub const ERROR_TERMS: usize = 16;

/// Words that say how a request is phrased, not what it is about, and function words the
/// tokenizer's deliberately small stop list keeps (common, so costly and uninformative).
const META_WORDS: &[&str] = &[
    "actually",
    "after",
    "again",
    "also",
    "always",
    "another",
    "any",
    "anything",
    "appreciate",
    "basically",
    "because",
    "before",
    "being",
    "best",
    "better",
    "between",
    "cannot",
    "could",
    "currently",
    "doing",
    "done",
    "each",
    "else",
    "even",
    "ever",
    "every",
    "everything",
    "explain",
    "fine",
    "get",
    "getting",
    "give",
    "going",
    "good",
    "got",
    "having",
    "help",
    "here",
    "hey",
    "hi",
    "hmm",
    "idea",
    "instead",
    "just",
    "kind",
    "know",
    "let",
    "lets",
    "like",
    "look",
    "lot",
    "lots",
    "make",
    "maybe",
    "might",
    "more",
    "much",
    "must",
    "need",
    "needs",
    "never",
    "now",
    "ok",
    "okay",
    "one",
    "only",
    "other",
    "please",
    "pls",
    "plz",
    "question",
    "quick",
    "quickly",
    "really",
    "right",
    "said",
    "same",
    "say",
    "see",
    "should",
    "since",
    "some",
    "something",
    "sort",
    "still",
    "stuff",
    "such",
    "sure",
    "take",
    "tell",
    "thank",
    "thanks",
    "these",
    "thing",
    "things",
    "think",
    "through",
    "thx",
    "try",
    "trying",
    "understand",
    "until",
    "very",
    "wanna",
    "want",
    "wants",
    "way",
    "ways",
    "well",
    "whether",
    "while",
    "why",
    "within",
    "without",
    "wonder",
    "yeah",
    "yes",
    "yet",
];

/// Words every compiler or shell error says; useless for telling errors apart.
const ERROR_NOISE: &[&str] = &[
    "aborting",
    "at",
    "build",
    "code",
    "command",
    "compile",
    "compiling",
    "could",
    "directory",
    "error",
    "errors",
    "exit",
    "exited",
    "fail",
    "failed",
    "failing",
    "fails",
    "for",
    "failure",
    "file",
    "help",
    "line",
    "no",
    "note",
    "not",
    "previous",
    "process",
    "run",
    "running",
    "see",
    "status",
    "such",
    "warning",
    "warnings",
];

/// File stems too generic to say what a file is about (every project has one): the
/// parent directory name is used for the stem, and the name is not searched.
const GENERIC_STEMS: &[&str] = &[
    "__init__",
    "build",
    "cargo",
    "changelog",
    "config",
    "contributing",
    "default",
    "index",
    "init",
    "lib",
    "license",
    "main",
    "makefile",
    "mod",
    "package",
    "readme",
    "setup",
    "src",
    "test",
    "tests",
    "types",
    "util",
    "utils",
];

/// Language keywords and very common identifiers, never reported as removed symbols.
const CODE_WORDS: &[&str] = &[
    "as",
    "assert",
    "async",
    "await",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "crate",
    "def",
    "default",
    "defer",
    "delete",
    "do",
    "else",
    "enum",
    "err",
    "error",
    "except",
    "export",
    "extends",
    "false",
    "final",
    "finally",
    "float",
    "fn",
    "for",
    "from",
    "func",
    "function",
    "go",
    "if",
    "impl",
    "import",
    "in",
    "int",
    "interface",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "new",
    "nil",
    "none",
    "null",
    "ok",
    "option",
    "package",
    "pass",
    "private",
    "protected",
    "pub",
    "public",
    "raise",
    "ref",
    "result",
    "return",
    "self",
    "some",
    "static",
    "str",
    "string",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "trait",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "unsafe",
    "use",
    "usize",
    "var",
    "vec",
    "void",
    "where",
    "while",
    "with",
    "yield",
];

fn sorted_contains(list: &[&str], word: &str) -> bool {
    list.contains(&word)
}

/// Whether `w` (lowercase) is worth searching for.
fn useful(w: &str) -> bool {
    w.chars().count() >= 2 && !is_stop_word(w) && !sorted_contains(META_WORDS, w)
}

/// Candidate terms of `text` in order of appearance, deduplicated, filtered by `keep` (which
/// sees the lowercase token): plain words lowercased, and whole identifiers as written
/// (`re-parent`, `parse_invoice`), so that the search splits them into parts as it does
/// when indexing. Flagged when an identifier.
fn candidates(text: &str, keep: impl Fn(&str) -> bool) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    Analyzer::SURFACE.spans_until(text, |t, kind, span| {
        if kind == TokenKind::Part || !keep(t) || seen.iter().any(|o| o == t) {
            return true;
        }
        seen.push(t.to_string());
        let compound = kind == TokenKind::Compound;
        let term = if compound { &text[span] } else { t };
        out.push((term.to_string(), compound));
        true
    });
    out
}

/// Keeps at most `max` terms, preferring identifiers and longer words, in original order.
fn pick(mut cands: Vec<(String, bool)>, max: usize) -> Vec<String> {
    if cands.len() > max {
        let mut ranked: Vec<usize> = (0..cands.len()).collect();
        let weight = |(w, compound): &(String, bool)| -> usize {
            if *compound {
                3
            } else if w.chars().count() >= 5 {
                2
            } else {
                1
            }
        };
        ranked.sort_by_key(|&i| std::cmp::Reverse(weight(&cands[i])));
        let mut keep: Vec<usize> = ranked.into_iter().take(max).collect();
        keep.sort_unstable();
        cands = keep
            .into_iter()
            .map(|i| std::mem::take(&mut cands[i]))
            .collect();
    }
    cands.into_iter().map(|(w, _)| w).collect()
}

/// Search terms of a prompt: stop words, meta-language and numbers removed, at most 6.
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

/// The meaningful part of a PostToolUseFailure `error`: without the `Exit code N` line,
/// stack frames, source excerpts and progress noise; the lines that state an error, each
/// with the line after it when that continues the message, and hints and warnings, in
/// their order; at most a few KB.
pub fn error_text(error: &str) -> String {
    let body = match error.split_once('\n') {
        Some((first, rest)) if first.trim_start().starts_with("Exit code") => rest,
        _ if error.trim_start().starts_with("Exit code") && !error.contains('\n') => "",
        _ => error,
    };
    let mut lines: Vec<&str> = Vec::new();
    for l in body.lines().map(str::trim) {
        if !l.is_empty() && !is_error_noise(l) && !lines.contains(&l) {
            lines.push(l);
        }
    }
    let lower: Vec<String> = lines.iter().map(|l| l.to_ascii_lowercase()).collect();
    let is_err = |i: usize| {
        [
            "error",
            "panicked",
            "fatal",
            "exception",
            "cannot",
            "undefined",
            "not found",
            "failed",
        ]
        .iter()
        .any(|k| lower[i].contains(k))
            // pytest's explanation lines (`E   Use -v to get more diff`).
            || lines[i].starts_with("E ")
    };
    // `warning: …` alone, after a location (`lib/flags.rb:18: warning: …`) or a tag
    // (`(node:42) Warning: …`).
    let is_hint = |i: usize| {
        ["hint", "warning", "help:", "caused by", "detail:"]
            .iter()
            .any(|k| {
                lower[i].starts_with(k)
                    || lower[i].contains(&format!(") {k}"))
                    || lower[i].contains(&format!(": {k}"))
            })
    };
    // The message often goes on on the next line (`remove_column is only reversible…`
    // after `StandardError: An error has occurred…: (StandardError)`, the exception after
    // `Caused by:`).
    let continues = |l: &str| {
        let l = match l.rsplit_once(" (") {
            Some((head, class)) if class.ends_with(')') => head,
            _ => l,
        };
        l.ends_with(':')
    };
    let mut keep = vec![false; lines.len()];
    let mut errors = 0;
    for i in 0..lines.len() {
        let hint = is_hint(i);
        if is_err(i) && errors < 6 {
            errors += 1;
            keep[i] = true;
        } else if hint {
            keep[i] = true;
        } else {
            continue;
        }
        if continues(lines[i]) && i + 1 < lines.len() {
            keep[i + 1] = true;
        }
    }
    // A lone error line (`(ActiveRecord::PendingMigrationError)` under the message that
    // explains it) says too little: the first other lines join it.
    if errors < 2 {
        let mut extra = 4usize.saturating_sub(keep.iter().filter(|&&k| k).count());
        for k in keep.iter_mut() {
            if extra == 0 {
                break;
            }
            if !*k {
                *k = true;
                extra -= 1;
            }
        }
    }
    let picked: Vec<&str> = (0..lines.len())
        .filter(|&i| keep[i])
        .map(|i| lines[i])
        .take(8)
        .collect();
    let mut s = picked.join("\n");
    if s.len() > 4096 {
        let mut cut = 4096;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
    }
    s
}

/// Lines of a failure's output that say nothing about what went wrong: stack frames
/// (`at f (file:1:2)`, `from file:3:in`, `File "x.py", line 4`, `# ./spec/x_spec.rb:12`),
/// source excerpts and carets, runtime versions and package-manager progress.
fn is_error_noise(l: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "at ",
        "from ",
        "File \"",
        "# ",
        "--> ",
        "-->",
        "|",
        "^",
        "~",
        "Node.js v",
        "(Use `node",
        "Run options:",
        "Running ",
        "Done in ",
        "success ",
        "> ",
        "[",
        "...",
    ];
    if PREFIXES.iter().any(|p| l.starts_with(p)) {
        return true;
    }
    // A line of only a location (`src/a.rs:10:5`, `/app/db/x.rb:3:in `change'`) or of
    // punctuation.
    let letters = l.chars().filter(|c| c.is_alphabetic()).count();
    letters == 0 || (l.split_whitespace().count() <= 2 && l.contains('/') && l.contains(':'))
}

/// Search terms of an error text: at most 8, without paths, line numbers and error boilerplate.
/// Empty when the text is under 15 characters or yields fewer than 2 terms.
pub fn error_terms(text: &str) -> Vec<String> {
    error_terms_up_to(text, ERROR_TERMS)
}

/// [`error_terms`] keeping at most `max` terms.
pub fn error_terms_up_to(text: &str, max: usize) -> Vec<String> {
    if text.trim().chars().count() < 15 {
        return Vec::new();
    }
    // Paths and `file.rs:12:5` locations differ between machines; drop them before tokenizing.
    let cleaned: Vec<&str> = text
        .split_whitespace()
        .filter(|w| !w.contains('/') && !w.contains('\\'))
        .filter(|w| {
            !w.trim_end_matches([':', ',', ')'])
                .rsplit(':')
                .next()
                .is_some_and(|t| {
                    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) && w.contains(':')
                })
        })
        .collect();
    let cleaned = cleaned.join(" ");
    let cands = candidates(&cleaned, |w| {
        useful(w)
            && !sorted_contains(ERROR_NOISE, w)
            && !w.chars().all(|c| c.is_ascii_digit())
            // hex hashes and addresses
            && (w.len() < 8 || !w.bytes().all(|b| b.is_ascii_hexdigit()))
    });
    let terms = pick(cands, max);
    if terms.len() < 2 { Vec::new() } else { terms }
}

/// Identifier-like words of code: `[A-Za-z_][A-Za-z0-9_]*`, in order, deduplicated.
fn identifiers(code: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            // Only ASCII bytes were consumed, so these are char boundaries.
            let w = &code[start..i];
            if !out.contains(&w) {
                out.push(w);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Whether an identifier looks like a program symbol rather than a keyword or prose word.
fn symbol_like(w: &str) -> bool {
    if w.len() < 3 || w.len() > 64 || w.bytes().all(|b| b == b'_') {
        return false;
    }
    let lower = w.to_ascii_lowercase();
    if sorted_contains(CODE_WORDS, &lower) || is_stop_word(&lower) {
        return false;
    }
    let has_inner_upper = w.bytes().skip(1).any(|b| b.is_ascii_uppercase());
    let shaped = w.contains('_') || has_inner_upper || w.bytes().any(|b| b.is_ascii_digit());
    // Plain lowercase words are often prose in comments; keep them only when long.
    shaped || w.as_bytes()[0].is_ascii_uppercase() || w.len() >= 6
}

/// Symbols an edit removes: identifiers in any `old` absent from every `new`. At most 5,
/// most symbol-like first.
pub fn removed_symbols(edits: &[(&str, &str)]) -> Vec<String> {
    let mut removed: Vec<&str> = Vec::new();
    for (old, _) in edits {
        for w in identifiers(old) {
            if symbol_like(w)
                && !removed.contains(&w)
                && !edits.iter().any(|(_, new)| identifiers(new).contains(&w))
            {
                removed.push(w);
            }
        }
    }
    // Prefer the most symbol-shaped names (snake_case, camelCase) when there are many.
    removed.sort_by_key(|w| {
        let shaped = w.contains('_') || w.bytes().skip(1).any(|b| b.is_ascii_uppercase());
        std::cmp::Reverse(shaped)
    });
    removed.into_iter().take(5).map(str::to_string).collect()
}

/// The searchable stem of a path: the file stem, or the parent directory's name when the
/// stem is generic (`src/hook/mod.rs` → `hook`). `None` when neither says anything.
pub fn path_stem(path: &str) -> Option<String> {
    let path = path.trim_end_matches('/');
    let mut comps = path
        .rsplit(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != "." && *c != "..");
    let file = comps.next()?;
    let stem = match file.rfind('.') {
        Some(0) | None => file,
        Some(dot) => &file[..dot],
    };
    let stem = stem.trim_start_matches('.');
    let generic = |s: &str| s.len() < 3 || sorted_contains(GENERIC_STEMS, &s.to_ascii_lowercase());
    if !generic(stem) {
        return Some(stem.to_string());
    }
    comps.find(|c| !generic(c)).map(str::to_string)
}

/// A file's name as the ambient hook searches it (whole, `vercel.json`, `.psqlrc`): `None`
/// when its stem is generic (`mod.rs`, `Cargo.toml`, `README.md`) or too short to mean
/// anything.
pub fn file_name_term(name: &str) -> Option<String> {
    let name = name.trim();
    let bare = name.trim_start_matches('.');
    let stem = bare.split('.').next().unwrap_or(bare);
    let generic = stem.chars().count() < 3
        || sorted_contains(GENERIC_STEMS, &stem.to_ascii_lowercase())
        || name.chars().count() > 128;
    (!generic).then(|| name.to_string())
}

/// The words that say what a file is, lowercase, for matching entry titles and topics:
/// the name's alphanumeric words of 3 or more characters, without the extension and without
/// generic words (`.tmux.conf` → `tmux`; `webpack.config.js` → `webpack`; `.ruby-version`
/// → `ruby`, `version`; `mod.rs` → none).
pub fn name_words(name: &str) -> Vec<String> {
    let mut out = plain_name_words(name);
    out.retain(|w| !w.chars().all(|c| c.is_ascii_digit()) && !sorted_contains(GENERIC_STEMS, w));
    out
}

/// The tools a user-level configuration file belongs to, lowercase, from the directories
/// of its path: a dot-directory (`~/.ssh/config` → `ssh`), the directory under `.config`
/// (`~/.config/git/ignore` → `git`), the directory in `/etc` (`/etc/nginx/nginx.conf` →
/// `nginx`). `home` is stripped first, so the user's own directory names do not count.
pub fn tool_words(path: &std::path::Path, home: Option<&std::path::Path>) -> Vec<String> {
    let rel = home.and_then(|h| path.strip_prefix(h).ok()).unwrap_or(path);
    let dirs: Vec<&str> = match rel.parent() {
        Some(parent) => parent
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        let w = w.to_lowercase();
        if w.chars().count() >= 2
            && w.chars().all(|c| c.is_alphanumeric() || c == '-')
            && !out.contains(&w)
        {
            out.push(w);
        }
    };
    let etc = rel.is_absolute() && dirs.first() == Some(&"etc");
    for (i, d) in dirs.iter().enumerate() {
        match d.strip_prefix('.') {
            Some("config") => {
                if let Some(tool) = dirs.get(i + 1) {
                    push(tool);
                }
            }
            Some(tool) if !tool.is_empty() => push(tool),
            _ if etc && i == 1 => push(d),
            _ => {}
        }
    }
    out
}

/// The words of a file's name without its extension (`init.lua` → `init`, `known_hosts`
/// → `known`, `hosts`), lowercase, 3 characters or more: what a tool file is called,
/// generic words included ([`name_words`] leaves them out).
pub fn plain_name_words(name: &str) -> Vec<String> {
    let bare = name.trim().trim_start_matches('.');
    let stem = match bare.rfind('.') {
        Some(dot) if dot > 0 => &bare[..dot],
        _ => bare,
    };
    let mut out: Vec<String> = Vec::new();
    for w in stem.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 3 && !out.contains(&w) {
            out.push(w);
        }
    }
    out
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
/// (see [`WORK_VERBS`]): "Why is it undefined? Add a guard.", "the header is missing,
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
/// one hump), trimmed of quotes and punctuation; paths (with `/`) are left out.
pub fn code_names(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')))
        .filter(|w| !w.contains('/') && is_code_name(w.split('.').next().unwrap_or_default()))
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

/// Literal words of a glob or regex pattern worth searching (`**/*config*.rs` → `config`).
pub fn pattern_words(pattern: &str) -> Vec<String> {
    const EXT: &[&str] = &[
        "rs", "ts", "tsx", "js", "jsx", "py", "go", "md", "json", "toml", "yaml", "yml", "txt",
    ];
    let mut out: Vec<String> = Vec::new();
    for w in pattern.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let lower = w.to_lowercase();
        if w.chars().count() >= 3
            && !EXT.contains(&lower.as_str())
            && useful(&lower)
            && !out.contains(&lower)
        {
            out.push(lower);
        }
    }
    out.truncate(4);
    out
}

/// Whether a Bash command runs a build (any segment of a `&&`, `;` or `|` chain).
pub fn is_build_command(command: &str) -> bool {
    command
        .split(['\n', ';', '|', '&', '(', ')'])
        .any(|seg| segment_is_build(seg.split_whitespace().collect::<Vec<_>>().as_slice()))
}

fn segment_is_build(words: &[&str]) -> bool {
    // Skip `VAR=value`, `sudo`, `time`, `env`, `nice`, `command` and `cd`-less prefixes.
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let assignment = w.contains('=') && !w.starts_with('=') && !w.starts_with('-');
        if assignment
            || matches!(
                w,
                "sudo" | "time" | "env" | "nice" | "command" | "exec" | "nohup"
            )
        {
            i += 1;
        } else {
            break;
        }
    }
    let Some(prog) = words.get(i) else {
        return false;
    };
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    let args = &words[i + 1..];
    let sub = |names: &[&str]| {
        args.iter()
            .find(|a| !a.starts_with('-') && !a.starts_with('+'))
            .is_some_and(|a| names.contains(a))
    };
    match prog {
        "make" | "gmake" | "cmake" | "ninja" | "gcc" | "g++" | "cc" | "c++" | "clang"
        | "clang++" | "rustc" | "xcodebuild" | "gradle" | "gradlew" | "mvn" | "mvnw" | "bazel"
        | "tsc" | "javac" => true,
        "cargo" => sub(&[
            "build", "b", "check", "c", "test", "t", "run", "r", "clippy", "nextest", "bench",
            "install", "doc",
        ]),
        "go" => sub(&["build", "test", "install", "vet", "run"]),
        "swift" => sub(&["build", "test"]),
        "dotnet" => sub(&["build", "test", "publish"]),
        "npm" | "pnpm" | "yarn" | "bun" => {
            let rest: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let target = match rest.as_slice() {
                ["run" | "run-script", t, ..] => Some(*t),
                [t, ..] if prog != "npm" => Some(*t),
                _ => None,
            };
            target.is_some_and(|t| t == "build" || t.starts_with("build:") || t == "compile")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_words_come_from_dot_directories_config_and_etc() {
        use std::path::Path;
        let home = Some(Path::new("/home/ann"));
        let tools = |p: &str| tool_words(Path::new(p), home);
        assert_eq!(tools("/home/ann/.ssh/config"), ["ssh"]);
        assert_eq!(tools("/home/ann/.config/git/ignore"), ["git"]);
        assert_eq!(tools("/home/ann/.config/nvim/lua/init.lua"), ["nvim"]);
        assert_eq!(tools("/etc/nginx/sites/app.conf"), ["nginx"]);
        assert!(tools("/etc/hosts").is_empty());
        assert!(tools("/home/ann/notes.txt").is_empty());
        // The user's own dot-named home directory is not a tool.
        assert!(tool_words(Path::new("/home/.ann/x"), Some(Path::new("/home/.ann"))).is_empty());
        assert_eq!(plain_name_words("known_hosts"), ["known", "hosts"]);
        assert_eq!(plain_name_words("init.lua"), ["init"]);
        assert_eq!(plain_name_words(".envrc"), ["envrc"]);
    }

    #[test]
    fn code_names_are_camel_pascal_or_snake_case() {
        let names: Vec<&str> = code_names(
            "Why is `currentUser` undefined in LoginForm.tsx? parse_invoice, User.where, \
             src/app/orderList.ts, GitHub, JSON, re-parent, Rails",
        )
        .collect();
        assert_eq!(
            names,
            ["currentUser", "LoginForm.tsx", "parse_invoice", "GitHub"]
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
            "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron",
        );
        assert_eq!(many.len(), PROMPT_TERMS);
    }

    #[test]
    fn questions_and_file_names() {
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
        assert_eq!(
            file_name_term("vercel.json").as_deref(),
            Some("vercel.json")
        );
        assert_eq!(file_name_term(".psqlrc").as_deref(), Some(".psqlrc"));
        assert_eq!(name_words(".tmux.conf"), ["tmux"]);
        assert_eq!(name_words("webpack.config.js"), ["webpack"]);
        assert_eq!(name_words(".ruby-version"), ["ruby", "version"]);
        assert_eq!(
            name_words("sessions_controller.rb"),
            ["sessions", "controller"]
        );
        assert_eq!(name_words("Brewfile"), ["brewfile"]);
        assert!(name_words("mod.rs").is_empty());
        for generic in [
            "mod.rs",
            "Cargo.toml",
            "README.md",
            "CHANGELOG.md",
            "ci.yml",
            "a.rs",
        ] {
            assert_eq!(file_name_term(generic), None, "{generic}");
        }
    }

    #[test]
    fn error_keywords() {
        let e = "Exit code 101\n   Compiling foo v0.1.0\nerror[E0502]: cannot borrow `self.cache` as mutable\n --> src/main.rs:10:5\n";
        let text = error_text(e);
        assert!(!text.contains("Exit code"));
        let terms = error_terms(&text);
        assert!(terms.contains(&"e0502".to_string()), "{terms:?}");
        assert!(terms.contains(&"borrow".to_string()), "{terms:?}");
        assert!(!terms.iter().any(|t| t.contains("main")), "{terms:?}");
        assert!(error_terms("Exit code 1").is_empty());
        // Stack frames, source excerpts and runtime versions go; a message that goes on
        // after a colon is kept whole.
        let node = "Exit code 1\nbin/rails aborted!\nStandardError: An error has occurred, all later migrations canceled:\n\nremove_column is only reversible if given a type.\n/app/db/migrate/20240611_x.rb:3:in `change'\n    at Object.<anonymous> (/app/x.js:1:2)\n       ^^^^^^\nNode.js v20.11.1";
        let text = error_text(node);
        assert!(text.contains("remove_column is only reversible"), "{text}");
        assert!(
            !text.contains("Object.<anonymous>") && !text.contains("Node.js"),
            "{text}"
        );
        assert!(!text.contains("^^^") && !text.contains("x.rb:3"), "{text}");
        // "FAIL" is boilerplate like "failed", also when a lone error line brings it along.
        let terms = error_terms(&error_text(
            "Exit code 1\nFAIL src/cart.test.ts\n  3 tests failed, run the tests again with --verbose",
        ));
        assert!(!terms.iter().any(|t| t.starts_with("fail")), "{terms:?}");
        // A lone error line brings the lines around it.
        let pending = "Exit code 1\nMigrations are pending. To resolve this issue, run:\n\n        bin/rails db:migrate RAILS_ENV=test\n\n (ActiveRecord::PendingMigrationError)";
        let terms = error_terms(&error_text(pending));
        assert!(terms.iter().any(|t| t == "pending"), "{terms:?}");
        assert!(terms.len() <= ERROR_TERMS);
    }

    #[test]
    fn removed_symbols_from_edits() {
        let r = removed_symbols(&[(
            "let x = parse_config(&path);\n// load it",
            "let x = load_settings(&path);\n// load it",
        )]);
        assert_eq!(r, ["parse_config"]);
        let r = removed_symbols(&[
            ("fn CachedEntry() {}", "fn Other() {}"),
            ("old_helper()", ""),
        ]);
        assert_eq!(r, ["CachedEntry", "old_helper"]);
        assert!(removed_symbols(&[("return self", "")]).is_empty());
    }

    #[test]
    fn stems() {
        assert_eq!(
            path_stem("/r/src/rebase_onto.rs").as_deref(),
            Some("rebase_onto")
        );
        assert_eq!(path_stem("client/src/hook/mod.rs").as_deref(), Some("hook"));
        assert_eq!(path_stem("src/lib.rs"), None);
        assert_eq!(path_stem(".gitignore").as_deref(), Some("gitignore"));
    }

    #[test]
    fn build_commands() {
        for c in [
            "cargo build --release",
            "RUST_LOG=1 cargo test -p x",
            "cd a && make -j4",
            "npm run build",
            "pnpm build",
            "yarn run build:prod",
            "go build ./...",
            "gcc -o a a.c",
            "swift build",
            "./gradlew assemble",
            "mvn package",
            "dotnet build",
            "xcodebuild -scheme X",
            "cmake --build .",
        ] {
            assert!(is_build_command(c), "{c}");
        }
        for c in [
            "ls -la",
            "git status",
            "npm install",
            "cargo fmt",
            "echo make",
            "grep cargo x",
            "go fmt",
        ] {
            assert!(!is_build_command(c), "{c}");
        }
    }
}
