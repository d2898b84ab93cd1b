//! What every searching hook does with the entries its gate let through: leave out those
//! the session was already shown (here, or for ambient for this file, since the last
//! compaction), remember and log the ones shown now.

use super::ctx::Ctx;
use super::gate::Signal;
use super::state::{self, Seen};
use crate::journal::{self, Injected, Record};

/// The entries one hook call injects.
#[derive(Debug)]
pub struct Injection<'c> {
    cx: &'c Ctx<'c>,
    hook: &'static str,
    /// [`state::ANY_SCOPE`] for prompt and error; the file's key for ambient.
    scope: u64,
    seen: Seen,
    keys: Vec<u64>,
    shown: Vec<Injected>,
    /// Lines other than entries shown once per scope (ambient's coupled topics).
    markers: Vec<u64>,
}

impl<'c> Injection<'c> {
    pub fn new(cx: &'c Ctx<'c>, hook: &'static str, scope: u64) -> Injection<'c> {
        let seen = cx.session().map(Seen::load).unwrap_or_default();
        Injection {
            cx,
            hook,
            scope,
            seen,
            keys: Vec::new(),
            shown: Vec::new(),
            markers: Vec::new(),
        }
    }

    /// Whether the line `what` (not an entry) is new to the session in this scope; it is
    /// remembered like an entry but not logged.
    pub fn once(&mut self, what: &str) -> bool {
        let key = state::key(&format!("#{what}"));
        if self.markers.contains(&key) || self.seen.contains(self.scope, key) {
            return false;
        }
        self.markers.push(key);
        true
    }

    /// Takes `project:id` unless this session was already shown it (in this scope) or this
    /// call already took it; returns whether it was taken.
    pub fn take(
        &mut self,
        project: &str,
        id: &str,
        score: f32,
        signal: Signal,
        points: f32,
    ) -> bool {
        let full = format!("{project}:{id}");
        let key = state::key(&full);
        if self.keys.contains(&key) || self.seen.contains(self.scope, key) {
            return false;
        }
        self.keys.push(key);
        self.shown.push(Injected {
            id: full,
            score,
            signal: signal.name().to_string(),
            points,
        });
        true
    }

    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    /// Records what was taken: in the session's seen list and in the injection log.
    /// `file` is the file ambient was called for.
    pub fn finish(mut self, file: Option<&str>) {
        let session = self.cx.session();
        if let Some(s) = session {
            self.keys.extend_from_slice(&self.markers);
            if !self.keys.is_empty() {
                state::record_seen(s, self.scope, &self.keys);
            }
        }
        if self.shown.is_empty() {
            return;
        }
        journal::append(&Record {
            t: crate::sys::now_ms(),
            session: session.map(str::to_string),
            hook: self.hook.to_string(),
            agent: Some(self.cx.agent().name.to_string()),
            cwd: match file {
                Some(_) => None,
                None => self.cx.cwd().map(|c| c.to_string_lossy().into_owned()),
            },
            file: file.map(str::to_string),
            entries: self.shown,
        });
    }
}
