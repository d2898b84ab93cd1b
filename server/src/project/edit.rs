//! Edits on the write path: whether an edit may replace its entry's file in the tree a
//! batch is committed onto — the entry exists at the edit's base version, is not
//! superseded, stays retired only if it was not, and what it supersedes exists without
//! closing a cycle.

use std::collections::HashMap;

use gix::ObjectId;

use super::jobs::{EditTarget, WriteError};
use super::lane::Lane;
use crate::git::GitError;

impl Lane<'_> {
    /// Checks an edit against the tree of `parent` (and the batch's earlier edits): the
    /// entry exists, is at the edit's base version, is not superseded, stays retired only if
    /// it was not, and what it supersedes exists without closing a cycle. Gives its path.
    pub(super) fn place_edit(
        &self,
        parent: Option<ObjectId>,
        edit: &EditTarget,
        edited: &mut HashMap<String, (ObjectId, String)>,
    ) -> Result<Result<String, WriteError>, GitError> {
        let repo_path = |id: &str| match self.prefix() {
            Some(p) => format!("{p}/{id}"),
            None => id.to_string(),
        };
        let path = repo_path(&edit.id);
        let (current, text) = match edited.get(&path) {
            Some((blob, text)) => (*blob, text.clone()),
            None => match self.repo.file_at(parent, &path)? {
                Some(blob) => (
                    blob,
                    String::from_utf8_lossy(&self.repo.read_blob(blob)?).into_owned(),
                ),
                None => {
                    return Ok(Err(WriteError::NoSuchEntry {
                        id: edit.id.clone(),
                    }));
                }
            },
        };
        if !current.to_string().eq_ignore_ascii_case(&edit.base) {
            return Ok(Err(WriteError::EditConflict(Box::new(
                helix_index_format::wire::EditConflict {
                    id: edit.id.clone(),
                    base: edit.base.clone(),
                    current: current.to_string(),
                    current_content: text,
                },
            ))));
        }
        let was_retired = helix_index_format::parse_entry(&edit.id, text.as_bytes(), None)
            .is_ok_and(|e| e.is_retired());
        if was_retired && edit.retired {
            return Ok(Err(WriteError::Retired {
                id: edit.id.clone(),
            }));
        }
        // What supersedes what, as last compiled, with this edit's new `supersedes`.
        let mut graph: HashMap<&str, Vec<&str>> = HashMap::new();
        for c in self.cache.values() {
            if let Ok(e) = &c.parsed
                && e.id != edit.id
            {
                graph.insert(e.id.as_str(), e.supersedes());
            }
        }
        if let Some((by, _)) = graph
            .iter()
            .filter(|(_, targets)| targets.contains(&edit.id.as_str()))
            .min()
        {
            return Ok(Err(WriteError::Superseded {
                id: edit.id.clone(),
                by: by.to_string(),
            }));
        }
        for target in &edit.supersedes {
            if self.repo.file_at(parent, &repo_path(target))?.is_none() {
                return Ok(Err(WriteError::Supersedes {
                    id: edit.id.clone(),
                    reason: format!("supersedes {target:?}, which is not an entry of this project"),
                }));
            }
        }
        graph.insert(
            edit.id.as_str(),
            edit.supersedes.iter().map(String::as_str).collect(),
        );
        if let Some(cycle) = cycle_through(&graph, &edit.id) {
            return Ok(Err(WriteError::Supersedes {
                id: edit.id.clone(),
                reason: format!("supersedes would form a cycle: {}", cycle.join(" → ")),
            }));
        }
        let blob = self.repo.blob_id(edit.content.as_bytes())?;
        edited.insert(path.clone(), (blob, edit.content.clone()));
        Ok(Ok(path))
    }
}

/// A cycle of `supersedes` through `start` in `graph` (id → ids it supersedes), as the
/// ids along it, `start` first and last.
fn cycle_through<'a>(
    graph: &HashMap<&'a str, Vec<&'a str>>,
    start: &'a str,
) -> Option<Vec<&'a str>> {
    // Breadth-first from `start`, remembering how each id was reached.
    let mut came_from: HashMap<&str, &str> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(id) = queue.pop_front() {
        for &next in graph.get(id).into_iter().flatten() {
            if next == start {
                let mut path = vec![id];
                let mut at = id;
                while at != start {
                    at = came_from[at];
                    path.push(at);
                }
                path.reverse();
                path.push(start);
                return Some(path);
            }
            if !came_from.contains_key(next) {
                came_from.insert(next, id);
                queue.push_back(next);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_named_in_order() {
        let graph: HashMap<&str, Vec<&str>> = HashMap::from([
            ("a.md", vec!["b.md"]),
            ("b.md", vec!["c.md", "x.md"]),
            ("c.md", vec!["a.md"]),
            ("d.md", vec!["a.md"]),
        ]);
        assert_eq!(
            cycle_through(&graph, "a.md").unwrap(),
            ["a.md", "b.md", "c.md", "a.md"]
        );
        assert_eq!(cycle_through(&graph, "d.md"), None);
    }
}
