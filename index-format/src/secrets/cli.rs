//! Secrets on command lines and in `.netrc` files: `curl -u user:password`, `--password X`,
//! `mysql -pX`, `sshpass -p X`, `docker login -p X`, `redis-cli -a X`, and
//! `machine … login … password X`. The scanner tracks which command a line runs.

use super::assign::{Class, KINDS as NAMED, classify, is_reference, value_at, value_is_secret};
use super::blocks::weak_password;
use super::rules::token_at;
use super::text::{Kind, at};

/// The kinds this module reports, for the catalogue.
pub(super) const KINDS: [Kind; 3] = [
    ("", ".netrc password"),
    ("", "password in a curl command"),
    ("", "password on a command line"),
];

/// The value after `password` in a `.netrc` line (`machine h login u password p`).
pub(super) fn netrc_password(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    let mut v = i + 8;
    if !matches!(b.get(v), Some(b' ' | b'\t')) {
        return None;
    }
    while matches!(b.get(v), Some(b' ' | b'\t')) && v - i < 40 {
        v += 1;
    }
    let n = b[v..]
        .iter()
        .take(256)
        .take_while(|c| c.is_ascii_graphic())
        .count();
    let p = &b[v..v + n];
    if let Some(hit) = token_at(b, v) {
        return Some(hit);
    }
    (!weak_password(p) && !is_reference(p, false)).then_some((("", ".netrc password"), v + n))
}

/// `curl -u user:password` / `--user user:password` with `-` at `i`.
pub(super) fn curl_user(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    let p = if at(b, i, b"--user") {
        i + 6
    } else if at(b, i, b"-u") {
        i + 2
    } else {
        return None;
    };
    if !matches!(b.get(p), Some(b' ' | b'\t' | b'=')) {
        return None;
    }
    let mut v = p;
    while matches!(b.get(v), Some(b' ' | b'\t' | b'=')) && v - p < 8 {
        v += 1;
    }
    let quote = b.get(v).copied().filter(|c| matches!(c, b'"' | b'\''));
    if quote.is_some() {
        v += 1;
    }
    let n = b[v..]
        .iter()
        .take(256)
        .take_while(|&&c| c.is_ascii_graphic() && Some(c) != quote)
        .count();
    let cred = &b[v..v + n];
    let colon = cred.iter().position(|&c| c == b':')?;
    let (user, pass) = (&cred[..colon], &cred[colon + 1..]);
    if let Some(hit) = token_at(b, v + colon + 1) {
        return Some(hit);
    }
    (!weak_password(pass) && pass != user && !is_reference(pass, false))
        .then_some((("", "password in a curl command"), v + n))
}

/// `--password VALUE`, `--token VALUE`, `--api-key VALUE` (the `--name=VALUE` form is an
/// assignment); `-` at `i`, the flag name classified like an assignment's key.
pub(super) fn long_flag(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    if !at(b, i, b"--") {
        return None;
    }
    let n = b[i + 2..]
        .iter()
        .take(41)
        .take_while(|&&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        .count();
    let name = &b[i + 2..i + 2 + n];
    if n == 0 || n > 40 || !matches!(b.get(i + 2 + n), Some(b' ' | b'\t')) {
        return None;
    }
    let (class, kind) = classify(name)?;
    if matches!(class, Class::Auth | Class::Authorization) {
        return None;
    }
    let (vs, ve, quoted) = value_at(b, i + 2 + n)?;
    if b.get(vs) == Some(&b'-') {
        return None;
    }
    if let Some(hit) = token_at(b, vs) {
        return Some(hit);
    }
    value_is_secret(&b[vs..ve], quoted, class, false).then_some((("", NAMED[kind].1), ve))
}

/// How a command spells its password option, for [`short_flag`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(super) enum ShortFlag {
    #[default]
    None,
    /// `mysql -pSECRET` (attached; `-p NAME` names a database).
    MysqlP,
    /// `sshpass -p SECRET`, `docker login -p SECRET`.
    SpaceP,
    /// `redis-cli -a SECRET`.
    RedisA,
}

/// The password option of the command on this line (`-p…`, `-a …`), `-` at `i`.
pub(super) fn short_flag(b: &[u8], i: usize, style: ShortFlag) -> Option<(Kind, usize)> {
    let letter = match style {
        ShortFlag::None => return None,
        ShortFlag::MysqlP | ShortFlag::SpaceP => b'p',
        ShortFlag::RedisA => b'a',
    };
    if b.get(i + 1) != Some(&letter) {
        return None;
    }
    let next = b.get(i + 2).copied();
    let from = match (style, next) {
        (ShortFlag::MysqlP, Some(c)) if c.is_ascii_graphic() => i + 2,
        (ShortFlag::SpaceP | ShortFlag::RedisA, Some(b' ' | b'\t')) => i + 2,
        _ => return None,
    };
    let (vs, ve, quoted) = value_at(b, from)?;
    if b.get(vs) == Some(&b'-') {
        return None;
    }
    value_is_secret(&b[vs..ve], quoted, Class::Password, false)
        .then_some((("", "password on a command line"), ve))
}
