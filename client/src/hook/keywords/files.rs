//! What a file path says for the ambient hook: its searchable name and stem, the words
//! that name what the file is, the tool a user-level file belongs to, a pattern's words.

use super::terms::{sorted_contains, useful};

/// File stems too generic to say what a file is about (every project has one): the
/// parent directory name is used for the stem, and the name is not searched.
const GENERIC_STEMS: &[&str] = &[
    "__init__",
    "build",
    "cargo",
    "changelog",
    "config",
    "contributing",
    "default",
    "index",
    "init",
    "lib",
    "license",
    "main",
    "makefile",
    "mod",
    "package",
    "readme",
    "setup",
    "src",
    "test",
    "tests",
    "types",
    "util",
    "utils",
];

/// The searchable stem of a path: the file stem, or the parent directory's name when the
/// stem is generic (`src/hook/mod.rs` → `hook`). `None` when neither says anything.
pub fn path_stem(path: &str) -> Option<String> {
    let path = path.trim_end_matches('/');
    let mut comps = path
        .rsplit(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != "." && *c != "..");
    let file = comps.next()?;
    let stem = match file.rfind('.') {
        Some(0) | None => file,
        Some(dot) => &file[..dot],
    };
    let stem = stem.trim_start_matches('.');
    let generic = |s: &str| s.len() < 3 || sorted_contains(GENERIC_STEMS, &s.to_ascii_lowercase());
    if !generic(stem) {
        return Some(stem.to_string());
    }
    comps.find(|c| !generic(c)).map(str::to_string)
}

/// A file's name as the ambient hook searches it (whole, `vercel.json`, `.psqlrc`): `None`
/// when its stem is generic (`mod.rs`, `Cargo.toml`, `README.md`) or too short to mean
/// anything.
pub fn file_name_term(name: &str) -> Option<String> {
    let name = name.trim();
    let bare = name.trim_start_matches('.');
    let stem = bare.split('.').next().unwrap_or(bare);
    let generic = stem.chars().count() < 3
        || sorted_contains(GENERIC_STEMS, &stem.to_ascii_lowercase())
        || name.chars().count() > 128;
    (!generic).then(|| name.to_string())
}

/// The words that say what a file is, lowercase, for matching entry titles and topics:
/// the name's alphanumeric words of 3 or more characters, without the extension and without
/// generic words (`.tmux.conf` → `tmux`; `webpack.config.js` → `webpack`; `.ruby-version`
/// → `ruby`, `version`; `mod.rs` → none). A dot-file `.<tool>rc` is its tool's run-commands
/// file, so it also gives the tool (`.envrc` → `envrc`, `env`; `.psqlrc` → `psql`).
pub fn name_words(name: &str) -> Vec<String> {
    let mut out = plain_name_words(name);
    out.retain(|w| !w.chars().all(|c| c.is_ascii_digit()) && !sorted_contains(GENERIC_STEMS, w));
    let tool = name
        .trim()
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix("rc"))
        .filter(|t| t.len() >= 2 && t.chars().all(|c| c.is_ascii_alphanumeric()));
    if let Some(tool) = tool {
        let tool = tool.to_ascii_lowercase();
        if !out.contains(&tool) {
            out.push(tool);
        }
    }
    out
}

/// Extensions of configuration files: a tool's file, which the user edits but does not write
/// the program of. Sorted.
const CONFIG_EXTENSIONS: &[&str] = &[
    "cfg",
    "conf",
    "config",
    "ini",
    "json",
    "properties",
    "toml",
    "yaml",
    "yml",
];

/// Whether a file's name is a configuration file's: a dot-file (`.gitconfig`, `.rspec`), a
/// name without extension (`Brewfile`, `sudoers`), or a configuration extension
/// (`honeybadger.yml`, `kitty.conf`). Source files (`dashboard.vue`, `jwt.go`) are the
/// project's own code, named after its own concepts.
pub fn is_config_name(name: &str) -> bool {
    let name = name.trim();
    if name.starts_with('.') {
        return true;
    }
    match name.rsplit_once('.') {
        None => true,
        Some((_, ext)) => sorted_contains(CONFIG_EXTENSIONS, &ext.to_ascii_lowercase()),
    }
}

