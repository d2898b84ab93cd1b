//! Embeds the example entries from `docs/examples/knowledge/` into the binary, so the
//! embedded default project can be seeded from any working directory.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "md")
            && let Ok(rel) = p.strip_prefix(root)
        {
            let rel = rel.to_string_lossy().replace('\\', "/");
            // Only entries (inside a topic folder) are seeded; root-level Markdown is not.
            if rel.contains('/') {
                out.push((rel, p.clone()));
            }
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("../docs/examples/knowledge");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut src = String::from(
        "/// Example entries `(repository path, Markdown)` seeded into the default project.\npub const EXAMPLES: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        let abs = path.canonicalize().unwrap_or_else(|_| path.clone());
        src.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            abs.display().to_string()
        ));
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("examples.rs");
    std::fs::write(out, src).expect("write examples.rs");
}
