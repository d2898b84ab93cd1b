//! One module per CLI command; each exposes `Args` (clap) and `run(Args) -> Result<ExitCode>`.
//! Shared output helpers live here.

pub mod brief;
pub mod build;
pub mod check;
pub mod doctor;
pub mod init;
pub mod read;
pub mod search;
pub mod status;
pub mod store;
pub mod sync;
pub mod topics;

use std::path::PathBuf;

/// The current directory (where `.helix.toml` is looked up from).
pub fn cwd() -> anyhow::Result<PathBuf> {
    std::env::current_dir().map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))
}

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
    if n == 1 {
        "1 entry".to_string()
    } else {
        format!("{} entries", thousands(n))
    }
}

/// Prints a JSON value on stdout.
pub fn print_json(v: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).expect("serialising a JSON value cannot fail")
    );
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
