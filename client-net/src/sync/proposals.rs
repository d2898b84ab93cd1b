//! Review mode on the client: following this client's acknowledged proposals until they
//! are decided, and fetching teammates' shared ones into the overlay.

use super::http::Ctx;
use helix_client::pending::{self, PendingDir};
use helix_index_format::wire::{ProposalInfo, ProposalState};
use std::path::Path;

/// Asks the server what became of this client's acknowledged proposals and settles the
/// decided ones (landed: kept until an artifact has them; rejected: set aside with the
/// reason). Returns how many are still awaiting review. Failures leave them as they are.
pub(super) fn follow_proposals(ctx: &Ctx<'_>, queue: &PendingDir, dir: &Path) -> usize {
    let project = queue.project();
    let mut waiting = 0;
    for a in pending::list_acked(queue) {
        let Some(id) = a.proposal.clone() else {
            continue;
        };
        let url = format!("{}/v1/projects/{project}/proposals/{id}", ctx.server);
        let info = ctx
            .req(ctx.http.get(&url))
            .send()
            .ok()
            .filter(|r| r.status() == reqwest::StatusCode::OK)
            .and_then(|r| r.json::<ProposalInfo>().ok());
        let fate = match info {
            Some(i) if i.id == id => match (i.state, i.landed) {
                (ProposalState::Approved | ProposalState::Merged, Some(l)) => {
                    Some(pending::ProposalFate::Landed {
                        id: l.id,
                        generation: l.generation,
                    })
                }
                (ProposalState::Rejected, _) => Some(pending::ProposalFate::Rejected {
                    why: format!(
                        "proposal {id} rejected by {}{}",
                        i.decided_by.as_deref().unwrap_or("a reviewer"),
                        i.reason.map(|r| format!(": {r}")).unwrap_or_default()
                    ),
                }),
                _ => None,
            },
            _ => None,
        };
        match fate {
            None => waiting += 1,
            Some(fate) => {
                if let pending::ProposalFate::Rejected { why } = &fate {
                    eprintln!(
                        "helix: {project}: {why}; the entry is kept in the pending folder's rejected/"
                    );
                }
                if let Err(e) = pending::settle_proposal(queue, &a, &fate, dir) {
                    eprintln!("helix: {project}: {e:#}");
                    waiting += 1;
                }
            }
        }
    }
    waiting
}

/// Teammates' open proposals, when the project shares them (`show_proposals`): kept in the
/// overlay, which the hooks mark "proposed, unreviewed". A 404 (no longer shared) drops
/// them; other failures keep what is there.
pub(super) fn share_proposals(ctx: &Ctx<'_>, queue: &PendingDir, dir: &Path) {
    let project = queue.project();
    let url = format!("{}/v1/projects/{project}/proposals/shared", ctx.server);
    let Ok(resp) = ctx.req(ctx.http.get(&url)).send() else {
        return;
    };
    let list: Vec<pending::Proposed> = match resp.status() {
        reqwest::StatusCode::OK => {
            #[derive(serde::Deserialize)]
            struct Shared {
                proposals: Vec<ProposalInfo>,
            }
            let Ok(shared) = resp.json::<Shared>() else {
                return;
            };
            shared
                .proposals
                .into_iter()
                .filter_map(|i| {
                    let entry = i.entry?;
                    // Only what this client would accept itself reaches its overlay.
                    helix_index_format::validate_new_entry(&entry).ok()?;
                    let safe = !i.entry_id.split('/').any(|c| c.is_empty() || c == "..")
                        && i.entry_id.ends_with(".md");
                    safe.then_some(pending::Proposed {
                        id: i.id,
                        entry_id: i.entry_id,
                        author: i.author,
                        entry,
                    })
                })
                .collect()
        }
        reqwest::StatusCode::NOT_FOUND => Vec::new(),
        _ => return,
    };
    if let Err(e) = pending::set_proposed(queue, &list, dir) {
        eprintln!("helix: {project}: {e:#}");
    }
}
