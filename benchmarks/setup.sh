#!/usr/bin/env bash
# Installs what benchmarks/run.py needs beyond the project venv:
#   - wrk (Debian package) as the HTTP load generator;
#   - one venv per pinned a2a-sdk release, so the official SDK and its
#     pydantic/protobuf stack never touch the project's own venv (the 1.x one
#     with its PostgreSQL extra, for benchmarks/scale.py);
#   - haproxy (Debian package), the load balancer of benchmarks/scale.py.
# The HTTP server stack (uvicorn, uvloop, httptools, starlette) in those venvs is
# pinned to the versions of the project venv so every server runs on the same stack.
# Usage: bash benchmarks/setup.sh          (idempotent; re-run after changing a pin)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
project_python="$root/.venv/bin/python"
base_python="${PYTHON:-python3}"

# Pinned releases of the official SDK: the newest 1.x and the newest 0.3.x.
A2A_SDK_1X="1.3.0"
A2A_SDK_03="0.3.26"

if ! command -v wrk >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update
    $sudo apt-get install -y wrk
fi

if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
    if [ "$(id -u)" = "0" ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get install -y haproxy || { $sudo apt-get update && $sudo apt-get install -y haproxy; }
fi

if [ ! -x "$project_python" ]; then
    echo "project venv missing: create $root/.venv and install the project first" >&2
    exit 1
fi

# Same server stack as the project venv.
stack_pins="$("$project_python" - <<'PY'
from importlib.metadata import version
print(" ".join(f"{n}=={version(n)}" for n in ("uvicorn", "uvloop", "httptools", "starlette")))
PY
)"

make_venv() {
    local dir="$1" sdk_pin="$2" extras="$3"
    if [ ! -x "$dir/bin/python" ]; then
        "$base_python" -m venv "$dir"
    fi
    "$dir/bin/python" -m pip install --quiet --upgrade pip
    # shellcheck disable=SC2086
    "$dir/bin/python" -m pip install --quiet "a2a-sdk[$extras]==$sdk_pin" $stack_pins
    echo "$dir: a2a-sdk $("$dir/bin/python" -c 'from importlib.metadata import version; print(version("a2a-sdk"))')"
}

# 1.x also with its PostgreSQL stores (DatabaseTaskStore, cluster mode): benchmarks/scale.py
make_venv "$here/.venv-a2a-sdk" "$A2A_SDK_1X" "http-server,postgresql"
make_venv "$here/.venv-a2a-sdk-03" "$A2A_SDK_03" "http-server"
echo "wrk: $(command -v wrk)"
