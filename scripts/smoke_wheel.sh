#!/usr/bin/env bash
# Build the wheel, install it in a clean venv outside the checkout and run the README's commands
# from an empty temporary folder: nothing beside the checkout (no ../shared) and nothing of the
# checkout itself may be needed. Called by .ci/run before `make test`; runs on its own too:
#   scripts/smoke_wheel.sh [PYTHON]    (default python3; offline if pip's index is local)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=${1:-python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clustertwin-smoke.XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  # the server's plan workers leave within about a second of it (they watch their parent);
  # until then one may still write under $tmp, so the removal is tried again
  for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$tmp" 2>/dev/null && return 0; sleep 0.5; done
  rm -rf "$tmp" || true
}
trap cleanup EXIT
step() { printf '== %s\n' "$*" >&2; }
fail() { printf 'smoke: FAILED: %s\n' "$*" >&2; exit 1; }

step "build the wheel"
"$python" -m venv "$tmp/build"
"$tmp/build/bin/python" -m pip install -q -c "$repo/constraints.txt" hatchling
"$tmp/build/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$tmp/dist" "$repo"
wheel=$(ls "$tmp"/dist/clustertwin-*.whl)
size=$(wc -c < "$wheel")
step "wheel $(basename "$wheel"): $((size / 1024)) KiB"
[ "$size" -lt $((20 * 1024 * 1024)) ] || fail "wheel is $size bytes (over 20 MiB)"

step "install it in a clean venv"
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q -c "$repo/constraints.txt" "$wheel"
ct="$tmp/venv/bin/clustertwin"
py="$tmp/venv/bin/python"

mkdir "$tmp/work"
cd "$tmp/work"   # an empty folder: no checkout, no ../shared above it
export CLUSTERTWIN_CACHE_DIR="$tmp/cache"
unset CLUSTERTWIN_TRACES

step "plan (the built-in default scenario)"
"$ct" plan --out plan > plan.txt || fail "plan"
[ -s plan/plan.json ] && [ -s plan/plan.html ] || fail "plan wrote no plan.json / plan.html"

step "calibration: the same rows as the checkout's table"
"$ct" calibration --json > cal.json || fail "calibration"
"$py" - "$repo/src/clustertwin/perf/data/training-runs-calibration.csv" <<'PY' || fail "calibration rows"
import csv, json, sys
got = [r["id"] for r in json.load(open("cal.json"))["rows"]]
want = [r["id"] for r in csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8"))]
assert got == want, (len(got), len(want))
print(f"calibration: {len(got)} rows, as in the checkout", file=sys.stderr)
PY

step "calibration --cv --json"
"$ct" calibration --cv --json > cv.json || fail "calibration --cv"
"$py" -c "import json; d = json.load(open('cv.json')); assert d['rows'] and d['summary']['rows'] > 0, d['summary']" \
  || fail "calibration --cv found no rows"

step "schedule --trace openb / gavel"
"$ct" schedule --cluster uniform:200x8 --trace openb --json > openb.json || fail "schedule openb"
"$ct" schedule --cluster uniform:200x8 --trace gavel --json > gavel.json || fail "schedule gavel"
"$py" -c "import json; assert json.load(open('openb.json'))['trace']['jobs'] > 0; assert json.load(open('gavel.json'))['trace']['jobs'] > 0" \
  || fail "schedule replayed no jobs"
"$ct" traces list > traces.txt || fail "traces list"

step "export all"
"$ct" export all --out export > export.txt || fail "export all"
[ -s export/slurm.conf ] && [ -s export/inventory.csv ] || fail "export all wrote no slurm.conf / inventory.csv"

step "serve: start, one request, stop"
port=$("$py" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$ct" serve --host 127.0.0.1 --port "$port" > serve.log 2>&1 &
server=$!
"$py" - "$port" <<'PY' || { cat serve.log >&2; fail "serve answered no request"; }
import json, sys, time, urllib.request
url = f"http://127.0.0.1:{sys.argv[1]}/api/catalog"
for _ in range(120):
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            assert resp.status == 200
            json.loads(resp.read())
            print("serve: GET /api/catalog 200", file=sys.stderr)
            break
    except OSError:
        time.sleep(0.5)
else:
    sys.exit(1)
PY
kill "$server"; wait "$server" 2>/dev/null || true; server=""

step "smoke test of the installed wheel passed"
