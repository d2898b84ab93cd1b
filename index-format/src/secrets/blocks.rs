//! Credentials that span more than a token: private-key blocks (PEM, SSH2, with their
//! key material), `scheme://user:password@host` URLs, and what counts as a stock password.

use super::text::{
    ALNUM, B64, DASH, DOT, EQ, Kind, PLUS, US, at, contains_ignore_case, is, looks_placeholder, run,
};

/// `(provider, kind)` of the private keys and URL credentials, for the catalogue.
pub(super) const KINDS: &[Kind] = &[
    ("", "private key"),
    ("RSA", "private key"),
    ("EC", "private key"),
    ("DSA", "private key"),
    ("OpenSSH", "private key"),
    ("PGP", "private key block"),
    ("SSH2", "encrypted private key"),
    ("", "encrypted private key"),
    ("Google Cloud", "service account private key"),
    ("PostgreSQL", "connection string with a password"),
    ("MySQL", "connection string with a password"),
    ("MongoDB", "connection string with a password"),
    ("Redis", "connection string with a password"),
    ("AMQP", "connection string with a password"),
    ("Microsoft SQL Server", "connection string with a password"),
    ("LDAP", "URL with a password"),
    ("FTP", "URL with a password"),
    ("SMTP", "URL with a password"),
    ("", "URL with an embedded password"),
];

/// A PEM (or SSH2) private key block at `i` (`-----BEGIN … PRIVATE KEY-----`) followed by
/// key material: at least 40 base64 characters in the next lines, or after `\n` escapes on
/// the same line (JSON). A header alone, or one over `...`, is documentation, not a key.
/// Returns the kind and the end of the inspected material.
pub(super) fn private_key_at(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    let h = if at(b, i, b"-----BEGIN ") || at(b, i, b"---- BEGIN ") {
        i + 11
    } else {
        return None;
    };
    let label_len = b
        .get(h..)?
        .iter()
        .take(80)
        .take_while(|&&c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b' ')
        .count();
    let label = b[h..h + label_len].trim_ascii_end();
    if !(label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK")) {
        return None;
    }
    let dashes = h + label.len();
    if !(at(b, dashes, b"-----") || at(b, dashes, b" ----")) {
        return None;
    }
    let has = |w: &[u8]| label.split(|&c| c == b' ').any(|x| x == w);
    let json_key = b[i.saturating_sub(40)..i]
        .windows(13)
        .any(|w| w == b"\"private_key\"");
    let kind = if json_key {
        ("Google Cloud", "service account private key")
    } else if has(b"PGP") {
        ("PGP", "private key block")
    } else if has(b"SSH2") {
        ("SSH2", "encrypted private key")
    } else if has(b"ENCRYPTED") {
        ("", "encrypted private key")
    } else if has(b"OPENSSH") {
        ("OpenSSH", "private key")
    } else if has(b"RSA") {
        ("RSA", "private key")
    } else if has(b"EC") {
        ("EC", "private key")
    } else if has(b"DSA") {
        ("DSA", "private key")
    } else {
        ("", "private key")
    };
    let (material, end) = key_material(b, dashes + 5);
    (material >= 40).then_some((kind, end))
}

/// Base64 characters in the (at most 12) lines after a key header, up to the END line:
/// lines made only of base64 count; armor headers (`Proc-Type:`, `Version:`…) and blank
/// lines are skipped; anything else ends the block. Literal `\n` separates lines too.
fn key_material(b: &[u8], from: usize) -> (usize, usize) {
    let limit = b.len().min(from + 2048);
    let (mut j, mut total, mut lines) = (from, 0, 0);
    while j < limit && lines < 12 {
        // Separators: real or escaped line breaks, spaces, the quote of a JSON string.
        while j < limit {
            match b[j] {
                b'\n' => lines += 1,
                b'\r' | b' ' | b'\t' | b'"' => {}
                b'\\' if b.get(j + 1) == Some(&b'n') => {
                    lines += 1;
                    j += 1;
                }
                _ => break,
            }
            j += 1;
        }
        if j >= limit || b[j] == b'-' {
            break;
        }
        let n = run(b, j, B64 | EQ, limit - j);
        let after = b.get(j + n).copied();
        let line_end = matches!(after, None | Some(b'\n' | b'\r' | b'\\' | b'"'));
        if n >= 16 && line_end {
            total += n;
            j += n;
            continue;
        }
        let name = run(b, j, ALNUM | DASH, 32);
        if name > 0 && b.get(j + name) == Some(&b':') {
            // An armor header: skip its line.
            while j < limit && b[j] != b'\n' {
                j += 1;
            }
            continue;
        }
        break;
    }
    (total, j.min(b.len()))
}

