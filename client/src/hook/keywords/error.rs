//! A failed command's output as the error hook reads it: the lines that state the error,
//! without frames, excerpts and progress noise, and their search terms.

use super::terms::{candidates, pick, sorted_contains, useful};

/// Most terms taken from an error text.
pub const ERROR_TERMS: usize = 16;

/// Words every compiler or shell error says; useless for telling errors apart.
const ERROR_NOISE: &[&str] = &[
    "aborting",
    "at",
    "build",
    "code",
    "command",
    "compile",
    "compiling",
    "context",
    "could",
    "detail",
    "did",
    "directory",
    "error",
    "errors",
    "exist",
    "exists",
    "exit",
    "exited",
    "fail",
    "failed",
    "failing",
    "fails",
    "failure",
    "file",
    "for",
    "help",
    "hint",
    "line",
    "mean",
    "meant",
    "no",
    "not",
    "note",
    "perhaps",
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
            "already in use",
            "denied",
            "refused",
            "no space left",
        ]
        .iter()
        .any(|k| lower[i].contains(k))
            // Ruby's uncaught exception ends with its class: `… in use - bind(2) (Errno::EADDRINUSE)`.
            || lines[i].contains("(Errno::")
            // pytest's explanation lines (`E   Use -v to get more diff`).
            || lines[i].starts_with("E ")
            // Jest's and Vitest's: the failing test, then what it expected and got.
            || ["● ", "expect(", "Expected:", "Received:"].iter().any(|p| lines[i].starts_with(p))
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
/// (`at f (file:1:2)`, `from file:3:in`, `File "x.py", line 4`, `# ./spec/x_spec.rb:12`)
/// and Python's `Traceback (most recent call last):` over them, source excerpts and carets,
/// runtime versions, package-manager progress and test runners' tallies.
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
        "Traceback (most recent call last)",
        "Running ",
        "Done in ",
        "success ",
        "> ",
        "[",
        "...",
        "+",
    ];
    if PREFIXES.iter().any(|p| l.starts_with(p)) && !is_level_tag(l) {
        return true;
    }
    // A test runner's tally (`Tests: 1 failed, 1 passed, 2 total`) says only that it failed.
    const TALLIES: &[&str] = &[
        "Test Suites:",
        "Tests:",
        "Snapshots:",
        "Time:",
        "Ran all test suites",
    ];
    if TALLIES.iter().any(|p| l.starts_with(p)) {
        return true;
    }
    // A line of only a location (`src/a.rs:10:5`, `/app/db/x.rb:3:in `change'`) or of
    // punctuation.
    let letters = l.chars().filter(|c| c.is_alphabetic()).count();
    letters == 0 || (l.split_whitespace().count() <= 2 && l.contains('/') && l.contains(':'))
}

/// Whether `l` opens with a log level in brackets (`[ERROR] …`, Maven's and many loggers'),
/// which states a message, unlike a progress counter (`[1/3] Building …`).
fn is_level_tag(l: &str) -> bool {
    let Some(tag) = l
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .map(|(t, _)| t)
    else {
        return false;
    };
    ["ERROR", "FATAL", "CRITICAL", "WARN", "WARNING"]
        .iter()
        .any(|lvl| tag.eq_ignore_ascii_case(lvl))
}

/// Search terms of an error text: at most [`ERROR_TERMS`], the names it says are missing
/// first, without paths, line numbers, versions and error boilerplate; then the failed
/// command's words (`keywords::FailedCommand`) it does not have. Empty when the text is
/// under 15 characters or the two yield fewer than 2 terms.
pub fn error_terms(text: &str, command_words: &[String]) -> Vec<String> {
    error_terms_up_to(text, command_words, ERROR_TERMS)
}

/// [`error_terms`] keeping at most `max` terms of the text.
pub fn error_terms_up_to(text: &str, command_words: &[String], max: usize) -> Vec<String> {
    if text.trim().chars().count() < 15 {
        return Vec::new();
    }
    let missing = missing_names(text);
    let says_missing = !missing.is_empty();
    // Paths and `file.rs:12:5` locations differ between machines; drop them before tokenizing.
    let cleaned: Vec<&str> = text
        .split_whitespace()
        .filter(|w| !w.contains('/') && !w.contains('\\'))
        // Versions differ between machines too (`v1.22.19`, `vercel@33.5.3` keeps its name).
        .filter_map(|w| match w.rsplit_once('@') {
            Some((name, v)) if is_version(v) => Some(name),
            _ => (!is_version(w)).then_some(w),
        })
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
    // What is missing is what the error is about: first, and kept whatever the budget.
    let mut all: Vec<(String, bool)> = missing.into_iter().map(|m| (m, true)).collect();
    for word in resource_words(text) {
        if !all.iter().any(|(m, _)| m == word) {
            all.push((word.to_string(), true));
        }
    }
    for c in cands {
        if !all.iter().any(|(m, _)| m.eq_ignore_ascii_case(&c.0)) {
            all.push(c);
        }
    }
    let mut terms = pick(all, max);
    for w in command_words {
        if !terms.iter().any(|t| t.eq_ignore_ascii_case(w)) {
            terms.push(w.clone());
        }
    }
    // A single word says too little, unless it is what the error says is missing
    // (`no such file or directory: …/asdf.sh`), which leads the terms.
    let enough = terms.len() >= 2 || (says_missing && !terms.is_empty());
    if enough { terms } else { Vec::new() }
}

