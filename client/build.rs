//! Links the code that hooks run into one contiguous `.text.hot` section of the `helix`
//! binary. A hook is a fresh process, and each 64 KiB of code it touches is a page fault;
//! scattered over the 2 MB text, the hook path touched about 23 such chunks, packed it
//! touches 5 (docs/benchmarks.md has the figures).
//!
//! `hot-text.txt` lists the hook path's functions as symbol-name patterns, recorded by
//! `client/benches/hot-text.sh`. Crate hashes are wildcards, so the list survives rebuilds
//! and toolchain updates; a function missing from it only lands in ordinary `.text`.
//! The generated linker script uses `INSERT BEFORE .text`, so the default layout stays;
//! GNU ld and lld both read it. Set `HELIX_HOT_TEXT=0` to link without it.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=hot-text.txt");
    println!("cargo:rerun-if-env-changed=HELIX_HOT_TEXT");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    if env("CARGO_CFG_TARGET_OS") != "linux"
        || env("CARGO_CFG_TARGET_ENV") != "gnu"
        || env("HELIX_HOT_TEXT") == "0"
    {
        return;
    }
    let list = match std::fs::read_to_string("hot-text.txt") {
        Ok(list) => list,
        Err(e) => {
            println!("cargo:warning=hot-text.txt unreadable ({e}); hook code stays unordered");
            return;
        }
    };
    let mut script = String::from("SECTIONS\n{\n  .text.hot :\n  {\n");
    let mut n = 0;
    for pattern in list.lines().map(str::trim) {
        if pattern.is_empty() || pattern.starts_with('#') {
            continue;
        }
        // Mangled names (legacy and v0) use only these; anything else (a space, a
        // parenthesis, a comment opener) could change the linker script's meaning.
        if !pattern
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_$.*".contains(c))
        {
            println!("cargo:warning=hot-text.txt: skipped malformed line {pattern:?}");
            continue;
        }
        // LLVM prefixes a function's section by its temperature (`.text.unlikely.` for
        // cold paths such as `grow_one`).
        let _ = writeln!(
            script,
            "    *(.text.{pattern}* .text.unlikely.{pattern}* .text.hot.{pattern}* .text.startup.{pattern}*)"
        );
        n += 1;
    }
    if n == 0 {
        return;
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    let out = PathBuf::from(env("OUT_DIR")).join("hot-text.ld");
    std::fs::write(&out, script).expect("write hot-text.ld into OUT_DIR");
    println!("cargo:rustc-link-arg-bin=helix=-Wl,-T,{}", out.display());
}