/// The languages a source file's code is written in, as Markdown code fences name them, by
/// extension (sorted). A `.ts` file's subject is often shown in JavaScript, an `.erb`
/// template's in Ruby or HTML.
const CODE_LANGUAGES: &[(&str, &[&str])] = &[
    ("bash", &["bash", "sh", "shell"]),
    ("c", &["c"]),
    ("clj", &["clojure", "clj"]),
    ("cljs", &["clojure", "clojurescript", "cljs"]),
    ("cpp", &["cpp", "c++"]),
    ("cs", &["csharp", "cs", "c#"]),
    ("css", &["css"]),
    ("erb", &["erb", "ruby", "html"]),
    ("ex", &["elixir", "ex"]),
    ("exs", &["elixir", "exs"]),
    ("go", &["go", "golang"]),
    ("groq", &["groq"]),
    ("html", &["html"]),
    ("java", &["java"]),
    ("js", &["javascript", "js"]),
    ("jsx", &["jsx", "javascript", "js"]),
    ("kt", &["kotlin", "kt"]),
    ("lua", &["lua"]),
    ("mjs", &["javascript", "js"]),
    ("php", &["php"]),
    ("prisma", &["prisma"]),
    ("py", &["python", "py"]),
    ("rake", &["ruby", "rb"]),
    ("rb", &["ruby", "rb"]),
    ("rs", &["rust", "rs"]),
    ("scss", &["scss", "css"]),
    ("sh", &["bash", "sh", "shell", "zsh"]),
    ("sql", &["sql", "postgresql", "plpgsql", "mysql"]),
    ("swift", &["swift"]),
    ("ts", &["typescript", "ts", "javascript", "js"]),
    (
        "tsx",
        &["tsx", "typescript", "ts", "jsx", "javascript", "js"],
    ),
    ("vim", &["vim", "vimscript", "viml"]),
    ("vue", &["vue", "html", "javascript", "js"]),
    ("zsh", &["zsh", "bash", "sh", "shell"]),
];

/// The code-fence languages of a source file's extension (`flipper.rb` → `ruby`, `rb`);
/// empty for configuration files and unknown extensions.
pub fn code_languages(name: &str) -> &'static [&'static str] {
    let Some((stem, ext)) = name.trim().rsplit_once('.') else {
        return &[];
    };
    if stem.is_empty() {
        return &[];
    }
    let ext = ext.to_ascii_lowercase();
    CODE_LANGUAGES
        .binary_search_by(|(e, _)| (*e).cmp(ext.as_str()))
        .map_or(&[], |i| CODE_LANGUAGES[i].1)
}

/// The tools a user-level configuration file belongs to, lowercase, from the directories
/// of its path: a dot-directory (`~/.ssh/config` → `ssh`), the directory under `.config`
/// (`~/.config/git/ignore` → `git`), the directory in `/etc` (`/etc/nginx/nginx.conf` →
/// `nginx`). `home` is stripped first, so the user's own directory names do not count.
pub fn tool_words(path: &std::path::Path, home: Option<&std::path::Path>) -> Vec<String> {
    let rel = home.and_then(|h| path.strip_prefix(h).ok()).unwrap_or(path);
    let dirs: Vec<&str> = match rel.parent() {
        Some(parent) => parent
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => s.to_str(),
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        let w = w.to_lowercase();
        if w.chars().count() >= 2
            && w.chars().all(|c| c.is_alphanumeric() || c == '-')
            && !out.contains(&w)
        {
            out.push(w);
        }
    };
    let etc = rel.is_absolute() && dirs.first() == Some(&"etc");
    for (i, d) in dirs.iter().enumerate() {
        match d.strip_prefix('.') {
            Some("config") => {
                if let Some(tool) = dirs.get(i + 1) {
                    push(tool);
                }
            }
            Some(tool) if !tool.is_empty() => push(tool),
            _ if etc && i == 1 => push(d),
            _ => {}
        }
    }
    out
}

