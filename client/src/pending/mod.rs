//! The one write path for `helix store`, `helix edit` and MCP `store`/`edit`: a pending entry
//! file per write under `$XDG_DATA_HOME/helix/servers/<server-key>/pending/<project>/<key>.md`
//! (an edit also has `<key>.edit.json`: the id it replaces and the blob it starts from), plus
//! a small overlay index rebuilt at once. Keyed by server as the cache is; the directory of
//! earlier versions, `pending/<project>`, moves there at first use ([`PendingDir`]).

mod acked;
mod dir;
mod overlay;
mod queue;
mod settle;
mod write;

pub use acked::{Acked, Proposed, list_acked, mark_acked, mark_rejected};
pub use dir::PendingDir;
pub use helix_index_format::NewEntry;
pub use overlay::rebuild_overlay;
pub use queue::{
    PendingEdit, PendingFile, count, edit_meta_path, entry_id, list, parse_pending, render, slugify,
};
pub use settle::{ProposalFate, drop_acked, set_proposed, settle_proposal};
pub use write::{Duplicate, Stored, edit, near_duplicates, project_for, store, validate};
