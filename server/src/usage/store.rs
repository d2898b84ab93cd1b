//! `usage.redb`: the usage counts and the report keys answered, in redb (an embedded ACID
//! store: copy-on-write B-trees, a checksummed commit, fsync before `commit` returns). One
//! write transaction per report holds its counts and its key together, so a crash leaves a
//! report either wholly counted and known, or neither; the answer waits for the commit.
//!
//! Tables (days are day numbers since 1970-01-01, UTC):
//!
//! | table | key | value |
//! |---|---|---|
//! | `counts` | (project, day, entry id, person) | (sessions, reads, [(hook, agent, injections)]) |
//! | `count_days` | (day, project) | () — the days that have counts, for pruning |
//! | `entry_days` | (project, entry id, day, person) | (injections, sessions, reads) — `counts` by entry first, for one entry's figures |
//! | `reports` | (project, report key) | (day received, rows counted, person, fingerprint) |
//! | `report_days` | (day received, project, report key) | () — for pruning |
//! | `meta` | name | value (`schema`) |

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use super::report::Checked;

/// (project, day, id, person) → (sessions, reads, [(hook, agent, n)]).
type CountValue = (u64, u64, Vec<(&'static str, &'static str, u64)>);
const COUNTS: TableDefinition<(&str, u32, &str, &str), CountValue> = TableDefinition::new("counts");
const COUNT_DAYS: TableDefinition<(u32, &str), ()> = TableDefinition::new("count_days");
/// (project, id, day, person).
type EntryDayKey = (&'static str, &'static str, u32, &'static str);
/// [`EntryDayKey`] → (injections, sessions, reads).
const ENTRY_DAYS: TableDefinition<EntryDayKey, (u64, u64, u64)> =
    TableDefinition::new("entry_days");
/// (day received, rows counted, person, fingerprint).
type ReportValue = (u32, u32, &'static str, [u8; 32]);
/// (project, key) → [`ReportValue`].
const REPORTS: TableDefinition<(&str, &str), ReportValue> = TableDefinition::new("reports");
const REPORT_DAYS: TableDefinition<(u32, &str, &str), ()> = TableDefinition::new("report_days");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

/// The layout above; a file of another schema is refused rather than misread.
const SCHEMA: u64 = 1;

/// Why the usage store failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("cannot open the usage store {}: {source}", path.display())]
    Open { path: PathBuf, source: redb::Error },
    #[error("the usage store {} has schema {found}; this server knows schema {SCHEMA}", path.display())]
    Schema { path: PathBuf, found: u64 },
    #[error("usage store: {0}")]
    Redb(#[from] redb::Error),
}

fn db<E: Into<redb::Error>>(e: E) -> DbError {
    DbError::Redb(e.into())
}

/// What became of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Counted now: this many rows.
    New { rows: u32 },
    /// The key was counted before (the same report): nothing added; the first answer's rows.
    Duplicate { rows: u32 },
    /// The key was counted before for other rows, or by another person.
    Reused,
}

/// One report to record: who sent it, its key and its checked rows.
#[derive(Debug)]
pub struct Report<'a> {
    pub project: &'a str,
    pub person: &'a str,
    pub key: &'a str,
    pub checked: &'a Checked,
}

/// One entry's counts over some days.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryTotals {
    pub injections: u64,
    /// People it was injected for.
    pub people: BTreeSet<String>,
    pub sessions: u64,
    pub reads: u64,
    /// The last day with an injection.
    pub last_injected: Option<u32>,
    pub by_hook: BTreeMap<String, u64>,
    pub by_agent: BTreeMap<String, u64>,
}

/// One entry's counts over some days, for its page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EntryLine {
    pub injections: u64,
    /// People it was injected for.
    pub people: u32,
    pub sessions: u64,
    pub reads: u64,
}

/// A project's counts over some days, per entry id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub entries: HashMap<String, EntryTotals>,
    /// Everyone who reported a row in the window.
    pub people: BTreeSet<String>,
}

/// The open store.
#[derive(Debug)]
pub struct Db {
    db: Database,
    /// Days kept, today included.
    retention: u32,
    /// The last day pruned for (pruning runs once a day, before that day's first report).
    pruned: AtomicU32,
    /// Bumped by every commit: a summary computed at another generation is stale.
    generation: AtomicU64,
}

