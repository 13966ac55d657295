"""Storage on a real PostgreSQL server (a throw-away cluster, see postgres_cluster.py), and
the schema version on PostgreSQL and SQLite.

The PostgreSQL tests skip, saying why, where no server binary or no psycopg is installed;
with ``NPBANDIT_REQUIRE_POSTGRES=1`` (set by .ci/run, which installs both) they fail instead,
so CI cannot pass by skipping them.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from helpers import forget_engines, four_writers
from postgres_cluster import Cluster, skip_unless_available
from sqlalchemy import func, insert, inspect, select, text, update
from sqlalchemy.exc import SQLAlchemyError

from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.storage import (
    SCHEMA_VERSION,
    Meta,
    Run,
    RunLogger,
    SchemaVersionError,
    Step,
    StorageError,
    list_runs,
    open_db,
    run_steps,
)
from npbandit.storage import engine as storage_engine
from npbandit.storage.models import _now

WHEEL = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5}}


@pytest.fixture(scope="module")
def cluster():
    skip_unless_available()
    with Cluster() as c:
        yield c


@pytest.fixture
def pg_url(cluster):
    return cluster.create_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    return request.getfixturevalue("pg_url")


@pytest.mark.postgres
@pytest.mark.slow
def test_runs_steps_optimize_and_report_on_postgres(pg_url):
    result = run_episode(WheelBanditEnv(horizon=40), UniformPolicy(), seed=1, logger=RunLogger(pg_url, commit_every=7),
                         run_info=WHEEL)
    assert [s["t"] for s in run_steps(pg_url, result.run_id)] == list(range(40))
    from npbandit import optimize

    opt = optimize(lambda x: float((x ** 2).sum()), [[-1, -1], [1, 1]], surrogate="random", budget=4, db=pg_url,
                   progress=False)
    runs = list_runs(pg_url)
    assert [(r.kind, r.status, r.n_steps) for r in runs] == [("bandit", "completed", 40), ("bo", "completed", 4)]
    assert runs[1].id == opt.run_id and len(run_steps(pg_url, opt.run_id)) == 4
    with pytest.raises(SQLAlchemyError, match="uq_steps_run_t"):
        logger = RunLogger(pg_url, commit_every=1)
        logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
        logger.log_step(t=0, action=1, reward=1.0)
        logger.log_step(t=0, action=2, reward=2.0)


@pytest.mark.postgres
def test_cli_bandit_and_report_on_postgres_hide_the_password(cluster, capsys):
    cluster.create_database("cli")
    # trust authentication ignores the password; the report must not print it either way
    url = cluster.url("cli").replace("npbandit@", "npbandit:s3cret@")
    from npbandit.cli import main

    assert main(["bandit", "--policies", "uniform", "--steps", "30", "--seeds", "0", "1", "--db", url]) == 0
    capsys.readouterr()
    assert main(["report", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "runs: 2 (completed 2" in out and "uniform" in out
    assert "s3cret" not in out and "***" in out


@pytest.mark.postgres
@pytest.mark.slow
def test_four_processes_write_one_postgres_database(pg_url, tmp_path):
    # no open_db here: the four writers also race to create the schema
    four_writers(pg_url, tmp_path)
    runs = list_runs(pg_url)
    assert len(runs) == 12 and all(r.status == "completed" and r.n_steps == 100 for r in runs)
    with open_db(pg_url, readonly=True).connect() as conn:
        rows = conn.execute(select(Step.run_id, Step.t)).all()
    assert len(rows) == 12 * 100 and len(set(rows)) == len(rows)  # none lost, none twice
    assert {t for _, t in rows} == set(range(100))


@pytest.mark.postgres
@pytest.mark.slow
def test_a_killed_writer_leaves_its_committed_steps_and_an_interrupted_run(pg_url):
    script = textwrap.dedent(f"""
        import time
        from npbandit.envs import WheelBanditEnv
        from npbandit.loop import run_episode
        from npbandit.policies import UniformPolicy
        from npbandit.storage import RunLogger

        class Slow(UniformPolicy):
            def act(self, obs):
                time.sleep(0.002)
                return super().act(obs)

        run_episode(WheelBanditEnv(horizon=100000), Slow(), seed=0, logger=RunLogger({pg_url!r}, commit_every=10),
                    run_info={{"kind": "bandit", "env_id": "wheel", "env_params": {{"delta": 0.5}}}})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 120
    runs = []
    while time.time() < deadline and not (runs and runs[0].n_steps >= 50):
        time.sleep(0.3)
        try:
            runs = list_runs(pg_url)
        except StorageError:  # the writer has not created the schema yet
            runs = []
    assert runs and runs[0].status == "running"  # alive: its process is still there
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (run,) = list_runs(pg_url)
    steps = run_steps(pg_url, run.id)
    assert run.status == "interrupted"
    assert len(steps) == run.n_steps >= 50 and len(steps) % 10 == 0  # whole committed batches
    assert [s["t"] for s in steps] == list(range(len(steps)))


