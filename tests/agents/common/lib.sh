# Shell helpers of the agents' run.sh / e2e.sh / <agent>-bin.sh; source it (bash, set -eu):
#     . "$here/../common/lib.sh"
# Messages name the script that sourced it.

agents_common="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
agents_repo="$(cd "$agents_common/../../.." && pwd)"
agents_me="${0##*/}"

die() {
    echo "$agents_me: $*" >&2
    exit 2
}

# need CMD...: exits 2 unless every CMD is on PATH.
need() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null || die "$c is needed"
    done
}

# pin VAR NAME VERSION: where the pinned client goes: sets version to $<VAR>_VERSION or
# VERSION, and prefix (its npm prefix) to $<VAR>_DIR or
# ${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/NAME-<version>.
pin() {
    local v="${1}_VERSION" d="${1}_DIR"
    version="${!v:-$3}"
    prefix="${!d:-${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/$2-$version}"
}

# npm_client FIND PREFIX PACKAGE VERSION: prints the client binary the function FIND prints,
# installing PACKAGE@VERSION from npm into PREFIX first when FIND finds none (FIND prints the
# path of a runnable binary of VERSION under PREFIX, or fails).
npm_client() {
    local find="$1" prefix="$2" package="$3" version="$4" bin
    if bin="$("$find")"; then
        echo "$bin"
        return 0
    fi
    command -v npm >/dev/null || die "npm is needed to install $package"
    echo "$agents_me: installing $package@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        "$package@$version" >&2
    bin="$("$find")" || die "no runnable $package $version under $prefix"
    echo "$bin"
}

# find_helix: sets helix to $HELIX_BIN or, by default,
# ${CARGO_TARGET_DIR:-<repo>/target}/release/helix, built (cargo build --release --locked
# -p helix-client-net) when it or helix-net beside it is missing; sets helix_real to its
# resolved path. Exits 2 unless both are there (helix runs helix-net for sync and mcp).
find_helix() {
    helix="${HELIX_BIN:-${CARGO_TARGET_DIR:-$agents_repo/target}/release/helix}"
    if [ -z "${HELIX_BIN:-}" ] && { [ ! -x "$helix" ] || [ ! -x "$(dirname "$helix")/helix-net" ]; }; then
        echo "$agents_me: building helix (cargo build --release --locked -p helix-client-net)" >&2
        (cd "$agents_repo" && cargo build --release --locked -p helix-client-net >&2)
    fi
    [ -x "$helix" ] || die "no helix binary at $helix (set HELIX_BIN)"
    helix_real="$(readlink -f "$helix")"
    [ -x "$(dirname "$helix_real")/helix-net" ] ||
        die "no helix-net beside $helix_real (helix runs it for sync and mcp)"
}

# run_e2e ARGS...: the end-to-end check of helix: find_helix, then run.sh beside the calling
# script runs e2e.py (PROBE=e2e.py) with HELIX_BIN set to the resolved binary.
run_e2e() {
    find_helix
    echo "helix: $helix_real ($("$helix_real" --version))"
    HELIX_BIN="$helix_real" PROBE=e2e.py exec "$(cd "$(dirname "$0")" && pwd)/run.sh" "$@"
}
