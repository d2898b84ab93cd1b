//! What every hook that speaks does with what it says: the searching hooks leave out the
//! entries the session was already shown (here, or for ambient for this file, since the
//! last compaction) and keep the ones they show ([`Injection`]); once the answer is printed,
//! [`record`] adds them and the answer's characters to the session's ledger and logs the
//! call, and [`withhold`] logs a call whose answer the session budget kept back.

use super::ctx::Ctx;
use super::gate::Signal;
use super::state;
use crate::journal::{self, Injected, Record};

/// The entries one hook call injects.
#[derive(Debug)]
pub struct Injection<'c> {
    cx: &'c Ctx<'c>,
    hook: &'static str,
    /// [`state::ANY_SCOPE`] for prompt and error; the file's key for ambient.
    scope: u64,
    keys: Vec<u64>,
    shown: Vec<Injected>,
    /// Lines other than entries shown once per scope (ambient's coupled topics).
    markers: Vec<u64>,
}

/// What an answer shows, kept in the call's context until it is printed.
#[derive(Debug)]
pub struct Shown {
    /// The hook that speaks (`error` or `ambient` for an agent's one after-tool event).
    hook: &'static str,
    scope: u64,
    /// The entries and once-per-scope lines shown, for the session's ledger.
    keys: Vec<u64>,
    entries: Vec<Injected>,
    /// The file ambient was called for.
    file: Option<String>,
}

impl<'c> Injection<'c> {
    pub fn new(cx: &'c Ctx<'c>, hook: &'static str, scope: u64) -> Injection<'c> {
        Injection {
            cx,
            hook,
            scope,
            keys: Vec::new(),
            shown: Vec::new(),
            markers: Vec::new(),
        }
    }

    /// Whether the line `what` (not an entry) is new to the session in this scope; it is
    /// remembered like an entry but not logged.
    pub fn once(&mut self, what: &str) -> bool {
        let key = state::key(&format!("#{what}"));
        if self.markers.contains(&key) || self.cx.seen().contains(self.scope, key) {
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
        if self.keys.contains(&key) || self.cx.seen().contains(self.scope, key) {
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

    /// What was taken is what the answer shows: recorded by [`record`] once it is printed.
    /// `file` is the file ambient was called for.
    pub fn finish(mut self, file: Option<&str>) {
        self.keys.extend_from_slice(&self.markers);
        self.cx.set_shown(Shown {
            hook: self.hook,
            scope: self.scope,
            keys: self.keys,
            entries: self.shown,
            file: file.map(str::to_string),
        });
    }
}

/// Names the hook that speaks for this call when it is not the table's (the post-build
/// nudge of an agent's one after-tool event).
pub fn speaks_as(cx: &Ctx<'_>, hook: &'static str) {
    Injection::new(cx, hook, state::ANY_SCOPE).finish(None);
}

/// The answer of `hook`, `chars` characters of context, was printed: its entries and
/// characters go into the session's ledger (one append), and the call into the injection
/// log.
pub fn record(cx: &Ctx<'_>, hook: &'static str, chars: u64) {
    let shown = cx.take_shown();
    if let Some(s) = cx.session() {
        let (scope, keys) = shown
            .as_ref()
            .map_or((state::ANY_SCOPE, &[][..]), |w| (w.scope, &w.keys[..]));
        state::record_shown(s, scope, keys, chars);
    }
    log(cx, hook, shown, chars, 0);
}

/// The session budget kept back the answer of `hook`, `chars` characters: the session is
/// capped from now on, and the call is logged with nothing shown.
pub fn withhold(cx: &Ctx<'_>, hook: &'static str, chars: u64) {
    let shown = cx.take_shown().map(|mut s| {
        s.entries.clear();
        s
    });
    if let Some(s) = cx.session()
        && !cx.seen().capped()
    {
        state::record_capped(s);
    }
    log(cx, hook, shown, 0, chars);
}

fn log(cx: &Ctx<'_>, hook: &'static str, shown: Option<Shown>, chars: u64, withheld: u64) {
    let (hook, entries, file) = match shown {
        Some(s) => (s.hook, s.entries, s.file),
        None => (hook, Vec::new(), None),
    };
    journal::append(&Record {
        t: crate::sys::now_ms(),
        session: cx.session().map(str::to_string),
        hook: hook.to_string(),
        agent: Some(cx.agent().name.to_string()),
        cwd: match file {
            Some(_) => None,
            None => cx.cwd().map(|c| c.to_string_lossy().into_owned()),
        },
        file,
        entries,
        chars,
        withheld,
    });
}
