//! Browser sessions of the web view: a token pasted once into the sign-in form becomes a
//! random session id in an `HttpOnly` cookie. The server keeps only the id's sha256 and the
//! token's own hash, so a session is worth no more than its token: it dies when the token
//! is revoked (checked on every request) or when it expires, and its scopes are the
//! token's. Failed sign-ins are limited per client address.
//!
//! Sessions live in memory: a restart signs everyone out, and replicas behind a load
//! balancer need sticky sessions (docs/operations.md).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::Principal;
use crate::config::Config;
use crate::sys::lock;

/// Name of the session cookie.
pub const COOKIE: &str = "helix_session";
/// Most sessions held at once; signing in past it drops the oldest.
const MAX_SESSIONS: usize = 10_000;
/// Failed sign-ins allowed per client address within [`FAILURE_WINDOW`].
pub const MAX_FAILURES: u32 = 5;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(300);
/// Client addresses whose failures are remembered at once.
const MAX_TRACKED: usize = 10_000;

#[derive(Debug)]
struct Session {
    /// sha256 of the token that opened it, as the config stores it.
    token: [u8; 32],
    started: Instant,
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    since: Instant,
}

/// Every live session and the recent failed sign-ins.
#[derive(Debug)]
pub struct Sessions {
    /// Keyed by the sha256 of the cookie value.
    live: Mutex<HashMap<[u8; 32], Session>>,
    failures: Mutex<HashMap<IpAddr, Failures>>,
    /// Key of the CSRF tokens: random per process.
    key: [u8; 32],
    pub lifetime: Duration,
}

/// A session found from its cookie: who it is, and the id's digest (for CSRF and sign-out).
#[derive(Debug, Clone)]
pub struct Found {
    pub principal: Principal,
    pub digest: [u8; 32],
}

/// Why a sign-in was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInError {
    /// Not a token of this server (or revoked).
    Unknown,
    /// Too many failures from this address: try again after the duration.
    Limited(Duration),
}

fn digest(value: &str) -> [u8; 32] {
    Sha256::digest(value.as_bytes()).into()
}

impl Sessions {
    pub fn new(lifetime: Duration) -> Sessions {
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        Sessions {
            live: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
            key,
            lifetime,
        }
    }

    /// Checks `token` for a sign-in from `peer`: a new session's cookie value and who it
    /// is. Failures count against the address; a success clears them.
    pub fn sign_in(
        &self,
        config: &Config,
        token: &str,
        peer: IpAddr,
    ) -> Result<(String, Principal), SignInError> {
        let now = Instant::now();
        {
            let failures = lock(&self.failures);
            if let Some(f) = failures.get(&peer)
                && f.count >= MAX_FAILURES
                && now.duration_since(f.since) < FAILURE_WINDOW
            {
                return Err(SignInError::Limited(
                    FAILURE_WINDOW - now.duration_since(f.since),
                ));
            }
        }
        let Some(principal) = super::lookup(config, token.trim()) else {
            let mut failures = lock(&self.failures);
            if failures.len() >= MAX_TRACKED {
                failures.retain(|_, f| now.duration_since(f.since) < FAILURE_WINDOW);
            }
            if failures.len() < MAX_TRACKED {
                let f = failures.entry(peer).or_insert(Failures {
                    count: 0,
                    since: now,
                });
                if now.duration_since(f.since) >= FAILURE_WINDOW {
                    *f = Failures {
                        count: 0,
                        since: now,
                    };
                }
                f.count += 1;
            }
            return Err(SignInError::Unknown);
        };
        lock(&self.failures).remove(&peer);
        let mut raw = [0u8; 32];
        rand::rng().fill_bytes(&mut raw);
        let value = hex::encode(raw);
        let mut live = lock(&self.live);
        live.retain(|_, s| now.duration_since(s.started) < self.lifetime);
        if live.len() >= MAX_SESSIONS
            && let Some(oldest) = live.iter().min_by_key(|(_, s)| s.started).map(|(k, _)| *k)
        {
            live.remove(&oldest);
        }
        live.insert(
            digest(&value),
            Session {
                token: digest(token.trim()),
                started: now,
            },
        );
        Ok((value, principal))
    }

    /// The session of a cookie value, if it is live and its token is still in `config`;
    /// an expired or orphaned session is forgotten.
    pub fn find(&self, config: &Config, cookie: &str) -> Option<Found> {
        let d = digest(cookie);
        let mut live = lock(&self.live);
        let s = live.get(&d)?;
        let principal = (s.started.elapsed() < self.lifetime)
            .then(|| super::lookup_digest(config, &s.token))
            .flatten();
        match principal {
            Some(principal) => Some(Found {
                principal,
                digest: d,
            }),
            None => {
                live.remove(&d);
                None
            }
        }
    }

