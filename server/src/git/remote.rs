//! The upstream, through the `git` program (gix has no push yet): fetch, push and
//! `git gc --auto`, each bounded in time and never prompting for credentials.

use std::time::{Duration, Instant};

use gix::ObjectId;

use super::{GitError, PushOutcome, Repo, full_ref, remove_keep_files};

/// Blobs above this size are streamed by `git` (hashed and written without holding them in
/// memory), whatever they inflate to; entries are far smaller (`MAX_ENTRY_BYTES`).
const BIG_FILE_THRESHOLD: &str = "core.bigFileThreshold=1m";
/// Longest a `git fetch`, `push` or `gc` may run before it is killed.
const FETCH_TIMEOUT: Duration = Duration::from_secs(600);

impl Repo {
    /// Fetches the projects' branches (and no other) from the upstream with the `git`
    /// program (forced), in one round. When objects arrived, lets git consolidate packs and
    /// reopens the gix handle, whose object store has a fixed number of pack slots: without
    /// that, a long-running server stops following its upstream after a few dozen fetches.
    ///
    /// The `git` program rather than gix: `index-pack` streams blobs above
    /// `core.bigFileThreshold` instead of inflating them in memory (a 1.5 MB push of a 1.5 GB
    /// run of zeros), cleans up after itself, and uses the same credentials as `push`.
    pub fn fetch(&mut self) -> Result<(), GitError> {
        if self.upstream.is_none() {
            return Ok(());
        }
        let tips = |r: &Repo| -> Result<Vec<Option<ObjectId>>, GitError> {
            r.branches.iter().map(|b| r.tip(b)).collect()
        };
        let before = tips(self)?;
        let branches = self.branches.clone();
        match self.fetch_refs(&branches) {
            // A branch the upstream lacks (an empty upstream, or one without this branch
            // yet: the first write creates it there) must not stop the others.
            Err(GitError::Fetch { stderr, .. })
                if stderr.contains("couldn't find remote ref") && branches.len() > 1 =>
            {
                for b in &branches {
                    self.fetch_refs(std::slice::from_ref(b))?;
                }
            }
            r => r?,
        }
        if tips(self)? != before {
            self.maintain();
        }
        Ok(())
    }

    /// One `git fetch` of `branches`; a branch missing upstream is nothing to follow.
    fn fetch_refs(&mut self, branches: &[String]) -> Result<(), GitError> {
        let Some(url) = self.upstream.clone() else {
            return Ok(());
        };
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
            .args(
                branches
                    .iter()
                    .map(|b| format!("+{r}:{r}", r = full_ref(b))),
            );
        let out = run(cmd, &format!("`git fetch` from {url}"), FETCH_TIMEOUT)?;
        if !out.ok {
            self.remove_stale_keeps();
            if branches.len() == 1 && out.stderr.contains("couldn't find remote ref") {
                return Ok(());
            }
            return Err(GitError::Fetch {
                url,
                stderr: out.stderr.trim().to_string(),
            });
        }
        Ok(())
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

    /// Pushes `commit` to the upstream's `branch` with the `git` program.
    pub fn push(&self, branch: &str, commit: ObjectId) -> Result<PushOutcome, GitError> {
        let Some(url) = &self.upstream else {
            return Ok(PushOutcome::Pushed);
        };
        let mut cmd = self.git();
        cmd.args(["push", "--porcelain", "--quiet", "--"])
            .arg(url)
            .arg(format!("{commit}:{}", full_ref(branch)));
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
}

impl Repo {
    /// Where `branch` points on the upstream (`None`: it does not exist there, or there is
    /// no upstream).
    pub fn remote_tip(&self, branch: &str) -> Result<Option<ObjectId>, GitError> {
        let Some(url) = &self.upstream else {
            return Ok(None);
        };
        let mut cmd = self.git();
        cmd.args(["ls-remote", "--"]).arg(url).arg(full_ref(branch));
        let out = run(cmd, &format!("`git ls-remote` of {url}"), FETCH_TIMEOUT)?;
        if !out.ok {
            return Err(GitError::Fetch {
                url: url.clone(),
                stderr: out.stderr.trim().to_string(),
            });
        }
        let wanted = full_ref(branch);
        Ok(out.stdout.lines().find_map(|l| {
            let (id, name) = l.split_once('\t')?;
            (name.trim() == wanted)
                .then(|| ObjectId::from_hex(id.trim().as_bytes()).ok())
                .flatten()
        }))
    }

    /// Whether `ancestor` is in the history of `commit` (`git merge-base --is-ancestor`).
    pub fn is_ancestor(&self, ancestor: ObjectId, commit: ObjectId) -> Result<bool, GitError> {
        let mut cmd = self.git();
        cmd.args(["merge-base", "--is-ancestor"])
            .arg(ancestor.to_string())
            .arg(commit.to_string());
        Ok(run(cmd, "`git merge-base`", FETCH_TIMEOUT)?.ok)
    }

    /// Deletes `branch` on the upstream if it still points at `expected` (a lease: a branch
    /// someone moved since is left alone and the push fails). No upstream: nothing to do.
    pub fn push_delete(&self, branch: &str, expected: ObjectId) -> Result<PushOutcome, GitError> {
        let Some(url) = &self.upstream else {
            return Ok(PushOutcome::Pushed);
        };
        let r = full_ref(branch);
        let mut cmd = self.git();
        cmd.args(["push", "--porcelain", "--quiet"])
            .arg(format!("--force-with-lease={r}:{expected}"))
            .arg("--")
            .arg(url)
            .arg(format!(":{r}"));
        let out = run(cmd, &format!("`git push --delete` to {url}"), FETCH_TIMEOUT)?;
        if out.ok {
            return Ok(PushOutcome::Pushed);
        }
        let text = format!("{}{}", out.stdout, out.stderr);
        if text.contains("stale info") || text.contains("[rejected]") {
            return Ok(PushOutcome::Rejected(text.trim().to_string()));
        }
        Err(GitError::Push {
            url: url.clone(),
            output: text.trim().to_string(),
        })
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
