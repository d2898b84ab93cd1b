//! Entry bodies as HTML for the web view.
//!
//! Entry text is untrusted: anyone with a write token, or an agent, writes it. So the HTML
//! carries no markup its writer chose: raw HTML is shown as text (comments are dropped),
//! links go only to http(s), mailto, a fragment or another entry, images load nothing, and
//! every attribute value is escaped here. The page's CSP is a second wall, not the first.

use pulldown_cmark::{
    CodeBlockKind, CowStr, Event, HeadingLevel, LinkType, Options, Parser, Tag, TagEnd,
};

/// Where an entry's relative links point: its project and its id (e.g. `git/rebase.md`).
#[derive(Debug, Clone, Copy)]
pub struct Base<'a> {
    pub project: &'a str,
    pub entry: &'a str,
}

/// The entry body as HTML safe to put inside a page that sends a strict CSP. Infallible,
/// and linear in the input (pulldown-cmark caps the expansion of reference links).
pub fn render(markdown: &str, base: &Base<'_>) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut sanitizer = Sanitizer {
        base,
        depth: 0,
        anchor_at: None,
        html_block: String::new(),
    };
    let events = Parser::new_ext(markdown, options).filter_map(|e| sanitizer.event(e));
    let mut html = String::with_capacity(markdown.len() + markdown.len() / 4);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// Whether `url` may be an href: http(s) (with `//`), mailto, a fragment, or a relative
/// reference that is not protocol-relative (`render` links one only when it names an
/// entry). Browsers ignore ASCII whitespace and control characters inside a scheme
/// (`java\tscript:`), so the scheme is read without them.
pub fn safe_url(url: &str) -> bool {
    classify(url).is_some()
}

/// HTML-escapes text for element content and double-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Rewrites pulldown-cmark's events so that its HTML writer only ever writes safe markup.
struct Sanitizer<'b> {
    base: &'b Base<'b>,
    /// Nesting of links and images (an image's alt text may hold a link, a link an image).
    depth: usize,
    /// The `depth` of the link or image that opened the one `<a>` open, if any: an inner
    /// link or image (a badge inside a link) gives its text without an anchor of its own.
    anchor_at: Option<usize>,
    /// The raw text of the HTML block being read: a comment may span several of its lines.
    html_block: String,
}

impl Sanitizer<'_> {
    fn event<'a>(&mut self, event: Event<'a>) -> Option<Event<'a>> {
        Some(match event {
            Event::Start(Tag::HtmlBlock) => {
                self.html_block.clear();
                return None;
            }
            Event::Html(html) => {
                self.html_block.push_str(&html);
                return None;
            }
            Event::End(TagEnd::HtmlBlock) => {
                let text = without_comments(&self.html_block);
                let text = text.trim();
                if text.is_empty() {
                    return None;
                }
                Event::Html(format!("<p>{}</p>\n", escape(text)).into())
            }
            // One event per tag or comment: a comment goes, any tag is shown as text.
            Event::InlineHtml(html) => {
                let text = without_comments(&html);
                if text.is_empty() {
                    return None;
                }
                Event::Text(text.into())
            }
            // The page's <h1> is the entry's title.
            Event::Start(Tag::Heading { level, .. }) => Event::Start(Tag::Heading {
                level: lower(level),
                id: None,
                classes: Vec::new(),
                attrs: Vec::new(),
            }),
            Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(lower(level))),
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let lang = info.split_ascii_whitespace().next().unwrap_or("");
                let known = (1..=32).contains(&lang.len())
                    && lang
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_+-".contains(&b));
                let lang = if known {
                    lang.to_owned()
                } else {
                    String::new()
                };
                Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang.into())))
            }
            // Alignment would be a `style` attribute, which a strict CSP refuses.
            Event::Start(Tag::Table(_)) => Event::Start(Tag::Table(Vec::new())),
            // Prefixed, so that a footnote's id cannot collide with the page's own ids.
            Event::FootnoteReference(name) => Event::FootnoteReference(format!("fn-{name}").into()),
            Event::Start(Tag::FootnoteDefinition(name)) => {
                Event::Start(Tag::FootnoteDefinition(format!("fn-{name}").into()))
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            }) => {
                let dest = match link_type {
                    LinkType::Email => CowStr::from(format!("mailto:{dest_url}")),
                    _ => dest_url,
                };
                return self.open(&dest, &title, "");
            }
            Event::Start(Tag::Image {
                dest_url, title, ..
            }) => {
                return self.open(&dest_url, &title, "image: ");
            }
            Event::End(TagEnd::Link | TagEnd::Image) => {
                let closes = self.anchor_at == Some(self.depth);
                self.depth = self.depth.saturating_sub(1);
                if !closes {
                    return None;
                }
                self.anchor_at = None;
                Event::InlineHtml("</a>".into())
            }
            other => other,
        })
    }

    /// Starts a link or image: an `<a>` (followed by `prefix`) when its destination is
    /// safe and no anchor is open, else nothing, so that only its text shows.
    fn open<'a>(&mut self, dest: &str, title: &str, prefix: &str) -> Option<Event<'a>> {
        self.depth += 1;
        if self.anchor_at.is_some() {
            return None;
        }
        let (href, external) = href(dest, self.base)?;
        self.anchor_at = Some(self.depth);
        let mut a = format!("<a href=\"{href}\"");
        if external {
            a.push_str(" rel=\"nofollow noopener noreferrer\"");
        }
        if !title.is_empty() {
            a.push_str(&format!(" title=\"{}\"", escape(title)));
        }
        a.push('>');
        a.push_str(prefix);
        Some(Event::InlineHtml(a.into()))
    }
}

