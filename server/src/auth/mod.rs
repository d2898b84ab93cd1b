//! Who is asking: bearer tokens looked up in constant time, scope checks, and webhook
//! signatures (GitHub's HMAC, GitLab's token); creating tokens is [`tokens`].

pub mod session;
pub mod tokens;

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::config::{Config, Scope};

/// Who is asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A loopback client of a server configured with `anonymous_loopback`.
    Anonymous,
    Token {
        project: String,
        name: String,
        scopes: Vec<Scope>,
    },
}

impl Principal {
    /// Author name for writes.
    pub fn author(&self) -> &str {
        match self {
            Principal::Anonymous => "anonymous",
            Principal::Token { name, .. } => name,
        }
    }

    pub fn may(&self, project: &str, scope: Scope) -> bool {
        match self {
            Principal::Anonymous => true,
            Principal::Token {
                project: p, scopes, ..
            } => p == project && scopes.contains(&scope),
        }
    }
}

/// Why a request is not authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    Missing,
    Malformed,
    Unknown,
}

/// Finds the token among every project's tokens. Every stored hash is compared, in
/// constant time, so timing does not reveal which (or whether a) token matched.
pub fn lookup(config: &Config, token: &str) -> Option<Principal> {
    lookup_digest(config, &Sha256::digest(token.as_bytes()))
}

/// [`lookup`] by the token's sha256, as the config stores it (a browser session keeps only
/// that).
pub fn lookup_digest(config: &Config, digest: &[u8]) -> Option<Principal> {
    let mut found = None;
    for p in &config.projects {
        for t in &p.tokens {
            let Ok(stored) = hex::decode(&t.sha256) else {
                continue;
            };
            if bool::from(stored.as_slice().ct_eq(digest)) && found.is_none() {
                found = Some(Principal::Token {
                    project: p.name.clone(),
                    name: t.name.clone(),
                    scopes: t.scopes.clone(),
                });
            }
        }
    }
    found
}

/// Authenticates from an `Authorization` header value (if any) and whether the peer is on
/// loopback.
pub fn authenticate(
    config: &Config,
    authorization: Option<&[u8]>,
    loopback: bool,
) -> Result<Principal, AuthFailure> {
    let Some(raw) = authorization else {
        return if config.anonymous_loopback && loopback {
            Ok(Principal::Anonymous)
        } else {
            Err(AuthFailure::Missing)
        };
    };
    let text = std::str::from_utf8(raw).map_err(|_| AuthFailure::Malformed)?;
    let token = text
        .strip_prefix("Bearer ")
        .or_else(|| text.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(AuthFailure::Malformed)?;
    lookup(config, token).ok_or(AuthFailure::Unknown)
}

/// Checks `sha256=<hex>` against the HMAC-SHA256 of `body` under `secret` (constant time).
pub fn verify_signature(secret: &str, header: &str, body: &[u8]) -> bool {
    let Some(hexsig) = header.trim().strip_prefix("sha256=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hexsig) else {
        return false;
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&sig).is_ok()
}

/// Whether `given` is `secret`, compared in constant time (GitLab's `X-Gitlab-Token`).
pub fn secret_matches(secret: &str, given: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    // Compare digests so that the time does not depend on the lengths either.
    let digest = |b: &[u8]| Sha256::digest(b);
    digest(secret.as_bytes()).ct_eq(&digest(given)).into()
}

/// `sha256=<hex>` for `body` under `secret`, as GitHub sends it.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::tokens::{hash_token, new_token};
    use crate::config::{ProjectConfig, TokenConfig};

    #[test]
    fn gitlab_secret_must_match_exactly() {
        assert!(secret_matches("hook-secret", b"hook-secret"));
        for wrong in [&b""[..], b"hook-secre", b"hook-secret ", b"HOOK-SECRET"] {
            assert!(!secret_matches("hook-secret", wrong), "{wrong:?}");
        }
    }

    fn cfg(tok: &str) -> Config {
        let mut c = Config::embedded_default();
        c.anonymous_loopback = false;
        c.projects = vec![ProjectConfig {
            tokens: vec![TokenConfig {
                name: "alice".into(),
                sha256: hash_token(tok),
                scopes: vec![Scope::Read],
            }],
            ..Config::embedded_default().projects[0].clone()
        }];
        c
    }

    #[test]
    fn finds_tokens_and_rejects_others() {
        let t = new_token();
        assert!(t.starts_with("hx_") && t.len() == 67);
        let c = cfg(&t);
        let hdr = format!("Bearer {t}");
        let p = authenticate(&c, Some(hdr.as_bytes()), false).expect("known");
        assert!(p.may("default", Scope::Read));
        assert!(!p.may("default", Scope::Write));
        assert!(!p.may("other", Scope::Read));
        assert_eq!(
            authenticate(&c, Some(b"Bearer hx_nope"), true),
            Err(AuthFailure::Unknown)
        );
        assert_eq!(authenticate(&c, None, true), Err(AuthFailure::Missing));
        assert_eq!(
            authenticate(&c, Some(b"Basic x"), true),
            Err(AuthFailure::Malformed)
        );
    }

    #[test]
    fn signatures_round_trip() {
        let s = sign("secret", b"{}");
        assert!(verify_signature("secret", &s, b"{}"));
        assert!(!verify_signature("secret", &s, b"{ }"));
        assert!(!verify_signature("other", &s, b"{}"));
        assert!(!verify_signature("secret", "sha1=00", b"{}"));
    }
}
