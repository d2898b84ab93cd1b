//! Git with gix: the project's bare repository, its branch tip, compare-and-swap commits
//! and history; reading trees is `tree.rs`, a file's history for its page `history.rs`,
//! talking to the upstream (`git` program) `remote.rs`.

mod history;
mod remote;
mod tree;

pub use history::{Change, ChangeKind, History, Limits, SUMMARY_CHARS, file_history};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;

use crate::sys::chain;

/// A bare repository: a server-owned one, or the mirror of an upstream that every project
/// following that upstream reads.
#[derive(Debug)]
pub struct Repo {
    pub path: PathBuf,
    pub upstream: Option<String>,
    /// The branches its projects read and write: a fetch brings these and nothing else.
    pub branches: Vec<String>,
    repo: gix::Repository,
}

/// A file in a tree: repository path and blob id.
pub type FileList = BTreeMap<String, ObjectId>;

/// Outcome of a push attempt.
#[derive(Debug, PartialEq, Eq)]
pub enum PushOutcome {
    Pushed,
    /// The upstream branch moved; fetch and re-apply.
    Rejected(String),
}

/// Why a repository operation failed, with what was being done and, for the `git`
/// program, the command and what it printed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// A gix operation failed (its causes are part of the message).
    #[error("{what}: {}", chain(.error.as_ref()))]
    Gix {
        what: String,
        error: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    #[error("cannot create {}: {error}", .path.display())]
    CreateDir {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The `git` program could not be started or waited for.
    #[error("cannot run {command}: {error}{}", not_installed_hint(.error))]
    Run {
        command: String,
        error: std::io::Error,
    },
    #[error("cannot run {command}: timed out after {secs} s")]
    TimedOut { command: String, secs: u64 },
    /// `git fetch` ran and failed.
    #[error("git fetch from {url} failed: {stderr}")]
    Fetch { url: String, stderr: String },
    /// `git push` ran and failed, for another reason than a moved upstream branch.
    #[error("git push to {url} failed: {output}")]
    Push { url: String, output: String },
}

/// Maps a gix error to [`GitError::Gix`] saying what was being done.
fn gix<E>(what: impl Into<String>) -> impl FnOnce(E) -> GitError
where
    E: std::error::Error + Send + Sync + 'static,
{
    move |e| GitError::Gix {
        what: what.into(),
        error: Box::new(e),
    }
}

fn not_installed_hint(e: &std::io::Error) -> &'static str {
    if e.kind() == std::io::ErrorKind::NotFound {
        " (is git installed?)"
    } else {
        ""
    }
}

impl Repo {
    /// Opens the bare repository at `path`, creating it if missing. Removes stale ref
    /// locks left by a killed process (this server is the repository's only writer).
    pub fn open_or_init(
        path: &Path,
        upstream: Option<String>,
        branches: Vec<String>,
    ) -> Result<Repo, GitError> {
        let repo = if path.join("HEAD").exists() {
            remove_stale_locks(path);
            remove_keep_files(path);
            gix::open(path).map_err(gix(format!("cannot open repository {}", path.display())))?
        } else {
            std::fs::create_dir_all(path).map_err(|error| GitError::CreateDir {
                path: path.to_path_buf(),
                error,
            })?;
            gix::init_bare(path)
                .map_err(gix(format!("cannot create repository {}", path.display())))?
        };
        Ok(Repo {
            path: path.to_path_buf(),
            upstream,
            branches,
            repo,
        })
    }

    /// Current tip of `branch`, if the branch exists.
    pub fn tip(&self, branch: &str) -> Result<Option<ObjectId>, GitError> {
        // A fresh handle sees refs changed by other processes (git fetch/push) at once.
        let r = self
            .repo
            .try_find_reference(full_ref(branch).as_str())
            .map_err(gix("cannot read branch"))?;
        match r {
            None => Ok(None),
            Some(mut r) => {
                let id = r.peel_to_id().map_err(gix("cannot resolve branch"))?;
                Ok(Some(id.detach()))
            }
        }
    }

