//! Differential tests of the search driver: the window size and MaxScore pruning never
//! change a result (the same hits, bit-identical scores).

use super::score::PRUNED;
use super::*;
use crate::{BuildInfo, Entry, build};

/// The artifact of `entries` for project `p`.
fn built(entries: &[Entry]) -> Vec<u8> {
    let info = BuildInfo {
        project: "p".into(),
        commit: String::new(),
        generation: 1,
        build_time: 1_700_000_000,
    };
    build(entries, &info).expect("test entries build")
}

fn windowed<'a>(
    index: &'a Index<&[u8]>,
    text: &str,
    opts: &SearchOptions,
    window: u32,
    prune: bool,
) -> Result<Vec<Hit<'a>>, FormatError> {
    let query = Query::for_index(text, index);
    let stats = Stats::of(index, &query)?;
    search_windowed(index, &query, &stats, opts, window, prune)
}

/// The window size changes how postings are merged, never the result: the same hits,
/// bit-identical scores, whether every document gets its own window or all share one.
#[test]
fn window_size_never_changes_results() {
    let words = [
        "cache", "rebase", "linker", "tokio", "rename", "postgres", "rust",
    ];
    let entries: Vec<Entry> = (0..900)
        .map(|i| Entry {
            id: format!("t{}/e{i:03}.md", i % 6),
            topic: format!("t{}", i % 6),
            title: format!("{} note {i}", words[i % 7]),
            body: format!(
                "{} {} {} {}",
                words[(i * 5) % 7],
                words[(i / 7) % 7].repeat(1 + i % 3),
                words[(i / 49) % 7],
                "filler ".repeat(i % 13)
            ),
            date: (i % 3 != 0).then_some(1_700_000_000 - (i as i64 * 7919 % 3000) * 86_400),
            ..Entry::default()
        })
        .collect();
    let bytes = built(&entries);
    let index = Index::open(&bytes[..]).unwrap();
    let queries = [
        "cache rebase",
        "tokio",
        "rust linker rename",
        "postgres cache nosuch",
    ];
    for q in queries {
        for mode in [Mode::Or, Mode::AndThenOr] {
            for (limit, cap, topic, now) in [
                (3, None, None, Some(1_700_000_000)),
                (10, Some(1), None, None),
                (400, None, Some("t2"), Some(1_700_000_000)),
                (5, Some(2), Some("t4"), None),
            ] {
                let opts = SearchOptions {
                    limit,
                    mode,
                    per_topic_cap: cap,
                    topic: topic.map(str::to_owned),
                    now,
                    recency_weight: 0.5,
                    ..SearchOptions::default()
                };
                let run = |w| -> Vec<(String, u32)> {
                    windowed(&index, q, &opts, w, true)
                        .unwrap()
                        .iter()
                        .map(|h| (h.entry.id.to_owned(), h.score.to_bits()))
                        .collect()
                };
                let whole = run(u32::MAX);
                assert!(!whole.is_empty(), "{q} {opts:?}");
                for w in [1, 2, 7, 64, 899, 4096] {
                    assert_eq!(run(w), whole, "window {w}, {q}, {opts:?}");
                }
            }
        }
    }
}

/// MaxScore pruning must never change a result. Word frequencies follow Zipf's law, as
/// in real text, so queries mix rare words (high bounds) with common ones (prunable).
#[test]
fn max_score_pruning_never_changes_results() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let vocab: Vec<String> = (0..300).map(|i| format!("w{i}")).collect();
    // Zipf: word i drawn with weight 1/(i+1), by inverse transform on the cumulative sum.
    let cumulative: Vec<f64> = (0..vocab.len())
        .scan(0.0, |acc, i| {
            *acc += 1.0 / (i as f64 + 1.0);
            Some(*acc)
        })
        .collect();
    let total = *cumulative.last().unwrap();
    let word = |rand: &mut dyn FnMut(usize) -> usize| {
        let x = rand(1_000_000) as f64 / 1_000_000.0 * total;
        &vocab[cumulative.partition_point(|&c| c < x).min(vocab.len() - 1)]
    };
    let entries: Vec<Entry> = (0..3000)
        .map(|i| {
            let len = 5 + rand(60);
            let body: Vec<&str> = (0..len).map(|_| word(&mut rand).as_str()).collect();
            Entry {
                id: format!("t{}/e{i:04}.md", i % 4),
                topic: format!("t{}", i % 4),
                title: format!("note {i}"),
                body: body.join(" "),
                date: (i % 5 != 0).then_some(1_700_000_000 - (i as i64 * 7919 % 900) * 86_400),
                ..Entry::default()
            }
        })
        .collect();
    let bytes = built(&entries);
    let index = Index::open(&bytes[..]).unwrap();
    PRUNED.with(|p| p.set(0));
    for q in 0..300 {
        let n_words = 2 + q % 5;
        let query: Vec<String> = (0..n_words)
            .map(|_| {
                // Half the query words rare, half drawn like the text.
                if rand(2) == 0 {
                    vocab[100 + rand(200)].clone()
                } else {
                    word(&mut rand).clone()
                }
            })
            .collect();
        let query = query.join(" ");
        let opts = SearchOptions {
            limit: [1, 3, 10][q % 3],
            mode: Mode::Or,
            now: (q % 2 == 0).then_some(1_700_000_000),
            recency_weight: [0.1, 0.5][q % 4 / 2],
            per_topic_cap: (q % 7 == 0).then_some(1),
            ..SearchOptions::default()
        };
        let run = |window, prune| -> Vec<(String, u32)> {
            windowed(&index, &query, &opts, window, prune)
                .unwrap()
                .iter()
                .map(|h| (h.entry.id.to_owned(), h.score.to_bits()))
                .collect()
        };
        let reference = run(64, false);
        assert_eq!(run(64, true), reference, "{query} {opts:?}");
        assert_eq!(run(1024, true), reference, "{query} {opts:?}");
    }
    assert!(
        PRUNED.with(|p| p.get()) > 1000,
        "the queries should exercise pruning"
    );
}
