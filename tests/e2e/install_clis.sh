#!/usr/bin/env bash
# Install pinned versions of the four harness CLIs into a cache directory outside the repository.
# Reused when the cache already holds exactly these versions. Prints the bin directory last.
set -euo pipefail

CACHE="${ECC_E2E_CACHE:-$HOME/.cache/ecc-e2e}"
PKGS=(
  "@anthropic-ai/claude-code@2.1.197"
  "@openai/codex@0.171.0"
  "@google/gemini-cli@0.61.0"
  "opencode-ai@1.18.33"
)
STAMP="$CACHE/installed.txt"
WANT="$(printf '%s\n' "${PKGS[@]}")"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "ecc-e2e: CLIs already installed in $CACHE" >&2
else
  mkdir -p "$CACHE"
  rm -f "$STAMP"
  echo "ecc-e2e: installing ${PKGS[*]} into $CACHE" >&2
  # --prefix keeps everything in the cache; no global install, no lifecycle surprises elsewhere.
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error "${PKGS[@]}" >&2
  printf '%s\n' "${PKGS[@]}" >"$STAMP"
fi
echo "$CACHE/node_modules/.bin"
