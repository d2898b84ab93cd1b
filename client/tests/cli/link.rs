//! How the `helix` binary is linked: a static PIE on glibc Linux (`client-net/build.rs`), since
//! the dynamic loader was a quarter of a hook's work.

use crate::common::helix;
use std::process::Command;

/// Program header types and the dynamic tag this test reads (ELF64, little endian).
const PT_DYNAMIC: u32 = 2;
const PT_INTERP: u32 = 3;
const DT_NEEDED: u64 = 1;
const ET_DYN: u16 = 3;

#[test]
#[cfg(all(target_os = "linux", target_env = "gnu", target_endian = "little"))]
fn helix_is_a_static_pie_on_glibc_linux() {
    if std::env::var_os("HELIX_STATIC").is_some_and(|v| v == "0") {
        return;
    }
    // build.rs links dynamically (with a warning) where no static libc is installed.
    let libc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .arg("-print-file-name=libc.a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if !std::path::Path::new(&libc).is_absolute() {
        eprintln!("no libc.a on this machine: helix is linked dynamically here");
        return;
    }
    let elf = std::fs::read(helix()).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF");
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap());
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    assert_eq!(
        u16_at(16),
        ET_DYN,
        "a position-independent executable: ASLR stays"
    );
    let (phoff, phentsize, phnum) = (
        u64_at(0x20) as usize,
        usize::from(u16_at(0x36)),
        usize::from(u16_at(0x38)),
    );
    let mut needed = 0;
    for i in 0..phnum {
        let ph = phoff + i * phentsize;
        let kind = u32_at(ph);
        assert_ne!(kind, PT_INTERP, "helix asks for a dynamic loader");
        if kind == PT_DYNAMIC {
            let (off, size) = (u64_at(ph + 8) as usize, u64_at(ph + 32) as usize);
            needed += (off..off + size)
                .step_by(16)
                .filter(|&d| u64_at(d) == DT_NEEDED)
                .count();
        }
    }
    assert_eq!(needed, 0, "helix needs shared libraries");
    // Without a loader, a binary that still needed one would crash at once.
    let out = Command::new(helix()).arg("--version").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("helix "));
}

/// The hook binary is built in the package that also builds `helix-net`, which depends on
/// reqwest, tokio, rustls and rmcp, and on the embedding model's tokenizers and
/// safetensors (the warm embedder): none of their code may be linked into `helix` (each
/// would leave its source path, `…/registry/src/…/tokio-1.54.1/src/…`, in the binary's
/// panic locations), while `helix-net` beside it, which does link them, shows the check
/// can fail.
#[test]
fn the_hook_binary_links_no_network_code() {
    let crates: [&[u8]; 6] = [
        b"/reqwest-0.",
        b"/tokio-1.",
        b"/rustls-0.",
        b"/rmcp-",
        b"/tokenizers-0.",
        b"/safetensors-0.",
    ];
    let holds = |bytes: &[u8], name: &[u8]| bytes.windows(name.len()).any(|w| w == name);
    let helix = std::fs::read(helix()).expect("read helix");
    for name in crates {
        assert!(
            !holds(&helix, name),
            "helix links {}",
            String::from_utf8_lossy(name)
        );
    }
    let net = std::fs::read(helix_test_support::workspace_binary("helix-net")).expect("read");
    for name in crates {
        assert!(
            holds(&net, name),
            "helix-net without {}",
            String::from_utf8_lossy(name)
        );
    }
}