/// `scheme://user:password@host`: the colon of `://` is at `c`. Placeholders, variables,
/// and well-known demo pairs (`postgres:postgres`, `guest:guest`, `user:password`) pass.
pub(super) fn url_credentials_at(b: &[u8], c: usize) -> Option<(Kind, usize)> {
    let mut s = c;
    while s > 0 && c - s < 24 && is(b[s - 1], ALNUM | PLUS | DOT | DASH) {
        s -= 1;
    }
    let scheme = &b[s..c];
    if !scheme.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let u = c + 3;
    let mut j = u;
    let limit = b.len().min(u + 256);
    let mut colon = None;
    while j < limit && b[j] != b'@' {
        let ch = b[j];
        if ch == b':' && colon.is_none() {
            colon = Some(j);
        } else if !(is(ch, ALNUM | DASH | DOT | US | PLUS | EQ) || b"~%!$&'()*,;:".contains(&ch)) {
            return None;
        }
        j += 1;
    }
    if j >= limit
        || !b
            .get(j + 1)
            .is_some_and(|&h| h.is_ascii_alphanumeric() || h == b'[')
    {
        return None;
    }
    let colon = colon?;
    let (user, pass) = (&b[u..colon], &b[colon + 1..j]);
    // Hosts under the documentation domains of RFC 2606 (`example.com`, `gitlab.example.org`).
    let host = &b[j + 1..b.len().min(j + 1 + 256)];
    let host = &host[..host
        .iter()
        .take_while(|&&c| is(c, ALNUM | DASH | DOT))
        .count()];
    let documentation = host.starts_with(b"example.")
        || host.windows(9).any(|w| w == b".example.")
        || host.ends_with(b".example");
    if documentation || weak_password(pass) || pass.eq_ignore_ascii_case(user) {
        return None;
    }
    let lower = |w: &[u8]| scheme.eq_ignore_ascii_case(w);
    let conn = "connection string with a password";
    let kind = if lower(b"postgres") || lower(b"postgresql") {
        ("PostgreSQL", conn)
    } else if lower(b"mysql") || lower(b"mariadb") || lower(b"mysqlx") {
        ("MySQL", conn)
    } else if lower(b"mongodb") || lower(b"mongodb+srv") {
        ("MongoDB", conn)
    } else if lower(b"redis") || lower(b"rediss") {
        ("Redis", conn)
    } else if lower(b"amqp") || lower(b"amqps") {
        ("AMQP", conn)
    } else if lower(b"mssql") || lower(b"sqlserver") {
        ("Microsoft SQL Server", conn)
    } else if lower(b"ldap") || lower(b"ldaps") {
        ("LDAP", "URL with a password")
    } else if lower(b"ftp") || lower(b"ftps") || lower(b"sftp") {
        ("FTP", "URL with a password")
    } else if lower(b"smtp") || lower(b"smtps") {
        ("SMTP", "URL with a password")
    } else {
        ("", "URL with an embedded password")
    };
    Some((kind, j))
}

/// Passwords that are placeholders, references to variables, or stock demo values.
pub(super) fn weak_password(p: &[u8]) -> bool {
    const STOCK: [&[u8]; 22] = [
        b"pass",
        b"passwd",
        b"pwd",
        b"password",
        b"secret",
        b"test",
        b"admin",
        b"root",
        b"guest",
        b"postgres",
        b"mysql",
        b"redis",
        b"user",
        b"foo",
        b"bar",
        b"baz",
        b"hunter2",
        b"letmein",
        b"qwerty",
        b"s3cret",
        b"p@ssw0rd",
        b"passw0rd",
    ];
    let reference = matches!(p.first(), Some(b'$' | b'{' | b'<' | b'[' | b'('))
        || (p.first() == Some(&b'%')
            && !p
                .get(1..3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
    p.len() < 4
        || reference
        || looks_placeholder(p)
        || contains_ignore_case(p, b"password")
        || contains_ignore_case(p, b"passw0rd")
        || contains_ignore_case(p, b"secret")
        || contains_ignore_case(p, b"s3cr3t")
        || STOCK.iter().any(|w| p.eq_ignore_ascii_case(w))
        || p.iter().all(|&c| c == b'*' || c == b'x' || c == b'X' || c == b'.')
        // `TOKEN`, `DB_PASSWORD`, `API_KEY`: a name standing in for the value.
        || p.iter().all(|&c| c.is_ascii_uppercase() || c == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_passwords() {
        for p in [
            "",
            "pw",
            "password",
            "${DB_PASS}",
            "$PGPASSWORD",
            "%s",
            "<pass>",
            "****",
        ] {
            assert!(weak_password(p.as_bytes()), "{p}");
        }
        for p in ["hT9x2kQ", "p%40ssR7q", "Zq81!mmA"] {
            assert!(!weak_password(p.as_bytes()), "{p}");
        }
    }
}