@pytest.mark.postgres
def test_reading_postgres_never_writes(cluster, pg_url):
    run_episode(WheelBanditEnv(horizon=5), UniformPolicy(), seed=0, logger=RunLogger(pg_url), run_info=WHEEL)
    with open_db(pg_url, readonly=True).connect() as conn:
        with pytest.raises(SQLAlchemyError, match="read-only transaction"):
            conn.execute(update(Run).values(status="failed"))
    assert list_runs(pg_url)[0].status == "completed"
    with pytest.raises(StorageError, match="does not exist"):
        list_runs(cluster.url("typo"))
    with pytest.raises(StorageError, match="does not exist"):  # and the reader did not create it
        list_runs(cluster.url("typo"))


@pytest.mark.postgres
def test_forked_processes_do_not_share_pooled_connections(pg_url):
    # benchmarks hand runs to forked workers after the parent opened the database; a
    # pooled connection inherited across fork would put two processes on one socket
    engine = open_db(pg_url)
    with engine.connect() as conn:
        parent = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            with open_db(pg_url).connect() as conn:
                os.write(write, str(conn.execute(text("SELECT pg_backend_pid()")).scalar_one()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    child = int(os.read(read, 64).decode() or -1)
    os.close(read)
    assert os.waitpid(pid, 0)[1] == 0
    assert child != parent
    with engine.connect() as conn:  # the parent's own connection still works
        assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() == parent


@pytest.mark.postgres
def test_the_demo_never_prints_the_database_password(pg_url):
    from sqlalchemy.engine import make_url

    from npbandit.demo import run_tour

    url = make_url(pg_url).set(password="s3cret-pw").render_as_string(hide_password=False)  # the server trusts anyone
    lines = []
    with pytest.warns(UserWarning):  # a budget inside the initial design, said so
        run_tour(db=url, budget=3, steps=4, say=lines.append)
    assert lines and not any("s3cret-pw" in line for line in lines)
    assert any("***" in line for line in lines)
    forget_engines()


@pytest.mark.postgres
def test_a_seed_of_64_bits_is_stored_and_read_back(any_url):
    from npbandit import optimize
    from npbandit.validation import MAX_SEED

    for seed in (2**40, MAX_SEED):
        optimize(lambda x: float((x ** 2).sum()), [[-1, -1], [1, 1]], surrogate="random", budget=2, db=any_url,
                 progress=False, seed=seed)
    assert [r.seed for r in list_runs(any_url)] == [2**40, MAX_SEED]


@pytest.mark.postgres
def test_a_version_7_database_s_32_bit_seed_column_is_widened_by_a_writer(any_url):
    from npbandit import optimize

    run_episode(WheelBanditEnv(horizon=2), UniformPolicy(), seed=3, logger=RunLogger(any_url), run_info=WHEEL)
    postgres = any_url.startswith("postgresql")
    with open_db(any_url).begin() as conn:  # as schema 7 laid it out: PostgreSQL's runs.seed was a 32-bit INTEGER
        if postgres:
            conn.execute(text("ALTER TABLE runs ALTER COLUMN seed TYPE INTEGER"))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="7"))
    forget_engines()
    assert [r.seed for r in list_runs(any_url)] == [3]  # read as it is
    optimize(lambda x: float((x ** 2).sum()), [[-1, -1], [1, 1]], surrogate="random", budget=2, db=any_url,
             progress=False, seed=2**40)
    assert [r.seed for r in list_runs(any_url)] == [3, 2**40]
    with open_db(any_url, readonly=True).connect() as conn:
        assert conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one() == str(SCHEMA_VERSION)
        (seed_type,) = [c["type"] for c in inspect(conn).get_columns("runs") if c["name"] == "seed"]
    assert not postgres or str(seed_type) == "BIGINT"
    forget_engines()


