//! Byte-level helpers of the secret scanner: character classes, bounded runs, entropy,
//! placeholder recognition, CRC-32/base62 and a lenient base64 decoder.

/// What a rule reports: `(provider, kind)`; the provider is empty for generic kinds.
pub(super) type Kind = (&'static str, &'static str);

/// Character-class bits; a "set" is an OR of them.
pub(super) const DIGIT: u16 = 1;
pub(super) const LHEX: u16 = 1 << 1; // a-f
pub(super) const LREST: u16 = 1 << 2; // g-z
pub(super) const UHEX: u16 = 1 << 3; // A-F
pub(super) const UREST: u16 = 1 << 4; // G-Z
pub(super) const US: u16 = 1 << 5; // _
pub(super) const DASH: u16 = 1 << 6; // -
pub(super) const DOT: u16 = 1 << 7; // .
pub(super) const PLUS: u16 = 1 << 8; // +
pub(super) const SLASH: u16 = 1 << 9; // /
pub(super) const EQ: u16 = 1 << 10; // =

pub(super) const LOWER: u16 = LHEX | LREST;
pub(super) const UPPER: u16 = UHEX | UREST;
pub(super) const ALPHA: u16 = LOWER | UPPER;
pub(super) const ALNUM: u16 = ALPHA | DIGIT;
pub(super) const HEX: u16 = DIGIT | LHEX | UHEX;
pub(super) const HEXL: u16 = DIGIT | LHEX;
/// `[A-Za-z0-9_-]`: base64url, and what "a token character" means for word boundaries.
pub(super) const B64URL: u16 = ALNUM | US | DASH;
/// `[A-Za-z0-9+/]`: standard base64 without padding.
pub(super) const B64: u16 = ALNUM | PLUS | SLASH;

const fn class_table() -> [u16; 256] {
    let mut t = [0u16; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b'0'..=b'9' => DIGIT,
            b'a'..=b'f' => LHEX,
            b'g'..=b'z' => LREST,
            b'A'..=b'F' => UHEX,
            b'G'..=b'Z' => UREST,
            b'_' => US,
            b'-' => DASH,
            b'.' => DOT,
            b'+' => PLUS,
            b'/' => SLASH,
            b'=' => EQ,
            _ => 0,
        };
        c += 1;
    }
    t
}

static CLASS: [u16; 256] = class_table();

/// Whether `c` is in `set`.
#[inline]
pub(super) fn is(c: u8, set: u16) -> bool {
    CLASS[usize::from(c)] & set != 0
}

/// Whether `c` continues a token (`[A-Za-z0-9_-]`), so that no token starts right after it.
#[inline]
pub(super) fn is_token_char(c: u8) -> bool {
    is(c, B64URL)
}

/// Length of the run of `set` bytes at `b[i..]`, counting at most `max` (so a run longer
/// than `max` reports `max`; callers that need "exactly" pass `max + 1`).
#[inline]
pub(super) fn run(b: &[u8], i: usize, set: u16, max: usize) -> usize {
    b.get(i..).map_or(0, |s| {
        s.iter().take(max).take_while(|&&c| is(c, set)).count()
    })
}

/// Whether the token that ended before `j` really ends there: no letter or digit follows.
#[inline]
pub(super) fn ends_at(b: &[u8], j: usize) -> bool {
    b.get(j).is_none_or(|&c| !is(c, ALNUM))
}

/// `b[i..]` starts with `pat`. A byte loop: patterns are a few bytes long, and a `memcmp`
/// call per comparison showed in profiles.
#[inline]
pub(super) fn at(b: &[u8], i: usize, pat: &[u8]) -> bool {
    match b.get(i..i + pat.len()) {
        Some(s) => s.iter().zip(pat).all(|(x, y)| x == y),
        None => false,
    }
}

/// `b[i..]` starts with `pat`, ASCII case-insensitively.
#[inline]
pub(super) fn at_ignore_case(b: &[u8], i: usize, pat: &[u8]) -> bool {
    b.get(i..i + pat.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(pat))
}

/// Whether `b[i..]` starts a word `w` (ASCII case-insensitive), ending at a non-letter.
pub(super) fn word_at(b: &[u8], i: usize, w: &[u8]) -> bool {
    at_ignore_case(b, i, w) && !b.get(i + w.len()).is_some_and(u8::is_ascii_alphanumeric)
}

/// Case-insensitive substring test for short needles (`hay` is bounded by the callers).
pub(super) fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Shannon entropy in bits per byte.
pub(super) fn entropy(v: &[u8]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &c in v {
        counts[usize::from(c)] += 1;
    }
    let n = v.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * libm::log2(p)
        })
        .sum()
}

/// Words that mark a value as a stand-in, not a credential (matched case-insensitively
/// anywhere in the value). Random tokens contain none of them in practice: a given
/// five-letter word occurs in a random 40-character base62 string with odds of about 1e-7.
const PLACEHOLDER_WORDS: [&[u8]; 24] = [
    b"example",
    b"sample",
    b"dummy",
    b"placeholder",
    b"redacted",
    b"changeme",
    b"change_me",
    b"change-me",
    b"changeit",
    b"your",
    b"fake",
    b"xxxx",
    b"****",
    b"....",
    b"<",
    b">",
    b"${",
    b"{{",
    b"lorem",
    b"insert",
    b"replace",
    b"notreal",
    b"not_real",
    b"not-a-real",
];

