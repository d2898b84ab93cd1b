//! An entry's lifecycle front matter: `status` (`active`, `retired`) and `supersedes` (ids of
//! entries it replaces), read at parse time, and the whole-knowledge rules built on them —
//! which entries leave default results, and the diagnostics of missing targets and cycles.

use std::borrow::Borrow;
use std::collections::HashMap;

use super::front_matter::{ListStyle, string_list};
use super::yaml::Node;
use super::{Diagnostic, Entry, normalise_source};

/// The values `status:` may take (docs/entry-format.md). Absent or null is `active`.
pub const STATUSES: [&str; 2] = ["active", "retired"];

/// Front-matter key of the status, as kept in [`Entry::extra`].
pub const STATUS_KEY: &str = "status";
/// Front-matter key of the superseded ids, as kept in [`Entry::extra`] (a list).
pub const SUPERSEDES_KEY: &str = "supersedes";

/// `status: <value>` checked against [`STATUSES`]; `Ok(None)` when null.
pub(super) fn parse_status(value: &Node) -> Result<Option<String>, String> {
    let text = match value {
        Node::Scalar(s) if s.is_null() => return Ok(None),
        Node::Scalar(s) => s.text.trim().to_ascii_lowercase(),
        other => {
            return Err(format!(
                "status must be a single value, found {}",
                other.describe()
            ));
        }
    };
    if STATUSES.contains(&text.as_str()) {
        Ok(Some(text))
    } else {
        Err(format!(
            "status {text:?} is not a known status (allowed: {})",
            STATUSES.join(", ")
        ))
    }
}

