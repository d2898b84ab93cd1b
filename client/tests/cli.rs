//! Integration tests of the `helix` binary: the real binary (and the real `helix-server`)
//! spawned with isolated HOME/XDG dirs; one test binary, modules under `tests/cli/`.

#[path = "cli/agents.rs"]
mod agents;
#[path = "cli/budget.rs"]
mod budget;
#[path = "cli/common.rs"]
mod common;
#[path = "cli/edit.rs"]
mod edit;
#[path = "cli/faults.rs"]
mod faults;
#[path = "cli/format.rs"]
mod format;
#[path = "cli/gate.rs"]
mod gate;
#[path = "cli/hooks.rs"]
mod hooks;
#[path = "cli/hygiene.rs"]
mod hygiene;
#[path = "cli/install.rs"]
mod install;
#[path = "cli/isolation.rs"]
mod isolation;
#[path = "cli/link.rs"]
mod link;
#[path = "cli/mcp.rs"]
mod mcp;
#[path = "cli/pending.rs"]
mod pending;
#[path = "cli/repos.rs"]
mod repos;
#[path = "cli/semantic.rs"]
mod semantic;
#[path = "cli/sync.rs"]
mod sync;
