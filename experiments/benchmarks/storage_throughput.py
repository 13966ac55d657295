"""Storage write throughput: SQLite vs PostgreSQL, one writer and four at once.

- One writer: steps per second through ``RunLogger``, committing every step
  (``commit_every=1``, every run's default) and in batches of 50 (``--commit-every 50``).
- Four writers: four processes log runs to one database at once; aggregate steps per
  second, the latency of the ``log_step`` calls that committed, as each writer saw it
  (median, 99th percentile), and a count of the rows afterwards (none lost, none twice).

Backends: an SQLite file as npbandit opens it (WAL, ``synchronous=NORMAL``: an OS crash
may lose the last commits, never corrupt the file) and a throw-away local PostgreSQL
server on a Unix socket (tests/postgres_cluster.py), once with its default durability
(``fsync``, ``synchronous_commit=on``: each commit waits for its WAL flush) and once with
``synchronous_commit=off``, the setting with SQLite's guarantee. Writers start together
(a barrier after their imports); each configuration gets a new database.

    python experiments/benchmarks/storage_throughput.py   # the `postgres` extra and server (apt-get install postgresql)
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))  # postgres_cluster.py
from common import machine_line, publish  # noqa: E402
from postgres_cluster import Cluster, unavailable  # noqa: E402

COMMAND = "python experiments/benchmarks/storage_throughput.py"
BACKENDS = ("sqlite", "postgresql", "postgresql-async")
LABELS = {"sqlite": "SQLite (WAL, synchronous=NORMAL)", "postgresql": "PostgreSQL (synchronous_commit=on)",
          "postgresql-async": "PostgreSQL (synchronous_commit=off)"}


def _writer(url: str, runs: int, steps: int, commit_every: int, barrier, results) -> None:
    from npbandit import storage

    storage.open_db(url)
    storage.logger._versions()  # its imports (torch, botorch) happen here, not on the clock
    barrier.wait()
    latencies = []
    t0 = time.perf_counter()
    for run in range(runs):
        logger = storage.RunLogger(url, commit_every=commit_every)
        logger.start(kind="bandit", env_id="storage-benchmark", env_params={"run": run}, policy="none")
        for t in range(steps):
            start, written = time.perf_counter(), logger.rows_written
            logger.log_step(t=t, action=t % 5, reward=1.0, regret=0.1, cumulative_regret=0.1 * (t + 1),
                            expected_regret=0.1, act_s=1e-4, env_s=1e-5, observe_s=1e-4)
            if logger.rows_written != written:  # this call committed a batch
                latencies.append(time.perf_counter() - start)
        logger.finish()
    results.put((time.perf_counter() - t0, latencies))


def measure(url: str, writers: int, runs: int, steps: int, commit_every: int) -> dict:
    """``writers`` processes, each logging ``runs`` runs of ``steps`` steps to ``url``."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(writers), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(url, runs, steps, commit_every, barrier, results))
             for _ in range(writers)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=1800) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"a writer exited with {p.exitcode}")
    from sqlalchemy import func, select

    from npbandit.storage import Step, open_db

    engine = open_db(url, readonly=True)
    with engine.connect() as conn:
        rows = conn.execute(select(func.count(), func.count(func.distinct(Step.run_id * 1_000_000 + Step.t)))
                            .select_from(Step)).one()
    engine.dispose()
    latencies = sorted(x for _, lat in outcomes for x in lat)
    wall = max(w for w, _ in outcomes)
    total = writers * runs * steps
    return {"writers": writers, "runs": runs, "steps": steps, "commit_every": commit_every, "wall_s": wall,
            "steps_per_s": total / wall, "median_ms": 1e3 * statistics.median(latencies),
            "p99_ms": 1e3 * latencies[int(0.99 * (len(latencies) - 1))], "expected_rows": total,
            "rows": rows[0], "distinct_rows": rows[1]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="steps per writer with commit_every=1 "
                        "(x10 with batches of 50)")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if any(b.startswith("postgresql") for b in args.backends) and unavailable() is not None:
        parser.error(f"PostgreSQL cannot run here: {unavailable()}")
    configs = [(1, 1, args.steps, 1), (1, 1, 10 * args.steps, 50),
               (args.writers, 1, args.steps, 1), (args.writers, 1, 10 * args.steps, 50)]
    rows = []
    server = None
    load_start = os.getloadavg()[0]
    use_pg = any(b.startswith("postgresql") for b in args.backends)
    server_cm = Cluster(durable=True) if use_pg else contextlib.nullcontext()
    with tempfile.TemporaryDirectory() as tmp, server_cm as cluster:
        for backend in args.backends:
            for i, (writers, runs, steps, commit_every) in enumerate(configs):
                if backend == "sqlite":
                    url = f"sqlite:///{tmp}/bench-{i}.db"
                else:
                    name = f"{backend.replace('-', '_')}_{i}"
                    url = cluster.create_database(name)
                    import psycopg

                    with psycopg.connect(host=str(cluster.dir), port=5432, user="npbandit", dbname="postgres",
                                         autocommit=True) as conn:
                        server = conn.execute("SHOW server_version").fetchone()[0]
                        if backend == "postgresql-async":
                            conn.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
                row = {"backend": backend, **measure(url, writers, runs, steps, commit_every)}
                print(row, flush=True)
                rows.append(row)
    load_end = os.getloadavg()[0]
    lines = ["## Storage write throughput: SQLite vs PostgreSQL", "",
             f"Command: `{COMMAND}` (CPU: {machine_line()}; PostgreSQL {server or '-'}, a local server on a Unix "
             "socket, default settings apart from the database's `synchronous_commit`; SQLite and the server's data "
             "on the same ext4 disk). Steps written through `RunLogger`, each writer a process of its own, all "
             "starting together; wall time from the start to the last writer's end. Commit latency: a `log_step` call "
             "that committed (every call with commit_every = 1, one in 50 with 50), over all writers. Rows: counted "
             "afterwards, distinct (run, t) / expected. One measurement per cell, on a machine shared with other "
             f"work (1-minute load average {load_start:.1f} at the start, {load_end:.1f} at the end, on "
             f"{os.cpu_count()} cores), so the numbers include that load.", "",
             "| backend | writers | commit_every | steps per writer | steps/s (all writers) | "
             "commit latency median (ms) | commit latency p99 (ms) | rows |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {LABELS[r['backend']]} | {r['writers']} | {r['commit_every']} | {r['runs'] * r['steps']:,} | "
                     f"{r['steps_per_s']:,.0f} | {r['median_ms']:.2f} | {r['p99_ms']:.2f} | "
                     f"{r['distinct_rows']:,} / {r['expected_rows']:,} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("storage-throughput", text, "storage_throughput.json", COMMAND,
                {"rows": rows, "load_average": [load_start, load_end]}, packages=("sqlalchemy", "psycopg"))


if __name__ == "__main__":
    main()
