//! Where a batch's new entries go in the tree it is committed onto: the topic's folder and
//! a file name taken by nothing there nor earlier in the batch; nothing is replaced.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use super::Group;
use crate::git::{Folder, GitError, Kind};
use crate::project::jobs::WriteError;
use crate::project::lane::Lane;

impl Lane<'_> {
    /// Chooses the path of each write in the tree of `parent`: the topic's folder must be a
    /// folder (or not exist yet), and the file name must not exist there in any case or
    /// kind, nor be chosen by an earlier write of the batch. The write path never replaces
    /// or deletes what is there. Refusals are per write.
    pub(super) fn place(
        &self,
        parent: Option<ObjectId>,
        groups: &[Group],
    ) -> Result<Vec<Result<String, WriteError>>, GitError> {
        let prefix = self.prefix();
        let mut folders: HashMap<String, Folder> = HashMap::new();
        // Lower-cased paths this batch creates: files, and the folders above them.
        let mut files: HashSet<String> = HashSet::new();
        let mut dirs: HashSet<String> = HashSet::new();
        let mut out = Vec::with_capacity(groups.len());
        // Files edited by earlier writes of the batch: their new blob and text.
        let mut edited: HashMap<String, (ObjectId, String)> = HashMap::new();
        for g in groups {
            if let Some(edit) = &g.job.edit {
                out.push(self.place_edit(parent, edit, &mut edited)?);
                continue;
            }
            let topic = &g.job.entry.topic;
            let topic_dir = match &prefix {
                Some(p) => format!("{p}/{topic}"),
                None => topic.clone(),
            };
            if !folders.contains_key(&topic_dir) {
                let f = self.repo.folder(parent, &topic_dir)?;
                folders.insert(topic_dir.clone(), f);
            }
            let existing = match &folders[&topic_dir] {
                Folder::Blocked { existing, kind } => {
                    let (topic, folder, existing) =
                        (topic.clone(), topic_dir.clone(), existing.clone());
                    out.push(Err(match kind {
                        Kind::Folder => WriteError::TopicCase {
                            topic,
                            folder,
                            existing,
                        },
                        _ => WriteError::TopicTaken {
                            topic,
                            folder,
                            existing,
                            kind: *kind,
                        },
                    }));
                    continue;
                }
                Folder::Present(names) => Some(names),
                Folder::Absent => None,
            };
            let lower_dir = topic_dir.to_ascii_lowercase();
            if let Some(clash) = ancestors(&lower_dir).find(|a| files.contains(*a)) {
                out.push(Err(WriteError::TopicInBatch {
                    topic: topic.clone(),
                    folder: topic_dir,
                    file: clash.to_string(),
                }));
                continue;
            }
            let slug = helix_index_format::slugify(&g.job.entry.title);
            let mut n = 1;
            let path = loop {
                let name = if n == 1 {
                    format!("{slug}.md")
                } else {
                    format!("{slug}-{n}.md")
                };
                let lower = format!("{lower_dir}/{}", name.to_ascii_lowercase());
                let taken_here = existing
                    .is_some_and(|names| names.keys().any(|k| k.eq_ignore_ascii_case(&name)));
                if !taken_here && !files.contains(&lower) && !dirs.contains(&lower) {
                    files.insert(lower);
                    dirs.extend(ancestors(&lower_dir).map(str::to_string));
                    break format!("{topic_dir}/{name}");
                }
                n += 1;
            };
            out.push(Ok(path));
        }
        Ok(out)
    }
}

/// `a/b/c` → `a/b/c`, `a/b`, `a`.
pub(super) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut cur = Some(path);
    std::iter::from_fn(move || {
        let p = cur?;
        cur = p.rfind('/').map(|i| &p[..i]);
        Some(p)
    })
}
