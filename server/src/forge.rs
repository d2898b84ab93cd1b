//! Pull/merge requests for proposals through the forge's REST API (docs/operations.md lists
//! the exact calls): GitHub `POST /repos/{owner}/{repo}/pulls` then the label, GitLab
//! `POST /projects/{id}/merge_requests` with the label.

use std::time::Duration;

use serde_json::{Value, json};

use crate::config::{ForgeConfig, ForgeKind};

/// Longest a forge call may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Why a request was not opened (or not labelled).
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error("forge token: environment variable {0} is not set")]
    TokenEnv(String),
    #[error("forge token: cannot read {path}: {error}")]
    TokenFile { path: String, error: std::io::Error },
    #[error("forge token is empty")]
    EmptyToken,
    #[error("cannot reach the forge at {url}: {reason}")]
    Transport { url: String, reason: String },
    #[error("the forge refused {what} ({status}): {message}")]
    Refused {
        what: &'static str,
        status: u16,
        message: String,
    },
    #[error("the forge's answer to {what} has no {field}")]
    Answer {
        what: &'static str,
        field: &'static str,
    },
}

/// What a request is opened for.
#[derive(Debug)]
pub struct Request<'a> {
    /// The proposal branch (source) and the project's branch (target).
    pub head: &'a str,
    pub base: &'a str,
    pub title: String,
    pub description: String,
}

impl<'a> Request<'a> {
    /// The request for a proposal: the entry as its description, and how to decide it.
    pub fn for_proposal(
        entry: &helix_index_format::NewEntry,
        author: &str,
        proposal: &'a helix_index_format::wire::ProposalAck,
        base: &'a str,
    ) -> Request<'a> {
        let mut d = format!(
            "{}\n\n---\n\nTopic: `{}`",
            entry.body.trim_end(),
            entry.topic
        );
        if !entry.tags.is_empty() {
            d.push_str(&format!(" · tags: {}", entry.tags.join(", ")));
        }
        if !entry.sources.is_empty() {
            d.push_str(&format!(" · sources: `{}`", entry.sources.join("`, `")));
        }
        d.push_str(&format!(
            "\n\nProposed by {author} through helix (proposal {id}). Merge this request to approve it, or run `helix review approve {id}` / `helix review reject {id}`.\n",
            id = proposal.id
        ));
        Request {
            head: &proposal.branch,
            base,
            title: format!("helix: {}", entry.title.trim()),
            description: d,
        }
    }
}

/// The token, read when needed (so a rotated secret file is picked up).
fn token(cfg: &ForgeConfig) -> Result<String, ForgeError> {
    let t = if let Some(var) = &cfg.token_env {
        std::env::var(var).map_err(|_| ForgeError::TokenEnv(var.clone()))?
    } else if let Some(path) = &cfg.token_file {
        std::fs::read_to_string(path).map_err(|error| ForgeError::TokenFile {
            path: path.display().to_string(),
            error,
        })?
    } else {
        String::new()
    };
    let t = t.trim().to_string();
    if t.is_empty() {
        return Err(ForgeError::EmptyToken);
    }
    Ok(t)
}

/// Opens the pull/merge request and labels it; returns its web address.
pub async fn open(cfg: &ForgeConfig, req: &Request<'_>) -> Result<String, ForgeError> {
    let token = token(cfg)?;
    crate::sys::install_crypto_provider();
    let http = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("helix-server/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ForgeError::Transport {
            url: cfg.api_base(),
            reason: e.to_string(),
        })?;
    let api = cfg.api_base();
    match cfg.kind {
        ForgeKind::Github => {
            let repo = cfg.repository.trim();
            let github = |rb: reqwest::RequestBuilder| {
                rb.bearer_auth(&token)
                    .header("Accept", "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28")
            };
            let pr = call(
                github(http.post(format!("{api}/repos/{repo}/pulls"))),
                "the pull request",
                json!({
                    "title": req.title, "head": req.head, "base": req.base,
                    "body": req.description, "maintainer_can_modify": false,
                }),
            )
            .await?;
            let number = pr["number"].as_u64().ok_or(ForgeError::Answer {
                what: "the pull request",
                field: "number",
            })?;
            let url = pr["html_url"].as_str().unwrap_or_default().to_string();
            call(
                github(http.post(format!("{api}/repos/{repo}/issues/{number}/labels"))),
                "the label",
                json!({ "labels": [cfg.label] }),
            )
            .await
            .map_err(|e| ForgeError::Refused {
                what: "the label",
                status: match &e {
                    ForgeError::Refused { status, .. } => *status,
                    _ => 0,
                },
                message: format!("pull request {url} was opened, but labelling it failed: {e}"),
            })?;
            Ok(url)
        }
        ForgeKind::Gitlab => {
            let project = encode_component(cfg.repository.trim());
            let mr = call(
                http.post(format!("{api}/projects/{project}/merge_requests"))
                    .header("PRIVATE-TOKEN", &token),
                "the merge request",
                json!({
                    "source_branch": req.head, "target_branch": req.base,
                    "title": req.title, "description": req.description,
                    "labels": cfg.label, "remove_source_branch": true,
                }),
            )
            .await?;
            Ok(mr["web_url"]
                .as_str()
                .ok_or(ForgeError::Answer {
                    what: "the merge request",
                    field: "web_url",
                })?
                .to_string())
        }
    }
}

/// Sends one JSON call; a 2xx answer's JSON, else why not (the forge's `message`).
async fn call(
    rb: reqwest::RequestBuilder,
    what: &'static str,
    body: Value,
) -> Result<Value, ForgeError> {
    let resp = rb
        .json(&body)
        .send()
        .await
        .map_err(|e| ForgeError::Transport {
            url: e.url().map(|u| u.to_string()).unwrap_or_default(),
            reason: crate::sys::chain(&e),
        })?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    let answer: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if !status.is_success() {
        let message = answer["message"]
            .as_str()
            .map(str::to_string)
            .or_else(|| answer["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| text.chars().take(200).collect());
        return Err(ForgeError::Refused {
            what,
            status: status.as_u16(),
            message,
        });
    }
    Ok(answer)
}

/// GitLab takes a project's path as one URL component: `group/kb` → `group%2Fkb`.
fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitlab_paths_are_one_component() {
        assert_eq!(encode_component("group/sub/kb"), "group%2Fsub%2Fkb");
        assert_eq!(encode_component("42"), "42");
    }
}