    fn commit(&self, id: ObjectId) -> Result<gix::Commit<'_>, GitError> {
        self.repo.find_commit(id).map_err(gix("cannot read commit"))
    }

    fn commit_tree(&self, commit: ObjectId) -> Result<ObjectId, GitError> {
        tree_of(&self.commit(commit)?)
    }

    /// Commits `files` (repository path → content) on top of `parent` onto `branch`.
    /// Compare-and-swap: fails if the branch no longer points at `parent`.
    pub fn commit_files(
        &self,
        branch: &str,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        author: &str,
        message: &str,
    ) -> Result<ObjectId, GitError> {
        let base_tree = match parent {
            Some(p) => self.commit_tree(p)?,
            None => ObjectId::empty_tree(gix::hash::Kind::Sha1),
        };
        let mut editor = self
            .repo
            .edit_tree(base_tree)
            .map_err(gix("cannot edit tree"))?;
        for (path, content) in files {
            let blob = self
                .repo
                .write_blob(content)
                .map_err(gix("cannot write blob"))?;
            editor
                .upsert(
                    path.as_str(),
                    gix::object::tree::EntryKind::Blob,
                    blob.detach(),
                )
                .map_err(gix(format!("cannot add {path} to tree")))?;
        }
        let tree = editor.write().map_err(gix("cannot write tree"))?.detach();
        let now = gix::date::Time::now_utc();
        let author_sig = gix::actor::Signature {
            name: author.into(),
            email: format!("{}@helix.invalid", email_local(author)).into(),
            time: now,
        };
        let committer_sig = gix::actor::Signature {
            name: "helix-server".into(),
            email: "helix-server@helix.invalid".into(),
            time: now,
        };
        let mut b1 = gix::date::parse::TimeBuf::default();
        let mut b2 = gix::date::parse::TimeBuf::default();
        let id = self
            .repo
            .commit_as(
                committer_sig.to_ref(&mut b1),
                author_sig.to_ref(&mut b2),
                full_ref(branch).as_str(),
                message,
                tree,
                parent,
            )
            .map_err(gix("cannot commit (the branch moved)"))?;
        Ok(id.detach())
    }

    /// Points `branch` back at `to` if it is at `from` (undo of an unpushed commit).
    pub fn reset_branch(
        &self,
        branch: &str,
        from: ObjectId,
        to: Option<ObjectId>,
    ) -> Result<(), GitError> {
        self.move_branch(branch, from, to, "helix: undo unpushed commit")
    }

    /// Compare-and-swap of `branch` from `from` to `to` (`None`: delete it), with `why` in
    /// the reflog; fails when the branch is not at `from`.
    pub fn move_branch(
        &self,
        branch: &str,
        from: ObjectId,
        to: Option<ObjectId>,
        why: &str,
    ) -> Result<(), GitError> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let name: gix::refs::FullName = full_ref(branch)
            .as_str()
            .try_into()
            .map_err(gix("bad ref name"))?;
        let change = match to {
            Some(to) => Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: why.into(),
                },
                expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(from)),
                new: gix::refs::Target::Object(to),
            },
            None => Change::Delete {
                expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(from)),
                log: RefLog::AndReference,
            },
        };
        self.repo
            .edit_reference(RefEdit {
                change,
                name,
                deref: false,
            })
            .map_err(gix("cannot reset branch"))?;
        Ok(())
    }

    /// Deletes every ref of a mirror but its projects' branches: a mirror adopted from an
    /// earlier version (which fetched every branch), or left by a project no longer
    /// configured, stops holding what nobody reads. Never touches a server-owned repository.
    pub fn keep_only_followed_branches(&self) -> Result<usize, GitError> {
        use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
        if self.upstream.is_none() {
            return Ok(0);
        }
        let keep: Vec<String> = self.branches.iter().map(|b| full_ref(b)).collect();
        // Proposal branches are the server's own, not followed: kept until decided.
        let proposals = full_ref(PROPOSAL_BRANCHES);
        let platform = self.repo.references().map_err(gix("cannot list refs"))?;
        let mut edits = Vec::new();
        for r in platform.all().map_err(gix("cannot list refs"))? {
            let r = r.map_err(gix("cannot read a ref"))?;
            let name = r.name().as_bstr().to_str_lossy().into_owned();
            if name == "HEAD" || keep.contains(&name) || name.starts_with(&proposals) {
                continue;
            }
            edits.push(RefEdit {
                change: Change::Delete {
                    expected: PreviousValue::Any,
                    log: RefLog::AndReference,
                },
                name: r.name().to_owned(),
                deref: false,
            });
        }
        let n = edits.len();
        if n > 0 {
            self.repo
                .edit_references(edits)
                .map_err(gix("cannot delete refs no project follows"))?;
            tracing::info!(path = %self.path.display(), refs = n, "removed refs of branches no project follows");
        }
        Ok(n)
    }

    /// The first-parent depth of `tip` (a root commit is 1) and its committer time: the
    /// same on every server that follows the branch. `known` is a commit whose depth was
    /// found before; the walk stops there.
    pub fn depth(
        &self,
        tip: ObjectId,
        known: Option<(ObjectId, u64)>,
    ) -> Result<(u64, i64), GitError> {
        let time = self.commit(tip)?.time().map(|t| t.seconds).unwrap_or(0);
        let mut steps = 0;
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if let Some((k, d)) = known
                && k == id
            {
                return Ok((d + steps, time));
            }
            steps += 1;
            cur = self.commit(id)?.parent_ids().next().map(|p| p.detach());
        }
        Ok((steps, time))
    }

    /// Commit messages along the first-parent history from `tip`, newest first, at most `max`.
    /// Stops before `stop` (already seen).
    pub fn recent_messages(
        &self,
        tip: ObjectId,
        stop: Option<ObjectId>,
        max: usize,
    ) -> Result<Vec<(ObjectId, String)>, GitError> {
        let mut out = Vec::new();
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if out.len() >= max || Some(id) == stop {
                break;
            }
            let c = self.commit(id)?;
            let msg = c
                .message_raw()
                .map(|m| m.to_str_lossy().into_owned())
                .unwrap_or_default();
            cur = c.parent_ids().next().map(|p| p.detach());
            out.push((id, msg));
        }
        Ok(out)
    }
}

