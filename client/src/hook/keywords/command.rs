//! What a shell command runs: whether it is a build (the post-build hook), which tools a
//! failed command ran and which of its words to search with its output (the error hook).

use super::terms::useful;

/// Whether a Bash command runs a build (any segment of a `&&`, `;` or `|` chain).
pub fn is_build_command(command: &str) -> bool {
    segments(command).any(|words| segment_is_build(&words))
}

/// Programs that start another, with the verbs that do (`npx prisma`, `bundle exec rails`,
/// `uv run alembic`; `""`: any first word). Sorted.
const LAUNCHERS: &[(&str, &[&str])] = &[
    ("bun", &["x"]),
    ("bundle", &["exec"]),
    ("bunx", &[""]),
    ("npm", &["exec"]),
    ("npx", &[""]),
    ("pipx", &["run"]),
    ("pnpm", &["dlx", "exec"]),
    ("poetry", &["run"]),
    ("uv", &["run"]),
    ("uvx", &[""]),
    ("yarn", &["dlx", "exec"]),
];

/// Package managers, which otherwise run the project's own scripts (`npm run dev`, `yarn
/// start`)...
const PACKAGE_MANAGERS: &[&str] = &["bun", "npm", "pnpm", "yarn"];
/// ...except for these verbs of their own. Sorted.
const PACKAGE_VERBS: &[&str] = &[
    "add",
    "audit",
    "cache",
    "ci",
    "config",
    "create",
    "dedupe",
    "global",
    "i",
    "info",
    "init",
    "install",
    "link",
    "login",
    "ls",
    "outdated",
    "pack",
    "publish",
    "rebuild",
    "remove",
    "rm",
    "uninstall",
    "up",
    "update",
    "upgrade",
    "view",
    "why",
];

/// Programs that run or check the user's own code (interpreters, compilers, build and test
/// runners, linters): their failures are mostly about that code, not about the program.
/// Sorted.
const OWN_CODE_RUNNERS: &[&str] = &[
    "bash",
    "biome",
    "c++",
    "cargo",
    "cc",
    "clang",
    "clang++",
    "credo",
    "dotnet",
    "eslint",
    "flake8",
    "g++",
    "gcc",
    "go",
    "golangci-lint",
    "gradle",
    "gradlew",
    "iex",
    "java",
    "jest",
    "lein",
    "make",
    "mix",
    "mocha",
    "mvn",
    "mvnw",
    "node",
    "perl",
    "php",
    "phpunit",
    "prettier",
    "pylint",
    "pytest",
    "python",
    "python3",
    "rspec",
    "rubocop",
    "ruby",
    "ruff",
    "rustc",
    "sh",
    "shellcheck",
    "standardrb",
    "stylelint",
    "swift",
    "vitest",
];

/// Words of a command that make it a test run: its failures are the user's own tests.
const TEST_WORDS: &[&str] = &["spec", "specs", "test", "tests"];

/// Programs that say nothing about a failure.
const PLAIN_PROGRAMS: &[&str] = &["cat", "cd", "echo", "false", "ls", "true"];

/// The product a program belongs to, as knowledge names its topics (`psql`: PostgreSQL's
/// client, under `postgres`). Sorted by program.
const PRODUCTS: &[(&str, &str)] = &[
    ("code", "vscode"),
    ("createdb", "postgres"),
    ("docker-compose", "docker"),
    ("dropdb", "postgres"),
    ("gh", "github"),
    ("mongosh", "mongodb"),
    ("mysqldump", "mysql"),
    ("nvim", "neovim"),
    ("pg_ctl", "postgres"),
    ("pg_dump", "postgres"),
    ("pg_dumpall", "postgres"),
    ("pg_restore", "postgres"),
    ("pg_upgrade", "postgres"),
    ("psql", "postgres"),
    ("sqlite3", "sqlite"),
    ("tsc", "typescript"),
];

/// The program a segment's words run and its arguments, past `VAR=value`, `sudo`, `time`,
/// `env`, `nice`, `command`, `exec` and `nohup`; the program by its file name.
fn program<'a, 'w>(words: &'a [&'w str]) -> Option<(&'w str, &'a [&'w str])> {
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        let assignment = w.contains('=') && !w.starts_with('=') && !w.starts_with('-');
        if assignment
            || matches!(
                w,
                "sudo" | "time" | "env" | "nice" | "command" | "exec" | "nohup"
            )
        {
            i += 1;
        } else {
            break;
        }
    }
    let prog = words.get(i)?;
    Some((prog.rsplit('/').next().unwrap_or(prog), &words[i + 1..]))
}

fn segments(command: &str) -> impl Iterator<Item = Vec<&str>> {
    command
        .split(['\n', ';', '|', '&', '(', ')'])
        .map(|seg| seg.split_whitespace().collect::<Vec<_>>())
}