@pytest.mark.postgres
def test_a_database_records_its_schema_version(any_url):
    open_db(any_url)
    with open_db(any_url).connect() as conn:
        assert conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one() == str(SCHEMA_VERSION)


@pytest.mark.parametrize("stored", [SCHEMA_VERSION + 1, 0])
@pytest.mark.postgres
def test_a_schema_version_mismatch_is_a_clear_error(any_url, stored):
    run_episode(WheelBanditEnv(horizon=5), UniformPolicy(), seed=0, logger=RunLogger(any_url), run_info=WHEEL)
    with open_db(any_url).begin() as conn:  # as another npbandit version would leave it
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value=str(stored)))
    forget_engines()
    hint = "newer npbandit" if stored > SCHEMA_VERSION else "older npbandit"
    for opening in (lambda: RunLogger(any_url), lambda: list_runs(any_url)):
        with pytest.raises(SchemaVersionError,
                           match=f"schema version {stored}.*uses schema version {SCHEMA_VERSION}.*{hint}"):
            opening()
    forget_engines()


@pytest.mark.postgres
def test_a_database_from_before_schema_versions_is_checked_and_stamped(any_url):
    engine = open_db(any_url)
    with engine.begin() as conn:  # what npbandit wrote before it recorded a version
        conn.execute(insert(Run).values(kind="bandit", env_id="x", env_params={}, policy="p", policy_params={},
                                        status="completed", started_at=_now(), heartbeat_at=_now(),
                                        n_steps=0, host="h", pid=1, versions={}))
        Meta.__table__.drop(conn)
    forget_engines()
    assert [r.policy for r in list_runs(any_url)] == ["p"]  # a reader reads it as it is
    RunLogger(any_url)  # a writer stamps it
    with open_db(any_url).connect() as conn:
        assert conn.execute(select(Meta.value)).scalar_one() == str(SCHEMA_VERSION)
    with open_db(any_url).begin() as conn:  # now without a column this version needs
        Meta.__table__.drop(conn)
        conn.execute(text("ALTER TABLE steps DROP COLUMN best_value"))
    forget_engines()
    with pytest.raises(SchemaVersionError, match=r"no schema version.*steps\.best_value"):
        RunLogger(any_url)
    forget_engines()


def _as_version_2(url):
    """The database as an npbandit of schema version 2 leaves it: steps without ``params``."""
    with open_db(url).begin() as conn:
        conn.execute(text("ALTER TABLE steps DROP COLUMN params"))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="2"))
    forget_engines()


def _version_and_step_columns(url):
    with open_db(url, readonly=True).connect() as conn:
        version = conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one()
        return version, {c["name"] for c in inspect(conn).get_columns("steps")}


@pytest.mark.postgres
def test_a_version_2_database_is_read_as_it_is_and_upgraded_in_place_by_a_writer(any_url):
    from npbandit import optimize
    from npbandit.report import report_text

    def sphere(x):
        return float(np.sum(x ** 2))

    old = optimize(sphere, [[-1.0, -1.0], [1.0, 1.0]], surrogate="random", budget=3, db=any_url, progress=False)
    _as_version_2(any_url)
    (run,) = list_runs(any_url)
    assert [s["params"] for s in run_steps(any_url, run.id)] == [None] * 3  # read as it is
    # the best point is still shown by name, decoded from the step's action through the recorded bounds
    x0, x1 = old.best_x
    assert f"best point: run {run.id}, evaluation" in report_text(any_url)
    assert f"x0={x0:.4g}, x1={x1:.4g}" in report_text(any_url)
    assert _version_and_step_columns(any_url)[0] == "2"  # readers never write
    forget_engines()
    new = optimize(sphere, [[-1.0, -1.0], [1.0, 1.0]], surrogate="random", budget=2, db=any_url, progress=False)
    version, columns = _version_and_step_columns(any_url)
    assert version == str(SCHEMA_VERSION) and "params" in columns
    first, second = list_runs(any_url)
    assert [s["params"] for s in run_steps(any_url, first.id)] == [None] * 3  # the old steps kept as they were
    assert [s["params"] for s in run_steps(any_url, second.id)] == [
        {"x0": h["x"][0], "x1": h["x"][1]} for h in new.history]
    forget_engines()


