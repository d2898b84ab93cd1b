//! Hook text: compact, size-capped, one line per knowledge entry (project:id, topic, date,
//! title, snippet). Each agent adapter wraps it in its agent's output form.

/// Cap on the text helix puts into the model's context, in characters: about 500 tokens,
/// well under the smallest limit an agent puts on hook context (Codex spills about 2,500
/// tokens to a file).
pub const MAX_CONTEXT_CHARS: usize = 2000;

/// Text built line by line that never grows past its cap.
#[derive(Debug)]
pub struct Text {
    buf: String,
    chars: usize,
    cap: usize,
    full: bool,
    /// Whether any entry or topic line was added (headers alone are not worth printing).
    pub has_content: bool,
}

impl Text {
    pub fn new(cap: usize) -> Text {
        Text {
            buf: String::new(),
            chars: 0,
            cap,
            full: false,
            has_content: false,
        }
    }

    /// Appends a line; a line that does not fit is shortened with `…` or, when little room
    /// is left, dropped (and every later line with it). Returns whether it was added.
    pub fn line(&mut self, line: &str) -> bool {
        if self.full {
            return false;
        }
        let n = line.chars().count();
        let sep = usize::from(!self.buf.is_empty());
        let room = self.cap.saturating_sub(self.chars + sep);
        if n <= room {
            if sep == 1 {
                self.buf.push('\n');
            }
            self.buf.push_str(line);
            self.chars += n + sep;
            return true;
        }
        self.full = true;
        if room < 40 {
            return false;
        }
        if sep == 1 {
            self.buf.push('\n');
        }
        let cut: String = line.chars().take(room - 1).collect();
        self.buf.push_str(&cut);
        self.buf.push('…');
        self.chars += room + sep;
        true
    }

    /// Appends a content line (an entry or topics), see [`Text::line`].
    pub fn item(&mut self, line: &str) -> bool {
        let added = self.line(line);
        self.has_content |= added;
        added
    }

    #[cfg(test)]
    pub fn is_full(&self) -> bool {
        self.full
    }

    pub fn as_str(&self) -> &str {
        &self.buf
    }
}

/// Collapses whitespace (newlines included) to single spaces and cuts at `max` characters.
pub fn compact(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max * 4));
    let mut n = 0;
    for w in s.split_whitespace() {
        if n > 0 {
            if n + 1 >= max {
                out.push('…');
                return out;
            }
            out.push(' ');
            n += 1;
        }
        for c in w.chars() {
            if n >= max {
                out.push('…');
                return out;
            }
            out.push(c);
            n += 1;
        }
    }
    out
}

/// A short excerpt of an entry body for lines without a search snippet: the first prose line.
pub fn body_excerpt(body: &str, max: usize) -> String {
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| {
            !l.is_empty() && !l.starts_with('#') && !l.starts_with("```") && !l.starts_with("---")
        })
        .unwrap_or("");
    compact(line, max)
}

/// An entry's title as the hooks show it: a teammate's open proposal (the overlay marks it
/// `proposed_id`) says so first, where no cut can hide it.
pub fn marked_title<'a>(title: &'a str, extra_json: &str) -> std::borrow::Cow<'a, str> {
    if extra_json.contains("\"proposed_id\"") {
        std::borrow::Cow::Owned(format!("(proposed, unreviewed) {title}"))
    } else {
        std::borrow::Cow::Borrowed(title)
    }
}

/// One compact line for an entry: `- project:id · topic · date · title marks — snippet`
/// (`marks`: what to know before trusting it, e.g. " (review due)").
pub fn entry_line(
    project: &str,
    id: &str,
    topic: &str,
    when: Option<i64>,
    title: &str,
    marks: &str,
    snippet: &str,
) -> String {
    let mut s = format!("- {project}:{id} · {}", compact(topic, 40));
    if let Some(t) = when {
        s.push_str(" · ");
        s.push_str(&helix_index_format::format_day(t));
    }
    s.push_str(" · ");
    s.push_str(&compact(title, 100));
    s.push_str(marks);
    let snippet = compact(snippet, 160);
    if !snippet.is_empty() {
        s.push_str(" — ");
        s.push_str(&snippet);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(helix_index_format::format_day(0), "1970-01-01");
        assert_eq!(helix_index_format::format_day(1_714_521_600), "2024-05-01");
        assert_eq!(helix_index_format::format_day(-86_400), "1969-12-31");
    }

    #[test]
    fn text_is_capped() {
        let mut t = Text::new(100);
        assert!(t.line("header"));
        for _ in 0..10 {
            t.item(&"x".repeat(30));
        }
        assert!(t.as_str().chars().count() <= 100);
        assert!(t.is_full());
        assert!(t.has_content);
    }

    #[test]
    fn compacts() {
        assert_eq!(compact("a\n\n b  c", 10), "a b c");
        assert_eq!(compact("abcdef", 3), "abc…");
    }
}