fn lower(level: HeadingLevel) -> HeadingLevel {
    HeadingLevel::try_from(level as usize + 1).unwrap_or(HeadingLevel::H6)
}

/// `html` without its comments; an unterminated comment runs to the end, as in a browser.
fn without_comments(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        let body = &rest[start + 4..];
        // `<!-->` and `<!--->` are (empty) comments too.
        let end = if body.starts_with('>') {
            Some(1)
        } else if body.starts_with("->") {
            Some(2)
        } else {
            body.find("-->").map(|end| end + 3)
        };
        match end {
            Some(end) => rest = &body[end..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// A link destination as a browser would read it.
enum Dest<'u> {
    /// `http:`, `https:` or `mailto:` (canonical, lowercase) and what follows the colon.
    External(&'static str, &'u str),
    /// What follows `#` in a fragment-only link.
    Fragment(&'u str),
    /// A path (from the repository root when it starts with `/`) and its fragment.
    Path(&'u str, Option<&'u str>),
}

/// ASCII whitespace and control characters: browsers strip them around a URL and ignore
/// tabs and newlines anywhere in it; a scheme is compared without any of them.
fn ignorable(b: u8) -> bool {
    b <= b' ' || b == 0x7f
}

fn classify(url: &str) -> Option<Dest<'_>> {
    let url = url.trim_matches(|c: char| c.is_ascii() && ignorable(c as u8));
    if let Some(fragment) = url.strip_prefix('#') {
        return Some(Dest::Fragment(fragment));
    }
    let path_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    if let Some(colon) = url[..path_end].find(':') {
        let rest = &url[colon + 1..];
        let scheme = |name: &str| {
            let scheme = url[..colon].bytes().filter(|&b| !ignorable(b));
            scheme.map(|b| b.to_ascii_lowercase()).eq(name.bytes())
        };
        let slashes = || {
            rest.bytes()
                .filter(|&b| !matches!(b, b'\t' | b'\n' | b'\r'))
                .take(2)
                .eq(*b"//")
        };
        return if scheme("https") && slashes() {
            Some(Dest::External("https", rest))
        } else if scheme("http") && slashes() {
            Some(Dest::External("http", rest))
        } else if scheme("mailto") {
            Some(Dest::External("mailto", rest))
        } else {
            None
        };
    }
    // `//host` is another site, and browsers read `\` as `/`.
    if url.starts_with("//") || url.contains('\\') {
        return None;
    }
    let (path, fragment) = match url.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (url, None),
    };
    let path = path.split_once('?').map_or(path, |(path, _query)| path);
    Some(Dest::Path(path, fragment))
}

/// The href (escaped for the attribute) of a link destination, and whether it leaves the
/// site; `None` when it may not be a link. A path must name an entry (`.md`, `.markdown`)
/// at or below the repository root.
fn href(url: &str, base: &Base<'_>) -> Option<(String, bool)> {
    Some(match classify(url)? {
        Dest::External(scheme, rest) => {
            let rest: String = rest
                .chars()
                .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
                .collect();
            (
                escape(&format!("{scheme}:{}", encode(&rest, url_byte))),
                true,
            )
        }
        Dest::Fragment(fragment) => (escape(&format!("#{}", encode(fragment, url_byte))), false),
        Dest::Path(path, fragment) => {
            let id = resolve(path, base.entry)?;
            let mut href = format!(
                "/p/{}/e/{}",
                encode(base.project, path_byte),
                encode(&id, path_byte)
            );
            if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
                href.push('#');
                href.push_str(&escape(&encode(fragment, url_byte)));
            }
            (href, false)
        }
    })
}

/// The entry id a relative (or `/`-rooted) link path names from entry `from`: decoded,
/// dot segments resolved; `None` above the root or when it is no entry file.
fn resolve(path: &str, from: &str) -> Option<String> {
    let path = percent_decode(path)?;
    let mut parts: Vec<&str> = match (path.starts_with('/'), from.rsplit_once('/')) {
        (false, Some((folder, _))) => folder.split('/').collect(),
        _ => Vec::new(),
    };
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    let name = parts.last()?.to_ascii_lowercase();
    (name.ends_with(".md") || name.ends_with(".markdown")).then(|| parts.join("/"))
}

/// Characters of an entry path kept as they are; the rest is percent-encoded.
fn path_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._~/-".contains(&b)
}

/// Characters of a URL kept as they are (`%` too: the writer's own escapes stay).
fn url_byte(b: u8) -> bool {
    b.is_ascii_graphic() && !b"\"<>\\^`{|}".contains(&b)
}

fn encode(text: &str, keep: fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `%XX` escapes decoded; `None` when the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        match hex {
            Some(hex) if b == b'%' => {
                let digit = |d: u8| char::from(d).to_digit(16).unwrap_or(0) as u8;
                out.push(digit(hex[0]) << 4 | digit(hex[1]));
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests;