    /// Ends the session of a cookie value (nothing if there is none).
    pub fn sign_out(&self, cookie: &str) {
        lock(&self.live).remove(&digest(cookie));
    }

    /// The CSRF token of forms shown under `basis` (a session's digest, or a fixed label
    /// for viewers without one): an HMAC under this process's key, so a page of another
    /// site cannot know it.
    pub fn csrf(&self, basis: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(basis);
        hex::encode(mac.finalize().into_bytes())
    }

    /// Whether `given` is the CSRF token for `basis` (constant time).
    pub fn csrf_ok(&self, basis: &[u8], given: &str) -> bool {
        self.csrf(basis).as_bytes().ct_eq(given.as_bytes()).into()
    }

    /// Sessions held now (for tests and metrics).
    pub fn len(&self) -> usize {
        lock(&self.live).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::tokens::hash_token;
    use crate::config::{Scope, TokenConfig};

    fn config(tokens: &[(&str, &str, Vec<Scope>)]) -> Config {
        let mut c = Config::embedded_default();
        c.anonymous_loopback = false;
        c.projects[0].tokens = tokens
            .iter()
            .map(|(name, tok, scopes)| TokenConfig {
                name: name.to_string(),
                sha256: hash_token(tok),
                scopes: scopes.clone(),
            })
            .collect();
        c
    }

    const PEER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 7));

    #[test]
    fn a_session_is_worth_its_token_and_dies_with_it() {
        let s = Sessions::new(Duration::from_secs(3600));
        let c = config(&[("rita", "tok-r", vec![Scope::Read, Scope::Review])]);
        let (cookie, who) = s.sign_in(&c, " tok-r\n", PEER).expect("signed in");
        assert_eq!(cookie.len(), 64);
        assert!(who.may("default", Scope::Review) && !who.may("default", Scope::Write));
        let found = s.find(&c, &cookie).expect("live");
        assert_eq!(found.principal, who);
        assert!(s.find(&c, "0".repeat(64).as_str()).is_none());
        // Scopes follow the config: a token narrowed to read narrows its sessions.
        let narrowed = config(&[("rita", "tok-r", vec![Scope::Read])]);
        assert!(
            !s.find(&narrowed, &cookie)
                .unwrap()
                .principal
                .may("default", Scope::Review)
        );
        // Revoked: the session is gone for good.
        let revoked = config(&[]);
        assert!(s.find(&revoked, &cookie).is_none());
        assert!(s.find(&c, &cookie).is_none());
        assert!(s.is_empty());
    }

    #[test]
    fn sessions_expire_and_sign_out() {
        let c = config(&[("rita", "tok-r", vec![Scope::Read])]);
        let short = Sessions::new(Duration::from_millis(1));
        let (cookie, _) = short.sign_in(&c, "tok-r", PEER).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert!(short.find(&c, &cookie).is_none());
        let s = Sessions::new(Duration::from_secs(60));
        let (cookie, _) = s.sign_in(&c, "tok-r", PEER).unwrap();
        s.sign_out(&cookie);
        assert!(s.find(&c, &cookie).is_none());
    }

    #[test]
    fn failed_sign_ins_are_limited_per_address() {
        let s = Sessions::new(Duration::from_secs(60));
        let c = config(&[("rita", "tok-r", vec![Scope::Read])]);
        for _ in 0..MAX_FAILURES {
            assert_eq!(
                s.sign_in(&c, "hx_wrong", PEER).unwrap_err(),
                SignInError::Unknown
            );
        }
        // Even the right token waits now; another address does not.
        assert!(matches!(
            s.sign_in(&c, "tok-r", PEER).unwrap_err(),
            SignInError::Limited(d) if d <= FAILURE_WINDOW
        ));
        let other = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 8));
        assert!(s.sign_in(&c, "tok-r", other).is_ok());
    }

    #[test]
    fn csrf_tokens_are_bound_to_their_basis_and_process() {
        let s = Sessions::new(Duration::from_secs(60));
        let t = s.csrf(b"session-a");
        assert!(s.csrf_ok(b"session-a", &t));
        assert!(!s.csrf_ok(b"session-b", &t));
        assert!(!s.csrf_ok(b"session-a", ""));
        assert!(!Sessions::new(Duration::from_secs(60)).csrf_ok(b"session-a", &t));
    }
}