@pytest.mark.postgres
def test_a_run_of_a_version_2_database_is_continued_from_its_points(any_url):
    """Its steps hold no ``params``: the continuation reads each point from the step's action
    through the run's recorded bounds, as the report does."""
    from npbandit import optimize
    from npbandit.storage import run_evaluations

    def sphere(x):
        return float(np.sum(x ** 2))

    box = [[-1.0, 0.0], [1.0, 2.0]]
    old = optimize(sphere, box, surrogate="random", budget=3, db=any_url, progress=False)
    _as_version_2(any_url)
    new = optimize(sphere, box, surrogate="random", budget=2, db=any_url, progress=False, initial=old.run_id)
    assert list_runs(any_url)[-1].policy_params["initial"] == 3
    seen = run_evaluations(any_url, new.run_id)
    assert [s["run_id"] for s in seen] == [old.run_id] * 3 + [new.run_id] * 2
    assert [s["params"] for s in seen[:3]] == [{"x0": pytest.approx(h["x"][0], rel=1e-12, abs=1e-15),
                                               "x1": pytest.approx(h["x"][1], rel=1e-12, abs=1e-15)}
                                              for h in old.history]
    assert [s["params"] for s in run_steps(any_url, old.run_id)] == [None] * 3  # the stored steps as they are
    forget_engines()


@pytest.mark.postgres
def test_a_database_from_before_schema_versions_gets_the_added_columns(any_url):
    run_episode(WheelBanditEnv(horizon=3), UniformPolicy(), seed=0, logger=RunLogger(any_url), run_info=WHEEL)
    with open_db(any_url).begin() as conn:  # without a version, and without a column a later version added
        Meta.__table__.drop(conn)
        conn.execute(text("ALTER TABLE steps DROP COLUMN params"))
    forget_engines()
    (run,) = list_runs(any_url)
    assert len(run_steps(any_url, run.id)) == 3
    RunLogger(any_url)  # a writer adds the column and stamps the version
    assert _version_and_step_columns(any_url) == (str(SCHEMA_VERSION), {c.name for c in Step.__table__.columns})
    forget_engines()


@pytest.mark.postgres
def test_a_version_5_database_gains_the_steps_values_column_a_keyword_quoted(any_url):
    """``values`` is an SQL keyword: the column is added, written and read quoted on either backend."""
    from helpers import log_objectives_run

    old = log_objectives_run(any_url, [[1.0, 2.0]])
    with open_db(any_url).begin() as conn:  # as an npbandit of schema version 5 left it
        conn.execute(text('ALTER TABLE steps DROP COLUMN "values"'))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="5"))
    forget_engines()
    assert [s["values"] for s in run_steps(any_url, old)] == [None]
    assert _version_and_step_columns(any_url)[0] == "5"
    forget_engines()
    new = log_objectives_run(any_url, [[3.0, -4.5], None], seed=1)
    version, columns = _version_and_step_columns(any_url)
    assert version == str(SCHEMA_VERSION) and "values" in columns
    assert [s["values"] for s in run_steps(any_url, old)] == [None]
    assert [s["values"] for s in run_steps(any_url, new)] == [[3.0, -4.5], None]
    forget_engines()


@pytest.mark.postgres
def test_a_version_6_database_gains_the_steps_fixed_column_and_records_fixed_values(any_url):
    from npbandit import Optimizer

    def told(seed, fixed):
        opt = Optimizer([[0.0, 0.0], [1.0, 1.0]], surrogate="random", budget=2, seed=seed, db=any_url)
        for held in (fixed, None):
            trial = opt.ask(fixed=held)
            opt.tell(trial, float(trial.x.sum()))
        opt.close()
        return opt.run_id

    old = told(0, {"x1": 0.3})
    with open_db(any_url).begin() as conn:  # as an npbandit of schema version 6 left it
        conn.execute(text("ALTER TABLE steps DROP COLUMN fixed"))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="6"))
    forget_engines()
    assert [s["fixed"] for s in run_steps(any_url, old)] == [None, None]
    assert _version_and_step_columns(any_url)[0] == "6"
    forget_engines()
    new = told(1, {"x0": 0.1 + 0.2})
    version, columns = _version_and_step_columns(any_url)
    assert version == str(SCHEMA_VERSION) and "fixed" in columns
    assert [s["fixed"] for s in run_steps(any_url, old)] == [None, None]
    first, second = run_steps(any_url, new)
    assert first["fixed"] == {"x0": 0.1 + 0.2} == {"x0": first["params"]["x0"]} and second["fixed"] is None
    forget_engines()