/// `supersedes: id` or a list of ids: each an entry path ending in `.md`, not `own_id`.
pub(super) fn parse_supersedes(value: &Node, own_id: &str) -> Result<Vec<String>, String> {
    if matches!(value, Node::Map(_)) {
        return Err(format!(
            "supersedes must be an entry id or a list of them, found {}",
            value.describe()
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for raw in string_list(value, ListStyle::Paths) {
        let id = normalise_source(&raw)
            .filter(|id| id.ends_with(".md"))
            .ok_or_else(|| {
                format!(
                    "supersedes {:?} is not an entry id (a path ending in .md, like git/rebase.md)",
                    raw.trim()
                )
            })?;
        if id == own_id {
            return Err(format!(
                "supersedes {id:?}: an entry cannot supersede itself"
            ));
        }
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

impl Entry {
    /// Whether front matter says `status: retired`.
    pub fn is_retired(&self) -> bool {
        self.extra.get(STATUS_KEY).and_then(|v| v.as_str()) == Some("retired")
    }

    /// The ids this entry supersedes (front matter `supersedes`).
    pub fn supersedes(&self) -> Vec<&str> {
        match self.extra.get(SUPERSEDES_KEY) {
            Some(serde_json::Value::Array(items)) => {
                items.iter().filter_map(|v| v.as_str()).collect()
            }
            Some(serde_json::Value::String(s)) => vec![s.as_str()],
            _ => Vec::new(),
        }
    }
}

/// Why an entry is out of default results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// `status: retired`.
    Retired,
    /// Another entry (by index in the slice given) supersedes it.
    SupersededBy(usize),
}

/// Which of `entries` leave default results (hook results, search, counts): retired ones and
/// those another entry supersedes. A `supersedes` naming a missing id, or an edge of a
/// cycle, hides nothing ([`lifecycle_diagnostics`] reports both). When several entries
/// supersede one, the first in slice order is named.
pub fn hidden_entries<E: Borrow<Entry>>(entries: &[E]) -> Vec<(usize, Hidden)> {
    let graph = Graph::of(entries);
    let mut out: Vec<Option<Hidden>> = entries
        .iter()
        .map(|e| e.borrow().is_retired().then_some(Hidden::Retired))
        .collect();
    for (from, targets) in graph.edges.iter().enumerate() {
        for &to in targets {
            if graph.cyclic(from, to) {
                continue;
            }
            if !matches!(out[to], Some(Hidden::SupersededBy(_))) {
                out[to] = Some(Hidden::SupersededBy(from));
            }
        }
    }
    out.into_iter()
        .enumerate()
        .filter_map(|(i, h)| h.map(|h| (i, h)))
        .collect()
}

/// Diagnostics of the `supersedes` relation over a whole knowledge base: a target that is
/// no entry, and cycles (each entry of one is named, with the cycle's members).
pub fn lifecycle_diagnostics<E: Borrow<Entry>>(entries: &[E]) -> Vec<Diagnostic> {
    let graph = Graph::of(entries);
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let e = e.borrow();
        for target in e.supersedes() {
            if !graph.ids.contains_key(target) {
                out.push(Diagnostic {
                    path: e.id.clone(),
                    line: 1,
                    reason: format!(
                        "supersedes {target:?}, which is not an entry of this knowledge base"
                    ),
                });
            }
        }
        if graph.edges[i].iter().any(|&to| graph.cyclic(i, to)) {
            let mut members: Vec<&str> = (0..entries.len())
                .filter(|&j| graph.component[j] == graph.component[i])
                .map(|j| entries[j].borrow().id.as_str())
                .collect();
            members.sort_unstable();
            out.push(Diagnostic {
                path: e.id.clone(),
                line: 1,
                reason: format!(
                    "supersedes forms a cycle between {}; remove `supersedes` from one of them",
                    members.join(", ")
                ),
            });
        }
    }
    out
}

/// The `supersedes` edges between existing entries and their strongly connected components.
struct Graph<'a> {
    ids: HashMap<&'a str, usize>,
    edges: Vec<Vec<usize>>,
    component: Vec<usize>,
    component_size: Vec<usize>,
}

impl<'a> Graph<'a> {
    fn of<E: Borrow<Entry>>(entries: &'a [E]) -> Graph<'a> {
        let ids: HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.borrow().id.as_str(), i))
            .collect();
        let edges: Vec<Vec<usize>> = entries
            .iter()
            .map(|e| {
                e.borrow()
                    .supersedes()
                    .into_iter()
                    .filter_map(|t| ids.get(t).copied())
                    .collect()
            })
            .collect();
        let component = tarjan(&edges);
        let mut component_size = vec![0; entries.len()];
        for &c in &component {
            component_size[c] += 1;
        }
        Graph {
            ids,
            edges,
            component,
            component_size,
        }
    }

    /// Whether the edge `from → to` lies on a cycle.
    fn cyclic(&self, from: usize, to: usize) -> bool {
        from == to
            || (self.component[from] == self.component[to]
                && self.component_size[self.component[from]] > 1)
    }
}

/// Strongly connected components (Tarjan's algorithm, iterative: a long chain of
/// `supersedes` in untrusted input must not overflow the stack). Returns each node's
/// component number.
fn tarjan(edges: &[Vec<usize>]) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut next_component = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(root, 0usize)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut at)) = work.last_mut() {
            if let Some(&w) = edges[v].get(*at) {
                *at += 1;
                if index[w] == UNSEEN {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component[w] = next_component;
                    if w == v {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_entry;

    fn entry(id: &str, front: &str) -> Entry {
        parse_entry(
            id,
            format!("---\n{front}\n---\nBody of {id}.\n").as_bytes(),
            None,
        )
        .unwrap()
    }

    #[test]
    fn status_values_are_checked() {
        assert!(entry("a/x.md", "status: Retired").is_retired());
        assert!(!entry("a/x.md", "status: active").is_retired());
        assert!(!entry("a/x.md", "status:").is_retired());
        let err = parse_entry(
            "a/x.md",
            b"---\ntitle: X\nstatus: obsolete\n---\nBody\n",
            None,
        )
        .unwrap_err();
        assert_eq!(err.line, 3);
        assert!(
            err.reason.contains("\"obsolete\"") && err.reason.contains("active, retired"),
            "{err}"
        );
    }

    #[test]
    fn supersedes_takes_one_id_or_a_list() {
        assert_eq!(
            entry("a/x.md", "supersedes: a/y.md").supersedes(),
            ["a/y.md"]
        );
        assert_eq!(
            entry("a/x.md", "supersedes: [a/y.md, ./b/z.md]").supersedes(),
            ["a/y.md", "b/z.md"]
        );
        for bad in [
            "supersedes: a/y",
            "supersedes: a/x.md",
            "supersedes: {a: b}",
        ] {
            let text = format!("---\n{bad}\n---\nBody\n");
            let err = parse_entry("a/x.md", text.as_bytes(), None).unwrap_err();
            assert!(err.reason.contains("supersede"), "{bad}: {err}");
        }
        // Written back and read again, the same.
        let e = entry("a/x.md", "supersedes: a/y.md\nstatus: retired");
        let back = parse_entry("a/x.md", crate::render_entry(&e).as_bytes(), None).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn hidden_and_diagnosed() {
        let entries = vec![
            entry("a/new.md", "supersedes: [a/old.md, a/gone.md]"),
            entry("a/old.md", "title: Old"),
            entry("a/wrong.md", "status: retired"),
            entry("c/one.md", "supersedes: c/two.md"),
            entry("c/two.md", "supersedes: c/three.md"),
            entry("c/three.md", "supersedes: c/one.md"),
            entry("c/four.md", "supersedes: c/one.md"),
        ];
        assert_eq!(
            hidden_entries(&entries),
            [
                (1, Hidden::SupersededBy(0)),
                (2, Hidden::Retired),
                (3, Hidden::SupersededBy(6)),
            ]
        );
        let diags = lifecycle_diagnostics(&entries);
        let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
        assert_eq!(diags.len(), 4, "{text:#?}");
        assert!(text[0].starts_with("a/new.md:1: supersedes \"a/gone.md\""));
        for (d, id) in diags[1..]
            .iter()
            .zip(["c/one.md", "c/two.md", "c/three.md"])
        {
            assert_eq!(d.path, id);
            assert!(
                d.reason
                    .contains("cycle between c/one.md, c/three.md, c/two.md"),
                "{d}"
            );
        }
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let entries: Vec<Entry> = (0..200_000)
            .map(|i| {
                let mut e = Entry {
                    id: format!("t/{i}.md"),
                    ..Entry::default()
                };
                e.extra.insert(
                    SUPERSEDES_KEY.into(),
                    serde_json::json!([format!("t/{}.md", (i + 1) % 200_000)]),
                );
                e
            })
            .collect();
        assert!(hidden_entries(&entries).is_empty());
    }
}
