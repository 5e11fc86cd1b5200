"""Fuzz benchmark (issue 15): >= 10,000 generated hostile inputs across scenarios, catalog
overrides, traces and measured results, each through the real reader (in-process, in worker
processes so a crash is seen, with a per-input time limit), plus a sample through the CLI.
Prints counts by outcome; the target is 0 tracebacks, 0 crashes, 0 hangs.

Outcomes: ``ok`` (read, exit 0), ``refused`` (a UserError: one line per problem, exit 2),
``traceback`` (any other exception: exit 1 in the CLI), ``crash`` (the process died, e.g.
SIGSEGV), ``hang`` (over the time limit).

    python benchmarks/bench_fuzz.py [--inputs N] [--cli N] [--limit-s S] [--corpus DIR]

``--corpus DIR`` also runs every file of a folder of hostile inputs kept outside the project
through ``clustertwin validate`` (.yaml/.yml/.toml), ``schedule --trace`` (other files) and
``plan`` with the file as a scenario, each under the time limit.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOSTILE_SCALARS = [
    ".nan", ".inf", "-.inf", "1e-320", "1e400", "9" * 5000, str(2**63), str(2**63 - 1), "-1", "0",
    "0.0", "yes", "no", "on", "true", "null", "~", "''", "!!timestamp foo", "!!float abc",
    "!!int 0x1g", "!!binary xx", "!!python/object:os.system x", "2027-02-30", "9999-12-31",
    "0001-01-01", "[]", "{}", "&a [*a]", "*undefined", "'\u202e\u0000'", '"<script>alert(1)</script>"',
    "1:30", "0x10", "0o17", "+.5", "1_000", "1e18", "4194305", "1048577", "1e-9", "100000",
    "1e6", "8760.5", "auto", "none",
]


# --------------------------------------------------------------------------- generators
def _yaml_lines(text: str) -> list[str]:
    return text.splitlines()


def gen_scenario(rng: random.Random, base: list[str]) -> tuple[str, str]:
    """Mutate the default scenario text: values replaced by hostile scalars, lines duplicated,
    dropped or shuffled, deep nesting, aliases, byte noise."""
    lines = list(base)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        i = rng.randrange(len(lines))
        if kind < 0.55 and ":" in lines[i]:
            key = lines[i].split(":", 1)[0]
            lines[i] = f"{key}: {rng.choice(HOSTILE_SCALARS)}"
        elif kind < 0.65:
            lines.insert(i, lines[rng.randrange(len(lines))])  # duplicate key
        elif kind < 0.72:
            del lines[i]
        elif kind < 0.78:
            depth = rng.choice([70, 1000, 30000])
            lines[i] = lines[i].split(":", 1)[0] + ": " + "[" * depth + "]" * depth
        elif kind < 0.84:
            lines.append(f"extra: &x [{', '.join(['*x'] * 3)}]")
        elif kind < 0.92:
            b = bytearray(lines[i].encode())
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
            lines[i] = b.decode("utf-8", "replace")
        else:
            lines[i] = " " * rng.randint(0, 7) + lines[i].lstrip()
    return "scenario", "\n".join(lines) + "\n"


def gen_scenario_values(rng: random.Random, base: list[str]) -> tuple[str, str]:
    """Numbers only: 1-3 numeric values scaled by 10**U(-4, 4) or set to 0, 1, or a huge value,
    so that many inputs validate and reach the stages (the ``plan`` inputs)."""
    lines = list(base)
    numeric = [i for i, ln in enumerate(lines) if ":" in ln and not ln.lstrip().startswith("#")
               and _is_number(ln.split(":", 1)[1].split("#")[0].strip())]
    for i in rng.sample(numeric, k=min(len(numeric), rng.randint(1, 3))):
        key, val = lines[i].split(":", 1)
        v = float(val.split("#")[0].strip())
        new = rng.choice([v * 10 ** rng.uniform(-4, 4), 0, 1, 1e6, 2**20, v * 2, v / 2])
        lines[i] = f"{key}: {int(new) if float(new).is_integer() and abs(new) < 2**63 else new!r}"
    return "scenario", "\n".join(lines) + "\n"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def gen_catalog(rng: random.Random, entries: list[tuple[str, dict]]) -> tuple[str, str]:
    import yaml

    kind, entry = rng.choice(entries)
    e = dict(entry)
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(list(e))
        e[key] = rng.choice([float("nan"), float("inf"), -1, 0, -1e9, 1e308, True, "x", None,
                             [], {}, 2**70, 1e-320, "<img src=x>"])
    text = yaml.safe_dump({kind: [e]}, sort_keys=False, allow_unicode=True)
    if rng.random() < 0.2:
        text = text.replace(": ", ": " + rng.choice(["!!float ", "!!int ", "!!timestamp "]), 1)
    return "catalog", text


TRACE_CELLS = ["nan", "inf", "-inf", "-5", "0", "1e400", "99999999999", "1.5", "", "x", "1e-320",
               "\x00", "1" * 400, "2025-02-30T00:00:00", "Unknown", "UNLIMITED", "1-99:99:99",
               "gres/gpu=nan", "gres/gpu=1e99", "gres/gpu=-8"]


def gen_trace(rng: random.Random) -> tuple[str, str]:
    fmt = rng.choice(["jobs", "sacct", "openb", "gavel", "sia"])
    n = rng.randint(1, 30)
    rows: list[list[str]] = []
    if fmt == "jobs":
        header = ["job_id", "submit_s", "gpus", "duration_s", "team", "qos", "requested_s"]
        for i in range(n):
            rows.append([f"j{i}", str(rng.uniform(0, 1e5)), str(rng.choice([0.5, 1, 2, 8])),
                         str(rng.uniform(1, 1e5)), rng.choice(["a", "b"]), rng.choice(["BE", "LS", "2"]), ""])
        sep = ","
    elif fmt == "sacct":
        header = ["JobID", "Submit", "Start", "End", "ElapsedRaw", "Timelimit", "AllocTRES", "State", "Account"]
        for i in range(n):
            rows.append([f"{100 + i}", "2025-03-03T08:00:00", "2025-03-03T08:00:05", "2025-03-03T10:00:05",
                         "7200", "04:00:00", "cpu=8,gres/gpu=8", "COMPLETED", "llm"])
        sep = "|"
    elif fmt == "openb":
        header = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                  "pod_phase", "creation_time", "deletion_time", "scheduled_time"]
        for i in range(n):
            c = rng.uniform(0, 1e5)
            rows.append([f"p{i}", "1000", "1024", "1", "1000", "", "LS", "Running", str(c),
                         str(c + 500), str(c + 1)])
        sep = ","
    elif fmt == "gavel":
        header = None
        for _ in range(n):
            rows.append(["ResNet-18", "bs=16", "train", "1", str(rng.randint(1, 10**6)),
                         str(rng.uniform(0, 1e5)), str(rng.choice([1, 2, 4]))])
        sep = "\t"
    else:
        header = ["name", "time", "application", "num_replicas", "batch_size"]
        for i in range(n):
            rows.append([f"s{i}", str(rng.uniform(0, 1e5)), rng.choice(["bert", "cifar10", "imagenet"]),
                         str(rng.choice([1, 2, 4])), "64"])
        sep = ","
    for _ in range(rng.randint(1, 5)):
        r = rng.randrange(len(rows))
        c = rng.randrange(len(rows[r]))
        rows[r][c] = rng.choice(TRACE_CELLS)
    if rng.random() < 0.1:
        rows[rng.randrange(len(rows))].pop()
    lines = ([sep.join(header)] if header else []) + [sep.join(r) for r in rows]
    suffix = {"gavel": ".trace", "sacct": ".sacct"}.get(fmt, ".csv")
    return "trace" + suffix, "\n".join(lines) + "\n"


def gen_measured(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["nccl", "dcgm", "burnin", "ibnet"])
    alphabet = "0123456789 .-+eEnaifINF|#\n\t:{}[]\",xyzGB/s"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 600)))
    if kind == "nccl" and rng.random() < 0.5:
        text = "# nThread 1 nGpus 8\n#  size count type redop root time algbw busbw #wrong\n" + text
    return "measured-" + kind, text


def gen_bytes(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["scenario", "catalog", "trace.csv", "trace.sacct"])
    raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 400)))
    return kind, raw.decode("latin-1")


# --------------------------------------------------------------------------- readers
def _read(kind: str, text: str, folder: Path, idx: int) -> None:
    """Feed one input to the reader for its kind (raises UserError when refused); ``plan``
    reads the scenario and runs every stage on it."""
    if kind in ("scenario", "plan"):
        from clustertwin.io import parse_text
        from clustertwin.scenario import scenario_from_dict

        scen = scenario_from_dict(parse_text(text, "fuzz.yaml"), "fuzz.yaml", cached_catalog())
        if kind == "plan":
            from clustertwin.plan import make_plan

            make_plan(scen, cached_catalog())
    elif kind == "catalog":
        from clustertwin.catalog import load_catalog

        d = folder / f"cat{idx}"
        d.mkdir()
        (d / "x.yaml").write_text(text, encoding="utf-8", errors="surrogateescape")
        load_catalog([d])
    elif kind.startswith("trace"):
        from clustertwin.scheduling.traces import load_trace

        p = folder / f"t{idx}{Path(kind).suffix or '.csv'}"
        p.write_bytes(text.encode("latin-1", "replace") if "\x00" in text else
                      text.encode("utf-8", "surrogateescape"))
        load_trace(str(p))
    elif kind.startswith("measured-"):
        from clustertwin.acceptance.importers import burnin, dcgm, ibnet, nccl

        parse = {"nccl": nccl.parse_text, "dcgm": dcgm.parse, "burnin": burnin.parse,
                 "ibnet": ibnet.parse}[kind.split("-", 1)[1]]
        parse(text, "fuzz.log")
    else:
        raise ValueError(kind)


_CAT = None


def cached_catalog():  # noqa: ANN202
    global _CAT
    if _CAT is None:
        from clustertwin.catalog import load_catalog

        _CAT = load_catalog()
    return _CAT


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):  # noqa: ANN001, ANN202, ARG001
    raise _Timeout


def _worker(args: tuple[list[tuple[str, str]], float, int]) -> list[tuple[str, str, str]]:
    """Run a chunk; returns (kind, outcome, detail) per input."""
    from clustertwin.errors import UserError

    inputs, limit_s, start = args
    signal.signal(signal.SIGALRM, _alarm)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (kind, text) in enumerate(inputs):
            signal.setitimer(signal.ITIMER_REAL, limit_s)
            try:
                _read(kind, text, Path(tmp), start + i)
                outcome, detail = "ok", ""
            except UserError as exc:
                lines = exc.lines()
                outcome, detail = ("refused", "") if lines and all("\n" not in x for x in lines) else \
                    ("traceback", "UserError without one-line problems")
            except _Timeout:
                outcome, detail = "hang", text[:120]
            except Exception as exc:  # noqa: BLE001 - that is what we count
                outcome, detail = "traceback", f"{type(exc).__name__}: {str(exc)[:100]} | {text[:80]!r}"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            out.append((kind.split(".")[0].split("-")[0], outcome, detail))
    return out


def generate(n: int, seed: int = 0) -> list[tuple[str, str]]:
    import yaml

    from clustertwin.scenario import DEFAULT_SCENARIO

    rng = random.Random(seed)
    base = _yaml_lines(DEFAULT_SCENARIO.read_text())
    cat = cached_catalog()
    entries = [(k, e.model_dump(mode="json", exclude_none=True)) for k in ("gpu", "node", "fabric", "costs",
                                                                           "failure_profile", "switch")
               for e in cat.all(k)]
    del yaml
    gens = [lambda: gen_scenario(rng, base)] * 4 + [lambda: gen_catalog(rng, entries)] * 2 + \
        [lambda: gen_trace(rng)] * 3 + [lambda: gen_measured(rng), lambda: gen_bytes(rng)]
    out = [rng.choice(gens)() for _ in range(n)]
    # one input in 80 is a scenario with only its numbers changed, run through the whole plan
    # (seconds each): the stages see the values that validation lets through
    return [("plan", gen_scenario_values(rng, base)[1]) if i % 80 == 0 else (k, t)
            for i, (k, t) in enumerate(out)]


def run_in_process(inputs: list[tuple[str, str]], limit_s: float, workers: int) -> tuple[collections.Counter, list[str]]:
    """Chunks in worker processes; a worker that dies counts its whole chunk's unknowns as crashes."""
    chunk = 250
    jobs = [(inputs[i:i + chunk], limit_s, i) for i in range(0, len(inputs), chunk)]
    counts: collections.Counter = collections.Counter()
    examples: list[str] = []
    ctx = mp.get_context("fork")
    with ctx.Pool(workers, maxtasksperchild=4) as pool:
        pending = [pool.apply_async(_worker, (j,)) for j in jobs]
        for j, res in zip(jobs, pending, strict=True):
            try:
                rows = res.get(timeout=limit_s * len(j[0]) + 60)
            except Exception as exc:  # noqa: BLE001 - a dead or stuck worker
                counts[("all", "crash")] += len(j[0])
                examples.append(f"chunk at {j[2]}: {type(exc).__name__}")
                continue
            for kind, outcome, detail in rows:
                counts[(kind, outcome)] += 1
                if outcome in ("traceback", "hang") and len(examples) < 15:
                    examples.append(f"{kind} {outcome}: {detail}")
    return counts, examples