def test_a_missing_driver_is_named():
    with pytest.raises(StorageError, match=r"driver.*pip install -e '\.\[postgres\]'"):
        open_db("postgresql+pg8000://user@localhost/npbandit")
    with pytest.raises(StorageError, match=r"driver.*pip install -e '\.\[postgres\]'"):
        list_runs("postgresql+pg8000://user@localhost/npbandit")


@pytest.mark.postgres
def test_no_duplicate_or_lost_steps_under_many_commits_counted_by_the_server(pg_url):
    # n_steps is updated with each batch, so it agrees with the rows the server holds
    loggers = [RunLogger(pg_url, commit_every=3) for _ in range(2)]
    for logger in loggers:
        logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    for t in range(20):
        for logger in loggers:
            logger.log_step(t=t, action=t, reward=1.0)
    for logger in loggers:
        logger.finish()
    with open_db(pg_url, readonly=True).connect() as conn:
        counts = dict(conn.execute(select(Step.run_id, func.count()).group_by(Step.run_id)).all())
    assert counts == {r.id: r.n_steps for r in list_runs(pg_url)} == {loggers[0].run_id: 20, loggers[1].run_id: 20}


@pytest.mark.postgres
def test_a_writer_refuses_a_postgres_schema_holding_another_applications_tables(cluster, pg_url):
    import psycopg
    from sqlalchemy.engine import make_url

    dbname = make_url(pg_url).database
    with psycopg.connect(host=str(cluster.dir), port=5432, user="npbandit", dbname=dbname, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id serial PRIMARY KEY, total numeric)")
    for opening in (lambda: RunLogger(pg_url), lambda: list_runs(pg_url)):
        with pytest.raises(StorageError, match=r"default schema holds invoices.*not an npbandit database.*search_path"):
            opening()
    with psycopg.connect(host=str(cluster.dir), port=5432, user="npbandit", dbname=dbname, autocommit=True) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert tables == {"invoices"}  # nothing created
        conn.execute("CREATE SCHEMA npbandit")
    # the hint works: a schema of its own in the same database
    own = pg_url + "&options=-csearch_path%3Dnpbandit"
    run_episode(WheelBanditEnv(horizon=5), UniformPolicy(), seed=0, logger=RunLogger(own), run_info=WHEEL)
    assert [r.n_steps for r in list_runs(own)] == [5]
    forget_engines()


@pytest.mark.postgres
def test_a_setting_that_is_not_a_finite_number_is_refused_alike_on_every_database(any_url):
    # SQLite would store a NaN in a JSON column and PostgreSQL refuse it: refused on both, naming the setting,
    # before the run is written
    class NaNSetting(UniformPolicy):
        def params(self):
            return {**super().params(), "temperature": float("nan")}

    with pytest.raises(ValueError, match=r"policy_params \(policy 'uniform'.*\) must hold JSON values only \(finite"):
        run_episode(WheelBanditEnv(horizon=3), NaNSetting(), seed=0, logger=RunLogger(any_url), run_info=WHEEL)
    with pytest.raises(ValueError, match=r"env_params must hold JSON values only \(finite numbers\)"):
        RunLogger(any_url).start(kind="bandit", env_id="e", env_params={"delta": float("inf")}, policy="p")
    if any_url.startswith("sqlite"):
        assert not os.path.exists(any_url.removeprefix("sqlite:///"))  # nothing written, not even the file
    else:
        assert list_runs(any_url) == []


CLAIMED = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5, "horizon": 3},
           "policy": "uniform", "seed": 0}