fn segment_is_build(words: &[&str]) -> bool {
    let Some((prog, args)) = program(words) else {
        return false;
    };
    let sub = |names: &[&str]| {
        args.iter()
            .find(|a| !a.starts_with('-') && !a.starts_with('+'))
            .is_some_and(|a| names.contains(a))
    };
    match prog {
        "make" | "gmake" | "cmake" | "ninja" | "gcc" | "g++" | "cc" | "c++" | "clang"
        | "clang++" | "rustc" | "xcodebuild" | "gradle" | "gradlew" | "mvn" | "mvnw" | "bazel"
        | "tsc" | "javac" => true,
        "cargo" => sub(&[
            "build", "b", "check", "c", "test", "t", "run", "r", "clippy", "nextest", "bench",
            "install", "doc",
        ]),
        "go" => sub(&["build", "test", "install", "vet", "run"]),
        "swift" => sub(&["build", "test"]),
        "dotnet" => sub(&["build", "test", "publish"]),
        "npm" | "pnpm" | "yarn" | "bun" => {
            let rest: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            let target = match rest.as_slice() {
                ["run" | "run-script", t, ..] => Some(*t),
                [t, ..] if prog != "npm" => Some(*t),
                _ => None,
            };
            target.is_some_and(|t| t == "build" || t.starts_with("build:") || t == "compile")
        }
        _ => false,
    }
}

/// What one segment of a command runs.
enum Runs<'w> {
    /// A tool (its lowercase file name) and its arguments.
    Tool(String, &'w [&'w str]),
    /// The user's own code, or nothing worth reading.
    Other,
    /// A test run: the whole command is about the user's tests.
    Tests,
}

fn has_test_word(w: &str) -> bool {
    w.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|part| TEST_WORDS.contains(&part.to_ascii_lowercase().as_str()))
}

fn runs<'w>(words: &'w [&'w str]) -> Runs<'w> {
    let Some((mut prog, mut args)) = program(words) else {
        return Runs::Other;
    };
    if let Ok(i) = LAUNCHERS.binary_search_by_key(&prog, |(l, _)| *l) {
        let verbs = LAUNCHERS[i].1;
        let first = args.iter().position(|a| !a.starts_with('-'));
        let launched = match first {
            Some(at) if verbs.contains(&"") => Some(at),
            Some(at) if verbs.contains(&args[at]) => args[at + 1..]
                .iter()
                .position(|a| !a.starts_with('-'))
                .map(|p| at + 1 + p),
            _ => None,
        };
        match launched {
            Some(at) => {
                prog = args[at].rsplit('/').next().unwrap_or(args[at]);
                args = &args[at + 1..];
            }
            // `npx` alone starts nothing; `bundle install` is bundler's own work.
            None if verbs.contains(&"") => return Runs::Other,
            None => {}
        }
    }
    if has_test_word(prog) || args.iter().any(|a| has_test_word(a)) {
        return Runs::Tests;
    }
    let lower = prog.to_ascii_lowercase();
    let own_script = PACKAGE_MANAGERS.contains(&lower.as_str())
        && args
            .iter()
            .find(|a| !a.starts_with('-'))
            .is_none_or(|verb| PACKAGE_VERBS.binary_search(verb).is_err());
    if own_script
        || OWN_CODE_RUNNERS.binary_search(&lower.as_str()).is_ok()
        || PLAIN_PROGRAMS.contains(&lower.as_str())
        || !lower.starts_with(|c: char| c.is_ascii_alphabetic())
        // A script of the project's (`./scripts/release.sh`, `bin/seed.py`).
        || lower.contains('.')
    {
        return Runs::Other;
    }
    Runs::Tool(lower, args)
}

/// Calls `f` with each tool a failed command ran and its arguments; nothing for a test run.
fn each_tool(command: &str, mut f: impl FnMut(&str, &[&str])) {
    let segs: Vec<Vec<&str>> = segments(command).collect();
    let mut tools = Vec::new();
    for words in &segs {
        match runs(words) {
            Runs::Tool(tool, args) => tools.push((tool, args)),
            Runs::Other => {}
            Runs::Tests => return,
        }
    }
    for (tool, args) in tools {
        f(&tool, args);
    }
}

/// What a failed command says to the error hook, read in one pass.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FailedCommand {
    /// The tools it ran (`psql -d shop -f x.sql` → `postgres`, `psql`; `npx prisma
    /// generate` → `prisma`), lowercase, each after the product it belongs to: knowledge
    /// about them is likely about the failure. None for a test run or for programs that run
    /// or check the user's own code (`pytest …`, `cargo build`, `python manage.py …`, `npm
    /// run dev`, `eslint src`), whose failures are about that code.
    pub tools: Vec<String>,
    /// The words of those tools worth searching with the output: each tool's name, its
    /// subcommands and the names of its options (`git rebase --onto main topic` → `git`,
    /// `rebase`, `onto`; `pg_dump -t users --schema-only` → `dump`, `schema`). Not what
    /// follows the first option (option values: the user's own names), paths, file names,
    /// quoted text or assignments.
    pub words: Vec<String>,
}

