//! What a shell command runs: whether it is a build (the post-build hook), and which tools
//! a failed command ran (the error hook's tool cue).

/// Whether a Bash command runs a build (any segment of a `&&`, `;` or `|` chain).
pub fn is_build_command(command: &str) -> bool {
    segments(command).any(|words| segment_is_build(&words))
}

/// Programs that only start another: the tool is the program after them (`npx prisma`,
/// `bundle exec rails`, `uv run alembic`).
const LAUNCHERS: &[&str] = &[
    "bundle", "bunx", "npx", "pipx", "pnpm", "poetry", "uv", "yarn",
];
/// A launcher's verbs that start the program named next.
const LAUNCH_VERBS: &[&str] = &["dlx", "exec", "run", "x"];

/// Programs that run the user's own code (interpreters, compilers, build and test runners):
/// their failures are mostly about that code, not about the program.
const OWN_CODE_RUNNERS: &[&str] = &[
    "bash", "bun", "c++", "cargo", "cc", "clang", "clang++", "dotnet", "g++", "gcc", "go",
    "gradle", "gradlew", "iex", "java", "jest", "lein", "make", "mix", "mocha", "mvn", "mvnw",
    "node", "perl", "php", "phpunit", "pytest", "python", "python3", "rspec", "ruby", "rustc",
    "sh", "swift", "vitest",
];

/// Words of a command that make it a test run: its failures are the user's own tests.
const TEST_WORDS: &[&str] = &["spec", "specs", "test", "tests"];

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

/// The tools a failed command ran (`psql -d shop -f x.sql` → `psql`, `postgres`; `npx prisma
/// generate` → `prisma`), lowercase, with the product each belongs to: knowledge about
/// them is likely about the failure. None for a test run or for a program that runs the
/// user's own code (`pytest …`, `cargo build`, `python manage.py …`), whose failures are
/// about that code.
pub fn command_tools(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for words in segments(command) {
        let Some((mut prog, mut args)) = program(&words) else {
            continue;
        };
        if LAUNCHERS.contains(&prog) {
            // `npx prisma …`, `bundle exec rails …`, `yarn tsc`: the next word that is no
            // option or launch verb.
            let Some(at) = args
                .iter()
                .position(|a| !a.starts_with('-') && !LAUNCH_VERBS.contains(a))
            else {
                continue;
            };
            prog = args[at].rsplit('/').next().unwrap_or(args[at]);
            args = &args[at + 1..];
        }
        let words_of = |w: &str| {
            w.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|part| TEST_WORDS.contains(&part.to_ascii_lowercase().as_str()))
        };
        if words_of(prog) || args.iter().any(|a| words_of(a)) {
            return Vec::new();
        }
        let prog = prog.to_ascii_lowercase();
        if prog.is_empty()
            || OWN_CODE_RUNNERS.contains(&prog.as_str())
            || !prog.starts_with(|c: char| c.is_ascii_alphabetic())
            // A script of the project's (`./scripts/release.sh`, `bin/seed.py`).
            || prog.contains('.')
            || matches!(prog.as_str(), "cd" | "echo" | "cat" | "ls" | "true" | "false")
        {
            continue;
        }
        if let Ok(i) = PRODUCTS.binary_search_by_key(&prog.as_str(), |(p, _)| *p) {
            let product = PRODUCTS[i].1.to_string();
            if !out.contains(&product) {
                out.push(product);
            }
        }
        if !out.contains(&prog) {
            out.push(prog);
        }
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted() {
        assert!(PRODUCTS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(OWN_CODE_RUNNERS.windows(2).all(|w| w[0] < w[1]));
        assert!(LAUNCHERS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_tools_a_failed_command_ran() {
        let tools = |c: &str| command_tools(c);
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
