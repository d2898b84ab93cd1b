//! Arbitrary bytes as an entry shown by the web view: the first line is the project, the
//! second the entry id, the rest the Markdown body (lossy UTF-8, as entries arrive). A
//! panic fails, and so does output that breaks the renderer's promises: a start tag or an
//! attribute outside its allowlist, an `on*`, `style`, `src` or `srcdoc` attribute, an
//! href that is not https, http, mailto, `/p/` or `#`, a `<` that begins no tag (text is
//! escaped, so there is none), or more output than the bound below.
//! A failing input becomes a case in `server/src/web/markdown/tests.rs` (see README.md).
#![no_main]

use helix_server::web::markdown::{Base, render};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\n');
    let project = parts.next().unwrap_or("");
    let entry = parts.next().unwrap_or("");
    let body = parts.next().unwrap_or("");
    let out = render(body, &Base { project, entry });
    // 64 bytes a body byte and 1 KiB, as the unit test asserts (for its short base); and a
    // relative link repeats the project and the entry's folder, percent-encoded (at most 3
    // bytes a byte), once per link, which takes at least 3 body bytes (`[r]`).
    let bound = (64 + project.len() + entry.len()) * body.len() + 1024;
    assert!(
        out.len() <= bound,
        "{} bytes of HTML from a {}-byte body (bound {bound})",
        out.len(),
        body.len()
    );
    if let Err(why) = check(out.as_bytes()) {
        panic!("{why}\n--- HTML ---\n{out}");
    }
});

/// The attributes a start tag of the renderer may carry; `None` for a tag it never writes
/// (`<h1>` is the page's title; images are links). Exact, lowercase names: the renderer
/// writes no other spelling.
fn allowed_attributes(tag: &[u8]) -> Option<&'static [&'static [u8]]> {
    Some(match tag {
        b"p" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" | b"em" | b"strong" | b"del" | b"pre"
        | b"ul" | b"li" | b"blockquote" | b"hr" | b"br" | b"table" | b"thead" | b"tbody"
        | b"tr" | b"th" | b"td" => &[],
        b"a" => &[b"href", b"rel", b"title"],
        b"code" | b"sup" => &[b"class"],
        b"ol" => &[b"start"],
        b"div" => &[b"class", b"id"],
        b"input" => &[b"disabled", b"type", b"checked"],
        _ => return None,
    })
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Scans `html` once, tag by tag. Every `<` must open a start or end tag: escaped text has
/// none, so a comment, a doctype or a stray `<` is itself a finding. Unquoted and bare
/// attributes are read as a browser would, so that a broken escape shows up as an
/// attribute rather than hiding inside a value.
fn check(html: &[u8]) -> Result<(), String> {
    let mut i = 0;
    while let Some(at) = html[i..].iter().position(|&b| b == b'<') {
        i += at + 1;
        let end_tag = html.get(i) == Some(&b'/');
        if end_tag {
            i += 1;
        }
        let name_len = html[i..]
            .iter()
            .position(|b| !b.is_ascii_alphanumeric())
            .unwrap_or(html.len() - i);
        let name = &html[i..i + name_len];
        if name.is_empty() {
            let context = &html[i - 1..html.len().min(i + 20)];
            return Err(format!("markup that is no tag: {:?}", show(context)));
        }
        i += name_len;
        let Some(allowed) = allowed_attributes(name) else {
            return Err(format!("tag <{}> not allowed", show(name)));
        };
        if end_tag {
            while html.get(i).is_some_and(|&b| is_space(b)) {
                i += 1;
            }
            if html.get(i) != Some(&b'>') {
                return Err(format!("malformed end tag </{}", show(name)));
            }
            i += 1;
            continue;
        }
        let (mut disabled, mut checkbox) = (false, false);
        loop {
            while html.get(i).is_some_and(|&b| is_space(b) || b == b'/') {
                i += 1;
            }
            match html.get(i) {
                None => return Err(format!("unterminated <{}", show(name))),
                Some(b'>') => {
                    i += 1;
                    break;
                }
                Some(_) => {}
            }
            let attr_len = html[i..]
                .iter()
                .position(|&b| is_space(b) || matches!(b, b'=' | b'>' | b'/'))
                .unwrap_or(html.len() - i);
            let attr = &html[i..i + attr_len];
            i += attr_len;
            let mut value: &[u8] = b"";
            if html.get(i) == Some(&b'=') {
                i += 1;
                match html.get(i) {
                    Some(&quote @ (b'"' | b'\'')) => {
                        let len = html[i + 1..]
                            .iter()
                            .position(|&b| b == quote)
                            .ok_or_else(|| format!("unterminated value of {}", show(attr)))?;
                        value = &html[i + 1..i + 1 + len];
                        i += len + 2;
                    }
                    _ => {
                        let len = html[i..]
                            .iter()
                            .position(|&b| is_space(b) || b == b'>')
                            .unwrap_or(html.len() - i);
                        value = &html[i..i + len];
                        i += len;
                    }
                }
            }
            let lower = attr.to_ascii_lowercase();
            let at = || format!("attribute {} on <{}>", show(attr), show(name));
            if lower.starts_with(b"on") || [&b"style"[..], b"src", b"srcdoc"].contains(&&lower[..]) {
                return Err(at());
            }
            if !allowed.contains(&attr) {
                return Err(format!("{} not allowed", at()));
            }
            match attr {
                b"href" => {
                    let safe = [&b"https://"[..], b"http://", b"mailto:", b"/p/", b"#"]
                        .iter()
                        .any(|p| value.starts_with(p));
                    if !safe {
                        return Err(format!("href {:?}", show(value)));
                    }
                }
                b"disabled" => disabled = true,
                b"type" => checkbox = value == b"checkbox",
                _ => {}
            }
        }
        if name == b"input" && !(disabled && checkbox) {
            return Err("an <input> that is no disabled checkbox".to_owned());
        }
    }
    Ok(())
}