/// Product names for the program names that paths use: `~/.config/nvim` belongs to
/// Neovim, `~/.config/Code` to VS Code, `~/.config/gh` to GitHub's CLI. Sorted.
const TOOL_PRODUCTS: &[(&str, &str)] = &[("code", "vscode"), ("gh", "github"), ("nvim", "neovim")];

/// `tools` (from [`tool_words`]) with the product each names, for matching the titles and
/// topics of the entries about them.
pub fn tool_names(tools: &[String]) -> Vec<String> {
    let mut out = tools.to_vec();
    for t in tools {
        if let Ok(i) = TOOL_PRODUCTS.binary_search_by_key(&t.as_str(), |(program, _)| *program) {
            let product = TOOL_PRODUCTS[i].1.to_string();
            if !out.contains(&product) {
                out.push(product);
            }
        }
    }
    out
}

/// The words of a file's name without its extension (`init.lua` → `init`, `known_hosts`
/// → `known`, `hosts`), lowercase, 3 characters or more: what a tool file is called,
/// generic words included ([`name_words`] leaves them out).
pub fn plain_name_words(name: &str) -> Vec<String> {
    let bare = name.trim().trim_start_matches('.');
    let stem = match bare.rfind('.') {
        Some(dot) if dot > 0 => &bare[..dot],
        _ => bare,
    };
    words_of(stem)
}

