"""Plain helpers (no fixtures: this is no pytest plugin) for tests that need a surrogate with a
card, a bandit that is not the wheel, a prior that is not shipped, count a module's calls, compare
the runs of two databases, start a Dask cluster or wait for processes to end."""

import contextlib
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

from npbandit.envs.linear import LinearBanditEnv
from npbandit.priors import PRIORS, BOPrior, Prior, TaskBatch, WheelPrior, register_prior
from npbandit.storage import list_runs, run_steps
from npbandit.surrogates import build
from npbandit.surrogates.pretrained import save_pretrained

#: the box of the optimize tests, and a bowl on it with its minimum 0 at (0.3, 1.2)
BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


def sphere(x):
    return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum())


def bowl_history(n: int, dim: int = 12, seed: int = 0, constrained: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` uniform points of ``[0, 1]^dim`` and a bowl's values at them, maximised (with
    ``constrained``, a second column ``x_0 - 0.6``: feasible where ``x_0 <= 0.6``): a history for
    the high-dimensional searches' tests."""
    X = torch.rand(n, dim, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    Y = -((X - 0.3) ** 2).sum(dim=-1, keepdim=True)
    if constrained:
        Y = torch.cat([Y, X[:, :1] - 0.6], dim=-1)
    return X, Y


#: the inputs :class:`KnownRelevance` scores highest
KNOWN = [3, 5, 7, 11, 17, 23]


class KnownRelevance:
    """A relevance for ``RedealtSketch`` that scores ``KNOWN`` highest (the others low but
    positive) and records what it was handed."""

    __name__ = "known"

    def __init__(self):
        self.calls = []

    def __call__(self, X, Y):
        self.calls.append((X.clone(), Y.clone()))
        score = torch.full((X.shape[1],), 0.01, dtype=torch.float64)
        score[KNOWN] = torch.arange(1.0, 7.0, dtype=torch.float64)
        return score


def cyclic(X, Y):
    """A relevance exact in floating point: input ``i`` scores ``(7 i + n) % D`` if at least ``D / 2``, else 0."""
    n, D = X.shape
    score = torch.tensor([float((7 * i + n) % D) for i in range(D)], dtype=torch.float64)
    score[score < D // 2] = 0.0
    return score


def check_recorded(strategy, dim, seed, n, constrained, recorded):
    """At every number of rows ``m <= n`` of a fixed history (:func:`bowl_history`), the phase
    starts of ``strategy`` (a ``RedealtSketch``), and the phase's anchor (a row's index), bins and
    signs, are those recorded: ``(start, anchor row, bins as digits, signs as + / -)`` per phase."""
    X, Y = bowl_history(n, dim, seed, constrained)
    search = strategy.bind(dim, 6, seed)
    for m in range(n + 1):
        began = [phase for phase in recorded if phase[0] <= m]
        assert search.phase_starts(Y[:m], int(constrained)) == [phase[0] for phase in began]
        sketch = search.phase_sketch(X[:m], Y[:m], int(constrained))
        if not began:
            assert sketch is None
            continue
        _, anchor, bins, signs = began[-1]
        assert torch.equal(sketch.anchor, X[anchor])
        assert "".join(str(b) for b in sketch.bins.tolist()) == bins
        assert "".join("+" if v > 0 else "-" for v in sketch.signs.tolist()) == signs


def tiny_checkpoint(directory: Path, model: str = "cmanp", prior: str = "bo", seed: int = 0) -> Path:
    """Save a tiny random-weight ``<model>-<prior>`` checkpoint; returns the card path."""
    torch.manual_seed(seed)
    net = build(model, 6 if prior == "bo" else WheelPrior().x_dim, 1 if prior == "bo" else WheelPrior().y_dim,
                size="tiny")
    # a network of any width trains on batches of their own width, a fixed-width one on padded batches
    p = BOPrior(padding="none" if net.any_x_dim else "zeros") if prior == "bo" else WheelPrior()
    return save_pretrained(net, directory, f"{model}-{prior}", prior=p.spec(), training={"steps": 1},
                           evaluation={"log_likelihood": {"test": 0.0}})


class Lines(Prior):
    """A prior npbandit does not ship: ``y = a x`` on ``[0, 1]``, ``a ~ N(0, 1)``, ``n`` context
    and ``n`` target points; it declares no evaluation suite of its own (register it with
    :func:`registered_prior`)."""

    name = "test-lines"
    x_dim, y_dim, input_domain = 1, 1, (0.0, 1.0)

    def __init__(self, n: int = 8) -> None:
        self.n = n

    def sample(self, batch_size, generator):
        x = torch.rand(batch_size, 2 * self.n, 1, generator=generator)
        y = torch.randn(batch_size, 1, 1, generator=generator) * x
        return TaskBatch(x[:, :self.n], y[:, :self.n], x[:, self.n:], y[:, self.n:], {})

    def spec(self):
        return {"name": self.name, "n": self.n}


@contextlib.contextmanager
def registered_prior(cls):
    """``cls`` in the prior registry while the block runs, and then no longer."""
    register_prior(cls)
    try:
        yield cls
    finally:
        PRIORS.pop(cls.name)


@contextlib.contextmanager
def restored_registries():
    """The surrogate-family and prior registries as they were once the block is over, whatever
    it registered (an example, a plugin or a lab script registers classes of its own)."""
    import npbandit.surrogates as surrogates

    models, priors = dict(surrogates._MODELS), dict(PRIORS)
    try:
        yield
    finally:
        surrogates._MODELS.clear()
        surrogates._MODELS.update(models)
        PRIORS.clear()
        PRIORS.update(priors)


class LinearBandit(LinearBanditEnv):
    """``npbandit/LinearBandit-v0`` (a user's bandit of another shape than the wheel's), its
    context ``Box`` widened to ``[low, high]^d`` (``low = -inf``: unbounded; the contexts are
    still drawn in ``[-1, 1]^d``) to test what policies make of such a space."""

    def __init__(self, context_dim: int = 3, n_arms: int = 4, horizon: int = 30, noise_std: float = 0.1,
                 low: float = -1.0, high: float = 1.0) -> None:
        super().__init__(context_dim, n_arms, horizon, noise_std)
        self.observation_space = gym.spaces.Box(low, high, shape=(context_dim,), dtype=np.float32)


class EmbedCounter:
    """Counts the points a module has been called on (a context embedder: points
    embedded; a decoder: target points predicted)."""

    def __init__(self, module):
        self.points = 0
        module.register_forward_hook(self)

    def __call__(self, module, inputs, output):
        self.points += inputs[0].shape[0] * inputs[0].shape[1]


def data_box(X):
    """The data's own range as a ``2 x d`` box (lower row, upper row): what ``Normalize(d)``
    would learn from ``X``, given to it as its ``bounds`` (NPModel refuses learned bounds)."""
    import torch

    return torch.stack([X.min(dim=0).values, X.max(dim=0).values])


def drive_bandit(env, policy, seed, steps, rebuilds=None):
    """Run ``policy`` on ``env`` by hand; returns every round's (context, arm, reward). With a
    list ``rebuilds``, appends the number of rounds each rebuild of a per-arm policy's models
    (a fit, a widening, a re-scaling: a new ``policy.models`` list) was made on."""
    import numpy as np

    obs, _ = env.reset(seed=seed)
    policy.reset(seed)
    rounds = []
    for _ in range(steps):
        models = getattr(policy, "models", None)
        action = policy.act(obs)  # a widening rebuilds on the rounds before this one
        if rebuilds is not None and getattr(policy, "models", None) is not models:
            rebuilds.append(len(rounds))
        next_obs, reward, _, _, info = env.step(action)
        models = getattr(policy, "models", None)
        policy.observe(obs, action, reward, info)  # a fit or a re-scaling on the rounds with this one
        rounds.append((obs.astype(np.float64), action, reward))
        if rebuilds is not None and getattr(policy, "models", None) is not models:
            rebuilds.append(len(rounds))
        obs = next_obs
    return rounds


def per_arm_replay(policy, rounds, built, probe):
    """What a ``PerArmNPPolicy`` that played ``rounds`` predicts at context ``probe``, rebuilt
    apart from it: each arm an ``NPModel`` (``standardize=False``) on its rows among the first
    ``built`` rounds, in ``policy.map``'s coordinates and ``policy.box``, rewards on
    ``policy.scale``, its later rows streamed in; means and variances in reward units."""
    import numpy as np
    import torch

    from npbandit.models import NPModel

    Z = torch.from_numpy(policy.map(np.array([x for x, _, _ in rounds])))
    center, std = policy.scale
    means, variances = [], []
    for arm in range(policy.n_arms):
        rows = [t for t, (_, a, _) in enumerate(rounds) if a == arm]
        Za = Z[rows]
        Y = torch.tensor([[(rounds[t][2] - center) / std] for t in rows], dtype=torch.float64)
        first = sum(t < built for t in rows)
        model = NPModel.from_pretrained(policy.surrogate, Za[:first], Y[:first], bounds=torch.from_numpy(policy.box),
                                        n_views=policy.n_views, standardize=False)
        for i in range(first, len(rows)):
            model = model.condition_on_observations(Za[i:i + 1], Y[i:i + 1])
        with torch.no_grad():
            post = model.posterior(torch.from_numpy(policy.map(probe)).unsqueeze(0))
        means.append(center + std * float(post.mean))
        variances.append(std ** 2 * float(post.variance))
    return np.array(means), np.array(variances)


def running(pids) -> list[int]:
    """Those of ``pids`` whose process has not ended. An ended process that is still a zombie
    counts as ended: reaping it is its parent's business, or PID 1's once its parent is gone
    (and a container's PID 1 may never do it); it holds no memory and no files. Read from
    /proc where there is one, else by signal 0 (which cannot tell a zombie)."""
    import os

    alive = []
    for pid in pids:
        try:
            if Path("/proc").is_dir():
                stat = Path(f"/proc/{pid}/stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] == "Z":  # field 3, after "pid (comm)"
                    continue
            else:
                os.kill(pid, 0)
        except PermissionError:  # another user's process: running
            pass
        except OSError:  # no such process
            continue
        alive.append(pid)
    return alive


def wait_until_ended(pids, seconds: float = 60.0) -> list[int]:
    """Wait until every one of ``pids`` has ended (see :func:`running`), polling, for
    ``seconds`` at most; returns those still running then (``[]``: all ended)."""
    import time

    deadline = time.monotonic() + seconds
    while (alive := running(pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def completed_runs(db: str) -> dict:
    """Each run of database ``db`` (a URL or SQLite path), all of which must be completed: its steps'
    ``(action, reward, regret, value)`` keyed by ``(policy, env params but the benchmark's name,
    seed)``, so that two sweeps of the same runs compare equal wherever they ran."""
    out = {}
    for run in list_runs(db):
        assert run.status == "completed"
        params = {k: v for k, v in run.env_params.items() if k != "benchmark"}
        key = (run.policy, tuple(sorted((k, str(v)) for k, v in params.items())), run.seed)
        out[key] = [(s["action"], s["reward"], s["regret"], s["value"]) for s in run_steps(db, run.id)]
    return out


@contextlib.contextmanager
def dask_client():
    """A client of an in-process Dask cluster: four one-thread workers behind a TCP scheduler, which
    starts in a fraction of a second, still pickles every task, and which a subprocess can reach
    at ``client.scheduler.address`` like a remote cluster. Needs Dask distributed (the 'dask' extra)."""
    import distributed

    with distributed.LocalCluster(n_workers=4, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        yield client


# the storage alone (no torch to import): what a bandit run writes, a step at a time, as run_episode logs it
_WRITER = """
from npbandit.storage import RunLogger
import os, pathlib, random, sys, time
db, ready = sys.argv[1], pathlib.Path(sys.argv[2])
(ready / str(os.getpid())).touch()
while len(list(ready.iterdir())) < 4:
    time.sleep(0.01)
for seed in range(3):
    rng, logger = random.Random(seed), RunLogger(db, commit_every=1)
    logger.start(kind="bandit", env_id="wheel", env_params={"delta": 0.5}, policy="uniform", seed=seed)
    for t in range(100):
        logger.log_step(t=t, action=rng.randrange(5), reward=rng.random(), regret=rng.random())
    logger.finish()
assert "torch" not in sys.modules, "logging a run imported torch"
"""


def four_writers(db: str, tmp_path) -> list[str]:
    """Four processes each log three 100-step bandit runs to ``db`` (a :class:`~npbandit.storage.RunLogger`'s
    writes, without the run loop), committing every step; they
    wait for one another after their imports, so all four write at once however unevenly they
    start. Returns each process's stderr once all have exited (asserting they exited 0)."""
    import subprocess
    import sys

    ready = tmp_path / "ready"
    ready.mkdir(exist_ok=True)
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, db, str(ready)], stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errors
    return errors


def log_objectives_run(db: str, evaluations: list, *, minimize=(True, False), seed: int = 0, policy: str = "sobol",
                       name: str = "pair", constraints: str | None = None, budget: int | None = None,
                       policy_params: dict | None = None, act_s: float = 0.0) -> int:
    """Log a completed black-box run of several objectives by hand, as ``optimize`` records one
    (the rows' contract: ``env_params["minimize"]`` a list of directions, each step's objective
    values in ``values`` with ``value``, ``best_value`` and ``reward`` NULL); returns its id.

    ``evaluations``: one entry per step: the objective values (a list of floats), ``None`` for a
    failed evaluation, or ``(values, constraint_values)`` with ``constraints`` (the constraints'
    name). The points are on the unit square, ``x0 = x1 = t / len(evaluations)``."""
    from npbandit.storage import RunLogger

    minimize = list(minimize)
    env_params = {"objective": name, "dim": 2, "bounds": [[0.0, 0.0], [1.0, 1.0]], "minimize": minimize,
                  "objectives": len(minimize), "budget": budget or len(evaluations), "optimal_value": None}
    if constraints is not None:
        env_params["constraints"] = constraints
    logger = RunLogger(db)
    run_id = logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params=env_params, policy=policy,
                          policy_params=policy_params or {}, seed=seed)
    for t, entry in enumerate(evaluations):
        values, bounds = (entry if isinstance(entry, tuple) else (entry, None))
        x = t / len(evaluations)
        failed = values is None
        logger.log_step(t=t, action=[x, x], params={"x0": x, "x1": x}, values=values, constraints=bounds,
                        failed=failed, error="objective raised RuntimeError: boom" if failed else None,
                        error_kind="raised" if failed else None, act_s=act_s)
    logger.finish()
    return run_id


def drive(opt, objective, steps=None):
    """Ask an ``npbandit.Optimizer`` for a point, evaluate ``objective`` there and tell it, in
    turn: ``steps`` times, or (``None``) until the optimizer completes."""
    told = 0
    while opt.status != "completed" and (steps is None or told < steps):
        trial = opt.ask()
        opt.tell(trial, objective(trial.x))
        told += 1


def forget_engines() -> None:
    """Dispose of and forget every engine ``open_db`` cached (one per URL and mode), as a process
    that ends does: the next open of a database reads it afresh, after a test changed it behind
    the cache's back (as another process or npbandit version would)."""
    from npbandit.storage import engine as storage_engine

    for engine in storage_engine._ENGINES.values():
        engine.dispose()
    storage_engine._ENGINES.clear()