impl Db {
    /// Opens (or creates) the file, checks its schema and prunes what is past `retention`
    /// days before `today`. redb recovers a file left by a crash on open.
    pub fn open(path: &Path, retention: u32, today: u32) -> Result<Db, DbError> {
        let open = |e: redb::Error| DbError::Open {
            path: path.to_path_buf(),
            source: e,
        };
        let database = Database::create(path).map_err(|e| open(e.into()))?;
        let txn = database.begin_write().map_err(|e| open(e.into()))?;
        let found = {
            let mut meta = txn.open_table(META).map_err(|e| open(e.into()))?;
            let found = meta
                .get("schema")
                .map_err(|e| open(e.into()))?
                .map(|v| v.value());
            if found.is_none() {
                meta.insert("schema", SCHEMA).map_err(|e| open(e.into()))?;
            }
            txn.open_table(COUNTS).map_err(|e| open(e.into()))?;
            txn.open_table(COUNT_DAYS).map_err(|e| open(e.into()))?;
            txn.open_table(ENTRY_DAYS).map_err(|e| open(e.into()))?;
            txn.open_table(REPORTS).map_err(|e| open(e.into()))?;
            txn.open_table(REPORT_DAYS).map_err(|e| open(e.into()))?;
            found
        };
        if let Some(found) = found.filter(|f| *f != SCHEMA) {
            return Err(DbError::Schema {
                path: path.to_path_buf(),
                found,
            });
        }
        txn.commit().map_err(|e| open(e.into()))?;
        let me = Db {
            db: database,
            retention,
            pruned: AtomicU32::new(0),
            generation: AtomicU64::new(0),
        };
        me.prune_if_due(today)?;
        Ok(me)
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The first day kept on `today`.
    pub fn first_kept(&self, today: u32) -> u32 {
        today.saturating_sub(self.retention - 1)
    }

    /// Counts a report, unless its key was counted before: one durable transaction.
    pub fn record(&self, r: &Report<'_>, today: u32) -> Result<Recorded, DbError> {
        self.prune_if_due(today)?;
        let txn = self.db.begin_write().map_err(db)?;
        let outcome = {
            let mut reports = txn.open_table(REPORTS).map_err(db)?;
            let known = reports.get((r.project, r.key)).map_err(db)?.map(|v| {
                let (_, rows, person, fingerprint) = v.value();
                (
                    rows,
                    person == r.person && fingerprint == r.checked.fingerprint,
                )
            });
            match known {
                Some((rows, true)) => Recorded::Duplicate { rows },
                Some((_, false)) => Recorded::Reused,
                None => {
                    let rows = self.add_counts(&txn, r)?;
                    reports
                        .insert(
                            (r.project, r.key),
                            (today, rows, r.person, r.checked.fingerprint),
                        )
                        .map_err(db)?;
                    txn.open_table(REPORT_DAYS)
                        .map_err(db)?
                        .insert((today, r.project, r.key), ())
                        .map_err(db)?;
                    Recorded::New { rows }
                }
            }
        };
        if matches!(outcome, Recorded::New { .. }) {
            // Durability::Immediate (redb's default): on disk when `commit` returns.
            txn.commit().map_err(db)?;
            self.generation.fetch_add(1, Ordering::AcqRel);
        } else {
            txn.abort().map_err(db)?;
        }
        Ok(outcome)
    }

    /// Adds the rows kept on `today` to `counts`; the number of rows added.
    fn add_counts(&self, txn: &redb::WriteTransaction, r: &Report<'_>) -> Result<u32, DbError> {
        let mut counts = txn.open_table(COUNTS).map_err(db)?;
        let mut days = txn.open_table(COUNT_DAYS).map_err(db)?;
        let mut by_entry = txn.open_table(ENTRY_DAYS).map_err(db)?;
        let mut added = 0u32;
        for row in &r.checked.rows {
            let key = (r.project, row.day, row.id.as_str(), r.person);
            let (mut sessions, mut reads, mut pairs) = match counts.get(key).map_err(db)? {
                Some(v) => {
                    let (s, n, p) = v.value();
                    let pairs: BTreeMap<(String, String), u64> = p
                        .into_iter()
                        .map(|(h, a, n)| ((h.to_string(), a.to_string()), n))
                        .collect();
                    (s, n, pairs)
                }
                None => (0, 0, BTreeMap::new()),
            };
            sessions += u64::from(row.sessions);
            reads += u64::from(row.reads);
            for ((hook, agent), n) in &row.injections {
                *pairs.entry((hook.clone(), agent.clone())).or_default() += u64::from(*n);
            }
            let list: Vec<(&str, &str, u64)> = pairs
                .iter()
                .map(|((h, a), n)| (h.as_str(), a.as_str(), *n))
                .collect();
            let injections = list.iter().map(|p| p.2).sum::<u64>();
            counts.insert(key, (sessions, reads, list)).map_err(db)?;
            by_entry
                .insert(
                    (r.project, row.id.as_str(), row.day, r.person),
                    (injections, sessions, reads),
                )
                .map_err(db)?;
            days.insert((row.day, r.project), ()).map_err(db)?;
            added += 1;
        }
        Ok(added)
    }

    /// A project's counts from day `from` to day `to`, both included.
    pub fn totals(&self, project: &str, from: u32, to: u32) -> Result<Totals, DbError> {
        let txn = self.db.begin_read().map_err(db)?;
        let counts = txn.open_table(COUNTS).map_err(db)?;
        let mut out = Totals::default();
        let end = to.saturating_add(1);
        for item in counts
            .range((project, from, "", "")..(project, end, "", ""))
            .map_err(db)?
        {
            let (k, v) = item.map_err(db)?;
            let (_, day, id, person) = k.value();
            let (sessions, reads, pairs) = v.value();
            if !out.people.contains(person) {
                out.people.insert(person.to_string());
            }
            let e = match out.entries.get_mut(id) {
                Some(e) => e,
                None => out.entries.entry(id.to_string()).or_default(),
            };
            let injected: u64 = pairs.iter().map(|p| p.2).sum();
            e.sessions += sessions;
            e.reads += reads;
            if injected > 0 {
                e.injections += injected;
                e.last_injected = e.last_injected.max(Some(day));
                if !e.people.contains(person) {
                    e.people.insert(person.to_string());
                }
                for (hook, agent, n) in pairs {
                    *e.by_hook.entry(hook.to_string()).or_default() += n;
                    *e.by_agent.entry(agent.to_string()).or_default() += n;
                }
            }
        }
        Ok(out)
    }

    /// One entry's counts from day `from` to day `to`, both included: a short range of
    /// `entry_days`, whatever the size of the project.
    pub fn entry_line(
        &self,
        project: &str,
        id: &str,
        from: u32,
        to: u32,
    ) -> Result<EntryLine, DbError> {
        let txn = self.db.begin_read().map_err(db)?;
        let table = txn.open_table(ENTRY_DAYS).map_err(db)?;
        let mut out = EntryLine::default();
        let mut people = BTreeSet::new();
        let end = to.saturating_add(1);
        for item in table
            .range((project, id, from, "")..(project, id, end, ""))
            .map_err(db)?
        {
            let (k, v) = item.map_err(db)?;
            let (injections, sessions, reads) = v.value();
            out.injections += injections;
            out.sessions += sessions;
            out.reads += reads;
            if injections > 0 {
                people.insert(k.value().3.to_string());
            }
        }
        out.people = u32::try_from(people.len()).unwrap_or(u32::MAX);
        Ok(out)
    }

    /// Removes the counts and report keys of the days before the first day kept on `today`,
    /// once per day.
    fn prune_if_due(&self, today: u32) -> Result<(), DbError> {
        if self.pruned.load(Ordering::Acquire) >= today {
            return Ok(());
        }
        let cutoff = self.first_kept(today);
        let txn = self.db.begin_write().map_err(db)?;
        let mut removed = 0usize;
        {
            let mut days = txn.open_table(COUNT_DAYS).map_err(db)?;
            let mut counts = txn.open_table(COUNTS).map_err(db)?;
            let mut by_entry = txn.open_table(ENTRY_DAYS).map_err(db)?;
            let old: Vec<(u32, String)> = days
                .range((0u32, "")..(cutoff, ""))
                .map_err(db)?
                .map(|item| item.map(|(k, _)| (k.value().0, k.value().1.to_string())))
                .collect::<Result<_, _>>()
                .map_err(db)?;
            for (day, project) in &old {
                let p = project.as_str();
                let gone: Vec<(String, String)> = counts
                    .extract_from_if((p, *day, "", "")..(p, day + 1, "", ""), |_, _| true)
                    .map_err(db)?
                    .map(|item| {
                        item.map(|(k, _)| {
                            let (_, _, id, person) = k.value();
                            (id.to_string(), person.to_string())
                        })
                    })
                    .collect::<Result<_, _>>()
                    .map_err(db)?;
                for (id, person) in &gone {
                    by_entry
                        .remove((p, id.as_str(), *day, person.as_str()))
                        .map_err(db)?;
                }
                days.remove((*day, p)).map_err(db)?;
            }
            removed += old.len();
            let mut keys = txn.open_table(REPORT_DAYS).map_err(db)?;
            let mut reports = txn.open_table(REPORTS).map_err(db)?;
            let old: Vec<(u32, String, String)> = keys
                .range((0u32, "", "")..(cutoff, "", ""))
                .map_err(db)?
                .map(|item| {
                    item.map(|(k, _)| {
                        let (d, p, key) = k.value();
                        (d, p.to_string(), key.to_string())
                    })
                })
                .collect::<Result<_, _>>()
                .map_err(db)?;
            for (day, project, key) in &old {
                reports
                    .remove((project.as_str(), key.as_str()))
                    .map_err(db)?;
                keys.remove((*day, project.as_str(), key.as_str()))
                    .map_err(db)?;
            }
            removed += old.len();
        }
        if removed > 0 {
            txn.commit().map_err(db)?;
            self.generation.fetch_add(1, Ordering::AcqRel);
            tracing::info!(
                before = %helix_index_format::format_day(i64::from(cutoff) * 86_400),
                "usage counts pruned"
            );
        } else {
            txn.abort().map_err(db)?;
        }
        self.pruned.fetch_max(today, Ordering::AcqRel);
        Ok(())
    }
}
