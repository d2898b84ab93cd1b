//! The real corpora the repository carries in `corpora/` (with their licences and sources):
//! a test that needs one fails when it is missing rather than passing without having run.

use helix_index_format::{is_entry_path, parse_entry};
use std::path::PathBuf;

/// `<checkout>/corpora/<name>`; panics, naming the path, when it is not there.
pub fn corpus(name: &str) -> PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpora")
        .join(name);
    assert!(
        root.is_dir(),
        "the corpus `{name}` must be at {} (the repository carries it)",
        root.display()
    );
    root
}

/// The real TIL corpus (no front matter): every note parses, title = first `# `
/// heading, topic = folder.
#[test]
fn til_corpus_parses() {
    let root = corpus("til");
    let topics = std::fs::read_dir(&root).expect("readable corpus");
    let mut count = 0;
    for topic in topics.flatten() {
        let name = topic.file_name().to_string_lossy().into_owned();
        if !topic.path().is_dir() || name.starts_with('.') {
            continue;
        }
        for file in std::fs::read_dir(topic.path())
            .expect("readable topic dir")
            .flatten()
        {
            let file_name = file.file_name().to_string_lossy().into_owned();
            let id = format!("{name}/{file_name}");
            if !is_entry_path(&id) {
                continue;
            }
            let bytes = std::fs::read(file.path()).expect("readable note");
            let e = parse_entry(&id, &bytes, None).unwrap_or_else(|d| panic!("{d}"));
            let text = String::from_utf8(bytes).expect("utf-8 note");
            let heading = text
                .lines()
                .find_map(|l| l.strip_prefix("# "))
                .expect("note has a # heading")
                .trim();
            assert_eq!(e.title, heading, "{id}");
            assert_eq!(e.topic, name, "{id}");
            count += 1;
        }
    }
    assert!(
        count > 1000,
        "only {count} notes found under {}",
        root.display()
    );
}
