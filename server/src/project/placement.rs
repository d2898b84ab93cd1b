//! Where repositories live in the data directory: one mirror per upstream, shared by every
//! project that follows it (`mirrors/<name>-<hash>.git`), or a server-owned repository per
//! project; and which projects a repository (and its worker thread) serves.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::ProjectConfig;

/// Projects that read one repository, in configuration order.
#[derive(Debug)]
pub(super) struct Group {
    pub(super) path: PathBuf,
    pub(super) upstream: Option<String>,
    pub(super) projects: Vec<ProjectConfig>,
}

impl Group {
    /// The branches the group's projects read, each once.
    pub(super) fn branches(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.projects {
            if !out.contains(&p.branch) {
                out.push(p.branch.clone());
            }
        }
        out
    }

    /// A name for the worker thread and logs.
    pub(super) fn label(&self) -> String {
        let names: Vec<&str> = self.projects.iter().map(|p| p.name.as_str()).collect();
        names.join("+")
    }
}

/// Groups projects by repository: projects whose `upstream` is the same string share its
/// mirror; a project without one has its own repository.
pub(super) fn groups(data_dir: &Path, projects: &[ProjectConfig]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for p in projects {
        match &p.upstream {
            Some(url) => match out.iter_mut().find(|g| g.upstream.as_ref() == Some(url)) {
                Some(g) => g.projects.push(p.clone()),
                None => out.push(Group {
                    path: mirror_path(data_dir, url),
                    upstream: Some(url.clone()),
                    projects: vec![p.clone()],
                }),
            },
            None => out.push(Group {
                path: owned_path(data_dir, &p.name),
                upstream: None,
                projects: vec![p.clone()],
            }),
        }
    }
    out
}

/// The repository of a project without an upstream: its only copy.
fn owned_path(data_dir: &Path, project: &str) -> PathBuf {
    data_dir.join("projects").join(project).join("repo.git")
}

/// `mirrors/<last path component>-<16 hex of sha256(url)>.git`: readable, and distinct for
/// distinct URLs. The URL itself (which may carry a deploy token) is never a file name.
fn mirror_path(data_dir: &Path, url: &str) -> PathBuf {
    let last = url
        .trim_end_matches('/')
        .rsplit(['/', ':', '\\'])
        .next()
        .unwrap_or("");
    let last = last.strip_suffix(".git").unwrap_or(last);
    let name: String = last
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    let hash = hex::encode(&Sha256::digest(url.as_bytes())[..8]);
    let file = if name.is_empty() {
        format!("{hash}.git")
    } else {
        format!("{name}-{hash}.git")
    };
    data_dir.join("mirrors").join(file)
}

/// Before mirrors were shared, each upstream project kept `projects/<name>/repo.git`. The
/// first one found becomes the group's mirror (no second download); the others are left
/// for the operator to remove, with a log line saying so.
pub(super) fn adopt_old_mirrors(data_dir: &Path, group: &Group) {
    if group.upstream.is_none() {
        return;
    }
    for p in &group.projects {
        let old = owned_path(data_dir, &p.name);
        if !old.join("HEAD").exists() {
            continue;
        }
        if !group.path.join("HEAD").exists() {
            let moved = group
                .path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::rename(&old, &group.path));
            match moved {
                Ok(()) => {
                    tracing::info!(project = %p.name, from = %old.display(), to = %group.path.display(), "moved the project's mirror to the shared mirrors directory");
                    continue;
                }
                Err(e) => {
                    tracing::warn!(project = %p.name, error = %e, "cannot move the old mirror; fetching anew")
                }
            }
        }
        tracing::warn!(project = %p.name, path = %old.display(), "no longer used (the upstream's mirror is {}); it can be removed", group.path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(name: &str, upstream: Option<&str>, branch: &str) -> ProjectConfig {
        ProjectConfig {
            name: name.into(),
            upstream: upstream.map(str::to_string),
            branch: branch.into(),
            subdir: None,
            poll_interval_secs: 60,
            webhook_secret: None,
            seed_examples: false,
            writes: Default::default(),
            show_proposals: false,
            forge: None,
            usage: true,
            tokens: vec![],
        }
    }

    #[test]
    fn projects_on_one_upstream_share_its_mirror() {
        let data = Path::new("/data");
        let url = "https://oauth2:secret@git.example.com/team/knowledge.git";
        let g = groups(
            data,
            &[
                project("whole", Some(url), "main"),
                project("own", None, "main"),
                project("adr", Some(url), "main"),
                project("drafts", Some(url), "drafts"),
                project("other", Some("git@example.com:org/knowledge"), "main"),
            ],
        );
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].label(), "whole+adr+drafts");
        assert_eq!(g[0].branches(), ["main", "drafts"]);
        let mirror = g[0].path.to_str().unwrap();
        assert!(mirror.starts_with("/data/mirrors/knowledge-"), "{mirror}");
        assert!(!mirror.contains("secret"), "{mirror}");
        assert_eq!(g[1].path, Path::new("/data/projects/own/repo.git"));
        assert!(g[2].path.starts_with("/data/mirrors"));
        assert_ne!(g[2].path, g[0].path, "another URL, another mirror");
        assert!(
            mirror_path(data, "/")
                .ends_with(format!("{}.git", hex::encode(&Sha256::digest(b"/")[..8])))
        );
    }
}