/// What a name in a tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Folder,
    File,
    Symlink,
    Submodule,
}

impl Kind {
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Folder => "a folder",
            Kind::File => "a file",
            Kind::Symlink => "a symlink",
            Kind::Submodule => "a submodule",
        }
    }
}

/// A folder of a commit, as the write path sees it before adding a file there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Folder {
    /// The folder exists: every name in it (as stored) and what it is.
    Present(BTreeMap<String, Kind>),
    /// The folder does not exist; writing a file creates it.
    Absent,
    /// A component of the path is taken by something that is not a folder, or by a folder
    /// whose name differs only in case (which a case-insensitive checkout cannot hold).
    Blocked {
        /// The existing path in the way.
        existing: String,
        kind: Kind,
    },
}

/// Where proposal branches live: `helix/proposals/<author>/<slug>`.
pub const PROPOSAL_BRANCHES: &str = "helix/proposals/";

/// `refs/heads/<branch>`.
fn full_ref(branch: &str) -> String {
    format!("refs/heads/{branch}")
}

fn tree_of(commit: &gix::Commit<'_>) -> Result<ObjectId, GitError> {
    Ok(commit
        .tree_id()
        .map_err(gix("commit has no tree"))?
        .detach())
}

/// A name made safe for the local part of a placeholder e-mail address.
fn email_local(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() { "anonymous".into() } else { s }
}

/// Lock files are left behind only by a killed process; the server is the only writer.
fn remove_stale_locks(repo: &Path) {
    fn walk(dir: &Path) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p);
            } else if p.extension().is_some_and(|x| x == "lock") {
                tracing::warn!(path = %p.display(), "removing stale lock from an interrupted run");
                let _ = std::fs::remove_file(&p);
            }
        }
    }
    walk(&repo.join("refs"));
    for f in [
        "packed-refs.lock",
        "HEAD.lock",
        "config.lock",
        "shallow.lock",
    ] {
        let _ = std::fs::remove_file(repo.join(f));
    }
}

/// See [`Repo::remove_stale_keeps`].
fn remove_keep_files(repo: &Path) {
    let Ok(rd) = std::fs::read_dir(repo.join("objects/pack")) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "keep") {
            tracing::info!(path = %p.display(), "removing a .keep file left by an interrupted fetch");
            let _ = std::fs::remove_file(&p);
        }
    }
}
