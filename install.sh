#!/bin/sh
# Installs scafo from this checkout: builds the release binary with cargo,
# installs it with its shell completions and man pages, and installs the
# Celld runtime peers (workerd, esbuild) with npm into <prefix>/lib/scafo.
# Idempotent: running it again upgrades in place.
#
#   ./install.sh [--prefix DIR]     default: /usr/local as root, else ~/.local
set -eu

WORKERD=1.20261117.1
ESBUILD=0.28.2

usage() { echo "usage: ./install.sh [--prefix DIR]" >&2; exit 2; }

if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || usage; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    -h|--help) usage ;;
    *) echo "install.sh: unknown argument $1" >&2; usage ;;
  esac
done
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

if ! command -v cargo >/dev/null 2>&1; then
  echo "install.sh: cargo not found; install Rust with rustup (https://rustup.rs), then run ./install.sh again" >&2
  exit 1
fi

echo "install.sh: building scafo (release)…" >&2
cargo build --release --locked

echo "install.sh: installing into $prefix" >&2
install -d "$prefix/bin" "$prefix/share/man/man1" \
  "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d"
install -m 0755 target/release/scafo "$prefix/bin/scafo"
install -m 0644 completions/scafo.bash "$prefix/share/bash-completion/completions/scafo"
install -m 0644 completions/_scafo "$prefix/share/zsh/site-functions/_scafo"
install -m 0644 completions/scafo.fish "$prefix/share/fish/vendor_completions.d/scafo.fish"
for page in man/*.1; do install -m 0644 "$page" "$prefix/share/man/man1/"; done

lib="$prefix/lib/scafo"
if command -v npm >/dev/null 2>&1; then
  echo "install.sh: installing workerd@$WORKERD and esbuild@$ESBUILD into $lib" >&2
  install -d "$lib"
  [ -f "$lib/package.json" ] || echo '{"private":true}' > "$lib/package.json"
  npm install --prefix "$lib" --no-audit --no-fund --silent "workerd@$WORKERD" "esbuild@$ESBUILD"
else
  echo "install.sh: warning: npm not found, so workerd and esbuild were not installed into $lib;" >&2
  echo "install.sh: a node can start, but cannot run applications until they are (apt-get install npm, then run ./install.sh again)" >&2
fi

case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install.sh: note: $prefix/bin is not on your PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" >&2 ;;
esac
echo "install.sh: installed $("$prefix/bin/scafo" --version)" >&2
