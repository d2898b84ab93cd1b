//! `cargo xtask install [--client] [--root DIR]`: builds `helix`, `helix-net` and
//! `helix-server` (or only the client's two with `--client`) in one `cargo build --release`,
//! so the dependencies they share compile once, and copies them into `DIR/bin` (default: the
//! directory `cargo install` uses, `$CARGO_INSTALL_ROOT` or `$CARGO_HOME`, else `~/.cargo`).
//! `cargo xtask uninstall [--root DIR]` removes them again.
//!
//! Two `cargo install` runs (one per package) build their shared dependencies twice, with
//! the features each package alone asks for; this is the one-build way for a machine that
//! runs both the client and the server. Std only: the task compiles in about a second.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The binaries, and the package that builds each.
const CLIENT: [(&str, &str); 2] = [
    ("helix", "helix-client-net"),
    ("helix-net", "helix-client-net"),
];
const SERVER: (&str, &str) = ("helix-server", "helix-server");

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Debug, PartialEq)]
struct Options {
    install: bool,
    client_only: bool,
    root: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let usage = "usage: cargo xtask install|uninstall [--client] [--root DIR]";
    let mut it = args.iter();
    let install = match it.next().map(String::as_str) {
        Some("install") => true,
        Some("uninstall") => false,
        Some("-h" | "--help") | None => return Err(usage.to_string()),
        Some(other) => return Err(format!("unknown task `{other}`; {usage}")),
    };
    let mut o = Options {
        install,
        client_only: false,
        root: None,
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--client" => o.client_only = true,
            "--root" => o.root = Some(PathBuf::from(it.next().ok_or("--root needs a directory")?)),
            other => return Err(format!("unknown option `{other}`; {usage}")),
        }
    }
    Ok(o)
}

/// Where `cargo install` puts binaries: `$CARGO_INSTALL_ROOT/bin`, `$CARGO_HOME/bin`, else
/// `~/.cargo/bin`.
fn bin_dir(root: Option<&Path>) -> Result<PathBuf, String> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let root = match root {
        Some(r) => r.to_path_buf(),
        None => var("CARGO_INSTALL_ROOT")
            .or_else(|| var("CARGO_HOME"))
            .or_else(|| var("HOME").map(|h| h.join(".cargo")))
            .ok_or("neither CARGO_INSTALL_ROOT, CARGO_HOME nor HOME is set; pass --root")?,
    };
    Ok(root.join("bin"))
}

fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    let mut bins: Vec<(&str, &str)> = CLIENT.to_vec();
    if !o.client_only {
        bins.push(SERVER);
    }
    let dest = bin_dir(o.root.as_deref())?;
    if !o.install {
        for (name, _) in &bins {
            let path = dest.join(name);
            match std::fs::remove_file(&path) {
                Ok(()) => eprintln!("xtask: removed {}", path.display()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("removing {}: {e}", path.display())),
            }
        }
        return Ok(());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask sits in the workspace root")?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root)
        .args(["build", "--release", "--locked"]);
    let mut packages: Vec<&str> = bins.iter().map(|(_, p)| *p).collect();
    packages.dedup();
    for p in packages {
        build.args(["-p", p]);
    }
    let status = build
        .status()
        .map_err(|e| format!("running cargo build: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let built = if target.is_relative() {
        root.join(target)
    } else {
        target
    }
    .join("release");
    install(&built, &dest, bins.iter().map(|(b, _)| *b))
}

/// Copies each binary from `from` into `dest`, through a temporary file renamed over the
/// old one: a running `helix` (a hook, the MCP server) keeps its old file.
fn install<'a>(
    from: &Path,
    dest: &Path,
    bins: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("creating {}: {e}", dest.display()))?;
    for name in bins {
        let src = from.join(name);
        let tmp = dest.join(format!(".{name}.xtask-new"));
        let out = dest.join(name);
        std::fs::copy(&src, &tmp).map_err(|e| format!("copying {}: {e}", src.display()))?;
        std::fs::rename(&tmp, &out).map_err(|e| format!("installing {}: {e}", out.display()))?;
        eprintln!("xtask: installed {}", out.display());
    }
    let on_path =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d == dest));
    if !on_path {
        eprintln!(
            "xtask: note: {} is not on PATH; add it, or agents will not find helix",
            dest.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options() {
        assert_eq!(
            parse(&args(&["install", "--client", "--root", "/opt/helix"])),
            Ok(Options {
                install: true,
                client_only: true,
                root: Some(PathBuf::from("/opt/helix")),
            })
        );
        assert!(parse(&args(&["uninstall"])).is_ok_and(|o| !o.install));
        assert!(parse(&args(&["deploy"])).is_err());
        assert!(parse(&args(&["install", "--root"])).is_err());
        assert_eq!(bin_dir(Some(Path::new("/r"))), Ok(PathBuf::from("/r/bin")));
    }

    #[test]
    fn install_replaces_binaries_through_a_rename() {
        let tmp = std::env::temp_dir().join(format!("xtask-test-{}", std::process::id()));
        let (from, dest) = (tmp.join("release"), tmp.join("bin"));
        std::fs::create_dir_all(&from).unwrap();
        std::fs::create_dir_all(&dest).unwrap();
        std::fs::write(from.join("helix"), "new").unwrap();
        std::fs::write(dest.join("helix"), "old").unwrap();
        install(&from, &dest, ["helix"].into_iter()).unwrap();
        assert_eq!(std::fs::read_to_string(dest.join("helix")).unwrap(), "new");
        assert!(!dest.join(".helix.xtask-new").exists());
        assert!(install(&from, &dest, ["missing"].into_iter()).is_err());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
