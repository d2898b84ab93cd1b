//! The Markdown an entry needs read: fenced code blocks, the first heading (the default
//! title) and inline `[source: path]` markers.

/// Whether a line opens or closes a fenced code block; returns the fence char and length.
pub(super) fn fence_of(line: &str) -> Option<(u8, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = *rest.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|&b| b == c).count();
    if n < 3 || (c == b'`' && rest[n..].contains('`')) {
        return None;
    }
    Some((c, n))
}

/// Iterates body lines with whether each is inside a fenced code block (fence lines count
/// as inside).
pub(super) fn lines_with_fences(body: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut open: Option<(u8, usize)> = None;
    body.split('\n')
        .map(move |line| match (open, fence_of(line)) {
            (None, Some(f)) => {
                open = Some(f);
                (line, true)
            }
            (Some((c, n)), Some((c2, n2)))
                if c == c2 && n2 >= n && line.trim().bytes().all(|b| b == c) =>
            {
                open = None;
                (line, true)
            }
            (Some(_), _) => (line, true),
            (None, None) => (line, false),
        })
}

/// The text of the first ATX (`# Title`) or setext (`Title` / `===`) heading outside code.
pub(super) fn first_heading(body: &str) -> Option<String> {
    let mut prev: Option<&str> = None;
    for (line, in_code) in lines_with_fences(body) {
        if in_code {
            prev = None;
            continue;
        }
        if let Some(text) = atx_heading(line) {
            if !text.is_empty() {
                return Some(text.to_string());
            }
            prev = None;
            continue;
        }
        let t = line.trim();
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(p) = prev
            && indent <= 3
            && !t.is_empty()
            && (t.bytes().all(|b| b == b'=') || (t.bytes().all(|b| b == b'-') && t.len() >= 2))
        {
            return Some(p.trim().to_string());
        }
        prev = (!t.is_empty() && indent <= 3 && !starts_block(t)).then_some(line);
    }
    None
}

/// Whether a (trimmed) line starts a list item, quote, table or HTML block, which a
/// setext underline cannot turn into a heading.
pub(super) fn starts_block(t: &str) -> bool {
    let b = t.as_bytes();
    let marker_then_space = |n: usize| b.get(n).is_none_or(|c| *c == b' ' || *c == b'\t');
    match b.first() {
        Some(b'-' | b'*' | b'+') => marker_then_space(1),
        Some(b'>' | b'|' | b'<') => true,
        Some(c) if c.is_ascii_digit() => {
            let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
            digits <= 9
                && matches!(b.get(digits), Some(b'.' | b')'))
                && marker_then_space(digits + 1)
        }
        _ => false,
    }
}

pub(super) fn atx_heading(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let mut text = after.trim();
    // Optional closing sequence: ` ##`.
    let stripped = text.trim_end_matches('#');
    if stripped.is_empty() || stripped.ends_with([' ', '\t']) {
        text = stripped.trim_end();
    }
    Some(text)
}

/// Paths named by inline `[source: a/b.rs]` markers (comma-separated lists allowed),
/// outside fenced code blocks.
pub(super) fn inline_sources(body: &str) -> Vec<String> {
    const MARK: &[u8] = b"[source:";
    let mut out = Vec::new();
    if !body.contains(":") {
        return out;
    }
    for (line, in_code) in lines_with_fences(body) {
        if in_code {
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        while i + MARK.len() <= b.len() {
            if b[i] == b'[' && b[i..i + MARK.len()].eq_ignore_ascii_case(MARK) {
                let start = i + MARK.len();
                match line[start..].find(']') {
                    Some(len) => {
                        out.extend(line[start..start + len].split(',').map(str::to_string));
                        i = start + len + 1;
                        continue;
                    }
                    // No `]` later on this line: no later marker can close either.
                    None => break,
                }
            }
            i += 1;
        }
    }
    out
}
