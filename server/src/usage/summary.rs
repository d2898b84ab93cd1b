//! A project's usage summary: the counts of a window joined with the served artifact —
//! titles, which entries are hidden, their dates — into the wire's [`UsageSummary`], and an
//! entry's figures in words. Values in, values out.

use helix_index_format::wire::{EntryUsage, UnusedEntry, UsageSummary};
use helix_index_format::{FormatError, Index, format_day};

use super::store::{EntryLine, Totals};

/// `YYYY-MM-DD` of a day number.
pub fn day_text(day: u32) -> String {
    format_day(i64::from(day) * 86_400)
}

/// The summary of `project` over the `days` days up to `today`: `totals` are the counts of
/// those days, `index` the served artifact.
pub fn summarize<B: AsRef<[u8]>>(
    project: &str,
    days: u32,
    today: u32,
    mut totals: Totals,
    index: &Index<B>,
) -> Result<UsageSummary, FormatError> {
    let mut entries = Vec::new();
    let mut not_injected = Vec::new();
    for doc in 0..index.len() {
        let e = index.entry(doc)?;
        let counted = totals.entries.remove(e.id);
        let injected = counted.as_ref().is_some_and(|t| t.injections > 0);
        if let Some(t) = counted.filter(|t| t.injections > 0 || t.reads > 0) {
            entries.push(EntryUsage {
                id: e.id.to_string(),
                title: e.title.to_string(),
                injections: t.injections,
                people: u32::try_from(t.people.len()).unwrap_or(u32::MAX),
                sessions: t.sessions,
                reads: t.reads,
                last_injected: t.last_injected.map(day_text).unwrap_or_default(),
                by_hook: t.by_hook,
                by_agent: t.by_agent,
            });
        }
        if !injected && index.hidden(doc).is_none() {
            not_injected.push(UnusedEntry {
                id: e.id.to_string(),
                title: e.title.to_string(),
                date: e.date.map(format_day).unwrap_or_default(),
            });
        }
    }
    entries.sort_by(|a, b| b.injections.cmp(&a.injections).then(a.id.cmp(&b.id)));
    Ok(UsageSummary {
        project: project.to_string(),
        days,
        since: day_text(today.saturating_sub(days - 1)),
        people: u32::try_from(totals.people.len()).unwrap_or(u32::MAX),
        entries,
        not_injected,
    })
}

/// A number of times in words (`1 time` is `once`).
pub fn times(n: u64) -> String {
    match n {
        1 => "once".into(),
        n => format!("{n} times"),
    }
}

/// A number of people in words.
pub fn people(n: u32) -> String {
    match n {
        1 => "1 person".into(),
        n => format!("{n} people"),
    }
}

/// An entry's figures in words, as its web page says them: "Injected 6 times to 2 people in
/// the last 30 days, read in full once." Plain text: the caller escapes.
pub fn in_words(e: &EntryLine, days: u32) -> String {
    let read = match e.reads {
        0 => "never read in full".to_string(),
        n => format!("read in full {}", times(n)),
    };
    if e.injections > 0 {
        format!(
            "Injected {} to {} in the last {days} days, {read}.",
            times(e.injections),
            people(e.people),
        )
    } else if e.reads > 0 {
        format!("Not injected in the last {days} days; {read}.")
    } else {
        format!("Not injected in the last {days} days.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_line_says_counts_in_words() {
        let mut e = EntryLine {
            injections: 6,
            people: 2,
            sessions: 3,
            reads: 3,
        };
        assert_eq!(
            in_words(&e, 30),
            "Injected 6 times to 2 people in the last 30 days, read in full 3 times."
        );
        (e.injections, e.people, e.reads) = (1, 1, 0);
        assert_eq!(
            in_words(&e, 30),
            "Injected once to 1 person in the last 30 days, never read in full."
        );
        (e.injections, e.reads) = (0, 1);
        assert_eq!(
            in_words(&e, 30),
            "Not injected in the last 30 days; read in full once."
        );
        e.reads = 0;
        assert_eq!(in_words(&e, 30), "Not injected in the last 30 days.");
    }
}
