//! Dates of entries: `YYYY-MM-DD` (and RFC 3339) to seconds and back, by hand, with no
//! clock and no time-zone database. An entry's date is its wall-clock time where it was
//! written (the zone's offset added to Unix seconds), so its day is the day its author saw.

// ---------------------------------------------------------------------------------------
// Dates

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
pub(super) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
pub(super) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub(super) fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Reads `digits` ASCII digits at `*pos`, advancing it.
pub(super) fn take_num(b: &[u8], pos: &mut usize, digits: usize) -> Option<i64> {
    let s = b.get(*pos..*pos + digits)?;
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    *pos += digits;
    Some(s.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
}

/// Parses `YYYY-MM-DD` with an optional time (`T` or space, `HH:MM[:SS[.frac]]`) and an
/// optional zone (`Z`, `UTC`, `+HH:MM`, `+HHMM`, `+HH`, space allowed before it) into the
/// seconds of that wall-clock time read as UTC: the zone is checked, not applied, so
/// `2024-03-05T23:30:00-05:00` stays on March 5th, the day its author wrote.
pub(crate) fn parse_date(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    let mut p = 0;
    let y = take_num(b, &mut p, 4)?;
    (b.get(p) == Some(&b'-')).then_some(())?;
    p += 1;
    let m = take_num(b, &mut p, 2)?;
    (b.get(p) == Some(&b'-')).then_some(())?;
    p += 1;
    let d = take_num(b, &mut p, 2)?;
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let mut secs = 0;
    if p < b.len() {
        if !matches!(b[p], b'T' | b't' | b' ') {
            return None;
        }
        p += 1;
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
        let hh = take_num(b, &mut p, 2)?;
        (b.get(p) == Some(&b':')).then_some(())?;
        p += 1;
        let mm = take_num(b, &mut p, 2)?;
        let mut ss = 0;
        if b.get(p) == Some(&b':') {
            p += 1;
            ss = take_num(b, &mut p, 2)?;
            if b.get(p) == Some(&b'.') {
                p += 1;
                let start = p;
                while b.get(p).is_some_and(u8::is_ascii_digit) {
                    p += 1;
                }
                if p == start {
                    return None;
                }
            }
        }
        if hh > 23 || mm > 59 || ss > 60 {
            return None;
        }
        secs = hh * 3600 + mm * 60 + ss;
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
        let rest = &b[p..];
        let utc = rest.is_empty()
            || rest.eq_ignore_ascii_case(b"z")
            || rest.eq_ignore_ascii_case(b"utc")
            || rest.eq_ignore_ascii_case(b"gmt");
        if !utc {
            if !matches!(rest[0], b'+' | b'-') {
                return None;
            }
            let mut q = 1;
            let oh = take_num(rest, &mut q, 2)?;
            let mut om = 0;
            if q < rest.len() {
                if rest[q] == b':' {
                    q += 1;
                }
                om = take_num(rest, &mut q, 2)?;
            }
            if q != rest.len() || oh > 23 || om > 59 {
                return None;
            }
        }
    }
    Some(days_from_civil(y, m, d) * 86_400 + secs)
}

/// The day of an entry's date as `YYYY-MM-DD`: how helix shows entry dates everywhere.
/// Entry dates are wall-clock times (module docs), so this is the day their author saw.
pub fn format_day(t: i64) -> String {
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// The day number (days since 1970-01-01) of a strict `YYYY-MM-DD`, the form
/// [`format_day`] writes; `None` for anything else or a day that does not exist.
pub fn parse_day(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r.clone()]
            .iter()
            .all(u8::is_ascii_digit)
            .then(|| s[r].parse().ok())
            .flatten()
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// `YYYY-MM-DD` for midnight, else `YYYY-MM-DDTHH:MM:SSZ` (read back as the same value).
pub(super) fn format_date(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    if secs == 0 {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}
