#!/usr/bin/env bash
# Install the system packages the course needs, where they are missing and we may:
#   python    Python 3.11+ with venv (Debian splits venv into python3-venv)
#   graphviz  the `dot` binary that draws computation graphs
#   chromium  a browser for the browser test (never downloaded by playwright itself)
#   npm       to fetch reveal.js and friends for the offline slide decks
# Where apt-get cannot be used, say what to install and carry on (graphs then show as text).
set -u
want=${1:?usage: system_packages.sh python|graphviz|chromium|npm}

can_apt() { command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; }
apt_install() {
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo -n"
  echo "installing $* with apt-get ..."
  $sudo apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

case "$want" in
python)
  py=${PYTHON:-python3}
  if ! $py -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "minigrad needs Python 3.11 or newer as '$py' (found: $($py --version 2>&1)). Install it, or run: make PYTHON=python3.12 ..." >&2
    exit 1
  fi
  if ! $py -c 'import ensurepip, venv' 2>/dev/null; then
    if can_apt; then apt_install python3-venv; else
      echo "Python's venv module is missing: install it (Debian/Ubuntu: sudo apt-get install python3-venv)." >&2
      exit 1
    fi
  fi ;;
graphviz)
  if ! command -v dot >/dev/null 2>&1; then
    if can_apt && apt_install graphviz && command -v dot >/dev/null 2>&1; then
      echo "graphviz installed: $(dot -V 2>&1)"
    else
      echo "NOTE: graphviz's 'dot' program is missing, so computation graphs will show as text." >&2
      echo "      Install it with: sudo apt-get install graphviz  (macOS: brew install graphviz; conda: see environment.yml)" >&2
    fi
  fi ;;
chromium)
  if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    if ! { can_apt && apt_install chromium && [ -x /usr/bin/chromium ]; }; then
      echo "NOTE: Chromium is missing, so the browser test cannot run. Install it with: sudo apt-get install chromium" >&2
      exit 1
    fi
  fi ;;
npm)
  if ! command -v npm >/dev/null 2>&1; then
    if ! { can_apt && apt_install npm && command -v npm >/dev/null 2>&1; }; then
      echo "NOTE: npm is missing, so the slide decks cannot fetch reveal.js. Install Node.js and npm (sudo apt-get install npm)." >&2
      exit 1
    fi
  fi ;;
*) echo "unknown system package group: $want" >&2; exit 2 ;;
esac
