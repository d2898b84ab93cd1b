//! The configuration's parsing and checks.

use super::*;

#[test]
fn parses_minimal_project_with_defaults() {
    let cfg = Config::parse("[[projects]]\nname = \"backend\"\n", "t").expect("valid");
    assert_eq!(cfg.listen.to_string(), "127.0.0.1:7700");
    assert_eq!(cfg.projects[0].branch, "main");
    assert!(!cfg.anonymous_loopback);
}

#[test]
fn rejects_bad_project_names_and_unknown_keys() {
    let e = Config::parse("[[projects]]\nname = \"../x\"\n", "f.toml").unwrap_err();
    assert!(format!("{e:#}").contains("project name"), "{e:#}");
    let e = Config::parse("bogus = 1\n", "f.toml").unwrap_err();
    assert!(format!("{e:#}").contains("bogus"), "{e:#}");
}

#[test]
fn review_mode_and_forge_are_checked() {
    let base = "[[projects]]\nname = \"p\"\nupstream = \"/srv/kb.git\"\n";
    let cfg = Config::parse(&format!("{base}writes = \"review\"\n"), "f").expect("valid");
    assert_eq!(cfg.projects[0].writes, WriteMode::Review);
    assert!(
        Config::parse(base, "f").expect("valid").projects[0]
            .writes
            .is_direct()
    );
    let forge =
        "[projects.forge]\nkind = \"github\"\nrepository = \"acme/kb\"\ntoken_env = \"T\"\n";
    // A direct project's forge gives the web view's edit links, and needs no token.
    let links = "[projects.forge]\nkind = \"gitlab\"\nrepository = \"acme/kb\"\n";
    let cfg = Config::parse(&format!("{base}{links}"), "f").expect("links only");
    let f = cfg.projects[0].forge.as_ref().expect("forge");
    assert_eq!(
        f.edit_url("main", "ops/a b.md").as_deref(),
        Some("https://gitlab.com/acme/kb/-/edit/main/ops/a%20b.md")
    );
    let e = Config::parse(&format!("{base}writes = \"review\"\n{links}"), "f").unwrap_err();
    assert!(format!("{e}").contains("review mode opens"), "{e}");
    let e = Config::parse(&format!("[[projects]]\nname = \"p\"\n{forge}"), "f").unwrap_err();
    assert!(format!("{e}").contains("needs an upstream"), "{e}");
    let cfg = Config::parse(&format!("{base}writes = \"review\"\n{forge}"), "f").expect("ok");
    let f = cfg.projects[0].forge.as_ref().expect("forge");
    assert_eq!(
        (f.api_base().as_str(), f.label.as_str()),
        ("https://api.github.com", "helix-proposal")
    );
    assert_eq!(
        f.edit_url("main", "git/rebase.md").as_deref(),
        Some("https://github.com/acme/kb/edit/main/git/rebase.md")
    );
    let enterprise = ForgeConfig {
        api: Some("https://git.example.com/api/v3/".into()),
        ..f.clone()
    };
    assert_eq!(
        enterprise.edit_url("trunk", "x.md").as_deref(),
        Some("https://git.example.com/acme/kb/edit/trunk/x.md")
    );
    let by_id = ForgeConfig {
        kind: ForgeKind::Gitlab,
        repository: "1234".into(),
        ..f.clone()
    };
    assert_eq!(by_id.edit_url("main", "x.md"), None);
    let both = forge.replace(
        "token_env = \"T\"",
        "token_env = \"T\"\ntoken_file = \"/t\"",
    );
    let e = Config::parse(&format!("{base}writes = \"review\"\n{both}"), "f").unwrap_err();
    assert!(format!("{e}").contains("exactly one of token_env"), "{e}");
    let e = Config::parse(&format!("{base}show_proposals = true\n"), "f").unwrap_err();
    assert!(
        format!("{e}").contains("show_proposals needs writes"),
        "{e}"
    );
    let shown = format!("{base}writes = \"review\"\nshow_proposals = true\n");
    assert!(Config::parse(&shown, "f").expect("ok").projects[0].show_proposals);
    let e = Config::parse(&format!("{base}writes = \"reviewed\"\n"), "f").unwrap_err();
    assert!(format!("{e}").contains("reviewed"), "{e}");
}

#[test]
fn empty_webhook_secrets_and_option_like_upstreams_are_refused() {
    for secret in ["", "  "] {
        let text = format!("[[projects]]\nname = \"p\"\nwebhook_secret = {secret:?}\n");
        let e = Config::parse(&text, "f.toml").unwrap_err();
        assert!(
            format!("{e:#}").contains("webhook_secret is empty"),
            "{e:#}"
        );
    }
    let e = Config::parse(
        "[[projects]]\nname = \"p\"\nupstream = \"--upload-pack=x\"\n",
        "f.toml",
    )
    .unwrap_err();
    assert!(format!("{e:#}").contains("not a git URL"), "{e:#}");
    assert!(
        Config::parse(
            "[[projects]]\nname = \"p\"\nwebhook_secret = \"s3cret\"\n",
            "f"
        )
        .is_ok()
    );
}

#[test]
fn usage_is_on_by_default_and_its_retention_is_bounded() {
    let cfg = Config::parse("[[projects]]\nname = \"p\"\n", "f").expect("valid");
    assert!(cfg.projects[0].usage);
    assert_eq!(cfg.usage_retention_days, DEFAULT_USAGE_RETENTION_DAYS);
    let off = Config::parse(
        "usage_retention_days = 90\n[[projects]]\nname = \"p\"\nusage = false\n",
        "f",
    )
    .expect("valid");
    assert!(!off.projects[0].usage);
    assert_eq!(off.usage_retention_days, 90);
    for bad in [0, 29, 3651] {
        let e = Config::parse(&format!("usage_retention_days = {bad}\n"), "f").unwrap_err();
        assert!(
            format!("{e}").contains("usage_retention_days = "),
            "{bad}: {e}"
        );
    }
}

#[test]
fn semantic_section_is_optional_and_checked() {
    let cfg = Config::parse("[[projects]]\nname = \"p\"\n", "f").expect("valid");
    assert!(cfg.semantic.is_none());
    let cfg = Config::parse("[semantic]\nmodel = \"/m\"\n", "f").expect("valid");
    let s = cfg.semantic.expect("semantic");
    assert_eq!(s.model, PathBuf::from("/m"));
    assert_eq!((s.max_tokens, s.body_chars), (None, DEFAULT_BODY_CHARS));
    let cfg = Config::parse(
        "[semantic]\nmodel = \"/m\"\nmax_tokens = 128\nbody_chars = 400\n",
        "f",
    )
    .expect("valid");
    let s = cfg.semantic.expect("semantic");
    assert_eq!((s.max_tokens, s.body_chars), (Some(128), 400));
    for (bad, says) in [
        ("model = \"\"\n", "must name"),
        ("model = \"/m\"\nmax_tokens = 1\n", "max_tokens = 1"),
        ("model = \"/m\"\nbody_chars = 0\n", "body_chars = 0"),
        ("model = \"/m\"\nbogus = 1\n", "bogus"),
        ("max_tokens = 5\n", "model"),
    ] {
        let e = Config::parse(&format!("[semantic]\n{bad}"), "f").unwrap_err();
        assert!(format!("{e}").contains(says), "{bad}: {e}");
    }
}
