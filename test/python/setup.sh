#!/usr/bin/env bash
# Creates (or reuses) the Python environment of the non-JavaScript consumer test and of the
# web3.py strict client: a venv under .ci/work/pyenv with requirements.txt from PyPI. Prints the
# interpreter's path.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/.ci/work/pyenv"
python="$venv/bin/python"
if ! "$python" -c 'import confluent_kafka, jsonschema, web3' >/dev/null 2>&1; then
  command -v python3 >/dev/null || { echo "python3 is needed for the Python consumer test" >&2; exit 1; }
  mkdir -p "$root/.ci/work"
  python3 -m venv "$venv" >&2
  "$python" -m pip install --quiet --disable-pip-version-check -r "$root/test/python/requirements.txt" >&2
fi
echo "$python"
