//! What the client and the server exchange over HTTP API v1 (docs/http-api.md): the entry a
//! client posts, the acknowledgement it gets back, the error body of every refusal, and the
//! name rules both sides check. One definition, so the two can never drift apart.

use serde::{Deserialize, Serialize};

mod usage;
pub use usage::{
    EntryUsage, MAX_USAGE_NAME, MAX_USAGE_ROWS, UnusedEntry, UsageAck, UsageCount, UsageReport,
    UsageRow, UsageSummary,
};

/// An entry as submitted for writing (the body of `POST /v1/projects/{p}/entries`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NewEntry {
    pub topic: String,
    pub title: String,
    pub body: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub sources: Vec<String>,
    /// Store it even when the project holds a near-duplicate (else `409 duplicate_entry`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
}

/// An edit of an existing entry (the body of `PUT /v1/projects/{p}/entries/{id}`): the
/// whole Markdown file as it should be, and the version it was written from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryEdit {
    /// The git blob id (hex) of the entry's file the edit starts from.
    pub base: String,
    /// The entry file's new text: front matter and body.
    pub content: String,
}

/// What a `409 edit_conflict` carries besides its message: both versions, so nothing is
/// overwritten unseen and the writer can merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditConflict {
    pub id: String,
    /// The blob id the edit started from.
    pub base: String,
    /// The blob id of the entry's file now.
    pub current: String,
    /// The entry file's text now.
    pub current_content: String,
}

/// The answer to a stored entry: only this, from the configured server, proves it is in git.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteAck {
    /// Entry id (path relative to the project's subdirectory).
    pub id: String,
    /// Path in the repository.
    pub path: String,
    /// The commit that added it.
    pub commit: String,
    /// The artifact generation that contains it (0 for a proposal: no artifact has it yet).
    pub generation: u64,
    /// Set when the project reviews writes: the entry is a proposal on its own branch, not
    /// on the project's branch yet (`id` and `path` are where it will land if approved now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<ProposalAck>,
    /// For an edit: the blob id of the file as written (the base of the next edit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// The proposal a write became in a project in review mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalAck {
    /// The proposal id (`GET/POST /v1/projects/{p}/proposals/{id}`).
    pub id: String,
    /// The branch that holds its commit (`helix/proposals/<author>/<slug>`).
    pub branch: String,
    /// The pull/merge request the server opened, or why it could not (no forge: `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<ForgeOutcome>,
}

/// What the forge said when the server opened a pull/merge request for a proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForgeOutcome {
    /// The request's web address, when it was opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Why it was not opened (or not labelled): the proposal branch stays either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a proposal is in its life: `open` until a reviewer decides, or the forge merges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProposalState {
    Open,
    /// Approved through helix: landed on the branch.
    Approved,
    /// Found on the branch (merged on the forge, or by hand).
    Merged,
    Rejected,
}

impl ProposalState {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalState::Open => "open",
            ProposalState::Approved => "approved",
            ProposalState::Merged => "merged",
            ProposalState::Rejected => "rejected",
        }
    }
}

/// A proposal as `GET /v1/projects/{p}/proposals[/{id}]` and the decisions answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalInfo {
    pub id: String,
    pub state: ProposalState,
    pub branch: String,
    /// The proposal's commit, as the server pushed it.
    pub commit: String,
    pub author: String,
    pub topic: String,
    pub title: String,
    /// The entry's id if it landed at the path proposed.
    pub entry_id: String,
    /// Unix seconds.
    pub created: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<ForgeOutcome>,
    /// Who approved or rejected it, and the reason given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where it landed (approved or merged): the entry id there, the commit and the
    /// generation of the artifact that contains it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Landed>,
    /// The entry itself: only in `GET …/proposals/shared` (projects with `show_proposals`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<NewEntry>,
}

/// A proposal's entry on the project's branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landed {
    pub id: String,
    pub commit: String,
    pub generation: u64,
}

/// A proposal id: 1 to 20 decimal digits (they are numbered per project).
pub fn is_valid_proposal_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 20 && id.bytes().all(|b| b.is_ascii_digit())
}

impl WriteAck {
    /// Whether the fields look like a real acknowledgement: an entry id without `..`, a
    /// path ending in it, a commit id in hex.
    pub fn is_plausible(&self) -> bool {
        let hex = |s: &str| (4..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit());
        self.id.ends_with(".md")
            && self.path.ends_with(self.id.as_str())
            && !self.id.split('/').any(|c| c.is_empty() || c == "..")
            && hex(&self.commit)
    }
}

/// Every error answer: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// A stable snake_case code and a message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    pub code: String,
    pub message: String,
    /// Only on `409 edit_conflict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<EditConflict>,
}

/// Longest `Idempotency-Key`.
pub const MAX_IDEMPOTENCY_KEY: usize = 128;

/// `Idempotency-Key` (and a pending entry's file stem): 1 to 128 of `[A-Za-z0-9._-]`.
pub fn is_valid_idempotency_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_IDEMPOTENCY_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A name used as one file-name component (a session id, a local project): an idempotency
/// key that does not start with `.`, so it is never `.`, `..` or hidden.
pub fn is_safe_file_stem(name: &str) -> bool {
    is_valid_idempotency_key(name) && !name.starts_with('.')
}

/// A project name: 1 to 64 of `[A-Za-z0-9_-]`, not starting with `-`. It appears in URLs,
/// in the server's data directory and in the client's cache and pending directories.
pub fn is_valid_project_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys() {
        assert!(is_valid_project_name("backend_2-x"));
        for bad in ["", "-x", "a.b", "a/b", "..", &"x".repeat(65)] {
            assert!(!is_valid_project_name(bad), "{bad}");
        }
        assert!(is_valid_idempotency_key("1795-000.abc_D"));
        assert!(is_safe_file_stem("a.b") && !is_safe_file_stem(".x") && !is_safe_file_stem(".."));
        for bad in ["", "a b", "a/b", &"k".repeat(129)] {
            assert!(!is_valid_idempotency_key(bad), "{bad}");
        }
    }

    #[test]
    fn acknowledgements_must_look_real() {
        let ok = WriteAck {
            id: "ops/x.md".into(),
            path: "kb/ops/x.md".into(),
            commit: "0123abcd".into(),
            generation: 3,
            proposal: None,
            blob: None,
        };
        assert!(ok.is_plausible());
        for bad in [
            WriteAck {
                id: "../../etc/passwd".into(),
                ..ok.clone()
            },
            WriteAck {
                commit: "zz".into(),
                ..ok.clone()
            },
            WriteAck {
                path: "other.md".into(),
                ..ok.clone()
            },
        ] {
            assert!(!bad.is_plausible(), "{bad:?}");
        }
        let body: ErrorBody =
            serde_json::from_str(r#"{"error":{"code":"forbidden","message":"no"}}"#).unwrap();
        assert_eq!(body.error.code, "forbidden");
    }
}