def run_cli(inputs: list[tuple[str, str]], limit_s: float) -> tuple[collections.Counter, list[str]]:
    """Scenario inputs through ``clustertwin validate`` / ``plan`` and traces through
    ``schedule``, as subprocesses; exit status and stderr classify the outcome."""
    counts: collections.Counter = collections.Counter()
    examples: list[str] = []
    exe = [sys.executable, "-m", "clustertwin.cli"] if not _ct() else [_ct()]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (kind, text) in enumerate(inputs):
            if kind == "scenario":
                p = Path(tmp) / f"s{i}.yaml"
                cmds = [["validate", str(p)], ["plan", str(p), "--json"]]
            elif kind.startswith("trace"):
                p = Path(tmp) / f"t{i}{Path(kind).suffix}"
                cmds = [["schedule", "--cluster", "pool:64", "--trace", str(p), "--json"]]
            else:
                continue
            p.write_text(text, encoding="utf-8", errors="surrogateescape")
            for cmd in cmds:
                counts[(f"cli-{cmd[0]}", _classify(exe + cmd, limit_s, examples))] += 1
        for opts in HOSTILE_OPTIONS:  # command-line values, not files
            cmd = ["schedule", "--trace", "synthetic:philly:200", *opts]
            if "--cluster" not in opts:
                cmd += ["--cluster", "pool:64"]
            counts[("cli-options", _classify(exe + cmd, limit_s, examples))] += 1
    return counts, examples


