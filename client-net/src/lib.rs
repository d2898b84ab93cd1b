//! The half of the helix client that talks to a server: the sync transport (with its usage
//! reports), `helix usage`, the MCP server and `doctor`, run by the `helix-net` binary. Kept
//! out of `helix-client` so that the hook binary cannot link HTTP, TLS, async or MCP code:
//! Cargo enforces it.

pub mod doctor;
pub mod download;
pub mod embedder;
pub mod mcp;
pub mod review;
pub mod sync;
pub mod usage;
