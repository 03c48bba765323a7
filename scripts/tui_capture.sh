#!/usr/bin/env bash
# A person's view of the dashboard: start a few real shell sessions in a throwaway home, open
# `ecc` (bare, which opens the dashboard in a terminal) inside tmux, press keys, and print each
# captured pane. Everything it starts is stopped on exit.
#
#   scripts/tui_capture.sh [OUTPUT_FILE]      (PYTHON=... picks the interpreter; default .venv)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
OUT=${1:-/dev/stdout}
COLS=${COLS:-132}
ROWS=${ROWS:-34}
command -v tmux >/dev/null || { echo "Error: tmux is required (apt-get install -y tmux)" >&2; exit 1; }

WORK=$(mktemp -d)
SOCK="ecc-capture-$$"
ecc() { "$PY" -m ecc "$@"; }

cleanup() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  for id in $(ecc sessions --json 2>/dev/null | "$PY" -c \
      'import json,sys; print(" ".join(s["id"] for s in json.load(sys.stdin)))'); do
    ecc stop --grace 0 "$id" >/dev/null 2>&1 || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

export HOME="$WORK/home"
export ECC_CONFIG_DIR="$HOME/.config/ecc" ECC_STATE_DIR="$HOME/.local/state/ecc"
export ECC_DATA_DIR="$HOME/.local/share/ecc" ECC_CACHE_DIR="$HOME/.cache/ecc"
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@ecc.invalid
export GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@ecc.invalid GIT_CONFIG_NOSYSTEM=1
# COLUMNS and LINES of the caller (pytest-xdist workers set them) would size the app, not the pane
unset ECC_CONFIG ECC_PLUGINS ECC_SESSION_ID COLUMNS LINES
mkdir -p "$HOME" "$WORK/demo"
cd "$WORK/demo"
git init -q -b main && echo "# demo" > README.md && git add README.md && git commit -qm initial

ecc start --harness shell --no-worktree --name build \
  'for i in $(seq 1 40); do echo "step $i of 40"; done' >/dev/null
ecc start --harness shell --worktree --name notes \
  'printf "# Notes\nship it\n" > NOTES.md && git add NOTES.md && git commit -qm notes' >/dev/null
ecc start --harness shell --no-worktree --name hostile \
  'echo "[bold red]not markup[/]"; printf "\033]0;retitled\007\033[31mno colour\n"; exit 3' >/dev/null
ecc start --harness shell --no-worktree --name watcher 'echo watching; sleep 300' >/dev/null

# wait until the three short sessions have finished (only the watcher stays active)
for i in $(seq 1 600); do
  active=$(ecc sessions --json | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))')
  [ "$active" = 1 ] && break
  [ "$i" = 600 ] && { echo "Error: the demo sessions did not finish" >&2; exit 1; }
  sleep 0.1
done

pane() { tmux -L "$SOCK" capture-pane -p -t ecc | sed -e 's/[[:space:]]*$//'; }
expect() {  # wait (bounded) until the pane shows TEXT; fail loudly otherwise
  for _ in $(seq 1 300); do
    pane | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  echo "Error: the dashboard never showed: $1" >&2
  pane >&2
  exit 1
}
keys() { tmux -L "$SOCK" send-keys -t ecc "$@"; }
capture() {  # capture TITLE: print the pane under a heading
  sleep 0.3
  { echo "### $1"; echo; echo '```'; pane; echo '```'; echo; } >>"$OUT"
}

: >"$OUT" 2>/dev/null || true
tmux -L "$SOCK" new-session -d -s ecc -x "$COLS" -y "$ROWS" "'$PY' -m ecc"
expect "1 running / 4 total"
expect "q Quit"
expect "watching"
capture "\`ecc\` (bare, in a terminal, opens the dashboard): the newest session is selected"

keys Down
expect "no colour"
capture "Down: the failed session's output; its escape sequences are gone, its [markup] is text"

keys Down 3
expect "+ship it"
capture "Down, 3: the worktree diff of the completed notes session"

keys m
expect "Mergeable: clean"
capture "m: a merge shows mergeability first and asks"

keys Escape
sleep 0.5
keys Up Up 1
expect "watching"
keys s
expect "Stop session"
capture "Escape, Up, Up, 1, s: stopping the running session asks first"

keys y
expect "0 running / 4 total"
keys f
expect "Filter sessions"
keys "state:stopped" Enter
expect "filter: state:stopped"
capture "y, then f state:stopped Enter: the session is stopped; the table is filtered"
keys q
