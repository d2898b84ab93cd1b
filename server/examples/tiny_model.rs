//! Writes helix-embed's tiny random model (for tests and benches) into a directory:
//! `cargo run -p helix-server --example tiny_model -- DIR [SEED]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().expect("usage: tiny_model DIR [SEED]"));
    let seed = args
        .next()
        .map_or(7, |s| s.parse().expect("SEED is a number"));
    helix_embed::tiny::write_tiny_model(&dir, seed).expect("write the tiny model");
}