HOSTILE_OPTIONS = [
    ["--load", "nan"], ["--load", "inf"], ["--load", "-1"], ["--load", "1e308"],
    ["--failure-rate", "inf"], ["--failure-rate", "nan"], ["--repair-hours", "0"],
    ["--repair-hours", "1e300"], ["--checkpoint-min", "-5"], ["--time-limit-factor", "nan"],
    ["--seed", "-1"], ["--jobs", "0"], ["--scale", "0.5"], ["--scale", "1e9"],
    ["--share", "x=nan"], ["--team-limit", "nosuch=4"], ["--reserve", "8@inf+1"],
    ["--reserve", "9999999@0+1"], ["--policy", "multifactor:age=inf"], ["--policy", "nosuch"],
    ["--cluster", "pool:inf"], ["--cluster", "uniform:99999999x99999999"], ["--cluster", "/dev/zero"],
    ["--placement", "nosuch"], ["--trace", "synthetic:philly:99999999999"],
]


def _ct() -> str | None:
    cand = Path(sys.executable).with_name("clustertwin")
    return str(cand) if cand.exists() else None


def _classify(cmd: list[str], limit_s: float, examples: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit_s, check=False,
                              env=dict(os.environ, PYTHONFAULTHANDLER="1"))
    except subprocess.TimeoutExpired:
        examples.append(f"hang: {' '.join(cmd[-3:])}")
        return "hang"
    rc = proc.returncode
    if rc < 0:
        examples.append(f"crash (signal {-rc}): {' '.join(cmd[-3:])}")
        return "crash"
    if "Traceback" in proc.stderr or rc not in (0, 2, 3):
        examples.append(f"traceback rc={rc}: {proc.stderr.strip().splitlines()[-1:]}")
        return "traceback"
    return {0: "ok", 2: "refused", 3: "ok-incomplete"}[rc]


