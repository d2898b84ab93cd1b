//! Git plumbing with gix: the project's bare repository, fetch from the upstream, tree
//! listing and diffs, last-change metadata from history, and compare-and-swap commits.
//! Push uses the `git` program (gix has no push yet).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use helix_index_format::GitMeta;

use crate::sys::chain;

/// Blobs above this size are streamed by `git` (hashed and written without holding them in
/// memory), whatever they inflate to; entries are far smaller (`MAX_ENTRY_BYTES`).
const BIG_FILE_THRESHOLD: &str = "core.bigFileThreshold=1m";
/// Longest a `git fetch`, `push` or `gc` may run before it is killed.
const FETCH_TIMEOUT: Duration = Duration::from_secs(600);

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
        branch: &str,
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
            branch: branch.to_string(),
            repo,
        })
    }

    pub fn full_ref(&self) -> String {
        format!("refs/heads/{}", self.branch)
    }

    /// Current tip of the branch, if the branch exists.
    pub fn tip(&self) -> Result<Option<ObjectId>, GitError> {
        // A fresh handle sees refs changed by other processes (git fetch/push) at once.
        let r = self
            .repo
            .try_find_reference(self.full_ref().as_str())
            .map_err(gix("cannot read branch"))?;
        match r {
            None => Ok(None),
            Some(mut r) => {
                let id = r.peel_to_id().map_err(gix("cannot resolve branch"))?;
                Ok(Some(id.detach()))
            }
        }
    }

    /// Fetches the configured branch from the upstream with the `git` program (forced),
    /// returning the new branch tip. When objects arrived, lets git consolidate packs and
    /// reopens the gix handle, whose object store has a fixed number of pack slots: without
    /// that, a long-running server stops following its upstream after a few dozen fetches.
    ///
    /// The `git` program rather than gix: `index-pack` streams blobs above
    /// `core.bigFileThreshold` instead of inflating them in memory (a 1.5 MB push of a 1.5 GB
    /// run of zeros), cleans up after itself, and uses the same credentials as `push`.
    pub fn fetch(&mut self) -> Result<Option<ObjectId>, GitError> {
        let Some(url) = self.upstream.clone() else {
            return self.tip();
        };
        let before = self.tip()?;
        let refspec = format!("+{r}:{r}", r = self.full_ref());
        let mut cmd = self.git();
        cmd.args(["-c", BIG_FILE_THRESHOLD])
            // Slow or stalled HTTP transfers fail instead of holding the worker.
            .args([
                "-c",
                "http.lowSpeedLimit=1000",
                "-c",
                "http.lowSpeedTime=60",
            ])
            .args([
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                // Maintenance runs below, in the foreground, on this thread's terms.
                "--no-auto-maintenance",
                "--",
            ])
            .arg(&url)
            .arg(&refspec);
        let out = run(cmd, &format!("`git fetch` from {url}"), FETCH_TIMEOUT)?;
        if !out.ok {
            self.remove_stale_keeps();
            if out.stderr.contains("couldn't find remote ref") {
                // An empty upstream (or one without this branch yet): nothing to follow; the
                // first write creates the branch there.
                return self.tip();
            }
            return Err(GitError::Fetch {
                url,
                stderr: out.stderr.trim().to_string(),
            });
        }
        let after = self.tip()?;
        if after != before {
            self.maintain();
        }
        Ok(after)
    }

    /// `git gc --auto` in the foreground (packs loose objects, consolidates packs when there
    /// are many), then reopens the gix handle so it sees the packs as they are now.
    /// Failures are only logged: maintenance is an optimisation.
    pub fn maintain(&mut self) {
        let (packs_before, started) = (self.pack_count(), Instant::now());
        let mut cmd = self.git();
        cmd.args(["-c", "gc.autoDetach=false", "-c", BIG_FILE_THRESHOLD])
            .args(["gc", "--auto", "--quiet"]);
        match run(cmd, "`git gc`", FETCH_TIMEOUT) {
            Ok(o) if o.ok => {}
            Ok(o) => tracing::warn!(stderr = %o.stderr.trim(), "git gc --auto failed"),
            Err(e) => tracing::warn!(error = %e, "cannot run git gc"),
        }
        let packs = self.pack_count();
        if packs < packs_before {
            tracing::info!(
                packs_before,
                packs,
                ms = started.elapsed().as_millis() as u64,
                "git gc consolidated packs"
            );
        }
        match gix::open(&self.path) {
            Ok(r) => self.repo = r,
            Err(e) => {
                tracing::warn!(error = %e, "cannot reopen the repository; keeping the old handle")
            }
        }
    }

    fn pack_count(&self) -> usize {
        std::fs::read_dir(self.path.join("objects/pack")).map_or(0, |rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
                .count()
        })
    }

    /// Removes `objects/pack/*.keep` files: the server never asks for packs to be kept, so
    /// any there were left by an interrupted or failed fetch, and they would stop git from
    /// ever consolidating those packs.
    fn remove_stale_keeps(&self) {
        remove_keep_files(&self.path);
    }

    /// The `git` program on this repository, never prompting for credentials.
    fn git(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new("git");
        cmd.arg("--git-dir")
            .arg(&self.path)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "true")
            .stdin(std::process::Stdio::null());
        cmd
    }

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

    fn commit(&self, id: ObjectId) -> Result<gix::Commit<'_>, GitError> {
        self.repo.find_commit(id).map_err(gix("cannot read commit"))
    }

    fn commit_tree(&self, commit: ObjectId) -> Result<ObjectId, GitError> {
        tree_of(&self.commit(commit)?)
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

    /// Commits `files` (repository path → content) on top of `parent` onto the branch.
    /// Compare-and-swap: fails if the branch no longer points at `parent`.
    pub fn commit_files(
        &self,
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
                self.full_ref().as_str(),
                message,
                tree,
                parent,
            )
            .map_err(gix("cannot commit (the branch moved)"))?;
        Ok(id.detach())
    }

    /// Points the branch back at `to` if it is at `from` (undo of an unpushed commit).
    pub fn reset_branch(&self, from: ObjectId, to: Option<ObjectId>) -> Result<(), GitError> {
        use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
        let name: gix::refs::FullName = self
            .full_ref()
            .as_str()
            .try_into()
            .map_err(gix("bad ref name"))?;
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
            .map_err(gix("cannot reset branch"))?;
        Ok(())
    }

    /// Pushes `commit` to the upstream branch with the `git` program.
    pub fn push(&self, commit: ObjectId) -> Result<PushOutcome, GitError> {
        let Some(url) = &self.upstream else {
            return Ok(PushOutcome::Pushed);
        };
        let mut cmd = self.git();
        cmd.args(["push", "--porcelain", "--quiet", "--"])
            .arg(url)
            .arg(format!("{commit}:{}", self.full_ref()));
        let out = run(cmd, &format!("`git push` to {url}"), FETCH_TIMEOUT)?;
        if out.ok {
            return Ok(PushOutcome::Pushed);
        }
        let text = format!("{}{}", out.stdout, out.stderr);
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
        Err(GitError::Push {
            url: url.clone(),
            output: text.trim().to_string(),
        })
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

#[derive(Debug, Clone)]
struct TreeItem {
    id: ObjectId,
    is_tree: bool,
    is_blob: bool,
    kind: Kind,
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

/// What a finished `git` process said.
#[derive(Debug)]
struct GitOutput {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` (`command` names it in errors) to completion, or kills it after `timeout`.
fn run(
    mut cmd: std::process::Command,
    command: &str,
    timeout: Duration,
) -> Result<GitOutput, GitError> {
    use std::io::Read;
    use std::process::Stdio;
    let failed = |error| GitError::Run {
        command: command.to_string(),
        error,
    };
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(failed)?;
    // Read both pipes on their own threads: a chatty process must never block on a full pipe.
    let pipe = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                // Bounded: a runaway process cannot fill the server's memory with output.
                let _ = r.by_ref().take(1 << 20).read_to_end(&mut buf);
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = pipe(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let err = pipe(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let mut nap = Duration::from_millis(1);
    let status = loop {
        if let Some(st) = child.try_wait().map_err(failed)? {
            break st;
        }
        if Instant::now() >= deadline {
            // The whole group: `git fetch` runs upload-pack, index-pack or a remote helper.
            #[cfg(unix)]
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Err(GitError::TimedOut {
                command: command.to_string(),
                secs: timeout.as_secs(),
            });
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(50));
    };
    Ok(GitOutput {
        ok: status.success(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}
