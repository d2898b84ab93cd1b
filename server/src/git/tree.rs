//! Reading a commit's tree with gix: the files under a folder, what a folder holds (for
//! the write path), which paths changed, and when each file last changed.

use std::collections::{BTreeMap, HashMap, HashSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use helix_index_format::GitMeta;

use super::{FileList, Folder, GitError, Kind, Repo, gix, tree_of};

impl Repo {
    /// The folder `dir` (`a/b/c`) of `commit` (`None`: an empty repository), walked one
    /// component at a time, with case-insensitive clashes reported as blocked.
    pub fn folder(&self, commit: Option<ObjectId>, dir: &str) -> Result<Folder, GitError> {
        let Some(commit) = commit else {
            return Ok(Folder::Absent);
        };
        let mut tree = self.commit_tree(commit)?;
        let mut walked = String::new();
        for comp in dir.split('/').filter(|c| !c.is_empty()) {
            let items = self.tree_items(tree)?;
            let hit = items.get(comp).map(|i| (comp.to_string(), i)).or_else(|| {
                items
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(comp))
                    .map(|(n, i)| (n.clone(), i))
            });
            let Some((name, item)) = hit else {
                return Ok(Folder::Absent);
            };
            let existing = format!("{walked}{name}");
            if item.kind != Kind::Folder || name != comp {
                return Ok(Folder::Blocked {
                    existing,
                    kind: item.kind,
                });
            }
            walked = format!("{existing}/");
            tree = item.id;
        }
        let items = self.tree_items(tree)?;
        Ok(Folder::Present(
            items.into_iter().map(|(n, i)| (n, i.kind)).collect(),
        ))
    }

    /// Every blob under `prefix` (or the whole tree) of commit `commit`.
    pub fn list_files(&self, commit: ObjectId, prefix: Option<&str>) -> Result<FileList, GitError> {
        let tree = self.commit_tree(commit)?;
        let mut out = FileList::new();
        let start = match prefix {
            None => Some((tree, String::new())),
            Some(p) => self.subtree(tree, p)?.map(|t| (t, format!("{p}/"))),
        };
        if let Some((t, pre)) = start {
            self.walk(t, &pre, &mut out)?;
        }
        Ok(out)
    }

    fn subtree(&self, mut tree: ObjectId, path: &str) -> Result<Option<ObjectId>, GitError> {
        for comp in path.split('/') {
            let items = self.tree_items(tree)?;
            match items.get(comp) {
                Some(item) if item.is_tree => tree = item.id,
                _ => return Ok(None),
            }
        }
        Ok(Some(tree))
    }

    fn tree_items(&self, tree: ObjectId) -> Result<BTreeMap<String, TreeItem>, GitError> {
        let t = self.repo.find_tree(tree).map_err(gix("cannot read tree"))?;
        let decoded = t.decode().map_err(gix("cannot decode tree"))?;
        let mut out = BTreeMap::new();
        for e in &decoded.entries {
            // Non-UTF-8 names cannot be entry ids; skip them.
            let Ok(name) = e.filename.to_str() else {
                continue;
            };
            out.insert(
                name.to_string(),
                TreeItem {
                    id: e.oid.to_owned(),
                    is_tree: e.mode.is_tree(),
                    is_blob: e.mode.is_blob(),
                    kind: if e.mode.is_tree() {
                        Kind::Folder
                    } else if e.mode.is_commit() {
                        Kind::Submodule
                    } else if e.mode.is_link() {
                        Kind::Symlink
                    } else {
                        Kind::File
                    },
                },
            );
        }
        Ok(out)
    }

    fn walk(&self, tree: ObjectId, prefix: &str, out: &mut FileList) -> Result<(), GitError> {
        for (name, item) in self.tree_items(tree)? {
            if item.is_tree {
                self.walk(item.id, &format!("{prefix}{name}/"), out)?;
            } else if item.is_blob {
                out.insert(format!("{prefix}{name}"), item.id);
            }
        }
        Ok(())
    }

    /// Blob paths whose content differs between trees `new` and `old` (added or changed in
    /// `new`), skipping identical subtrees.
    fn changed_paths(
        &self,
        new: ObjectId,
        old: Option<ObjectId>,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> Result<(), GitError> {
        if Some(new) == old {
            return Ok(());
        }
        let new_items = self.tree_items(new)?;
        let old_items = match old {
            Some(o) => self.tree_items(o)?,
            None => BTreeMap::new(),
        };
        for (name, item) in new_items {
            let prev = old_items.get(&name);
            if prev.is_some_and(|p| p.id == item.id && p.is_tree == item.is_tree) {
                continue;
            }
            if item.is_tree {
                let old_sub = prev.filter(|p| p.is_tree).map(|p| p.id);
                self.changed_paths(item.id, old_sub, &format!("{prefix}{name}/"), out)?;
            } else if item.is_blob {
                out.push(format!("{prefix}{name}"));
            }
        }
        Ok(())
    }

    /// For every path in `wanted` (present at `tip`), the commit time and author of the
    /// most recent first-parent commit that changed it.
    pub fn last_changes(
        &self,
        tip: ObjectId,
        wanted: &HashSet<String>,
    ) -> Result<HashMap<String, GitMeta>, GitError> {
        let mut remaining: HashSet<&str> = wanted.iter().map(String::as_str).collect();
        let mut out = HashMap::new();
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if remaining.is_empty() {
                break;
            }
            let c = self.commit(id)?;
            let meta = GitMeta {
                time: c.time().map(|t| t.seconds).unwrap_or(0),
                author: c
                    .author()
                    .map(|a| a.name.to_str_lossy().trim().to_string())
                    .unwrap_or_default(),
            };
            let tree = tree_of(&c)?;
            let parent = c.parent_ids().next().map(|p| p.detach());
            let changed: Vec<String> = match parent {
                Some(p) => {
                    let ptree = self.commit_tree(p)?;
                    let mut v = Vec::new();
                    self.changed_paths(tree, Some(ptree), "", &mut v)?;
                    v
                }
                // Root commit: everything still unassigned was added here.
                None => remaining.iter().map(|s| s.to_string()).collect(),
            };
            for path in changed {
                if remaining.remove(path.as_str()) {
                    out.insert(path, meta.clone());
                }
            }
            cur = parent;
        }
        Ok(out)
    }

    /// Size of an object in bytes, without reading it.
    pub fn object_size(&self, id: ObjectId) -> Result<u64, GitError> {
        Ok(self
            .repo
            .find_header(id)
            .map_err(gix("cannot read object header"))?
            .size())
    }

    pub fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>, GitError> {
        let mut b = self.repo.find_blob(id).map_err(gix("cannot read blob"))?;
        Ok(b.take_data())
    }
}

#[derive(Debug, Clone)]
struct TreeItem {
    id: ObjectId,
    is_tree: bool,
    is_blob: bool,
    kind: Kind,
}
