//! The symbols an edit removes (identifiers in the old text that the new text lacks), for
//! the ambient hook's impact warning.

use super::terms::sorted_contains;
use helix_index_format::tokenize::is_stop_word;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
