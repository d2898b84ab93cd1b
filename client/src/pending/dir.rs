//! Where one project's pending writes live on one server: [`PendingDir`], resolved from the
//! server and the project, and the one-time move of the directory the queue had before it was
//! keyed by server (`pending/<project>`, shared by every server's project of that name). A
//! leaf: every other module of `pending` takes a `PendingDir`, so none can reach a queue
//! without the move having been tried first.

use crate::config::ProjectConfig;
use std::path::{Path, PathBuf};

/// The pending directory of one project on one server
/// (`$XDG_DATA_HOME/helix/servers/<server-key>/pending/<project>`): its queue of `<key>.md`
/// files, `acked/`, `rejected/`, teammates' proposals and the overlay index. Local mode has
/// none: its writes go straight into the knowledge directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDir {
    project: String,
    path: PathBuf,
    /// What became of the legacy `pending/<project>` when this was resolved.
    migration: Migration,
}

impl PendingDir {
    /// The pending directory of `project` on `server`, after moving there the legacy
    /// `pending/<project>` when this one does not exist yet (see [`migrate`]). A legacy
    /// directory left where it is (the move failed, or this one existed) is reported on
    /// stderr; nothing is copied or deleted.
    pub fn open(server: &str, project: &str) -> PendingDir {
        let dir = PendingDir::open_quietly(server, project);
        if let Some(problem) = dir.migration_problem() {
            eprintln!("helix: {problem}");
        }
        dir
    }

    /// [`PendingDir::open`] that prints nothing, for the hooks (which print nothing on any
    /// internal problem): a move that failed is tried again, and reported, by the next
    /// command.
    pub fn open_quietly(server: &str, project: &str) -> PendingDir {
        let path = crate::paths::pending_dir(server, project);
        let legacy = crate::paths::legacy_pending_dir(project);
        // The legacy queue was every server's: when this machine follows a project of this
        // name on another server too, its entries may be that team's, so none is moved.
        let others = if std::fs::symlink_metadata(&legacy).is_ok() && !path.exists() {
            other_servers_following(&crate::paths::cache_dir(), &own_keys(server), project)
        } else {
            Vec::new()
        };
        let migration = if others.is_empty() {
            migrate(&legacy, &path)
        } else {
            Migration::Ambiguous(others)
        };
        PendingDir {
            project: project.to_string(),
            path,
            migration,
        }
    }

    /// The pending directory of `project` in server mode ([`PendingDir::open`]); `None` in
    /// local mode, which queues nothing.
    pub fn of(cfg: &ProjectConfig, project: &str) -> Option<PendingDir> {
        cfg.server
            .as_deref()
            .map(|server| PendingDir::open(server, project))
    }

    /// The project whose writes these are.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// The directory itself (it may not exist yet: the first write creates it).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What to tell a person when the legacy `pending/<project>` was left where it is: its
    /// entries are not sent from there. `None` when there is no legacy directory left.
    pub fn migration_problem(&self) -> Option<String> {
        let legacy = crate::paths::legacy_pending_dir(&self.project);
        match &self.migration {
            Migration::Nothing | Migration::Moved => None,
            Migration::Kept => Some(format!(
                "{} holds pending entries of `{}` from an earlier helix, not moved to {} because \
                 that exists already; they are not sent from there: move its files into it by hand",
                legacy.display(),
                self.project,
                self.path.display()
            )),
            Migration::Ambiguous(others) => Some(format!(
                "{} holds pending entries of `{}` from an earlier helix, which kept one queue \
                 for every server, and this machine also follows `{}` on {}: helix cannot tell \
                 whose they are, so they are not sent; move the directory by hand to {} (or \
                 to the other server's `servers/<server>/pending/{}`) and run `helix sync`",
                legacy.display(),
                self.project,
                self.project,
                others.join(", "),
                self.path.display(),
                self.project
            )),
            Migration::Failed(why) => Some(format!(
                "could not move the pending entries of `{}` to their new place ({why}); they stay \
                 in {}, not sent from there, until the move works: fix the cause (the next helix \
                 command tries again) or move the directory by hand",
                self.project,
                legacy.display()
            )),
        }
    }
}

/// What [`migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Migration {
    /// No legacy directory left: there was none (the common case, one failed `stat`), or an
    /// empty one was removed.
    Nothing,
    /// The legacy directory is now the new one, whole.
    Moved,
    /// The new directory existed already; the legacy one, not empty, is left where it is.
    Kept,
    /// The move failed (why); the legacy directory is left where it is, untouched.
    Failed(String),
    /// Not tried: the project is also followed on these other servers (their keys), so the
    /// legacy queue may hold their entries.
    Ambiguous(Vec<String>),
}

/// The cache keys that are this server's: its key, and for a server under a path
/// (`https://host/team`) also the host's bare key, under which versions before paths were
/// part of the key cached it (so an upgrade does not take its own old cache for another
/// server's).
fn own_keys(server: &str) -> Vec<String> {
    let key = crate::paths::server_key(server);
    let bare = crate::paths::host_key(server);
    if bare == key {
        vec![key]
    } else {
        vec![key, bare]
    }
}

/// The other servers (keys under `cache_root`, the client's cache directory) this machine
/// has a cache of `project` for, `own_keys` and local mode's `local/` aside.
fn other_servers_following(cache_root: &Path, own_keys: &[String], project: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache_root) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|k| {
            !own_keys.contains(k) && k != "local" && cache_root.join(k).join(project).is_dir()
        })
        .collect();
    out.sort();
    out
}

