//! Git plumbing with gix: the project's bare repository, fetch from the upstream, tree
//! listing and diffs, last-change metadata from history, and compare-and-swap commits.
//! Push uses the `git` program (gix has no push yet).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context, bail};
use gix::ObjectId;
use gix::bstr::ByteSlice;
use helix_index_format::GitMeta;

/// Refspec that mirrors every upstream branch into the bare repository's branches.
const MIRROR_REFSPEC: &str = "+refs/heads/*:refs/heads/*";

/// One project's bare repository.
#[derive(Debug)]
pub struct Repo {
    pub path: PathBuf,
    pub upstream: Option<String>,
    pub branch: String,
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

impl Repo {
    /// Opens the bare repository at `path`, creating it if missing. Removes stale ref
    /// locks left by a killed process (this server is the repository's only writer).
    pub fn open_or_init(
        path: &Path,
        upstream: Option<String>,
        branch: &str,
    ) -> anyhow::Result<Repo> {
        let repo = if path.join("HEAD").exists() {
            remove_stale_locks(path);
            gix::open(path).with_context(|| format!("cannot open repository {}", path.display()))?
        } else {
            std::fs::create_dir_all(path)?;
            gix::init_bare(path)
                .with_context(|| format!("cannot create repository {}", path.display()))?
        };
        Ok(Repo {
            path: path.to_path_buf(),
            upstream,
            branch: branch.to_string(),
            repo,
        })
    }

    pub fn full_ref(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }

    /// Current tip of the branch, if the branch exists.
    pub fn tip(&self) -> anyhow::Result<Option<ObjectId>> {
        // A fresh handle sees refs changed by other processes (git fetch/push) at once.
        let r = self
            .repo
            .try_find_reference(self.full_ref().as_str())
            .context("cannot read branch")?;
        match r {
            None => Ok(None),
            Some(mut r) => {
                let id = r.peel_to_id().context("cannot resolve branch")?;
                Ok(Some(id.detach()))
            }
        }
    }

    /// Fetches every branch from the upstream (forced), returning the new branch tip.
    pub fn fetch(&self) -> anyhow::Result<Option<ObjectId>> {
        let Some(url) = &self.upstream else {
            return self.tip();
        };
        let interrupt = AtomicBool::new(false);
        let remote = self
            .repo
            .remote_at(url.as_str())
            .with_context(|| format!("invalid upstream url {url}"))?
            .with_refspecs(Some(MIRROR_REFSPEC), gix::remote::Direction::Fetch)
            .context("invalid refspec")?;
        let conn = remote
            .connect(gix::remote::Direction::Fetch)
            .with_context(|| format!("cannot connect to {url}"))?;
        let prepared = conn
            .prepare_fetch(gix::progress::Discard, Default::default())
            .with_context(|| format!("cannot list refs of {url}"))?;
        prepared
            .receive(gix::progress::Discard, &interrupt)
            .with_context(|| format!("fetch from {url} failed"))?;
        self.tip()
    }

