//! What a shell command line does to files, for agents whose only file tool is the shell
//! (Codex reads files with `cat`, `sed -n`, `head`…): the file a command reads, or the
//! pattern and path a search looks for. Only the first command of a line counts, after any
//! `cd DIR &&` and inside a `bash -lc '…'` wrapper; anything else is not a read.

use crate::hook::call::Action;

/// What a command line reads or searches.
#[derive(Debug, PartialEq, Eq)]
pub struct FileUse {
    pub action: Action,
    /// The file read, or the path searched under.
    pub file: Option<String>,
    /// What a search looks for.
    pub pattern: Option<String>,
}

/// Programs that print (part of) a file named by their last argument.
const READERS: [&str; 9] = [
    "cat", "head", "tail", "sed", "nl", "less", "more", "bat", "awk",
];
/// Programs that search: the pattern first, then paths.
const SEARCHERS: [&str; 4] = ["grep", "rg", "ag", "egrep"];

/// The file use of `line`, if its first command reads or searches files.
pub fn file_use(line: &str) -> Option<FileUse> {
    let mut words = split(line)?;
    // `bash -lc 'cat x'`, `sh -c "…"`: the script is the command.
    if matches!(
        words.first().map(String::as_str),
        Some("bash" | "sh" | "zsh")
    ) && words.len() >= 3
        && words[1].starts_with('-')
        && words[1].contains('c')
    {
        words = split(&words[2])?;
    }
    // `cd DIR && cmd …`
    let mut words: &[String] = &words;
    if words.first().is_some_and(|w| w == "cd") && words.get(2).is_some_and(|w| w == "&&") {
        words = &words[3..];
    }
    // Only the first command: up to the first operator.
    let end = words
        .iter()
        .position(|w| matches!(w.as_str(), "&&" | "||" | ";" | "|" | ">" | ">>" | "2>&1"))
        .unwrap_or(words.len());
    let words = &words[..end];
    let (program, args) = words.split_first()?;
    let program = program.rsplit('/').next().unwrap_or(program);
    let operands: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if READERS.contains(&program) {
        // `sed -n '1,80p' FILE`, `awk '{…}' FILE`, `head -n 40 FILE`: the file is last.
        let file = operands
            .last()
            .map(|f| home_path(f))
            .filter(|f| looks_like_path(f))?;
        return Some(FileUse {
            action: Action::Read,
            file: Some(file),
            pattern: None,
        });
    }
    if SEARCHERS.contains(&program) {
        let pattern = operands.first()?;
        return Some(FileUse {
            action: Action::Search,
            file: operands.get(1).map(|p| home_path(p)),
            pattern: Some((*pattern).to_string()),
        });
    }
    None
}

/// `~/x` and `$HOME/x` as the shell expands them: in the user's home directory.
fn home_path(word: &str) -> String {
    let rest = word
        .strip_prefix("~/")
        .or_else(|| word.strip_prefix("$HOME/"))
        .or_else(|| word.strip_prefix("${HOME}/"));
    match (rest, std::env::var("HOME")) {
        (Some(r), Ok(home)) if !home.is_empty() => format!("{}/{r}", home.trim_end_matches('/')),
        _ => word.to_string(),
    }
}

/// A word that can be a file: no shell syntax, not a number (`head -n 40`), not a sed
/// script (`1,80p`).
fn looks_like_path(w: &str) -> bool {
    let sed_range = w
        .strip_suffix('p')
        .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit() || b == b','));
    !w.is_empty()
        && !w.bytes().all(|b| b.is_ascii_digit())
        && !w.contains(['{', '}', '$', '*', '?', '\'', '"', '\n'])
        && !sed_range
}

/// Shell words of `line`: quotes removed, operators (`&&`, `||`, `;`, `|`) as words of their
/// own. `None` for an unterminated quote.
fn split(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut has = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                has = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => cur.push(c),
                    }
                }
            }
            '"' => {
                has = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(chars.next()?),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                has = true;
                cur.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            '&' | '|' | ';' => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
                let mut op = c.to_string();
                if chars.peek() == Some(&c) && c != ';' {
                    op.push(c);
                    chars.next();
                }
                out.push(op);
            }
            c => {
                has = true;
                cur.push(c);
            }
        }
    }
    if has {
        out.push(cur);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> Option<String> {
        file_use(line)
            .filter(|u| u.action == Action::Read)
            .and_then(|u| u.file)
    }

    #[test]
    fn reads_through_the_usual_commands_and_wrappers() {
        assert_eq!(
            read("cat src/db/pool.rs").as_deref(),
            Some("src/db/pool.rs")
        );
        assert_eq!(
            read("sed -n '1,200p' src/db/pool.rs").as_deref(),
            Some("src/db/pool.rs")
        );
        assert_eq!(read("head -n 40 README.md").as_deref(), Some("README.md"));
        assert_eq!(
            read("nl -ba src/main.rs | sed -n '1,80p'").as_deref(),
            Some("src/main.rs")
        );
        assert_eq!(
            read("bash -lc 'cat \"src/a b.rs\"'").as_deref(),
            Some("src/a b.rs")
        );
        assert_eq!(
            read("cd /repo && cat Cargo.toml").as_deref(),
            Some("Cargo.toml")
        );
        assert_eq!(read("/bin/cat x.txt").as_deref(), Some("x.txt"));
        let home = std::env::var("HOME").unwrap_or_default();
        if !home.is_empty() {
            assert_eq!(
                read("cat ~/.config/git/ignore"),
                Some(format!("{}/.config/git/ignore", home.trim_end_matches('/')))
            );
            assert_eq!(
                read("head \"$HOME/.bundle/config\""),
                Some(format!("{}/.bundle/config", home.trim_end_matches('/')))
            );
        }
    }

    #[test]
    fn other_commands_and_scripts_are_no_reads() {
        assert_eq!(read("cargo build --release"), None);
        assert_eq!(read("sed -n '1,80p'"), None, "no file: reads stdin");
        assert_eq!(read("cat"), None);
        assert_eq!(read("head -n 40"), None);
        assert_eq!(read("cat 'unterminated"), None);
        assert_eq!(read("echo hi && cat x"), None, "only the first command");
    }

    #[test]
    fn searches_give_pattern_and_path() {
        let u = file_use("rg -n PoolConfig src").unwrap();
        assert_eq!(u.action, Action::Search);
        assert_eq!(u.pattern.as_deref(), Some("PoolConfig"));
        assert_eq!(u.file.as_deref(), Some("src"));
        let u = file_use("grep -rn 'max_connections' .").unwrap();
        assert_eq!(u.pattern.as_deref(), Some("max_connections"));
    }
}