@pytest.mark.postgres
def test_a_claimed_start_is_refused_while_the_same_run_is_live_or_completed_and_writes_nothing(any_url):
    """``RunLogger(claim=True)`` starts a run only if the database holds no run of its key
    (its steps counted as its horizon) completed or running in a live process."""
    from npbandit.storage import RunMadeElsewhere

    first = RunLogger(any_url, claim=True)
    first_id = first.start(**CLAIMED)
    second = RunLogger(any_url, claim=True)
    with pytest.raises(RunMadeElsewhere, match=rf"run {first_id} of .* is the same run, running") as caught:
        second.start(**CLAIMED)
    assert caught.value.run.id == first_id and caught.value.run.status == "running"
    assert second.run_id is None and [r.id for r in list_runs(any_url)] == [first_id]  # nothing written
    second.finish("failed", "nothing to finish")  # as run_episode does when start raises: a no-op
    assert [r.id for r in list_runs(any_url)] == [first_id]
    # another seed, another horizon or another setting is another run; without claim, nothing is looked at
    other_ids = [RunLogger(any_url, claim=True).start(**{**CLAIMED, "seed": 1}),
                 RunLogger(any_url, claim=True).start(**{**CLAIMED, "env_params": {"delta": 0.5, "horizon": 4}}),
                 RunLogger(any_url, claim=True).start(**CLAIMED, policy_params={"alpha": 1.0}),
                 RunLogger(any_url).start(**CLAIMED)]
    assert len(set(other_ids)) == 4 and first_id not in other_ids
    for t in range(3):
        first.log_step(t=t, action=0, reward=1.0)
    first.finish("completed")
    with pytest.raises(RunMadeElsewhere, match=rf"run {first_id} of .* is the same run, completed") as caught:
        RunLogger(any_url, claim=True).start(**CLAIMED)
    assert caught.value.run.status == "completed"
    # a run that failed or was interrupted is no claim on its key: it is run again
    failed = RunLogger(any_url, claim=True)
    failed.start(**{**CLAIMED, "seed": 7})
    failed.finish("failed", "boom")
    assert RunLogger(any_url, claim=True).start(**{**CLAIMED, "seed": 7}) > failed.run_id


@pytest.mark.postgres
def test_of_many_claims_of_one_run_at_once_exactly_one_starts_it(any_url):
    """Writers claiming the same run at the same moment: the look and the insert are one
    transaction that claims take one at a time, so one starts it and the others find it."""
    import threading

    from npbandit.storage import RunMadeElsewhere

    open_db(any_url)  # the schema exists before the race
    barrier, outcomes = threading.Barrier(6), []

    def claim():
        logger = RunLogger(any_url, claim=True)
        barrier.wait(30)
        try:
            outcomes.append(("started", logger.start(**CLAIMED)))
        except RunMadeElsewhere as err:
            outcomes.append(("found", err.run.id))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    started = [run_id for what, run_id in outcomes if what == "started"]
    assert len(outcomes) == 6 and len(started) == 1
    assert {run_id for _, run_id in outcomes} == set(started)
    assert [r.id for r in list_runs(any_url)] == started


def test_a_claim_needs_the_run_s_horizon_and_a_bool(tmp_path):
    db = str(tmp_path / "runs.db")
    with pytest.raises(TypeError, match=r"claim must be a bool, got 'yes'"):
        RunLogger(db, claim="yes")
    with pytest.raises(ValueError, match=r"claim=True needs the run's horizon: env_params\['horizon'\] must be an "
                                         r"int >= 1, got None"):
        RunLogger(db, claim=True).start(**{**CLAIMED, "env_params": {"delta": 0.5}})
    assert not os.path.exists(db)  # refused before anything is written


@pytest.mark.postgres
def test_a_claim_sees_a_run_started_while_it_waited_on_a_database_whose_transactions_default_to_repeatable_read(
        pg_url):
    """A database set to ``default_transaction_isolation = 'repeatable read'`` takes a claim's
    snapshot at its first statement, the lock it waits on: the run another process started while
    it waited would be invisible to its look, and the run made twice. The claim's transaction reads
    committed data whatever the database's default, so it finds that run."""
    import threading

    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    from npbandit.storage import RunMadeElsewhere

    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{make_url(pg_url).database}" '
                              "SET default_transaction_isolation = 'repeatable read'"))
        open_db(pg_url)  # the schema exists before the claim
        outcome = []

        def claim():
            try:
                outcome.append(("started", RunLogger(pg_url, claim=True).start(**CLAIMED)))
            except RunMadeElsewhere as err:
                outcome.append(("found", err.run.id))

        with admin.connect() as holder:  # holds the claims' lock, as a claim in progress elsewhere does
            holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": storage_engine._RUN_START_LOCK})
            thread = threading.Thread(target=claim)
            thread.start()
            deadline = time.monotonic() + 60
            while not holder.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                                          "AND NOT granted")).scalar() and time.monotonic() < deadline:
                time.sleep(0.01)  # until the claim waits for the lock, its transaction begun
            elsewhere = RunLogger(pg_url).start(**CLAIMED)  # the run, started and committed meanwhile
            holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": storage_engine._RUN_START_LOCK})
            thread.join(60)
        assert outcome == [("found", elsewhere)]
        assert [r.id for r in list_runs(pg_url)] == [elsewhere]
    finally:
        admin.dispose()