    /// Every blob under `prefix` (or the whole tree) of commit `commit`.
    pub fn list_files(&self, commit: ObjectId, prefix: Option<&str>) -> anyhow::Result<FileList> {
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

    fn commit_tree(&self, commit: ObjectId) -> anyhow::Result<ObjectId> {
        let c = self
            .repo
            .find_commit(commit)
            .context("cannot read commit")?;
        Ok(c.tree_id().context("commit has no tree")?.detach())
    }

    fn subtree(&self, mut tree: ObjectId, path: &str) -> anyhow::Result<Option<ObjectId>> {
        for comp in path.split('/') {
            let items = self.tree_items(tree)?;
            match items.get(comp) {
                Some(item) if item.is_tree => tree = item.id,
                _ => return Ok(None),
            }
        }
        Ok(Some(tree))
    }

    fn tree_items(&self, tree: ObjectId) -> anyhow::Result<BTreeMap<String, TreeItem>> {
        let t = self.repo.find_tree(tree).context("cannot read tree")?;
        let decoded = t.decode().context("cannot decode tree")?;
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
                },
            );
        }
        Ok(out)
    }

    fn walk(&self, tree: ObjectId, prefix: &str, out: &mut FileList) -> anyhow::Result<()> {
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
    ) -> anyhow::Result<()> {
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
    ) -> anyhow::Result<HashMap<String, GitMeta>> {
        let mut remaining: HashSet<&str> = wanted.iter().map(String::as_str).collect();
        let mut out = HashMap::new();
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if remaining.is_empty() {
                break;
            }
            let c = self.repo.find_commit(id).context("cannot read commit")?;
            let meta = GitMeta {
                time: c.time().map(|t| t.seconds).unwrap_or(0),
                author: c
                    .author()
                    .map(|a| a.name.to_str_lossy().trim().to_string())
                    .unwrap_or_default(),
            };
            let tree = c.tree_id().context("commit has no tree")?.detach();
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
    pub fn object_size(&self, id: ObjectId) -> anyhow::Result<u64> {
        Ok(self
            .repo
            .find_header(id)
            .context("cannot read object header")?
            .size())
    }

    pub fn read_blob(&self, id: ObjectId) -> anyhow::Result<Vec<u8>> {
        let mut b = self.repo.find_blob(id).context("cannot read blob")?;
        Ok(b.take_data())
    }

    /// Commits `files` (repository path → content) on top of `parent` onto the branch.
    /// Compare-and-swap: fails if the branch no longer points at `parent`.
    pub fn commit_files(
        &self,
        parent: Option<ObjectId>,
        files: &[(String, Vec<u8>)],
        author: &str,
        message: &str,
    ) -> anyhow::Result<ObjectId> {
        let base_tree = match parent {
            Some(p) => self.commit_tree(p)?,
            None => ObjectId::empty_tree(gix::hash::Kind::Sha1),
        };
        let mut editor = self.repo.edit_tree(base_tree).context("cannot edit tree")?;
        for (path, content) in files {
            let blob = self.repo.write_blob(content).context("cannot write blob")?;
            editor
                .upsert(
                    path.as_str(),
                    gix::object::tree::EntryKind::Blob,
                    blob.detach(),
                )
                .with_context(|| format!("cannot add {path} to tree"))?;
        }
        let tree = editor.write().context("cannot write tree")?.detach();
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
                self.full_ref().as_str(),
                message,
                tree,
                parent,
            )
            .context("cannot commit (the branch moved)")?;
        Ok(id.detach())
    }

    /// Points the branch back at `to` if it is at `from` (undo of an unpushed commit).
    pub fn reset_branch(&self, from: ObjectId, to: Option<ObjectId>) -> anyhow::Result<()> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let name: gix::refs::FullName = self
            .full_ref()
            .as_str()
            .try_into()
            .context("bad ref name")?;
        let change = match to {
            Some(to) => Change::Update {
                log: LogChange {
                    mode: RefLog::AndReference,
                    force_create_reflog: false,
                    message: "helix: undo unpushed commit".into(),
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
            .context("cannot reset branch")?;
        Ok(())
    }

    /// Pushes `commit` to the upstream branch with the `git` program.
    pub fn push(&self, commit: ObjectId) -> anyhow::Result<PushOutcome> {
        let Some(url) = &self.upstream else {
            return Ok(PushOutcome::Pushed);
        };
        let out = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&self.path)
            .args(["push", "--porcelain", "--quiet"])
            .arg(url)
            .arg(format!("{commit}:{}", self.full_ref()))
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "true")
            .stdin(std::process::Stdio::null())
            .output()
            .context("cannot run `git push` (is git installed?)")?;
        if out.status.success() {
            return Ok(PushOutcome::Pushed);
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // `[rejected]` is git's own non-fast-forward refusal; `[remote rejected]` is a hook
        // or policy saying no, which retrying does not fix (unless it is a lock race).
        if text.contains("[rejected]")
            || text.contains("fetch first")
            || text.contains("non-fast-forward")
            || text.contains("stale info")
            || text.contains("cannot lock ref")
        {
            return Ok(PushOutcome::Rejected(text.trim().to_string()));
        }
        bail!("git push to {url} failed: {}", text.trim())
    }

    /// Packs loose objects when git thinks it is worth it; failures are only logged.
    pub fn gc_auto(&self) {
        let r = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(&self.path)
            // In the foreground: the worker is the only user of the repository meanwhile.
            .args(["-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"])
            .stdin(std::process::Stdio::null())
            .output();
        match r {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                tracing::warn!(stderr = %String::from_utf8_lossy(&o.stderr), "git gc --auto failed")
            }
            Err(e) => tracing::warn!(error = %e, "cannot run git gc"),
        }
    }

    /// Commit messages along the first-parent history from `tip`, newest first, at most `max`.
    /// Stops before `stop` (already seen).
    pub fn recent_messages(
        &self,
        tip: ObjectId,
        stop: Option<ObjectId>,
        max: usize,
    ) -> anyhow::Result<Vec<(ObjectId, String)>> {
        let mut out = Vec::new();
        let mut cur = Some(tip);
        while let Some(id) = cur {
            if out.len() >= max || Some(id) == stop {
                break;
            }
            let c = self.repo.find_commit(id).context("cannot read commit")?;
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

#[derive(Debug, Clone)]
struct TreeItem {
    id: ObjectId,
    is_tree: bool,
    is_blob: bool,
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
