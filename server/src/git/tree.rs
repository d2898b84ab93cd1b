//! Reading a commit's tree with gix: the files under a folder, what a folder holds (for
//! the write path), which paths changed, and when each file last changed.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

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

    /// The blob of the regular file at `path` of `commit`, if there is one.
    pub fn file_at(
        &self,
        commit: Option<ObjectId>,
        path: &str,
    ) -> Result<Option<ObjectId>, GitError> {
        let Some(commit) = commit else {
            return Ok(None);
        };
        let tree = self.commit_tree(commit)?;
        let (tree, name) = match path.rsplit_once('/') {
            Some((dir, name)) => match self.subtree(tree, dir)? {
                Some(t) => (t, name),
                None => return Ok(None),
            },
            None => (tree, path),
        };
        Ok(self
            .tree_items(tree)?
            .get(name)
            .filter(|i| i.kind == Kind::File)
            .map(|i| i.id))
    }

    /// The blob id `content` gets in this repository.
    pub fn blob_id(&self, content: &[u8]) -> Result<ObjectId, GitError> {
        gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, content)
            .map_err(gix("cannot hash blob"))
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

    /// For every path in `wanted` (present at `tip`), the author, author date and its
    /// offset of the commit that last changed it, as `git log -1 -- <path>` finds it: each
    /// path follows, at a merge, the first parent that has it unchanged (so a merged pull
    /// request credits whoever wrote the change, not whoever merged it), and is credited to
    /// the first commit where it differs from every parent.
    ///
    /// Paths travel together: commits are visited newest first, each one's tree diffed
    /// against its parents once for all the paths waiting there.
    pub fn last_changes(
        &self,
        tip: ObjectId,
        wanted: &HashSet<String>,
    ) -> Result<HashMap<String, GitMeta>, GitError> {
        let mut out = HashMap::with_capacity(wanted.len());
        let mut waiting: HashMap<ObjectId, HashSet<String>> = HashMap::new();
        let mut queue = BinaryHeap::new();
        let mut remaining = wanted.len();
        waiting.insert(tip, wanted.clone());
        queue.push((
            self.commit(tip)?.time().map(|t| t.seconds).unwrap_or(0),
            tip,
        ));
        while let Some((_, id)) = queue.pop() {
            if remaining == 0 {
                break;
            }
            // Visited already (reached again through another child), or nothing to do.
            let Some(mut here) = waiting.remove(&id).filter(|h| !h.is_empty()) else {
                continue;
            };
            let c = self.commit(id)?;
            let tree = tree_of(&c)?;
            let parents: Vec<ObjectId> = c.parent_ids().map(|p| p.detach()).collect();
            // Paths that differ from every parent so far tried.
            let mut differ: Vec<String> = Vec::new();
            for (i, &parent) in parents.iter().enumerate() {
                let mut changed = Vec::new();
                self.changed_paths(tree, Some(self.commit_tree(parent)?), "", &mut changed)?;
                let same = if i == 0 {
                    differ = changed.into_iter().filter_map(|p| here.take(&p)).collect();
                    std::mem::take(&mut here)
                } else {
                    let changed: HashSet<String> = changed.into_iter().collect();
                    let (d, s): (Vec<String>, Vec<String>) =
                        differ.into_iter().partition(|p| changed.contains(p));
                    differ = d;
                    s.into_iter().collect()
                };
                if !same.is_empty() {
                    let pc = self.commit(parent)?;
                    let slot = waiting.entry(parent).or_default();
                    if slot.is_empty() {
                        *slot = same;
                    } else {
                        slot.extend(same);
                    }
                    queue.push((pc.time().map(|t| t.seconds).unwrap_or(0), parent));
                }
                if differ.is_empty() {
                    break;
                }
            }
            if parents.is_empty() {
                // A root commit added everything still waiting here.
                differ = here.into_iter().collect();
            }
            if differ.is_empty() {
                continue;
            }
            let author = c.author().map_err(gix("cannot read commit author"))?;
            let time = author.time().unwrap_or_else(|_| gix::date::Time {
                seconds: author.seconds(),
                offset: 0,
            });
            let meta = GitMeta {
                time: time.seconds,
                offset: time.offset,
                author: author.name.to_str_lossy().trim().to_string(),
            };
            remaining = remaining.saturating_sub(differ.len());
            for path in differ {
                out.insert(path, meta.clone());
            }
        }
        Ok(out)
    }

    /// The blob at `path` in `commit`, if there is one.
    pub fn blob_at(&self, commit: ObjectId, path: &str) -> Result<Option<ObjectId>, GitError> {
        let tree = self.commit_tree(commit)?;
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let folder = if dir.is_empty() {
            Some(tree)
        } else {
            self.subtree(tree, dir)?
        };
        let Some(folder) = folder else {
            return Ok(None);
        };
        Ok(self
            .tree_items(folder)?
            .get(name)
            .filter(|i| i.is_blob)
            .map(|i| i.id))
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