/// The lowercase words of 3 characters or more of `text`, split at anything not
/// alphanumeric, each once.
fn words_of(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 3 && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// Names of a path whose words [`path_words`] reads: the file's and its two nearest folders'.
const PATH_WORD_NAMES: usize = 3;

/// The words of a path's file name and its two nearest folders, the file's first
/// (`db/migrate/20240312_add_on_delete_cascade_to_orders.rb` → `add`, `delete`, `cascade`,
/// `orders`, `migrate`: words of 3 characters or more): what the work on that file is about,
/// for a search when nothing names the file. Lowercase, without numbers and stop words.
pub fn path_words(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let names = path
        .rsplit(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != "." && *c != ".." && *c != "~")
        .take(PATH_WORD_NAMES);
    for (i, name) in names.enumerate() {
        // A file's last dot starts its extension; a folder's dots are part of its name.
        let words = if i == 0 {
            plain_name_words(name)
        } else {
            words_of(name)
        };
        for w in words {
            if !w.bytes().all(|b| b.is_ascii_digit()) && useful(&w) && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// Literal words of a glob or regex pattern worth searching (`**/*config*.rs` → `config`).
pub fn pattern_words(pattern: &str) -> Vec<String> {
    const EXT: &[&str] = &[
        "rs", "ts", "tsx", "js", "jsx", "py", "go", "md", "json", "toml", "yaml", "yml", "txt",
    ];
    let mut out: Vec<String> = Vec::new();
    for w in pattern.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        let lower = w.to_lowercase();
        if w.chars().count() >= 3
            && !EXT.contains(&lower.as_str())
            && useful(&lower)
            && !out.contains(&lower)
        {
            out.push(lower);
        }
    }
    out.truncate(4);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_add_the_product_a_program_name_stands_for() {
        let names = |t: &[&str]| tool_names(&t.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(names(&["nvim"]), ["nvim", "neovim"]);
        assert_eq!(
            path_words("db/migrate/20240312101500_add_on_delete_cascade_to_orders.rb"),
            ["add", "delete", "cascade", "orders", "migrate"]
        );
        assert_eq!(
            path_words("/home/ann/app/src/inngest/functions/record-purchase.ts"),
            ["record", "purchase", "functions", "inngest"]
        );
        assert!(path_words("a.rs").is_empty());
        assert_eq!(names(&["code", "user"]), ["code", "user", "vscode"]);
        assert_eq!(names(&["ssh"]), ["ssh"]);
        assert!(TOOL_PRODUCTS.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
    }

    #[test]
    fn a_source_file_is_shown_in_the_languages_of_its_extension() {
        assert!(CODE_LANGUAGES.windows(2).all(|w| w[0].0 < w[1].0), "sorted");
        assert_eq!(code_languages("flipper.rb"), ["ruby", "rb"]);
        assert!(code_languages("middleware.ts").contains(&"javascript"));
        assert!(code_languages("Portal.JSX").contains(&"jsx"));
        assert!(code_languages("vercel.json").is_empty());
        assert!(code_languages(".rb").is_empty());
        assert!(code_languages("Makefile").is_empty());
    }

    #[test]
    fn tool_words_come_from_dot_directories_config_and_etc() {
        use std::path::Path;
        let home = Some(Path::new("/home/ann"));
        let tools = |p: &str| tool_words(Path::new(p), home);
        assert_eq!(tools("/home/ann/.ssh/config"), ["ssh"]);
        assert_eq!(tools("/home/ann/.config/git/ignore"), ["git"]);
        assert_eq!(tools("/home/ann/.config/nvim/lua/init.lua"), ["nvim"]);
        assert_eq!(tools("/etc/nginx/sites/app.conf"), ["nginx"]);
        assert!(tools("/etc/hosts").is_empty());
        assert!(tools("/home/ann/notes.txt").is_empty());
        // The user's own dot-named home directory is not a tool.
        assert!(tool_words(Path::new("/home/.ann/x"), Some(Path::new("/home/.ann"))).is_empty());
        assert_eq!(plain_name_words("known_hosts"), ["known", "hosts"]);
        assert_eq!(plain_name_words("init.lua"), ["init"]);
        assert_eq!(plain_name_words(".envrc"), ["envrc"]);
    }

    #[test]
    fn run_commands_files_name_their_tool_and_configuration_files_are_told_from_source() {
        assert_eq!(name_words(".envrc"), ["envrc", "env"]);
        assert_eq!(name_words(".psqlrc"), ["psqlrc", "psql"]);
        assert_eq!(name_words("npmrc"), ["npmrc"]);
        assert!(name_words(".rc").is_empty());
        for config in [
            ".gitconfig",
            "Brewfile",
            "honeybadger.yml",
            "kitty.conf",
            "a.TOML",
        ] {
            assert!(is_config_name(config), "{config}");
        }
        for source in ["Dashboard.vue", "jwt.go", "service.rb", "notes.md"] {
            assert!(!is_config_name(source), "{source}");
        }
        assert!(CONFIG_EXTENSIONS.windows(2).all(|w| w[0] < w[1]), "sorted");
    }

    #[test]
    fn file_names() {
        assert_eq!(
            file_name_term("vercel.json").as_deref(),
            Some("vercel.json")
        );
        assert_eq!(file_name_term(".psqlrc").as_deref(), Some(".psqlrc"));
        assert_eq!(name_words(".tmux.conf"), ["tmux"]);
        assert_eq!(name_words("webpack.config.js"), ["webpack"]);
        assert_eq!(name_words(".ruby-version"), ["ruby", "version"]);
        assert_eq!(
            name_words("sessions_controller.rb"),
            ["sessions", "controller"]
        );
        assert_eq!(name_words("Brewfile"), ["brewfile"]);
        assert!(name_words("mod.rs").is_empty());
        for generic in [
            "mod.rs",
            "Cargo.toml",
            "README.md",
            "CHANGELOG.md",
            "ci.yml",
            "a.rs",
        ] {
            assert_eq!(file_name_term(generic), None, "{generic}");
        }
    }

    #[test]
    fn stems() {
        assert_eq!(
            path_stem("/r/src/rebase_onto.rs").as_deref(),
            Some("rebase_onto")
        );
        assert_eq!(path_stem("client/src/hook/mod.rs").as_deref(), Some("hook"));
        assert_eq!(path_stem("src/lib.rs"), None);
        assert_eq!(path_stem(".gitignore").as_deref(), Some("gitignore"));
    }
}