/// What an operating-system error is about, in the words knowledge uses for it: the errno
/// name (`EADDRINUSE`, Ruby's `Errno::EADDRINUSE`) or its message names a resource the text
/// may not (`address already in use` is about a port).
const RESOURCES: &[(&str, &str)] = &[
    ("EADDRINUSE", "port"),
    ("address already in use", "port"),
    ("ENOSPC", "disk"),
    ("no space left on device", "disk"),
];

fn resource_words(text: &str) -> Vec<&'static str> {
    let lower = text.to_ascii_lowercase();
    let mut out: Vec<&'static str> = Vec::new();
    for &(sign, word) in RESOURCES {
        let found = if sign.bytes().all(|b| b.is_ascii_uppercase()) {
            text.match_indices(sign).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + sign.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !after.is_some_and(|c| c.is_ascii_alphanumeric())
            })
        } else {
            lower.contains(sign)
        };
        if found && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// Whether `w` is a version number: `1.2`, `v1.22.19`, `3.0.0-beta.1`, `(v20.11.1)`.
fn is_version(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    let w = w.strip_prefix(['v', 'V']).unwrap_or(w);
    let core = w.split(['-', '+']).next().unwrap_or(w);
    let mut parts = core.split('.');
    core.contains('.') && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Where a [`MISSING`] message puts the missing name.
#[derive(Clone, Copy, PartialEq)]
enum Name {
    /// Right after the phrase.
    After,
    /// Right before the phrase.
    Before,
    /// Right before the phrase, which ends the line.
    BeforeEnd,
}

/// Messages that name what could not be found: the command, library or file is the subject
/// of the error, even when it is a path or a word every error says (`code`).
const MISSING: &[(&str, Name)] = &[
    ("command not found: ", Name::After),         // zsh
    (": command not found", Name::BeforeEnd),     // bash, sh
    ("cannot load such file -- ", Name::After),   // Ruby
    ("no module named ", Name::After),            // Python
    ("cannot find module ", Name::After),         // Node
    ("can't resolve ", Name::After),              // webpack, Vite
    ("no such file or directory: ", Name::After), // zsh
    ("unable to locate package ", Name::After),   // apt
    (" is not recognized as ", Name::Before),     // Windows
];

/// The names that [`MISSING`] messages in `text` say are missing, as search terms: a
/// library path by its first segment (`rexml/document` → `rexml`, `@babel/core` → `babel`),
/// a file path by its name (`/usr/local/opt/asdf/libexec/asdf.sh` → `asdf.sh`; a generic
/// name by the path's stem, `/srv/app/config.yml` → `app`), a Python
/// module by its package (`yaml.constructor` → `yaml`). At most three.
fn missing_names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let lower = line.trim_end().to_ascii_lowercase();
        for &(phrase, place) in MISSING {
            let Some(at) = lower.find(phrase) else {
                continue;
            };
            let raw = match place {
                Name::After => line[at + phrase.len()..].split_whitespace().next(),
                Name::BeforeEnd if at + phrase.len() != lower.len() => None,
                Name::Before | Name::BeforeEnd => {
                    line[..at].rsplit([' ', ':']).find(|w| !w.is_empty())
                }
            };
            let Some(name) = raw.and_then(missing_name) else {
                continue;
            };
            if out.len() < 3 && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

fn missing_name(raw: &str) -> Option<String> {
    let raw =
        raw.trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | ',' | ';' | ':' | '(' | ')'));
    let name = if raw.starts_with(['/', '.', '~']) {
        // A file by its whole name when that says something (`asdf.sh`), as the ambient
        // hook searches it; else by the path's stem.
        let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
        super::files::file_name_term(last).or_else(|| super::files::path_stem(raw))?
    } else {
        // A library path's first segment; a Python module's package.
        let first = raw.trim_start_matches('@').split('/').next()?;
        first.split('.').next()?.to_string()
    };
    let ok = name.chars().count() >= 2
        && name.chars().any(|c| c.is_alphabetic())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| name.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_not_terms() {
        for v in ["1.2", "v1.22.19", "3.0.0-beta.1", "(v20.11.1)", "V2.0,"] {
            assert!(is_version(v), "{v}");
        }
        for w in ["1", "v1", "e.g.", "main.rs", "2.x", "node", "."] {
            assert!(!is_version(w), "{w}");
        }
        let terms = error_terms_up_to(
            "yarn global v1.22.19\nsuccess Installed \"vercel@33.5.3\" with binaries",
            &[],
            16,
        );
        assert!(terms.iter().any(|t| t.contains("vercel")), "{terms:?}");
        assert!(
            !terms.iter().any(|t| t.contains("22") || t.contains("33")),
            "{terms:?}"
        );
    }

    #[test]
    fn missing_names_are_the_subject() {
        assert_eq!(missing_names("zsh: command not found: code"), ["code"]);
        assert_eq!(missing_names("bash: vercel: command not found"), ["vercel"]);
        assert_eq!(
            missing_names("  cannot load such file -- rexml/document"),
            ["rexml"]
        );
        assert_eq!(
            missing_names("ModuleNotFoundError: No module named 'yaml.constructor'"),
            ["yaml"]
        );
        assert_eq!(
            missing_names("Error: Cannot find module '@babel/core'"),
            ["babel"]
        );
        assert_eq!(
            missing_names(
                "/Users/dev/.zshrc:.:225: no such file or directory: /usr/local/opt/asdf/libexec/asdf.sh\nzsh: command not found: node"
            ),
            ["asdf.sh", "node"]
        );
        assert_eq!(
            missing_names("cat: /srv/billing/config.yml: No such file or directory"),
            Vec::<String>::new(),
            "the phrase must lead the name"
        );
        assert_eq!(
            missing_names("zsh: no such file or directory: /srv/billing/config.yml"),
            ["billing"]
        );
        assert_eq!(
            missing_names("'gradle' is not recognized as an internal or external command,"),
            ["gradle"]
        );
        // Numbers and punctuation are not names; an ordinary error names nothing missing.
        assert!(missing_names("zsh: command not found: 42").is_empty());
        assert!(missing_names("error[E0425]: cannot find value `x` in this scope").is_empty());
        // The missing name is kept even where the budget is tight and the word is noise.
        let terms = error_terms_up_to(
            "zsh: command not found: code\nwarning: something else entirely happened here",
            &[],
            2,
        );
        assert_eq!(terms[0], "code", "{terms:?}");
    }

    #[test]
    fn an_os_error_names_its_resource() {
        // Puma's log lines come first; the uncaught exception, last, is what went wrong.
        let puma = "Exit code 1\n=> Booting Puma\nPuma starting in single mode...\n*  Environment: development\nExiting\n/u/.gem/puma-6.4.2/lib/puma/binder.rb:334:in `initialize': Address already in use - bind(2) for \"127.0.0.1\" port 3000 (Errno::EADDRINUSE)\n\tfrom /u/.gem/puma-6.4.2/lib/puma/binder.rb:334:in `new'";
        let text = error_text(puma);
        assert!(text.contains("Address already in use"), "{text}");
        let terms = error_terms(&text, &[]);
        assert_eq!(terms[0], "port", "{terms:?}");
        let node = "Error: listen EADDRINUSE: :::3000\n    at Server.setupListenHandle";
        assert!(error_terms(node, &[]).contains(&"port".to_string()));
        // A word that merely contains the name is not it.
        assert!(resource_words("XEADDRINUSEX ENOSPCY").is_empty());
        assert_eq!(
            resource_words("write /tmp/x: no space left on device"),
            ["disk"]
        );
    }

    #[test]
    fn diff_excerpts_and_labels_are_not_terms() {
        let text = error_text(
            "Exit code 2\napp/models/order.rb:14: trailing whitespace.\n+  validates :status, presence: true\nREADME.md:22: trailing whitespace.\n+## Local setup",
        );
        let terms = error_terms(&text, &[]);
        assert!(terms.iter().any(|t| t == "whitespace"), "{terms:?}");
        assert!(
            !terms
                .iter()
                .any(|t| t.contains("validates") || t == "setup"),
            "{terms:?}"
        );
        let terms = error_terms(
            "ERROR:  relation \"bookings\" does not exist\nHINT:  Perhaps you meant to reference the table",
            &[],
        );
        assert!(
            !terms
                .iter()
                .any(|t| ["hint", "exist", "perhaps", "meant"].contains(&t.as_str())),
            "{terms:?}"
        );
    }

    #[test]
    fn a_test_runners_failure_is_what_it_expected_not_its_tally() {
        let jest = "Exit code 1\n FAIL  src/components/Hidden.test.jsx\n  Hidden\n    ✕ renders nothing when hidden (4 ms)\n\n  ● Hidden › renders nothing when hidden\n\n    expect(received).toBeNull()\n\n    Received: <div />\n\n      14 |       <Hidden hidden />\n    > 16 |     expect(container).toBeNull();\n         |                       ^\n\n      at Object.toBeNull (src/components/Hidden.test.jsx:16:23)\n\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 1 passed, 2 total\nSnapshots:   0 total\nTime:        1.284 s\nRan all test suites.";
        let text = error_text(jest);
        assert!(text.contains("expect(received).toBeNull()"), "{text}");
        assert!(text.contains("Received: <div />"), "{text}");
        assert!(
            !text.contains("Test Suites") && !text.contains("Snapshots"),
            "{text}"
        );
        let terms = error_terms(&text, &[]);
        assert!(terms.iter().any(|t| t == "toBeNull"), "{terms:?}");
        assert!(
            !terms.iter().any(|t| t == "total" || t == "passed"),
            "{terms:?}"
        );
    }

    #[test]
    fn a_python_traceback_header_is_not_what_went_wrong() {
        let py = "Exit code 1\nTraceback (most recent call last):\n  File \"/app/scripts/quote.py\", line 41, in <module>\n    main()\nNameError: name 'shiping_fee' is not defined";
        let terms = error_terms(&error_text(py), &[]);
        assert!(terms.iter().any(|t| t == "NameError"), "{terms:?}");
        assert!(
            !terms
                .iter()
                .any(|t| ["traceback", "recent", "last", "most"]
                    .contains(&t.to_lowercase().as_str())),
            "{terms:?}"
        );
    }

    #[test]
    fn a_logged_error_is_a_message_a_counter_is_progress() {
        let op = "Exit code 1\n[ERROR] 2024/05/14 09:32:17 You are not currently signed in. Please run `op signin --help` for instructions";
        assert!(
            error_text(op).contains("not currently signed in"),
            "{}",
            error_text(op)
        );
        let bsb =
            "Exit code 2\n[1/3] Building src/Swatch.cmj\n[2/3] Linking\nFAILED: src/Swatch.cmj";
        assert!(!error_text(bsb).contains("Building"), "{}", error_text(bsb));
        assert!(
            is_level_tag("[warning] x") && !is_level_tag("[1/3] x") && !is_level_tag("[ERROR x")
        );
    }

    #[test]
    fn a_missing_name_alone_is_a_query() {
        let text = error_text(
            "Exit code 1\n/Users/dana/.zshrc:.:118: no such file or directory: /opt/homebrew/opt/asdf/libexec/asdf.sh",
        );
        assert_eq!(error_terms(&text, &[]), ["asdf.sh"]);
        // Any other lone word is not.
        assert!(error_terms("Exit code 137\nKilled", &[]).is_empty());
    }

    #[test]
    fn error_keywords() {
        let e = "Exit code 101\n   Compiling foo v0.1.0\nerror[E0502]: cannot borrow `self.cache` as mutable\n --> src/main.rs:10:5\n";
        let text = error_text(e);
        assert!(!text.contains("Exit code"));
        let terms = error_terms(&text, &[]);
        assert!(terms.contains(&"e0502".to_string()), "{terms:?}");
        assert!(terms.contains(&"borrow".to_string()), "{terms:?}");
        assert!(!terms.iter().any(|t| t.contains("main")), "{terms:?}");
        assert!(error_terms("Exit code 1", &[]).is_empty());
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
        let terms = error_terms(
            &error_text(
                "Exit code 1\nFAIL src/cart.test.ts\n  3 tests failed, run the tests again with --verbose",
            ),
            &[],
        );
        assert!(!terms.iter().any(|t| t.starts_with("fail")), "{terms:?}");
        // A lone error line brings the lines around it.
        let pending = "Exit code 1\nMigrations are pending. To resolve this issue, run:\n\n        bin/rails db:migrate RAILS_ENV=test\n\n (ActiveRecord::PendingMigrationError)";
        let terms = error_terms(&error_text(pending), &[]);
        assert!(terms.iter().any(|t| t == "pending"), "{terms:?}");
        assert!(terms.len() <= ERROR_TERMS);
    }

    #[test]
    fn the_commands_words_follow_the_outputs_and_count_toward_enough() {
        let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let text = error_text("Exit code 1\npsql: error: db/x.sql: No such file or directory");
        assert!(
            error_terms(&text, &[]).len() < 2,
            "{:?}",
            error_terms(&text, &[])
        );
        let terms = error_terms(&text, &words(&["docker", "exec", "psql"]));
        assert!(terms.ends_with(&words(&["docker", "exec"])), "{terms:?}");
        assert_eq!(
            terms.iter().filter(|t| *t == "psql").count(),
            1,
            "{terms:?}"
        );
        // An output too short to say anything is not searched, whatever the command.
        assert!(error_terms("Exit code 1", &words(&["git", "diff", "exit", "code"])).is_empty());
    }
}
