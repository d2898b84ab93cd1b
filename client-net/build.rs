//! Two link-time measures for the `helix` binary, whose every hook is a fresh process:
//!
//! 1. **Hot text.** The code that hooks run goes into one contiguous `.text.hot` section.
//!    Each 64 KiB of code a hook touches is a page fault; scattered over the 2 MB text, the
//!    hook path touched about 23 such chunks, packed it touches 5. `hot-text.txt` lists the
//!    hook path's functions as symbol-name patterns, recorded by `client/benches/hot-text.sh`.
//!    Crate hashes are wildcards, so the list survives rebuilds and toolchain updates; a
//!    function missing from it only lands in ordinary `.text`. The generated linker script
//!    uses `INSERT BEFORE .text`, so the default layout stays; GNU ld and lld both read it.
//!    Set `HELIX_HOT_TEXT=0` to link without it.
//! 2. **Static link.** With glibc linked dynamically, the loader (mapping libc and libgcc_s,
//!    relocating and binding them) was 27% of a prompt hook's instructions. `helix` is linked
//!    as a static PIE (ASLR kept) against glibc's and libgcc's archives. Stable Cargo cannot
//!    set `crt-static` for one binary (a host-wide flag also reaches proc-macros), and rustc
//!    asks for the system libraries after `-Bdynamic`, so a private search directory answers
//!    those names (`-lc`, `-lgcc_s`, ...) with linker scripts naming the static archives.
//!    The binary has no network code, so glibc's static NSS caveats do not apply to it.
//!    When an archive is missing (no `libc.a` installed), `helix` stays dynamic, with a
//!    warning; so does a cross build. Set `HELIX_STATIC=0` to link dynamically.
//!    docs/benchmarks.md has the figures.

use std::fmt::Write as _;
use std::path::PathBuf;

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}

fn main() {
    println!("cargo:rerun-if-changed=hot-text.txt");
    println!("cargo:rerun-if-env-changed=HELIX_HOT_TEXT");
    println!("cargo:rerun-if-env-changed=HELIX_STATIC");
    println!("cargo:rerun-if-env-changed=CC");
    if env("CARGO_CFG_TARGET_OS") != "linux" || env("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    if env("HELIX_STATIC") != "0" {
        static_link();
    }
    if env("HELIX_HOT_TEXT") != "0" {
        hot_text();
    }
}

/// The system libraries rustc names for a glibc target, and the archives that stand in for
/// each (in link order: libgcc_eh needs libgcc, both need libc).
const STATIC_STAND_INS: &[(&str, &[&str])] = &[
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
    ("c", &["libc.a", "libgcc.a", "libgcc_eh.a"]),
    ("m", &["libm.a"]),
    ("pthread", &["libpthread.a"]),
    ("rt", &["librt.a"]),
    ("dl", &["libdl.a"]),
    ("util", &["libutil.a"]),
];

fn static_link() {
    // Already static (`-C target-feature=+crt-static`): rustc does it all.
    if env("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static")
    {
        return;
    }
    // The archives are found with the host's C compiler: a cross build would get the
    // host's libc.a, so it keeps the dynamic link.
    if env("TARGET") != env("HOST") {
        return;
    }
    // `CC` may carry a wrapper or flags (`ccache gcc`).
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut words = cc.split_whitespace();
    let program = words.next().unwrap_or("cc");
    let flags: Vec<&str> = words.collect();
    // Where the compiler keeps `name`; Err says why there is none.
    let archive = |name: &str| -> Result<PathBuf, String> {
        let out = std::process::Command::new(program)
            .args(&flags)
            .arg(format!("-print-file-name={name}"))
            .output()
            .map_err(|e| format!("could not run `{cc}` ({e})"))?;
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        // An unknown file comes back as its bare name.
        if path.is_absolute() && path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "`{cc} -print-file-name={name}` found no static archive (install glibc's \
                 static libraries)"
            ))
        }
    };
    let dir = PathBuf::from(env("OUT_DIR")).join("static-libs");
    let mut scripts = Vec::new();
    for (lib, archives) in STATIC_STAND_INS {
        let mut inputs = Vec::new();
        for name in *archives {
            match archive(name) {
                Ok(path) => inputs.push(format!("\"{}\"", path.display())),
                // glibc 2.34+ keeps empty libpthread/librt/libdl/libutil archives; older
                // or other layouts may lack them, and nothing is lost without them.
                Err(_) if lib != &"gcc_s" && lib != &"c" => {}
                Err(why) => {
                    println!(
                        "cargo:warning=helix is linked dynamically: {why}; set HELIX_STATIC=0 \
                         to silence this"
                    );
                    return;
                }
            }
        }
        // Read by the linker for both `.so` (after `-Bdynamic`) and `.a` lookups.
        let script = if inputs.is_empty() {
            "/* nothing to link */\n".to_string()
        } else {
            format!("GROUP({})\n", inputs.join(" "))
        };
        scripts.push((lib, script));
    }
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/static-libs");
    for (lib, script) in scripts {
        for ext in ["so", "a"] {
            std::fs::write(dir.join(format!("lib{lib}.{ext}")), &script)
                .expect("write a stand-in into OUT_DIR/static-libs");
        }
    }
    // `-L` applies to every `-l` wherever it stands, and the search directories given on
    // the command line come before the system's.
    println!("cargo:rustc-link-arg-bin=helix=-static-pie");
    println!("cargo:rustc-link-arg-bin=helix=-L{}", dir.display());
}

fn hot_text() {
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