/// Moves `legacy` (the old `pending/<project>`) to `to` with one `rename` when `to` does
/// not exist yet: all of it at once (queue, `acked/`, `rejected/`, proposals, overlay) or
/// nothing, never a copy half made. The parents of `to` are created first, and the emptied
/// `pending/` root is removed after. A concurrent process that moved it first is a success.
pub fn migrate(legacy: &Path, to: &Path) -> Migration {
    // The hooks come here on every call: one failed `stat` when there is nothing to move.
    if std::fs::symlink_metadata(legacy).is_err() {
        return Migration::Nothing;
    }
    if to.exists() {
        // `remove_dir` removes an empty directory only.
        return match std::fs::remove_dir(legacy) {
            Ok(()) => Migration::Nothing,
            Err(_) => Migration::Kept,
        };
    }
    if let Some(parent) = to.parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return Migration::Failed(format!("creating {}: {e}", parent.display()));
    }
    match std::fs::rename(legacy, to) {
        Ok(()) => {
            if let Some(root) = legacy.parent() {
                let _ = std::fs::remove_dir(root);
            }
            Migration::Moved
        }
        // Another helix moved it in between.
        Err(_) if to.exists() && std::fs::symlink_metadata(legacy).is_err() => Migration::Moved,
        Err(e) => Migration::Failed(format!(
            "moving {} to {}: {e}",
            legacy.display(),
            to.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_under_a_path_owns_its_hosts_bare_key_too() {
        let key = crate::paths::server_key;
        assert_eq!(own_keys("http://h:1"), [key("http://h:1")]);
        assert_eq!(own_keys("http://h:1/"), [key("http://h:1")]);
        assert_eq!(
            own_keys("https://corp.example/team"),
            [
                key("https://corp.example/team"),
                "corp.example_443".to_string()
            ]
        );
    }

    fn legacy_with_entries(root: &Path) -> PathBuf {
        let legacy = root.join("pending/default");
        std::fs::create_dir_all(legacy.join("rejected")).unwrap();
        std::fs::write(legacy.join("1-000000001-00000000000000aa.md"), "queued").unwrap();
        std::fs::write(legacy.join("rejected/k.reason"), "why").unwrap();
        std::fs::write(legacy.join("overlay.hix"), "overlay").unwrap();
        legacy
    }

    #[test]
    fn the_legacy_directory_moves_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let legacy = legacy_with_entries(tmp.path());
        let to = tmp.path().join("servers/h_1/pending/default");
        assert_eq!(migrate(&legacy, &to), Migration::Moved);
        assert!(!legacy.exists());
        assert!(
            !tmp.path().join("pending").exists(),
            "the emptied root goes"
        );
        assert_eq!(
            std::fs::read_to_string(to.join("1-000000001-00000000000000aa.md")).unwrap(),
            "queued"
        );
        assert_eq!(
            std::fs::read_to_string(to.join("rejected/k.reason")).unwrap(),
            "why"
        );
        assert!(to.join("overlay.hix").exists());
        // Once moved, nothing more to do.
        assert_eq!(migrate(&legacy, &to), Migration::Nothing);
    }

    #[test]
    fn an_existing_directory_is_never_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let legacy = legacy_with_entries(tmp.path());
        let to = tmp.path().join("servers/h_1/pending/default");
        std::fs::create_dir_all(&to).unwrap();
        std::fs::write(to.join("2-000000002-00000000000000bb.md"), "new").unwrap();
        assert_eq!(migrate(&legacy, &to), Migration::Kept);
        assert!(legacy.join("1-000000001-00000000000000aa.md").exists());
        assert!(to.join("2-000000002-00000000000000bb.md").exists());
        // An empty legacy directory is simply removed.
        let empty = tmp.path().join("pending/other");
        std::fs::create_dir_all(&empty).unwrap();
        assert_eq!(migrate(&empty, &to), Migration::Nothing);
        assert!(!empty.exists());
    }

    #[test]
    fn other_servers_are_those_with_a_cache_of_the_project() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path();
        for dir in ["h_1/default", "h_2/default", "h_3/other", "local/default"] {
            std::fs::create_dir_all(cache.join(dir)).unwrap();
        }
        let own = ["h_1".to_string()];
        assert_eq!(other_servers_following(cache, &own, "default"), ["h_2"]);
        assert_eq!(other_servers_following(cache, &own, "other"), ["h_3"]);
        assert!(other_servers_following(&cache.join("none"), &own, "default").is_empty());
    }

    #[test]
    fn a_failed_move_leaves_everything_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let legacy = legacy_with_entries(tmp.path());
        // A file where the new layout needs a directory: the parents cannot be made.
        std::fs::write(tmp.path().join("servers"), "in the way").unwrap();
        let to = tmp.path().join("servers/h_1/pending/default");
        assert!(matches!(migrate(&legacy, &to), Migration::Failed(_)));
        assert_eq!(
            std::fs::read_to_string(legacy.join("1-000000001-00000000000000aa.md")).unwrap(),
            "queued"
        );
        assert!(legacy.join("rejected/k.reason").exists());
        assert!(legacy.join("overlay.hix").exists());
    }
}
