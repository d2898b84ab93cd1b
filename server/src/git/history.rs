//! The history of one file along a branch's first-parent line, for an entry's page: which
//! commits changed it, by whom and when — `git log --first-parent -- <path>`.
//!
//! Cheap on big repositories: along the path's folders, each commit's tree ids are compared
//! with its parent's from the root down and the comparison stops at the first equal one (an
//! unchanged folder holds an unchanged file), so a commit that changed nothing near the file
//! costs its root tree and perhaps one folder. Each tree is read once, by name lookup, and
//! serves both comparisons its commit takes part in.

use std::collections::{HashMap, VecDeque};
use std::path::Path;

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::{EntryKind, EntryMode};
use gix::odb::pack::cache::DecodeEntry;

use super::{GitError, Repo, gix, tree_of};

/// One commit that changed a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Full hex id of the commit.
    pub commit: String,
    pub author: String,
    pub email: String,
    /// Author time, in seconds since the Unix epoch.
    pub time: i64,
    /// The author's UTC offset in seconds (east positive).
    pub offset: i32,
    /// The first non-empty line of the message, at most [`SUMMARY_CHARS`] characters.
    pub summary: String,
    pub kind: ChangeKind,
}

/// What a commit did to the file, compared with its first parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The parent has no file at the path (or the commit is a root).
    Added,
    /// Content or mode (executable, symlink) changed.
    Modified,
    /// The commit has no file at the path any more.
    Deleted,
}

/// The changes of a file along a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// Full hex id of the branch tip; `None` when the branch does not exist.
    pub tip: Option<String>,
    /// Newest first.
    pub changes: Vec<Change>,
    /// The walk stopped at a limit: older changes exist (`max_changes` reached and another
    /// change found) or may exist (`max_commits` visited before reaching the root).
    pub truncated: bool,
}

/// Bounds of a history walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many changes are listed.
    pub max_changes: usize,
    /// At most this many commits are visited (the tip included).
    pub max_commits: usize,
}

/// Longest [`Change::summary`], in characters (an ellipsis ends a cut one).
pub const SUMMARY_CHARS: usize = 200;

/// The commits of `branch`'s first-parent line that changed `path` (a repository path,
/// `folder/file.md`), newest first — `git log --first-parent -- path` — opening the bare
/// repository at `repo` read-only (see [`Repo::open_read_only`]).
///
/// A commit is listed when the blob at `path` (id and mode; a symlink counts, a folder or
/// submodule does not) differs from its first parent's; a root commit (or a shallow
/// boundary) is listed when it has the file. A missing branch has an empty history
/// without a tip.
pub fn file_history(
    repo: &Path,
    branch: &str,
    path: &str,
    limits: Limits,
) -> Result<History, GitError> {
    Repo::open_read_only(repo)?.file_history(branch, path, limits)
}

impl Repo {
    /// A handle on the existing repository at `path` for reading, e.g. from a thread other
    /// than its worker's: nothing is created, and lock files are left to the worker. Only
    /// the repository's own configuration is read (not the user's or the system's, nor
    /// `GIT_*` variables), which is all reading objects and refs needs. Do not write
    /// through it.
    ///
    /// It keeps the last decoded pack entries (up to 8 MiB): walking back in history reads
    /// each tree right after its newer version, of which git's packs store it as a delta,
    /// so a read applies one delta instead of its whole chain.
    pub fn open_read_only(path: &Path) -> Result<Repo, GitError> {
        let mut repo = gix::open_opts(path, gix::open::Options::isolated())
            .map_err(gix(format!("cannot open repository {}", path.display())))?;
        repo.objects
            .set_pack_cache(|| Box::new(DeltaBases::default()));
        Ok(Repo {
            path: path.to_path_buf(),
            upstream: None,
            branches: Vec::new(),
            repo,
        })
    }

    /// See [`file_history`].
    pub fn file_history(
        &self,
        branch: &str,
        path: &str,
        limits: Limits,
    ) -> Result<History, GitError> {
        let Some(tip) = self.tip(branch)? else {
            return Ok(History {
                tip: None,
                changes: Vec::new(),
                truncated: false,
            });
        };
        let mut out = History {
            tip: Some(tip.to_string()),
            changes: Vec::new(),
            truncated: false,
        };
        let comps: Vec<&[u8]> = path.split('/').map(str::as_bytes).collect();
        if comps
            .iter()
            .any(|c| c.is_empty() || *c == b"." || *c == b"..")
        {
            // No tree can hold such a path.
            return Ok(out);
        }
        let shallow = self
            .repo
            .shallow_commits()
            .map_err(gix("cannot read the shallow file"))?;
        let is_boundary = |id: &ObjectId| shallow.as_ref().is_some_and(|s| s.contains(id));

        let mut cur = self.commit(tip)?;
        let mut cur_probe = Probe::new(tree_of(&cur)?);
        let mut visited = 0;
        loop {
            if visited == limits.max_commits {
                out.truncated = true;
                break;
            }
            visited += 1;
            let parent = if is_boundary(&cur.id) {
                None
            } else {
                cur.parent_ids().next().map(|p| p.detach())
            };
            let parent = match parent {
                Some(p) => Some(self.commit(p)?),
                None => None,
            };
            let mut parent_probe = match &parent {
                Some(p) => Probe::new(tree_of(p)?),
                None => Probe::absent(),
            };
            if let Some(kind) = self.compare(&comps, &mut cur_probe, &mut parent_probe)? {
                if out.changes.len() == limits.max_changes {
                    out.truncated = true;
                    break;
                }
                out.changes.push(change(&cur, kind)?);
            }
            let Some(parent) = parent else {
                break;
            };
            cur = parent;
            cur_probe = parent_probe;
        }
        Ok(out)
    }

