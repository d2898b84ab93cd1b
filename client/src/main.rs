//! `helix`: the helix client.

fn main() {}
