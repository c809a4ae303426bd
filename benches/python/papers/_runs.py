"""Resumable, parallel runs for the paper-reproduction scripts.

A run is a list of independent jobs (plain dicts of JSON values). Every finished job is
appended to a JSONL results file as one line ``{"key": job, ...result}``; a restart reads
the file and skips the jobs already there, so a killed run loses at most the jobs in
flight. Only the parent process writes the file (results come back from the workers), so
lines never interleave; a line cut short by a kill is ignored on reading.

Each launch that ran jobs also appends ``{"launch": {...}}`` with its commit and wall time
when it ends (also on Ctrl-C / SIGTERM). A launch killed outright records nothing, so the run time is
reported as the sum of the jobs' own times, which every finished job carries.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# The comparison scripts' shared helpers live one folder up.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _report import DATA_DIR, save_png, write_between_markers  # noqa: E402, F401 (for the scripts)


def canon(key: dict) -> str:
    """The identity of a job: its JSON with sorted keys."""
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def _drop_partial_last_line(path: str) -> None:
    """Cut a last line left without its newline by a kill, so that new lines start clean."""
    with open(path, "rb+") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            f.truncate(data.rfind(b"\n") + 1)


class ResultStore:
    def __init__(self, path: str):
        self.path = os.path.abspath(path)
        self.records: dict[str, dict] = {}
        self.launches: list[dict] = []
        self.added = 0  # results appended by this process
        if os.path.exists(self.path):
            _drop_partial_last_line(self.path)
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        rec = json.loads(line)
                    except json.JSONDecodeError:
                        continue  # a damaged line: its job runs again
                    if "launch" in rec:
                        self.launches.append(rec["launch"])
                    elif "key" in rec:
                        self.records[canon(rec["key"])] = rec
        else:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)

    def get(self, key: dict) -> dict | None:
        return self.records.get(canon(key))

    def _append(self, rec: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def add(self, key: dict, result: dict) -> None:
        rec = dict(result, key=key)
        self._append(rec)
        self.records[canon(key)] = rec
        self.added += 1

    def add_launch(self, info: dict) -> None:
        self._append({"launch": info})
        self.launches.append(info)

    def commits(self) -> str:
        """The commits the launches started from, in order, each once."""
        return ", ".join(dict.fromkeys(s.get("commit", "unknown") for s in self.launches)) or git_commit()

    def run_time_line(self, keep: Callable[[dict], bool] = lambda key: True) -> str:
        """The summed time of the recorded jobs whose key passes ``keep``, killed launches' too."""
        recs = [r for r in self.records.values() if keep(r["key"])]
        seconds = float(sum(r.get("job_s", 0.0) for r in recs))
        return (
            f"- Run time: {fmt_duration(seconds)} summed over the {len(recs):,} jobs "
            f"(each single-threaded), over {len(self.launches)} recorded launch(es); "
            f"results in `{shown_path(self.path)}`"
        )


def run_jobs(
    store: ResultStore,
    jobs: Iterable[dict],
    fn: Callable[[dict], dict],
    n_jobs: int,
    label: str = "",
    log: Callable[[str], None] = print,
) -> None:
    """Run the jobs not yet in ``store`` (``fn(job) -> result dict``), appending each result.

    ``fn`` must be a module-level function of an importable module when ``n_jobs > 1``
    (the workers are separate processes). Each job should fit single-threaded.
    """
    todo, seen = [], set()
    for j in jobs:
        c = canon(j)
        if c not in store.records and c not in seen:
            seen.add(c)
            todo.append(j)
    if not todo:
        return
    log(f"  {label}: {len(todo)} jobs to run ({n_jobs} worker(s))")
    t0, last = time.perf_counter(), time.perf_counter()
    if n_jobs == 1:
        results: Iterable = (_keyed(fn, j) for j in todo)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1)(
            delayed(_keyed)(fn, j) for j in todo
        )
    for i, (job, res) in enumerate(results, start=1):
        store.add(job, res)
        now = time.perf_counter()
        if now - last > 30 or i == len(todo):
            last = now
            log(f"  {label}: {i}/{len(todo)} jobs, {now - t0:.0f}s")


def _keyed(fn, job):
    t = time.perf_counter()
    res = fn(job)
    return job, dict(res, job_s=time.perf_counter() - t)


class Launch:
    """Context manager that records a launch that ran jobs (commit, wall time), also on SIGTERM."""

    def __init__(self, store: ResultStore, argv: list[str]):
        self.store, self.argv = store, argv

    def __enter__(self):
        self.t0 = time.perf_counter()
        self.started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        self.commit = git_commit()  # at the start: the tree may change while a long run goes on
        self._old = signal.signal(signal.SIGTERM, _raise_interrupt)
        self._added = self.store.added
        return self

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def __exit__(self, exc_type, exc, tb):
        signal.signal(signal.SIGTERM, self._old)
        if self.store.added == self._added:
            return False  # a launch that only reports adds nothing to the run's history
        self.store.add_launch(
            dict(
                started=self.started,
                wall_s=round(self.elapsed(), 3),
                argv=self.argv,
                commit=self.commit,
                completed=exc_type is None,
            )
        )
        return False


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def add_run_options(ap, name: str, data_dir: str) -> None:
    """The options every resumable reproduction has; ``name`` is its marker and results file stem."""
    # Raw job stores stay out of the repository (they grow to megabytes); BENCHMARKS.md and
    # the --report file hold what the tables are computed from.
    ap.add_argument(
        "--results",
        default=os.path.abspath(os.path.join(REPO, "..", "runs", f"{name}.jsonl")),
        help="the JSONL job store (default: runs/ next to the repository)",
    )
    ap.add_argument("--n-jobs", type=int, default=1, help="parallel worker processes (each fit single-threaded)")
    ap.add_argument("--data-dir", default=data_dir)
    ap.add_argument("--write-md", metavar="BENCHMARKS.md", help=f"replace the {name} section between the markers")
    ap.add_argument("--report", metavar="PATH", help="write the full report (per split / draw) as markdown")
    ap.add_argument(
        "--time-probe", action="store_true", help="time full-size fits, print the full run's estimate, exit"
    )


def finish_args(ap, args, quick: dict | None):
    """Apply ``--quick``'s settings to the options left at their defaults; n_jobs < 1 = every core."""
    if quick:
        for k, v in quick.items():
            if ap.get_default(k) == getattr(args, k):
                setattr(args, k, v)
    if args.n_jobs < 1:
        args.n_jobs = os.cpu_count() or 1
    # Where the data lives is not part of a job's identity: jobs take it as an argument, so a
    # results file stays valid from any checkout and any data folder.
    args.data_dir = os.path.abspath(args.data_dir)
    return args


def git_commit() -> str:
    try:
        c = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        return c + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> str:
    model = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end"


def shown_path(path: str) -> str:
    """A path relative to the repository when it is inside it or next to it, else absolute."""
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith(os.path.join("..", "..")) else rel


def fmt_duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def replace_between_markers(path: str, name: str, text: str) -> None:
    """Replace what is between ``<!-- name: start -->`` and ``<!-- name: end -->`` in ``path``."""
    write_between_markers(path, name, text.rstrip("\n"))


def md_table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
