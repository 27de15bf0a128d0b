# Sourced by bin/serve and bin/test: make .venv with the project installed, once.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi
install_project() {  # $1: extras, e.g. "" or "[test]"
  local stamp=".venv/.installed$1"
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet -e ".$1"
    touch "$stamp"
  fi
}