/// Whether `v` reads as a placeholder rather than a generated value: a placeholder word,
/// six equal characters in a row (`000000`, `aaaaaa`) or six consecutive ascending or
/// descending characters (`123456`, `abcdef`, `FEDCBA`).
pub(super) fn looks_placeholder(v: &[u8]) -> bool {
    if PLACEHOLDER_WORDS.iter().any(|w| contains_ignore_case(v, w)) {
        return true;
    }
    let (mut same, mut up, mut down) = (1, 1, 1);
    for w in v.windows(2) {
        let (a, b) = (w[0], w[1]);
        same = if a == b { same + 1 } else { 1 };
        let alnum = a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric();
        up = if alnum && b == a.wrapping_add(1) {
            up + 1
        } else {
            1
        };
        down = if alnum && a == b.wrapping_add(1) {
            down + 1
        } else {
            1
        };
        if same >= 6 || up >= 6 || down >= 6 {
            return true;
        }
    }
    false
}

/// Whether a generated token body has the entropy of random output: at least 3 bits per
/// character, or 70% of `log2(len)` for bodies too short to reach that.
pub(super) fn random_enough(v: &[u8]) -> bool {
    let n = v.len() as f64;
    entropy(v) >= f64::min(3.0, 0.7 * libm::log2(n.max(2.0)))
}

const fn crc_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[n] = c;
        n += 1;
    }
    t
}

static CRC: [u32; 256] = crc_table();

/// CRC-32 (IEEE 802.3, the one of zlib and PNG).
pub(super) fn crc32(data: &[u8]) -> u32 {
    let mut c = u32::MAX;
    for &b in data {
        c = CRC[usize::from((c ^ u32::from(b)) as u8)] ^ (c >> 8);
    }
    !c
}

/// `n` in base62 (`0-9A-Za-z`), left-padded with `0` to six digits: the checksum encoding
/// of GitHub and npm tokens.
pub(super) fn base62_6(mut n: u32) -> [u8; 6] {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = DIGITS[(n % 62) as usize];
        n /= 62;
    }
    out
}

fn b64_value(c: u8) -> Option<u32> {
    Some(u32::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    }))
}

/// Decodes standard or URL-safe base64 from `input` into `out` until the first byte that
/// is not a base64 digit or `out` is full; returns the number of bytes written.
pub(super) fn b64_decode(input: &[u8], out: &mut [u8]) -> usize {
    let (mut acc, mut bits, mut n) = (0u32, 0u32, 0usize);
    for &c in input {
        let Some(v) = b64_value(c) else { break };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            if n == out.len() {
                break;
            }
            out[n] = (acc >> bits) as u8;
            n += 1;
            acc &= (1 << bits) - 1;
        }
    }
    n
}

/// Counts of lowercase, uppercase, digit and other (symbol) bytes present in `v`.
pub(super) fn char_classes(v: &[u8]) -> usize {
    let lower = v.iter().any(u8::is_ascii_lowercase);
    let upper = v.iter().any(u8::is_ascii_uppercase);
    let digit = v.iter().any(u8::is_ascii_digit);
    let other = v.iter().any(|c| !c.is_ascii_alphanumeric());
    usize::from(lower) + usize::from(upper) + usize::from(digit) + usize::from(other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        // The catalogue check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn base62_pads_to_six_digits() {
        assert_eq!(&base62_6(0), b"000000");
        assert_eq!(&base62_6(61), b"00000z");
        assert_eq!(&base62_6(62), b"000010");
        assert_eq!(&base62_6(u32::MAX), b"4gfFC3");
    }

    #[test]
    fn base64_decodes_both_alphabets_and_stops_at_junk() {
        let mut out = [0u8; 32];
        let n = b64_decode(b"eyJhbGciOiJIUzI1NiJ9", &mut out);
        assert_eq!(&out[..n], br#"{"alg":"HS256"}"#);
        let n = b64_decode(b"aGk_-w.rest", &mut out);
        assert_eq!(&out[..n], &[b'h', b'i', 0x3f, 0xfb]);
        let mut small = [0u8; 2];
        assert_eq!(b64_decode(b"aGVsbG8=", &mut small), 2);
    }

    #[test]
    fn placeholders_and_random_values() {
        for p in [
            &b"AKIAIOSFODNN7EXAMPLE"[..],
            b"xxxxxxxxxxxxxxxx",
            b"<your-token>",
            b"0000000000000000",
            b"abcdef0123456789",
            b"1234567890abcdef",
            b"ZYXWVU98",
            b"********",
            b"${TOKEN}",
        ] {
            assert!(looks_placeholder(p), "{}", String::from_utf8_lossy(p));
        }
        for r in [
            &b"q8Xz3LmP0vR7nKt2Wb9Y"[..],
            b"9f86d081884c7d659a2feaa0c55ad015",
        ] {
            assert!(!looks_placeholder(r), "{}", String::from_utf8_lossy(r));
            assert!(random_enough(r), "{}", String::from_utf8_lossy(r));
        }
        assert!(!random_enough(b"aaaaaaaaaaaaaaab"));
        assert!(!random_enough(b"abababababababab"));
    }

    #[test]
    fn runs_are_bounded() {
        assert_eq!(run(b"abc123-_x", 0, B64URL, 100), 9);
        assert_eq!(run(b"abc123-_x", 0, ALNUM, 100), 6);
        assert_eq!(run(b"abc123", 0, ALNUM, 4), 4);
        assert_eq!(run(b"abc", 7, ALNUM, 4), 0);
        assert!(ends_at(b"abc-", 3) && !ends_at(b"abcd", 3) && ends_at(b"abc", 3));
    }
}