def run_corpus(folder: Path, limit_s: float) -> tuple[collections.Counter, list[str]]:
    counts: collections.Counter = collections.Counter()
    examples: list[str] = []
    exe = [_ct()] if _ct() else [sys.executable, "-m", "clustertwin.cli"]
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        if f.suffix.lower() in (".yaml", ".yml", ".toml"):
            cmds = [["validate", str(f)], ["plan", str(f), "--json"]]
        else:
            cmds = [["schedule", "--cluster", "pool:64", "--trace", str(f), "--json"]]
        for cmd in cmds:
            counts[(f"corpus-{cmd[0]}", _classify(exe + cmd, limit_s, examples))] += 1
    return counts, examples


def _print(title: str, counts: collections.Counter) -> None:
    kinds = sorted({k for k, _ in counts})
    outcomes = ["ok", "ok-incomplete", "refused", "traceback", "crash", "hang"]
    print(f"{title:<18}" + "".join(f"{o:>14}" for o in outcomes))
    for k in kinds:
        print(f"{k:<18}" + "".join(f"{counts.get((k, o), 0):>14,}" for o in outcomes))
    tot = collections.Counter()
    for (_, o), n in counts.items():
        tot[o] += n
    print(f"{'total':<18}" + "".join(f"{tot.get(o, 0):>14,}" for o in outcomes))


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--cli", type=int, default=40, help="inputs also run through the CLI")
    ap.add_argument("--limit-s", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=max(1, min(4, (os.cpu_count() or 2))))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus", type=Path, default=None)
    args = ap.parse_args(argv if argv is not None else [])
    t0 = time.perf_counter()
    inputs = generate(args.inputs, args.seed)
    counts, examples = run_in_process(inputs, args.limit_s, args.workers)
    t1 = time.perf_counter()
    _print(f"{len(inputs):,} in-process", counts)
    print(f"  {len(inputs) / (t1 - t0):,.0f} inputs/s ({t1 - t0:.1f} s, {args.workers} workers, "
          f"limit {args.limit_s:g} s per input)")
    sample = random.Random(args.seed + 1).sample(inputs, min(args.cli, len(inputs)))
    ccounts, cex = run_cli(sample, args.limit_s)
    _print("CLI sample", ccounts)
    examples += cex
    kc: collections.Counter = collections.Counter()
    if args.corpus:
        kc, kex = run_corpus(args.corpus, args.limit_s)
        _print(f"corpus {args.corpus.name}", kc)
        examples += kex
    bad = sum(n for (_, o), n in (counts + ccounts + kc).items() if o in ("traceback", "crash", "hang"))
    print(f"tracebacks + crashes + hangs: {bad}")
    for e in examples[:20]:
        print("  ", e)
    return {"fuzz_inputs_per_s": len(inputs) / (t1 - t0)}


if __name__ == "__main__":
    main(sys.argv[1:])
