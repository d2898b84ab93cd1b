//! `helix-server`: the team knowledge server.

fn main() {}
