//! The per-session context budget: a cap on the characters of context helix gives one
//! agent session, all hooks together. The engine decides here, after a hook answered and
//! before the agent's adapter prints: a call whose context would take the session past the
//! budget is withheld whole (never cut: half a list of entries reads as the whole of it),
//! and from then on every hook of the session is silent, except session start after a
//! compaction, which re-orients a model that just lost its context (counted all the same).
//!
//! What a session was given is in its ledger (`state::Seen`, the `.seen` file the
//! searching hooks read and append anyway), so the budget costs no extra file. Without a
//! session id there is no ledger, and no cap. Concurrent calls of one session (parallel
//! tool calls) may each pass before either is counted: the cap may be passed by what they
//! add.

use super::call::Answer;
use super::ctx::Ctx;
use super::table::Hook;

/// Characters of context one session may be given when nothing says otherwise (about 6,000
/// tokens): about 1.5 times the p95 of the judged cases run as sessions, and above the
/// largest of them (docs/benchmarks.md, "Context per session"), so ordinary sessions are
/// never cut, yet a bound on a runaway one.
pub const DEFAULT_SESSION_BUDGET: u64 = 24_000;

/// The environment variable that overrides `[hooks] session_budget` (`0` or `off`: no cap).
pub const ENV: &str = "HELIX_SESSION_BUDGET";

/// The budget in force: [`ENV`] when it holds a number (or `off`), else `configured` (the
/// `.helix.toml`'s), else [`DEFAULT_SESSION_BUDGET`]; `None` for no cap (0).
pub fn limit(env: Option<&str>, configured: Option<u64>) -> Option<u64> {
    let from_env = env.map(str::trim).and_then(|v| {
        if v.eq_ignore_ascii_case("off") {
            Some(0)
        } else {
            v.parse::<u64>().ok()
        }
    });
    Some(from_env.or(configured).unwrap_or(DEFAULT_SESSION_BUDGET)).filter(|&n| n > 0)
}

/// Characters of context an answer gives the model: a context's text or a stop hook's
/// reason; an allow gives none.
pub fn chars(answer: &Answer) -> u64 {
    match answer {
        Answer::Context(text) | Answer::Block(text) => text.chars().count() as u64,
        Answer::Allow => 0,
    }
}

/// Whether a call may give `chars` more characters to a session that was given `spent`
/// (`capped`: a call of it was already withheld), under `limit`. `exempt` calls always
/// may.
pub fn admits(spent: u64, capped: bool, chars: u64, limit: Option<u64>, exempt: bool) -> bool {
    if exempt {
        return true;
    }
    match limit {
        None => true,
        Some(limit) => !capped && spent.saturating_add(chars) <= limit,
    }
}

/// Whether this call of `hook` may speak `chars` characters of context in its session.
pub fn allows(cx: &Ctx<'_>, hook: &Hook, chars: u64) -> bool {
    if chars == 0 || cx.session().is_none() {
        return true;
    }
    let exempt = hook.name == "session-start" && cx.call.source == Some("compact");
    let env = std::env::var(ENV).ok();
    let configured = cx.config().and_then(|c| c.session_budget);
    let seen = cx.seen();
    admits(
        seen.spent(),
        seen.capped(),
        chars,
        limit(env.as_deref(), configured),
        exempt,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_overrides_the_configuration_and_zero_means_no_cap() {
        assert_eq!(limit(None, None), Some(DEFAULT_SESSION_BUDGET));
        assert_eq!(limit(None, Some(500)), Some(500));
        assert_eq!(limit(Some("800"), Some(500)), Some(800));
        assert_eq!(limit(Some(" 0 "), Some(500)), None);
        assert_eq!(limit(Some("off"), None), None);
        assert_eq!(limit(None, Some(0)), None);
        // An unreadable value is no value.
        assert_eq!(limit(Some("lots"), Some(500)), Some(500));
        assert_eq!(limit(Some(""), None), Some(DEFAULT_SESSION_BUDGET));
    }

    #[test]
    fn a_call_that_would_pass_the_budget_is_withheld_and_the_session_stays_silent() {
        let cap = Some(1000);
        assert!(admits(0, false, 600, cap, false));
        assert!(
            admits(600, false, 400, cap, false),
            "up to the budget exactly"
        );
        assert!(!admits(600, false, 401, cap, false));
        // Once a call was withheld, a smaller one that would fit is withheld too.
        assert!(!admits(600, true, 10, cap, false));
        // Session start after a compaction speaks whatever was spent.
        assert!(admits(5000, true, 1500, cap, true));
        // No cap: everything speaks, also in a session an earlier budget capped.
        assert!(admits(1 << 40, false, 1 << 40, None, false));
        assert!(admits(0, true, 1, None, false));
    }

    #[test]
    fn characters_are_counted_as_the_model_reads_them() {
        assert_eq!(chars(&Answer::Context("é · x".into())), 5);
        assert_eq!(chars(&Answer::Block("store it".into())), 8);
        assert_eq!(chars(&Answer::Allow), 0);
    }
}
