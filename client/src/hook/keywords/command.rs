//! Whether a shell command runs a build, for the post-build hook.

/// Whether a Bash command runs a build (any segment of a `&&`, `;` or `|` chain).
pub fn is_build_command(command: &str) -> bool {
    command
        .split(['\n', ';', '|', '&', '(', ')'])
        .any(|seg| segment_is_build(seg.split_whitespace().collect::<Vec<_>>().as_slice()))
}

fn segment_is_build(words: &[&str]) -> bool {
    // Skip `VAR=value`, `sudo`, `time`, `env`, `nice`, `command` and `cd`-less prefixes.
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
    let Some(prog) = words.get(i) else {
        return false;
    };
    let prog = prog.rsplit('/').next().unwrap_or(prog);
    let args = &words[i + 1..];
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
