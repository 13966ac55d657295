"""What grows with the number of evaluations in a step of a long ``optimize`` run, beside the model?

``optimize``'s default (``tnpd-bo``, trust region, ``max_context="checkpoint"``,
``CandidateSearch``) shows the model at most 100 observations, so a proposal's model cost is
bounded; issue 45's bar asks that seconds per proposal at evaluation 1,000 stay within 1.5x
of evaluation 100. Two parts:

- ``--part run``: one run of ``--budget`` evaluations on Hartmann-6 through ``run_episode``
  with the policy ``optimize`` builds (the same ``BOPolicy`` settings; its model factory and
  acquisition optimiser wrapped, by injection, in timers). Per window of 20 proposals
  ending at evaluation 100 and at ``--budget``: the proposal's wall and thread-CPU seconds
  (``act``), the model's share (building it, ``NPModel.from_pretrained``, plus the
  acquisition optimiser's ``maximise``), the rest of ``act``, the rest of the step (the
  write, ``observe``: thread-CPU between two objective calls less ``act``), and the model's
  context size. Thread-CPU seconds move less than wall seconds with the machine's load.
- ``--part arrays``: in one process, what a policy that has observed N points (N = 100,
  1,000, 3,000) spends per step on its bookkeeping: the model's data and the best value as
  ``BOPolicy`` reads them (:class:`npbandit.rows.RowBuffer`), and as restacking the
  observation lists did before (the same values, bit for bit); and ``optimize``'s
  standardisation check, both ways.

Run with another tree on ``PYTHONPATH`` to measure that tree's ``run`` (``arrays``
needs this tree's ``npbandit.rows``). Findings: experiments/log/benchmarks.md, section
long-run.

    python experiments/probes/probe_long_run_overhead.py --part arrays
    python experiments/probes/probe_long_run_overhead.py --part run --seed 2 --budget 1000
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
import warnings

import numpy as np
import torch

WINDOW = 20


def run(seed: int, budget: int) -> dict[str, list]:
    """Per proposal of one run: ``act`` wall / CPU seconds, model seconds, context size; per
    evaluation, the thread-CPU clock when the objective was called and the value it returned."""
    from npbandit.acquisition import CandidateSearch
    from npbandit.envs import BlackBoxEnv
    from npbandit.envs.blackbox import make_test_function, problem_objective
    from npbandit.loop import run_episode
    from npbandit.policies import BOPolicy
    from npbandit.policies.base import PolicyWrapper
    from npbandit.policies.factories import NPModelFactory
    from npbandit.surrogates.pretrained import load_surrogate

    record: dict[str, list] = {"act_s": [], "act_cpu": [], "model_s": [], "context": [], "eval_cpu": [], "value": []}
    spent = {"model_s": 0.0, "context": None}

    class TimedFactory(NPModelFactory):
        def __call__(self, train_X, train_Y):
            start = time.perf_counter()
            model = super().__call__(train_X, train_Y)
            spent["model_s"] += time.perf_counter() - start
            spent["context"] = len(train_X)
            return model

    class TimedSearch(CandidateSearch):
        def maximise(self, acq, bounds, seed):
            start = time.perf_counter()
            found = super().maximise(acq, bounds, seed)
            spent["model_s"] += time.perf_counter() - start
            return found

    class Timed(PolicyWrapper):
        def act(self, obs, pending=None):
            spent["model_s"], spent["context"] = 0.0, None
            cpu, wall = time.thread_time(), time.perf_counter()
            action = self.inner.act(obs, pending)
            record["act_s"].append(time.perf_counter() - wall)
            record["act_cpu"].append(time.thread_time() - cpu)
            record["model_s"].append(spent["model_s"])
            record["context"].append(spent["context"])
            return action

    f = problem_objective(make_test_function("hartmann", 6))

    def objective(x):
        record["eval_cpu"].append(time.thread_time())
        record["value"].append(f(x))
        return record["value"][-1]

    env = BlackBoxEnv(objective=objective, bounds=[[0.0] * 6, [1.0] * 6], budget=budget)
    factory = TimedFactory(load_surrogate("tnpd-bo"), name="tnpd-bo")
    policy = BOPolicy(6, model=factory, budget=budget, threads=1, acq_optimizer=TimedSearch())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_episode(env, Timed(policy), seed=seed)
    return record


def window_summary(record: dict[str, list], end: int) -> dict[str, float]:
    """Medians over the ``WINDOW`` proposals up to evaluation ``end`` (1-based)."""
    part = slice(end - WINDOW, end)
    act, cpu, model = (np.array(record[k][part]) for k in ("act_s", "act_cpu", "model_s"))
    step_cpu = np.diff(record["eval_cpu"])[end - WINDOW - 1:end - 1]  # from evaluation t - 1 to t
    context = [c for c in record["context"][part] if c is not None]
    return {"act_ms": 1e3 * float(np.median(act)), "act_cpu_ms": 1e3 * float(np.median(cpu)),
            "model_ms": 1e3 * float(np.median(model)), "rest_of_act_ms": 1e3 * float(np.median(act - model)),
            "rest_of_step_cpu_ms": 1e3 * float(np.median(step_cpu - cpu)),
            "context": float(statistics.median(context)) if context else float("nan")}


def bookkeeping(n: int, rng: np.random.Generator) -> dict[str, float]:
    """Microseconds per step of the bookkeeping after ``n`` observations, read from the arrays
    and restacked from lists (checked equal, bit for bit)."""
    from npbandit.policies import BOPolicy
    from npbandit.policies.standardised_check import StandardisedDataCheck, standardisable

    policy = BOPolicy(6, model="gp")
    check = StandardisedDataCheck(policy)
    check.reset(0)
    for x in rng.random((n, 6)):
        check.observe(None, x, -float(np.sum((x - 0.5) ** 2)), {})
    rewards = check.rewards.array.tolist()

    def restacked():
        values = policy.Y + [min(policy.Y)] * len(policy.failed)
        Y = torch.tensor(np.asarray(values, dtype=np.float64), dtype=torch.float64).unsqueeze(-1)
        return torch.tensor(np.array(policy.X + policy.failed), dtype=torch.float64), Y, max(policy.Y)

    def from_arrays():
        return (*policy._data(), policy.seen.best)

    X, Y, best = from_arrays()
    X0, Y0, best0 = restacked()
    assert X.numpy().tobytes() == X0.numpy().tobytes() and Y.numpy().tobytes() == Y0.numpy().tobytes()
    assert best == best0

    def us(call) -> float:
        return 1e6 * min(timeit.repeat(call, number=50, repeat=5)) / 50

    return {"n": n, "data_arrays_us": us(from_arrays), "data_restacked_us": us(restacked),
            "check_arrays_us": us(lambda: standardisable(torch.from_numpy(check.rewards.array.copy())[:, None])),
            "check_list_us": us(lambda: standardisable(torch.tensor(rewards, dtype=torch.float64)[:, None]))}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("run", "arrays"), default="arrays")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--early", type=int, default=100)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.part == "arrays":
        rng = np.random.default_rng(0)
        for row in (bookkeeping(n, rng) for n in (100, 1000, 3000)):
            print(" ".join(f"{k} {v:.0f}" if k == "n" else f"{k} {v:.1f}" for k, v in row.items()))
        return
    record = run(args.seed, args.budget)
    for end in (args.early, args.budget):
        summary = window_summary(record, end)
        print(f"seed {args.seed} @{end}: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.items()), flush=True)


if __name__ == "__main__":
    main()
