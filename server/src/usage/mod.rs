//! Usage: what clients report of how their hooks used a project's entries — counts per
//! entry, day, hook and agent, never content — kept per reporting token name in
//! `<data_dir>/usage.redb`, and the summaries the API and the web view show.
//!
//! `report` checks a report (a leaf: no I/O); `store` is the redb file (one durable
//! transaction per report, with its key, so a retry counts once); `summary` joins a window's
//! counts with the served artifact. This module is the handle the server holds: it opens the
//! store (a store that cannot be opened leaves usage unavailable, never the server), answers
//! reports, and keeps each project's summaries until a report, a new day or a new artifact
//! makes them stale.

mod report;
mod store;
mod summary;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use helix_index_format::wire::{UsageAck, UsageReport, UsageSummary};
use helix_index_format::{FormatError, Index};

pub use report::{Invalid, MAX_COUNT, MAX_ID, MAX_PAIRS};
pub use store::{DbError, EntryLine};
pub use summary::{day_text, in_words, people, times};

use crate::store::Served;
use crate::sys::lock;

/// The store's file in the data directory.
pub const FILE: &str = "usage.redb";
/// Summaries kept at once; past it the cache starts again.
const MAX_CACHED: usize = 64;

/// Why a report or a summary failed.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("invalid usage report: {0}")]
    Invalid(#[from] Invalid),
    #[error(
        "report key {key:?} was counted before for other rows or another token: a retry must send the same report, a new report a new key"
    )]
    KeyReused { key: String },
    #[error("usage figures are unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("served artifact: {0}")]
    Artifact(#[from] FormatError),
}

/// A project's summary over some days.
#[derive(Debug)]
pub struct Figures {
    pub summary: UsageSummary,
    /// What it was computed from: store generation, day, artifact hash.
    basis: (u64, u32, String),
}

/// The usage store and the summaries computed from it.
#[derive(Debug)]
pub struct Usage {
    db: Result<store::Db, String>,
    retention: u32,
    cache: Mutex<HashMap<(String, u32), Arc<Figures>>>,
}

/// Today's day number (UTC).
pub fn today() -> u32 {
    u32::try_from(crate::sys::now_secs().div_euclid(86_400)).unwrap_or(0)
}

impl Usage {
    /// Opens `<data_dir>/usage.redb` (recovering it after a crash), keeping `retention` days.
    /// A failure is logged and leaves usage unavailable: serving knowledge does not need it.
    pub fn open(data_dir: &Path, retention: u32) -> Usage {
        let path = data_dir.join(FILE);
        let db = std::fs::create_dir_all(data_dir)
            .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))
            .and_then(|()| store::Db::open(&path, retention, today()).map_err(|e| e.to_string()));
        if let Err(e) = &db {
            tracing::error!(error = %e, "usage reports are refused and no usage is shown");
        }
        Usage {
            db,
            retention,
            cache: Mutex::default(),
        }
    }

    /// Days kept, today included.
    pub fn retention(&self) -> u32 {
        self.retention
    }

    fn db(&self) -> Result<&store::Db, UsageError> {
        self.db
            .as_ref()
            .map_err(|e| UsageError::Unavailable(e.clone()))
    }

    /// Checks and counts `report` of `person` for `project`, received on day `today`, and
    /// answers once it is on disk. Blocking: call it off the async threads.
    pub fn record(
        &self,
        project: &str,
        person: &str,
        report: &UsageReport,
        today: u32,
    ) -> Result<UsageAck, UsageError> {
        let db = self.db()?;
        let checked = report::check(report, today, db.first_kept(today))?;
        let outcome = db.record(
            &store::Report {
                project,
                person,
                key: &report.key,
                checked: &checked,
            },
            today,
        )?;
        let (rows, duplicate) = match outcome {
            store::Recorded::New { rows } => (rows, false),
            store::Recorded::Duplicate { rows } => (rows, true),
            store::Recorded::Reused => {
                return Err(UsageError::KeyReused {
                    key: report.key.clone(),
                });
            }
        };
        Ok(UsageAck {
            key: report.key.clone(),
            rows,
            duplicate,
        })
    }

    /// The summary of `project` over `days` days up to today against `served`, from the
    /// cache while nothing changed. Blocking: call it off the async threads.
    pub fn figures_blocking(
        &self,
        project: &str,
        days: u32,
        served: &Served,
    ) -> Result<Arc<Figures>, UsageError> {
        let db = self.db()?;
        let today = today();
        let basis = (db.generation(), today, served.info.hash.clone());
        if let Some(f) = self.cached(project, days, &basis) {
            return Ok(f);
        }
        let from = today.saturating_sub(days - 1);
        // Through tomorrow: a client whose clock runs ahead may report its today.
        let totals = db.totals(project, from, today + 1)?;
        let index = Index::open(&served.bytes[..])?;
        let summary = summary::summarize(project, days, today, totals, &index)?;
        let f = Arc::new(Figures { summary, basis });
        let mut cache = lock(&self.cache);
        if cache.len() >= MAX_CACHED {
            cache.clear();
        }
        cache.insert((project.to_string(), days), f.clone());
        Ok(f)
    }

    fn cached(&self, project: &str, days: u32, basis: &(u64, u32, String)) -> Option<Arc<Figures>> {
        lock(&self.cache)
            .get(&(project.to_string(), days))
            .filter(|f| &f.basis == basis)
            .cloned()
    }

    /// [`Usage::figures_blocking`] on a blocking thread, unless the cache has them.
    pub async fn figures(
        self: &Arc<Self>,
        project: &str,
        days: u32,
        served: Arc<Served>,
    ) -> Result<Arc<Figures>, UsageError> {
        if let Ok(db) = self.db() {
            let basis = (db.generation(), today(), served.info.hash.clone());
            if let Some(f) = self.cached(project, days, &basis) {
                return Ok(f);
            }
        }
        let (me, project) = (self.clone(), project.to_string());
        tokio::task::spawn_blocking(move || me.figures_blocking(&project, days, &served))
            .await
            .map_err(|e| UsageError::Unavailable(format!("summary task failed: {e}")))?
    }

    /// One entry's figures over `days` days up to today, on a blocking thread: a short read
    /// of the store, whatever the size of the project (an entry page's line).
    pub async fn entry(
        self: &Arc<Self>,
        project: &str,
        id: &str,
        days: u32,
    ) -> Result<EntryLine, UsageError> {
        let (me, project, id) = (self.clone(), project.to_string(), id.to_string());
        tokio::task::spawn_blocking(move || {
            let today = today();
            let from = today.saturating_sub(days - 1);
            Ok(me.db()?.entry_line(&project, &id, from, today + 1)?)
        })
        .await
        .map_err(|e| UsageError::Unavailable(format!("usage task failed: {e}")))?
    }
}
