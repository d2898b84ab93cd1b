use super::*;

const BASE: Base<'static> = Base {
    project: "team",
    entry: "git/rebase.md",
};

fn html(markdown: &str) -> String {
    render(markdown, &BASE)
}

/// The `<a …>` a lone link renders as, inside its paragraph.
fn link(markdown: &str) -> String {
    html(markdown)
        .trim_end()
        .strip_prefix("<p>")
        .and_then(|s| s.strip_suffix("</p>"))
        .unwrap()
        .to_owned()
}

const REL: &str = r#"rel="nofollow noopener noreferrer""#;

#[test]
fn escape_covers_text_and_attributes() {
    assert_eq!(
        escape(r#"<a href="x" title='y'>&</a>"#),
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
    );
}

#[test]
fn raw_html_is_shown_as_text() {
    assert_eq!(
        html("a <b onclick=\"x()\">b</b>"),
        "<p>a &lt;b onclick=\"x()\"&gt;b&lt;/b&gt;</p>\n"
    );
    assert_eq!(
        html("<script>\nalert(1)\n</script>"),
        "<p>&lt;script&gt;\nalert(1)\n&lt;/script&gt;</p>\n"
    );
    assert_eq!(
        html("<SCRIPT>alert(1)</SCRIPT>"),
        "<p>&lt;SCRIPT&gt;alert(1)&lt;/SCRIPT&gt;</p>\n"
    );
    assert_eq!(
        html("- <img src=x onerror=alert(1)>"),
        "<ul>\n<li><p>&lt;img src=x onerror=alert(1)&gt;</p>\n</li>\n</ul>\n"
    );
}

#[test]
fn comments_are_dropped() {
    assert_eq!(
        html("a <!-- <script>alert(1)</script> --> b"),
        "<p>a  b</p>\n"
    );
    assert_eq!(html("a <!-- two\nlines --> b"), "<p>a  b</p>\n");
    assert_eq!(
        html("<!-- <script>alert(1)</script> -->\n\nafter"),
        "<p>after</p>\n"
    );
    assert_eq!(
        html("<!--\n<script>\nalert(1)\n</script>\n-->\n\nafter"),
        "<p>after</p>\n"
    );
    assert_eq!(
        html("<!-- x --> <b>shown</b>"),
        "<p>&lt;b&gt;shown&lt;/b&gt;</p>\n"
    );
    assert_eq!(
        html("<div>\n<!-- x -->\n</div>"),
        "<p>&lt;div&gt;\n\n&lt;/div&gt;</p>\n"
    );
    // Unterminated: a block comment runs to the end of the document, as in a browser.
    assert_eq!(
        html("before\n\n<!-- <script>alert(1)</script>\n\nnever"),
        "<p>before</p>\n"
    );
    assert_eq!(html("<!--> shown"), "<p>shown</p>\n");
}

#[test]
fn web_and_mail_links_are_kept() {
    assert_eq!(
        link("[a](https://example.com/x?q=1&r=2)"),
        format!(r#"<a href="https://example.com/x?q=1&amp;r=2" {REL}>a</a>"#)
    );
    assert_eq!(
        link("[a](HTTP://example.com)"),
        format!(r#"<a href="http://example.com" {REL}>a</a>"#)
    );
    assert_eq!(
        link("[a](<https://example.com/a b>)"),
        format!(r#"<a href="https://example.com/a%20b" {REL}>a</a>"#)
    );
    assert_eq!(
        link("[a](mailto:jo@example.com)"),
        format!(r#"<a href="mailto:jo@example.com" {REL}>a</a>"#)
    );
    assert_eq!(
        link("<https://example.com>"),
        format!(r#"<a href="https://example.com" {REL}>https://example.com</a>"#)
    );
    assert_eq!(
        link("<jo@example.com>"),
        format!(r#"<a href="mailto:jo@example.com" {REL}>jo@example.com</a>"#)
    );
    assert_eq!(
        link("[a](https://x \"say \\\"hi\\\" <now>\")"),
        format!(r#"<a href="https://x" {REL} title="say &quot;hi&quot; &lt;now&gt;">a</a>"#)
    );
}

#[test]
fn other_destinations_are_text() {
    for dest in [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "<java\tscript:alert(1)>",
        "java&#10;script:alert(1)",
        "&#106;avascript:alert(1)",
        "java&#x09;script:alert(1)",
        "%6Aavascript:alert(1)",
        "<  javascript:alert(1)>",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
        "file:///etc/passwd",
        "ftp://example.com",
        "//evil.example/x.md",
        "/\\evil.example/x.md",
        "http:evil.example",
        "https:/evil.example",
    ] {
        assert_eq!(link(&format!("[text]({dest})")), "text", "{dest}");
        assert_eq!(link(&format!("![alt]({dest})")), "alt", "{dest}");
    }
    assert_eq!(link("<javascript:alert(1)>"), "javascript:alert(1)");
    assert_eq!(
        link("[x][r]\n\n[r]: javascript:alert(1)")
            .lines()
            .next()
            .unwrap(),
        "x"
    );
}

#[test]
fn relative_links_go_to_entries() {
    for (dest, href) in [
        ("other.md", "/p/team/e/git/other.md"),
        ("./x.md#part", "/p/team/e/git/x.md#part"),
        ("../ops/drain.md", "/p/team/e/ops/drain.md"),
        ("/ops/Drain.MARKDOWN", "/p/team/e/ops/Drain.MARKDOWN"),
        ("a%20b.md", "/p/team/e/git/a%20b.md"),
        ("café.md?x=1", "/p/team/e/git/caf%C3%A9.md"),
        ("x.md#\"><b>", "/p/team/e/git/x.md#%22%3E%3Cb%3E"),
    ] {
        assert_eq!(
            link(&format!("[t]({dest})")),
            format!(r#"<a href="{href}">t</a>"#),
            "{dest}"
        );
    }
    for dest in [
        "../../x.md",
        "a/../../../x.md",
        "%2E%2E/%2E%2E/x.md",
        "src/lib.rs",
        "",
        "a%FF.md",
    ] {
        assert_eq!(link(&format!("[t]({dest})")), "t", "{dest}");
    }
    assert_eq!(link("[t](#Section-2)"), r##"<a href="#Section-2">t</a>"##);
    let top = Base {
        project: "a b",
        entry: "top.md",
    };
    assert_eq!(
        render("[t](x.md)", &top),
        "<p><a href=\"/p/a%20b/e/x.md\">t</a></p>\n"
    );
}

#[test]
fn safe_url_rules() {
    for url in [
        "https://x",
        "http://x",
        "MAILTO:a@b",
        "#x",
        "x.md",
        "../x",
        " https://x ",
    ] {
        assert!(safe_url(url), "{url}");
    }
    for url in [
        "javascript:x",
        "java\tscript:x",
        "data:x",
        "//x",
        "\\\\x",
        "a:b",
        "https:x",
    ] {
        assert!(!safe_url(url), "{url}");
    }
}

#[test]
fn images_become_links() {
    assert_eq!(
        link("![a *b*](https://x/i.png \"t\")"),
        format!(r#"<a href="https://x/i.png" {REL} title="t">image: a <em>b</em></a>"#)
    );
    assert_eq!(
        link("![diagram](d.md)"),
        r#"<a href="/p/team/e/git/d.md">image: diagram</a>"#
    );
    assert_eq!(
        link("![x<y](data:image/svg+xml,<svg/onload=alert(1)>)"),
        "x&lt;y"
    );
    // A badge inside a link: one anchor, the outer one.
    assert_eq!(
        link("[![ci](https://x/b.svg)](https://x/ci)"),
        format!(r#"<a href="https://x/ci" {REL}>ci</a>"#)
    );
    assert_eq!(
        link("![a [b](https://y)](javascript:x)"),
        format!(r#"a <a href="https://y" {REL}>b</a>"#)
    );
}

#[test]
fn headings_shift_down() {
    assert_eq!(
        html("# a\n## b\n###### c"),
        "<h2>a</h2>\n<h3>b</h3>\n<h6>c</h6>\n"
    );
    assert_eq!(
        html("# a {#id .cls onclick=x}"),
        "<h2>a {#id .cls onclick=x}</h2>\n"
    );
}

#[test]
fn code_block_language_is_checked() {
    assert_eq!(
        html("```rust\nfn main() {}\n```"),
        "<pre><code class=\"language-rust\">fn main() {}\n</code></pre>\n"
    );
    assert_eq!(
        html("```c++ title\nx\n```"),
        "<pre><code class=\"language-c++\">x\n</code></pre>\n"
    );
    assert_eq!(
        html("```\"><script>alert(1)</script>\n<b>\n```"),
        "<pre><code>&lt;b&gt;\n</code></pre>\n"
    );
    assert_eq!(
        html(&format!("```{}\nx\n```", "a".repeat(33))),
        "<pre><code>x\n</code></pre>\n"
    );
    assert_eq!(html("    <b>"), "<pre><code>&lt;b&gt;</code></pre>\n");
}

#[test]
fn gfm_features_render() {
    assert_eq!(
        html("| a | b |\n|:--|--:|\n| 1 | ~~2~~ |"),
        "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>\n<tr><td>1</td><td><del>2</del></td></tr>\n</tbody></table>\n"
    );
    assert_eq!(
        html("- [x] done\n- [ ] todo"),
        "<ul>\n<li><input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone</li>\n<li><input disabled=\"\" type=\"checkbox\"/>\ntodo</li>\n</ul>\n"
    );
    assert_eq!(
        html("a[^n]\n\n[^n]: note"),
        "<p>a<sup class=\"footnote-reference\"><a href=\"#fn-n\">1</a></sup></p>\n<div class=\"footnote-definition\" id=\"fn-n\"><sup class=\"footnote-definition-label\">1</sup>\n<p>note</p>\n</div>\n"
    );
    // No math, no metadata block.
    assert_eq!(html("$x<y$"), "<p>$x&lt;y$</p>\n");
    assert_eq!(html("---\ntitle: x\n---\n"), "<hr />\n<h3>title: x</h3>\n");
}

/// A start tag: its lowercase name and attributes.
type StartTag = (String, Vec<(String, String)>);

/// Every start tag of `html`; `Err` on anything else that opens with `<` (a comment, a
/// doctype): escaped text never has a `<`. Tolerates unquoted and bare attributes, so
/// that a broken escape shows up as an attribute, not as a scanner error.
fn start_tags(html: &str) -> Result<Vec<StartTag>, String> {
    let mut tags = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find('<') {
        rest = &rest[at + 1..];
        if let Some(end) = rest.strip_prefix('/') {
            rest = &end[end.find('>').ok_or("unclosed end tag")? + 1..];
            continue;
        }
        let name_len = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        if name_len == 0 {
            return Err(format!(
                "markup that is no tag: <{}",
                &rest[..rest.len().min(20)]
            ));
        }
        let name = rest[..name_len].to_ascii_lowercase();
        rest = &rest[name_len..];
        let mut attrs = Vec::new();
        loop {
            rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '/');
            if let Some(after) = rest.strip_prefix('>') {
                rest = after;
                break;
            }
            let len = rest
                .find(|c: char| c.is_ascii_whitespace() || "=>/".contains(c))
                .unwrap_or(rest.len());
            if len == 0 {
                return Err(format!("unterminated <{name}"));
            }
            let attr = rest[..len].to_ascii_lowercase();
            rest = &rest[len..];
            let mut value = String::new();
            if let Some(after) = rest.strip_prefix('=') {
                let (v, after) = match after.strip_prefix('"') {
                    Some(quoted) => quoted.split_once('"').ok_or("unterminated value")?,
                    None => after.split_at(
                        after
                            .find(|c: char| c.is_ascii_whitespace() || c == '>')
                            .unwrap_or(after.len()),
                    ),
                };
                value = v.to_owned();
                rest = after;
            }
            attrs.push((attr, value));
        }
        tags.push((name, attrs));
    }
    Ok(tags)
}

/// Why `html` could run script or load anything, if it could.
fn unsafe_markup(html: &str) -> Option<String> {
    const FORBIDDEN: [&str; 12] = [
        "script", "img", "svg", "iframe", "object", "embed", "style", "meta", "base", "form",
        "math", "link",
    ];
    let tags = match start_tags(html) {
        Ok(tags) => tags,
        Err(e) => return Some(e),
    };
    for (name, attrs) in tags {
        if FORBIDDEN.contains(&name.as_str()) {
            return Some(format!("<{name}>"));
        }
        let allowed: &[&str] = match name.as_str() {
            "p" | "h2" | "h3" | "h4" | "h5" | "h6" | "em" | "strong" | "del" | "pre" | "ul"
            | "li" | "blockquote" | "hr" | "br" | "table" | "thead" | "tbody" | "tr" | "th"
            | "td" => &[],
            "a" => &["href", "rel", "title"],
            "code" | "sup" => &["class"],
            "ol" => &["start"],
            "div" => &["class", "id"],
            "input" => &["disabled", "type", "checked"],
            _ => return Some(format!("tag <{name}> not allowed")),
        };
        for (attr, value) in &attrs {
            if attr.starts_with("on") || !allowed.contains(&attr.as_str()) {
                return Some(format!("attribute {attr} on <{name}>"));
            }
            let safe_href = ["https://", "http://", "mailto:", "/p/", "#"]
                .iter()
                .any(|p| value.starts_with(p));
            if attr == "href" && !safe_href {
                return Some(format!("href {value:?}"));
            }
        }
        let checkbox = ["disabled", "type"]
            .iter()
            .all(|a| attrs.iter().any(|(n, _)| n == a));
        if name == "input"
            && !(checkbox && attrs.iter().any(|(n, v)| n == "type" && v == "checkbox"))
        {
            return Some(format!("input {attrs:?}"));
        }
    }
    None
}

#[test]
fn the_tag_scanner_sees_attacks() {
    assert!(unsafe_markup("<p>a <a href=\"https://x\" rel=\"r\">b</a></p><hr />").is_none());
    for bad in [
        "<p><SCRIPT>",
        "<p><a href=\"javascript:x\">",
        "<p><a href=x onclick=y>",
        "<p title=x>",
        "<!-- c -->",
        "<input type=\"text\">",
        "<a href=\"https://x\" rel=\"a\" x",
    ] {
        assert!(unsafe_markup(bad).is_some(), "{bad}");
    }
}

fn corpus() -> Vec<(String, helix_index_format::Entry)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/hostile/knowledge");
    let mut entries = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for item in std::fs::read_dir(&dir).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let id = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .replace('\\', "/");
                let bytes = std::fs::read(&path).unwrap();
                let entry = helix_index_format::entry::parse_entry(&id, &bytes, None)
                    .unwrap_or_else(|d| panic!("{d}"));
                entries.push((id, entry));
            }
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}

#[test]
fn hostile_corpus_renders_inert() {
    let entries = corpus();
    assert!(entries.len() >= 15, "{} entries", entries.len());
    for (id, entry) in &entries {
        let out = render(
            &entry.body,
            &Base {
                project: "hostile",
                entry: id,
            },
        );
        if let Some(why) = unsafe_markup(&out) {
            panic!("{id}: {why}\n{out}");
        }
        // What the page shows of the front matter goes through `escape`.
        let extra = serde_json::to_string(&entry.extra).unwrap();
        let author = entry.author.as_deref().unwrap_or("");
        for value in [&entry.title, author, &entry.topic, &extra]
            .into_iter()
            .chain(entry.tags.iter().map(String::as_str))
        {
            assert!(
                !escape(value).contains(['<', '>', '"', '\'']),
                "{id}: {value}"
            );
        }
    }
}

#[test]
fn benign_entry_still_renders() {
    let (id, entry) = corpus()
        .into_iter()
        .find(|(id, _)| id.ends_with("benign.md"))
        .unwrap();
    let out = render(
        &entry.body,
        &Base {
            project: "hostile",
            entry: &id,
        },
    );
    for markup in [
        "<h2>",
        "<ul>\n<li>",
        "<table><thead><tr><th>",
        "<pre><code class=\"language-rust\">",
        &format!("<a href=\"https://example.com/docs\" {REL}>"),
        "<a href=\"/p/hostile/e/hostile/script-tags.md\">",
        "<a href=\"/p/hostile/e/hostile/links-javascript.md#markdown-links\">",
    ] {
        assert!(out.contains(markup), "{markup} missing from\n{out}");
    }
}

#[test]
fn nasty_inputs_neither_panic_nor_blow_up() {
    let inputs = [
        ">".repeat(10_000) + " x",
        "[".repeat(100_000),
        "![".repeat(50_000) + &"](x.md)".repeat(50_000),
        "- ".repeat(5_000) + "x",
        "*_".repeat(100_000),
        "`".repeat(100_000),
        "a".repeat(1 << 20),
        "<!--".repeat(100_000),
        "[a](".repeat(100_000),
        "x\0<script>\0[a](java\0script:x)\0".repeat(1_000),
        format!(
            "[r]: https://x/{}\n\n{}",
            "a".repeat(500_000),
            "[r] ".repeat(100_000)
        ),
        format!("[r]: ../r.md\n\n{}", "[r]".repeat(300_000)),
        "|a|\n|-|\n".to_owned() + &"|<b>|\n".repeat(50_000),
        "[^a]: [^a]\n".repeat(10_000),
    ];
    for input in &inputs {
        let out = html(input);
        assert!(
            out.len() <= 64 * input.len() + 1024,
            "{} bytes from {}: {}",
            out.len(),
            input.len(),
            &input[..40]
        );
        assert!(unsafe_markup(&out).is_none(), "{}", &input[..40]);
    }
}
