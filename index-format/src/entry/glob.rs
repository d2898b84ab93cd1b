//! Glob sources (`applyTo: '**/*.ts'` in Copilot instruction files, Cursor's `globs`): which
//! sources are globs, splitting a comma list, and matching a repository path against one.

/// Characters that make a source a glob.
const META: [char; 4] = ['*', '?', '[', '{'];
/// Longest glob matched; longer ones (never written by people) match nothing.
const MAX_GLOB_LEN: usize = 1024;
/// Most alternatives a glob's `{a,b}` groups expand to; a glob with more matches nothing.
const MAX_ALTERNATIVES: usize = 64;

/// Whether a source is a glob rather than a path.
pub fn is_glob(source: &str) -> bool {
    source.contains(META)
}

/// The part of a glob before its first metacharacter: every path it matches starts with
/// it, unless the glob has no `/` (then it is matched against file names).
pub fn literal_prefix(glob: &str) -> &str {
    glob.find(META).map_or(glob, |i| &glob[..i])
}

/// Splits a comma list of paths or globs, leaving commas inside `{…}` alone
/// (`**/*.{ts,tsx}, docs/**` → `**/*.{ts,tsx}`, ` docs/**`).
pub(super) fn split_list(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Whether a normalised glob matches every file (`**`, `*`, `**/*`): as a source it says
/// nothing about which code an entry is about, so it is dropped.
pub(super) fn matches_everything(glob: &str) -> bool {
    glob.split('/').all(|c| c == "*" || c == "**")
}

/// Whether repository path `path` matches `glob`. `*` and `?` stay within one path
/// component, `**` as a whole component spans any number of them, `[a-z]`/`[!x]` are
/// classes and `{a,b}` alternatives. A glob without `/` is matched against the file name
/// (`*.py` is every Python file), as in `.gitignore`.
pub fn glob_matches(glob: &str, path: &str) -> bool {
    if glob.len() > MAX_GLOB_LEN || path.is_empty() {
        return false;
    }
    let mut alternatives = Vec::new();
    if !expand_braces(glob, &mut alternatives) {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    alternatives.iter().any(|g| {
        if g.contains('/') {
            let pattern: Vec<&str> = g.split('/').filter(|c| !c.is_empty()).collect();
            components_match(&pattern, &parts)
        } else {
            segment_matches(g, parts[parts.len() - 1])
        }
    })
}

/// Expands the first `{a,b}` group of `glob` (then the rest, recursively) into `out`;
/// false when there would be more than [`MAX_ALTERNATIVES`].
fn expand_braces(glob: &str, out: &mut Vec<String>) -> bool {
    let Some(open) = glob.find('{') else {
        out.push(glob.to_string());
        return out.len() <= MAX_ALTERNATIVES;
    };
    let mut depth = 0usize;
    let mut close = None;
    let mut commas = Vec::new();
    for (i, c) in glob[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            ',' if depth == 1 => commas.push(open + i),
            _ => {}
        }
    }
    let Some(close) = close else {
        // An unclosed `{` is a literal character.
        out.push(glob.to_string());
        return out.len() <= MAX_ALTERNATIVES;
    };
    let (head, tail) = (&glob[..open], &glob[close + 1..]);
    let mut from = open + 1;
    for end in commas.into_iter().chain([close]) {
        let alt = format!("{head}{}{tail}", &glob[from..end]);
        if !expand_braces(&alt, out) {
            return false;
        }
        from = end + 1;
    }
    true
}

/// Component-wise match with `**` spanning components: `ok[j]` says whether the pattern
/// from the current component on matches `text[j..]`, filled from the last component back.
fn components_match(pattern: &[&str], text: &[&str]) -> bool {
    let n = text.len();
    let mut ok = vec![false; n + 1];
    ok[n] = true;
    for p in pattern.iter().rev() {
        let mut next = vec![false; n + 1];
        if *p == "**" {
            // Zero components, or one more than a later position takes.
            let mut any = false;
            for j in (0..=n).rev() {
                any |= ok[j];
                next[j] = any;
            }
        } else {
            for j in 0..n {
                next[j] = ok[j + 1] && segment_matches(p, text[j]);
            }
        }
        ok = next;
    }
    ok[0]
}

/// One component against a pattern of literals, `*`, `?` and `[…]` classes, with the
/// usual single backtrack point for the last `*` (linear in practice, quadratic at worst).
fn segment_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
            continue;
        }
        if pi < p.len()
            && let Some(len) = single_match(&p[pi..], t[ti])
        {
            pi += len;
            ti += 1;
            continue;
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether the pattern element at the start of `p` (a literal, `?` or a class) matches
/// `c`; the element's length in chars when it does.
fn single_match(p: &[char], c: char) -> Option<usize> {
    match p[0] {
        '?' => Some(1),
        '[' => {
            let negate = matches!(p.get(1), Some('!' | '^'));
            let mut i = if negate { 2 } else { 1 };
            let mut hit = false;
            let mut first = true;
            while i < p.len() && (p[i] != ']' || first) {
                first = false;
                if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&e| e != ']') {
                    hit |= p[i] <= c && c <= p[i + 2];
                    i += 3;
                } else {
                    hit |= p[i] == c;
                    i += 1;
                }
            }
            if i >= p.len() {
                // No closing `]`: a literal `[`.
                return (c == '[').then_some(1);
            }
            (hit != negate).then_some(i + 1)
        }
        lit => (lit == c).then_some(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_copilot_and_cursor_mean_them() {
        for (glob, path) in [
            (".github/workflows/*.yml", ".github/workflows/ci.yml"),
            ("**/*.ts", "src/app/main.ts"),
            ("**/*.ts", "main.ts"),
            ("src/**", "src/a/b/c.rs"),
            ("src/**/*.rs", "src/lib.rs"),
            ("src/**/test_*.py", "src/a/b/test_x.py"),
            ("*.py", "tools/gen/x.py"),
            ("**/*.{ts,tsx}", "web/App.tsx"),
            ("{client,server}/**/*.rs", "server/src/main.rs"),
            ("docs/?.md", "docs/a.md"),
            ("src/[a-c]*.rs", "src/build.rs"),
            ("src/[!x]*.rs", "src/build.rs"),
            ("Dockerfile*", "deploy/Dockerfile.prod"),
        ] {
            assert!(glob_matches(glob, path), "{glob} should match {path}");
        }
        for (glob, path) in [
            (".github/workflows/*.yml", ".github/workflows/sub/ci.yml"),
            (".github/workflows/*.yml", ".github/workflows/ci.yaml"),
            ("src/**/*.rs", "tests/lib.rs"),
            ("**/*.{ts,tsx}", "web/App.jsx"),
            ("docs/?.md", "docs/ab.md"),
            ("src/[a-c]*.rs", "src/main.rs"),
            ("src/[!x]*.rs", "src/xtask.rs"),
            ("*.py", "x.pyc"),
            ("src/*", "src/a/b.rs"),
        ] {
            assert!(!glob_matches(glob, path), "{glob} should not match {path}");
        }
    }

    #[test]
    fn lists_prefixes_and_catch_alls() {
        assert_eq!(
            split_list("**/*.{ts,tsx}, docs/**,a"),
            ["**/*.{ts,tsx}", " docs/**", "a"]
        );
        assert_eq!(
            literal_prefix(".github/workflows/*.yml"),
            ".github/workflows/"
        );
        assert_eq!(literal_prefix("src/lib.rs"), "src/lib.rs");
        assert!(is_glob("a/*.rs") && is_glob("a/{b,c}") && !is_glob("a/b.rs"));
        for all in ["**", "*", "**/*", "**/**"] {
            assert!(matches_everything(all), "{all}");
        }
        assert!(!matches_everything("**/*.rs"));
    }

    #[test]
    fn hostile_globs_stay_cheap_and_never_panic() {
        let braces = "{a,b}".repeat(10);
        assert!(!glob_matches(&braces, "a"));
        let stars = "**/".repeat(200) + "x";
        assert!(glob_matches(&stars, &format!("{}x", "a/".repeat(200))));
        for g in [
            "[", "[]", "[!]", "{", "}", "{,}", "[a-", "a/[z-a]", "**/**/",
        ] {
            let _ = glob_matches(g, "a/b");
        }
        assert!(!glob_matches(&"*".repeat(2000), "a"));
    }
}
