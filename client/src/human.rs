//! Numbers, counts and ages as people read them (`1,204 entries`, `3 min`), for the CLI's
//! lines and sync reports alike.

/// Human age like `5 s`, `3 min`, `2 h`, `4 days`.
pub fn age(secs: i64) -> String {
    let s = secs.max(0);
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min", s / 60)
    } else if s < 86_400 {
        format!("{} h", s / 3600)
    } else {
        format!("{} days", s / 86_400)
    }
}

/// `1,204` style thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 entry`, `1,204 entries`.
pub fn entries(n: u64) -> String {
    count(n, "entry", "entries")
}

/// `1 hit`, `1,204 hits`: a count and the noun in the right number.
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{} {many}", thousands(n))
    }
}

/// Text folded onto one line: runs of white space, newlines included, become one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_and_numbers() {
        assert_eq!(super::thousands(1204), "1,204");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_000_000), "1,000,000");
    }
}