    /// What `new` did to the file at `comps` compared with `old`, if anything: the trees
    /// along the path are compared from the root down, stopping at the first equal one.
    fn compare(
        &self,
        comps: &[&[u8]],
        new: &mut Probe,
        old: &mut Probe,
    ) -> Result<Option<ChangeKind>, GitError> {
        for depth in 0..=comps.len() {
            let a = new.at(self, comps, depth)?;
            let b = old.at(self, comps, depth)?;
            if a == b {
                return Ok(None);
            }
            if depth == comps.len() {
                return Ok(Some(match (a, b) {
                    (Some(_), None) => ChangeKind::Added,
                    (None, Some(_)) => ChangeKind::Deleted,
                    _ => ChangeKind::Modified,
                }));
            }
        }
        unreachable!("the last depth always decides")
    }
}

/// The entries along a path in one commit, looked up as deep as a comparison needed:
/// `levels[0]` is the root tree, `levels[i]` the tree (for `i` < the number of components)
/// or file (the last) named by component `i - 1`; `None` where there is none.
struct Probe {
    levels: Vec<Option<(ObjectId, EntryMode)>>,
}

impl Probe {
    fn new(root: ObjectId) -> Probe {
        Probe {
            levels: vec![Some((root, EntryKind::Tree.into()))],
        }
    }

    /// The other side of a root commit: nothing at any depth.
    fn absent() -> Probe {
        Probe { levels: vec![None] }
    }

    fn at(
        &mut self,
        repo: &Repo,
        comps: &[&[u8]],
        depth: usize,
    ) -> Result<Option<(ObjectId, EntryMode)>, GitError> {
        while self.levels.len() <= depth {
            let i = self.levels.len();
            let next = match self.levels[i - 1] {
                None => None,
                Some((tree, _)) => {
                    let tree = repo.repo.find_tree(tree).map_err(gix("cannot read tree"))?;
                    let name = comps[i - 1];
                    let last = i == comps.len();
                    tree.find_entry(name)
                        .filter(|e| {
                            if last {
                                e.mode().is_blob_or_symlink()
                            } else {
                                e.mode().is_tree()
                            }
                        })
                        .map(|e| {
                            // A folder is compared by id alone.
                            let mode = if last {
                                e.mode()
                            } else {
                                EntryKind::Tree.into()
                            };
                            (e.object_id(), mode)
                        })
                }
            };
            self.levels.push(next);
        }
        Ok(self.levels[depth])
    }
}

/// Most bytes of decoded pack entries a read-only handle keeps: a walk needs only the
/// last version of each tree on its path.
const DELTA_BASE_BYTES: usize = 8 << 20;

/// The last decoded pack entries, up to [`DELTA_BASE_BYTES`], first in first out.
#[derive(Default)]
struct DeltaBases {
    entries: HashMap<(u32, u64), (gix::objs::Kind, Vec<u8>, usize)>,
    order: VecDeque<(u32, u64)>,
    bytes: usize,
}

impl DecodeEntry for DeltaBases {
    fn put(
        &mut self,
        pack_id: u32,
        offset: u64,
        data: &[u8],
        kind: gix::objs::Kind,
        compressed_size: usize,
    ) {
        if data.len() > DELTA_BASE_BYTES / 4 || self.entries.contains_key(&(pack_id, offset)) {
            return;
        }
        self.bytes += data.len();
        self.entries
            .insert((pack_id, offset), (kind, data.to_vec(), compressed_size));
        self.order.push_back((pack_id, offset));
        while self.bytes > DELTA_BASE_BYTES
            && let Some(old) = self.order.pop_front()
        {
            if let Some((_, d, _)) = self.entries.remove(&old) {
                self.bytes -= d.len();
            }
        }
    }

    fn get(
        &mut self,
        pack_id: u32,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Option<(gix::objs::Kind, usize)> {
        let (kind, data, compressed_size) = self.entries.get(&(pack_id, offset))?;
        out.clear();
        out.extend_from_slice(data);
        Some((*kind, *compressed_size))
    }
}

fn change(commit: &gix::Commit<'_>, kind: ChangeKind) -> Result<Change, GitError> {
    let author = commit.author().map_err(gix("cannot read commit author"))?;
    let time = author.time().unwrap_or_else(|_| gix::date::Time {
        seconds: author.seconds(),
        offset: 0,
    });
    let message = commit.message_raw_sloppy();
    Ok(Change {
        commit: commit.id.to_string(),
        author: author.name.to_str_lossy().trim().to_string(),
        email: author.email.to_str_lossy().trim().to_string(),
        time: time.seconds,
        offset: time.offset,
        summary: summary(&message.to_str_lossy()),
        kind,
    })
}

/// The first non-empty line of `message`, trimmed, cut to [`SUMMARY_CHARS`] characters.
fn summary(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    if line.chars().count() <= SUMMARY_CHARS {
        return line.to_string();
    }
    let mut s: String = line.chars().take(SUMMARY_CHARS - 1).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests;
