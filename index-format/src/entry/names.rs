//! Names and paths of entries: which files are entries, slugs from titles, reserved names,
//! and the one rule that puts a repository-relative source path in canonical form.

/// Whether a repository-relative path names an entry of a whole repository (see
/// [`super::Root::classify`] for the rule and its reasons).
pub fn is_entry_path(path: &str) -> bool {
    matches!(
        super::Root::Repository.classify(path),
        super::FileKind::Entry { .. }
    )
}

/// A file-name-safe slug for a title: lowercase `[a-z0-9-]`, Latin letters with accents
/// transliterated (`é` → `e`, `ß` → `ss`), other letters dropped, every run of other
/// characters one `-`, at most 80 chars, never empty (`entry`), never a Windows device name.
pub fn slugify(title: &str) -> String {
    const MAX: usize = 80;
    let mut slug = String::new();
    let mut pending_dash = false;
    for c in title.chars().flat_map(char::to_lowercase) {
        let piece: Option<&str>;
        let mut buf = [0u8; 4];
        if c.is_ascii_alphanumeric() {
            piece = Some(c.encode_utf8(&mut buf));
        } else if let Some(t) = transliterate(c) {
            piece = Some(t);
        } else if c == '\''
            || c == '\u{2019}'
            || c.is_alphanumeric()
            || crate::tokenize::is_combining_mark(c)
        {
            // Apostrophes and letters we cannot spell in ASCII vanish without a break.
            continue;
        } else {
            pending_dash = true;
            continue;
        }
        if let Some(p) = piece {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push_str(p);
        }
        if slug.len() > MAX {
            break;
        }
    }
    slug.truncate(MAX);
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() {
        return "entry".to_string();
    }
    if is_reserved_name(&slug) {
        return format!("{slug}-entry");
    }
    slug
}

/// Windows device names (and `.git`), which must never be a file or folder name.
pub(crate) fn is_reserved_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or("");
    matches!(stem, "con" | "prn" | "aux" | "nul" | "clock$")
        || ((stem.starts_with("com") || stem.starts_with("lpt"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
        || lower == ".git"
}

pub(super) fn transliterate(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĳ' => "ij",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' | 'ș' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' | 'ț' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        'þ' => "th",
        _ => return None,
    })
}

/// A repository-relative source path in canonical form, or `None` for paths that are not
/// safe relative repository paths (absolute, `..`, URLs, NUL), which are dropped.
/// `./` prefixes, `\` separators, empty and `.` components, and line suffixes
/// (`#L10-L20`, `:42`) are normalised away.
pub(crate) fn normalise_source(raw: &str) -> Option<String> {
    // Each step only removes characters, so repeating until nothing changes terminates and
    // makes the result canonical (normalising it again is a no-op).
    let mut cur = normalise_source_once(raw)?;
    loop {
        let next = normalise_source_once(&cur)?;
        if next == cur {
            return Some(cur);
        }
        cur = next;
    }
}

pub(super) fn normalise_source_once(raw: &str) -> Option<String> {
    let s = raw.trim().trim_matches('`').trim();
    if s.is_empty() || s.contains('\0') || s.contains("://") || s.chars().any(char::is_control) {
        return None;
    }
    let s = s.replace('\\', "/");
    if s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
        return None;
    }
    let mut s = s.as_str();
    if let Some(i) = s.find("#L") {
        s = &s[..i];
    }
    // `path:42` or `path:42:7` or `path:10-20`.
    while let Some(i) = s.rfind(':') {
        let tail = &s[i + 1..];
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            s = &s[..i];
        } else {
            break;
        }
    }
    let mut parts = Vec::new();
    for part in s.split('/') {
        match part.trim().trim_matches('`').trim() {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("/"))
}

pub(super) fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}