impl FailedCommand {
    pub fn read(command: &str) -> FailedCommand {
        let mut tools: Vec<String> = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut push = |w: &str| {
            for part in w.split([':', '-', '_']) {
                let part = part.to_ascii_lowercase();
                if part.len() >= 3
                    && part.bytes().all(|b| b.is_ascii_alphabetic())
                    && useful(&part)
                    && !words.contains(&part)
                {
                    words.push(part);
                }
            }
        };
        each_tool(command, |tool, args| {
            if let Ok(i) = PRODUCTS.binary_search_by_key(&tool, |(p, _)| *p) {
                let product = PRODUCTS[i].1.to_string();
                if !tools.contains(&product) {
                    tools.push(product);
                }
            }
            if !tools.iter().any(|t| t == tool) {
                tools.push(tool.to_string());
            }
            push(tool);
            let mut options = false;
            let mut quoted = false;
            for raw in args {
                let opens = raw.starts_with(['\'', '"']);
                let closes = raw.len() > 1 && raw.ends_with(['\'', '"']);
                if quoted || opens {
                    quoted = !closes;
                    continue;
                }
                if let Some(option) = raw.strip_prefix('-') {
                    options = true;
                    push(
                        option
                            .trim_start_matches('-')
                            .split('=')
                            .next()
                            .unwrap_or_default(),
                    );
                } else if !options && !raw.contains(['=', '.', '/']) {
                    push(raw);
                }
            }
        });
        FailedCommand { tools, words }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted() {
        assert!(PRODUCTS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(OWN_CODE_RUNNERS.windows(2).all(|w| w[0] < w[1]));
        assert!(LAUNCHERS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(PACKAGE_VERBS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_words_of_a_failed_command() {
        let words = |c: &str| FailedCommand::read(c).words;
        assert_eq!(
            words("git rebase --onto main topic"),
            ["git", "rebase", "onto"]
        );
        assert_eq!(
            words("pg_dump -t users,users_roles --schema-only db > out.sql"),
            ["dump", "schema"]
        );
        assert_eq!(
            words("psql -d shop_dev -c \"select * from orders\""),
            ["psql"]
        );
        assert_eq!(
            words("bin/rails generate authentication"),
            ["rails", "generate", "authentication"]
        );
        assert_eq!(
            words("git absorb --and-rebase"),
            ["git", "absorb", "rebase"]
        );
        assert!(words("bundle exec rspec spec/models/order_spec.rb").is_empty());
        assert!(words("python manage.py migrate").is_empty());
    }

    #[test]
    fn the_tools_a_failed_command_ran() {
        let tools = |c: &str| FailedCommand::read(c).tools;
        assert_eq!(tools("psql -d shop_dev -f db/x.sql"), ["postgres", "psql"]);
        assert_eq!(tools("cd apps/web && npx prisma generate"), ["prisma"]);
        assert_eq!(tools("bundle exec rails db:migrate"), ["rails"]);
        assert_eq!(tools("bin/rails generate authentication"), ["rails"]);
        assert_eq!(
            tools("RAILS_ENV=production bin/rails runner 'x'"),
            ["rails"]
        );
        assert_eq!(tools("npx tsc --noEmit"), ["typescript", "tsc"]);
        assert_eq!(tools("git push origin main"), ["git"]);
        assert_eq!(tools("sudo docker compose up"), ["docker"]);
        assert_eq!(tools("git diff | sed -n 1p"), ["git", "sed"]);
        assert_eq!(tools("mise install && bundle install"), ["mise", "bundle"]);
        assert_eq!(tools("yarn dlx create-vite app"), ["create-vite"]);
        assert_eq!(tools("npm install --save-dev vite"), ["npm"]);
        assert_eq!(
            tools("yarn global add vercel && vercel --prod"),
            ["yarn", "vercel"]
        );
        // Test runs and the user's own programs name no tool.
        for c in [
            "pytest tests/test_cart.py -q",
            "bundle exec rspec spec/models/order_spec.rb",
            "mix test test/slot_test.exs",
            "yarn test --watchAll=false",
            "go test ./...",
            "cargo build",
            "python manage.py migrate",
            "bundle exec ruby bin/report.rb",
            "bin/rails test test/models/user_test.rb",
            "./scripts/release.sh",
            "npx",
            "npm run dev",
            "yarn start",
            "pnpm build",
            "npx eslint src",
            "cd web && rubocop -a",
        ] {
            assert!(tools(c).is_empty(), "{c}: {:?}", tools(c));
        }
    }

    #[test]
    fn build_commands() {
        for c in [
            "cargo build --release",
            "RUST_LOG=1 cargo test -p x",
            "cd a && make -j4",
            "npm run build",
            "pnpm build",
            "yarn run build:prod",
            "go build ./...",
            "gcc -o a a.c",
            "swift build",
            "./gradlew assemble",
            "mvn package",
            "dotnet build",
            "xcodebuild -scheme X",
            "cmake --build .",
        ] {
            assert!(is_build_command(c), "{c}");
        }
        for c in [
            "ls -la",
            "git status",
            "npm install",
            "cargo fmt",
            "echo make",
            "grep cargo x",
            "go fmt",
        ] {
            assert!(!is_build_command(c), "{c}");
        }
    }
}
