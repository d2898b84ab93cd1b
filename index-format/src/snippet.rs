//! Search-result snippets: a short plain-text excerpt of an entry's body around the first
//! query match, without the title the body opens with and without Markdown markers.

use crate::tokenize::Analyzer;

/// A short plain-text excerpt of `body` around the first query-term match after the
/// leading title heading; the body's opening text when no term occurs in it. `terms` are
/// tokens of the current tokenizer.
pub fn snippet(body: &str, title: &str, terms: &[&str], max_chars: usize) -> String {
    snippet_with(Analyzer::CURRENT, body, title, terms, max_chars)
}

/// [`snippet`] for terms of `analyzer` (an artifact's tokenizer version).
pub fn snippet_with(
    analyzer: Analyzer,
    body: &str,
    title: &str,
    terms: &[&str],
    max_chars: usize,
) -> String {
    if max_chars == 0 {
        return String::new();
    }
    let rest = &body[after_title(body, title)..];
    let mut hit: Option<usize> = None;
    analyzer.spans_until(rest, |t, _, span| {
        if terms.contains(&t) {
            hit = Some(span.start);
        }
        hit.is_none()
    });
    let start = match hit {
        Some(at) => {
            // Back up to a line start or about a third of the window, at a char boundary.
            let back = max_chars / 3;
            let mut s = at.saturating_sub(back * 2);
            if let Some(nl) = rest[..at].rfind('\n')
                && at - nl <= back * 2
            {
                s = nl + 1;
            }
            while !rest.is_char_boundary(s) {
                s += 1;
            }
            s
        }
        None => 0,
    };
    let mut out = String::with_capacity(max_chars + 8);
    if start > 0 {
        out.push('…');
    }
    let mut count = 0;
    let mut last_space = true;
    let mut truncated = false;
    // Markdown's line markers (`#` of headings, `>` of quotes) are dropped only where they
    // open a line; elsewhere `>` and `#` are text (`a > b`, `Vec<T>`, `C#`). Backticks are
    // code markup wherever they stand.
    let mut line_start = start == 0 || rest.as_bytes()[start - 1] == b'\n';
    for c in rest[start..].chars() {
        if line_start {
            match c {
                '#' | '>' | ' ' | '\t' => continue,
                _ => line_start = false,
            }
        }
        let c = match c {
            '\n' => {
                line_start = true;
                ' '
            }
            '\r' | '\t' => ' ',
            '`' => continue,
            c if c.is_control() => continue,
            c => c,
        };
        if c == ' ' {
            if last_space {
                continue;
            }
            last_space = true;
        } else {
            last_space = false;
        }
        if count >= max_chars {
            truncated = true;
            break;
        }
        out.push(c);
        count += 1;
    }
    let trimmed_len = out.trim_end().len();
    out.truncate(trimmed_len);
    if truncated {
        out.push('…');
    }
    out
}

/// Where the body's text starts after blank lines and a first line that only repeats the
/// title (a `# Title` heading, or the title as plain text; a Setext underline with it).
fn after_title(body: &str, title: &str) -> usize {
    let lead = body.len() - body.trim_start_matches(['\n', '\r', ' ', '\t']).len();
    // Back to the start of the first non-blank line (keeps its indentation out of the way).
    let first_start = body[..lead].rfind('\n').map_or(0, |nl| nl + 1);
    let rest = &body[first_start..];
    let line_end = rest.find('\n').unwrap_or(rest.len());
    let first = &rest[..line_end];
    let text = first.trim().trim_start_matches('#').trim();
    let is_heading = first.trim_start().starts_with('#');
    let title = title.trim();
    if !is_heading && (title.is_empty() || !text.eq_ignore_ascii_case(title)) {
        return first_start;
    }
    let mut end = first_start + line_end;
    // A Setext heading: the title line underlined with `===` or `---`.
    let after = &body[end..];
    let next = after.strip_prefix('\n').unwrap_or(after);
    let next_line = next.split('\n').next().unwrap_or("");
    if !is_heading
        && !next_line.trim().is_empty()
        && next_line.trim().chars().all(|c| c == '=' || c == '-')
    {
        end += (after.len() - next.len()) + next_line.len();
    }
    end.min(body.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_not_repeated_whatever_the_layout() {
        for body in [
            "# Rebase onto\n\nMove a branch with git rebase --onto.",
            "\n# Rebase onto\n\nMove a branch with git rebase --onto.",
            "\n\n  \n# Rebase onto\nMove a branch with git rebase --onto.",
            "Rebase onto\n===========\n\nMove a branch with git rebase --onto.",
            "rebase ONTO\n\nMove a branch with git rebase --onto.",
        ] {
            let s = snippet(body, "Rebase onto", &["nosuch"], 160);
            assert_eq!(s, "Move a branch with git rebase --onto.", "{body:?}");
        }
        // A first line that is neither a heading nor the title is text.
        assert_eq!(
            snippet("Other first line\n\nmore", "Rebase onto", &[], 160),
            "Other first line more"
        );
    }

    #[test]
    fn code_keeps_its_characters() {
        let body = "# T\n\n> a quote\n\n```rust\nif a > b && *p >= 2 { Vec::<u8>::new() }\n```\n## C# notes";
        let s = snippet(body, "T", &[], 200);
        assert_eq!(
            s,
            "a quote rust if a > b && *p >= 2 { Vec::<u8>::new() } C# notes"
        );
    }

    #[test]
    fn snippet_centres_on_the_first_match() {
        let body = format!("# T\n\n{} needle and more text", "filler word ".repeat(40));
        let s = snippet(&body, "T", &["needl"], 60);
        assert!(s.starts_with('…') && s.contains("needle"), "{s}");
        let unstemmed = snippet_with(Analyzer::SURFACE, &body, "T", &["needle"], 60);
        assert!(unstemmed.contains("needle"), "{unstemmed}");
    }
}
