"""Question: why does npbandit's search of several objectives end worse than random search on the benchmark's
``dtlz4-d6m4`` (BoTorch ``DTLZ4(dim=6, num_objectives=4)``, 60 trials), and is the loss the model's, the
acquisition's or its optimiser's?

BoTorch 0.18.1's ``DTLZ4`` sets ``_alpha = 100`` and never reads it: it evaluates ``DTLZ2``'s objectives
(``--check-dtlz4`` shows the two agree to the bit), so the problem is DTLZ2 with d = 6 and four objectives, its
front the unit sphere's positive orthant, reached where the last three inputs are 0.5 (``g = 0``); the
benchmark's reference point is 1.1 in every objective.

Three parts, each printed and written to ``--out`` (JSON):

- ``model``: per objective, the NP (``tnpd-bo``, as ``ParetoBOPolicy`` builds it: every output warped by
  ``warp_objectives``) against a ``SingleTaskGP`` of the same outputs (``model="gp"``), fitted on ``n`` uniform
  points, judged on 1000 held-out uniform points and on 1000 near the front (last three inputs within 0.1 of
  0.5) and on 1000 on a face of the cube (one of the first three inputs at 0 or 1, where DTLZ2 puts one or three
  objectives at exactly 0): Spearman rank correlation of the mean, mean Gaussian log-likelihood in the warped
  units, and the share of the truths within two predictive deviations of the mean.
- ``loop``: the search ``optimize(minimize=[True] * 4)`` runs (``ParetoBOPolicy``: 13 Sobol points, then the log
  EHVI over the warped front from the library's reference point), rebuilt from the library's pieces so that one
  piece at a time can be swapped: ``--variants`` of ``model:ref:opt`` with model ``np`` / ``gp`` / ``np<f>`` (the
  NP with its predictive deviations times ``f``: is the NP's uncertainty what the acquisition chases?), ref ``lib``
  (the library's: the front's nadir minus a tenth of each range over every observation) / ``front`` (BoTorch's
  ``infer_reference_point``: the same with the front's range) / ``bench`` (the benchmark's 1.1, warped) and
  opt ``lib`` (the policy's acquisition optimiser) / ``rand`` (the best of 8192 Sobol candidates), and an optional
  fourth field, ``yj`` (default: each objective warped by ``warp_objectives``, as the library does) / ``none`` (the
  objectives as they are, the reference point then in their own units). Per run: the
  final log10 hypervolume gap, and over the proposals the share whose point dominates the benchmark's reference
  point, the share on a face of the cube (one of the first three inputs exactly 0 or 1: an objective exactly
  0), the median ``g`` of the proposals and the library's reference point in the objectives' own units.
  ``random`` is uniform random search on the same seeds.
- ``--check-dtlz4``: the DTLZ4 = DTLZ2 check. ``--db``: the same shares for the runs of a ``bo_multi.py`` database.

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_dtlz4_mo.py --out /tmp/mo58/model.json --parts model \\
        --check-dtlz4
    OMP_NUM_THREADS=1 nice python experiments/probes/probe_dtlz4_mo.py --out /tmp/mo58/loop.json --parts loop \\
        --variants random np:lib:lib np:bench:lib np:front:lib gp:lib:lib gp:bench:lib np:lib:rand --seeds 0 1 2
    OMP_NUM_THREADS=1 nice python experiments/probes/probe_dtlz4_mo.py --out /tmp/mo58/loop2.json --parts loop \\
        --variants np0.5:lib:lib np0.25:lib:lib np:lib:lib:none --seeds 0 1 2
    python experiments/probes/probe_dtlz4_mo.py --out /tmp/mo58/db.json --parts --db /tmp/mo58/dt.db
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

NEAR_FRONT = 0.1  # the held-out set near the front: the last k inputs within this of 0.5
REF = 1.1  # the benchmark's reference point, each objective (minimised)
RAND_CANDIDATES = 8192


def problem():
    from bo_multi import all_problems

    return all_problems()["dtlz4-d6m4"]


def check_dtlz4() -> dict:
    from botorch.test_functions.multi_objective import DTLZ2, DTLZ4

    X = torch.rand(10000, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    diff = (DTLZ4(dim=6, num_objectives=4).evaluate_true(X) - DTLZ2(dim=6, num_objectives=4).evaluate_true(X))
    return {"max_abs_difference_dtlz4_dtlz2": float(diff.abs().max())}


def g_of(X: torch.Tensor, k: int) -> torch.Tensor:
    """DTLZ2's distance function of points ``X [n, d]``: 0 on the front."""
    return ((X[..., -k:] - 0.5) ** 2).sum(-1)


class _ScaledDeviation:
    """A model whose predictive deviations are ``factor`` times ``model``'s, its means unchanged: what the
    acquisition would do with a less (``factor < 1``) uncertain model. Only ``posterior(X).mean`` and
    ``.variance`` (what ``AnalyticLogEHVI`` reads) are given."""

    def __init__(self, model, factor: float) -> None:
        self.model, self.factor, self.num_outputs = model, factor, model.num_outputs

    def posterior(self, X: torch.Tensor):
        from types import SimpleNamespace

        post = self.model.posterior(X)
        return SimpleNamespace(mean=post.mean, variance=post.variance * self.factor ** 2)


def factory(kind: str):
    """The model factory and acquisition optimiser ``ParetoBOPolicy`` takes for ``kind`` (``np``: its default
    checkpoint; ``gp``: ``model="gp"``; ``np<factor>``, e.g. ``np0.5``: the NP with its deviations times the
    factor), with its ``max_context`` and ``n_init``."""
    from npbandit.policies.pareto import ParetoBOPolicy

    pol = ParetoBOPolicy(6, 4, model="gp" if kind == "gp" else "tnpd-bo")
    make = pol.model_factory
    if kind not in ("np", "gp"):
        factor = float(kind.removeprefix("np"))

        def make(X, Y, inner=pol.model_factory):
            return _ScaledDeviation(inner(X, Y), factor)
    return make, pol.acq_optimizer, pol.max_context, pol.n_init


def warp_fits(Y: torch.Tensor):
    """Per column of ``Y [n, m]`` (maximised), the fitted Yeo-Johnson transform ``warp_objectives`` applies."""
    from npbandit.transforms.standardize import output_scale
    from npbandit.transforms.yeo_johnson import YeoJohnson

    assert bool((output_scale(Y) == 1).all()), "this probe assumes outputs that need no power-of-two scale"
    return [YeoJohnson.fit(Y[:, j:j + 1]) for j in range(Y.shape[1])]


class _Identity:
    """No warp: what ``warp_fits`` gives for ``warp="none"``."""

    def forward(self, Y: torch.Tensor) -> torch.Tensor:
        return Y

    def untransform(self, Y: torch.Tensor) -> torch.Tensor:
        return Y


def model_part(seeds: list[int], sizes: list[int]) -> list[dict]:
    from scipy.stats import spearmanr

    from npbandit.acquisition.multi_objective import warp_objectives

    prob = problem()
    f, k, m = prob.fn, prob.fn.k, prob.num_objectives
    rows = []
    for seed in seeds:
        gen = torch.Generator().manual_seed(1000 + seed)
        test_u = torch.rand(1000, 6, generator=gen, dtype=torch.float64)
        test_f = test_u.clone()
        test_f[:, -k:] = 0.5 + NEAR_FRONT * (2 * torch.rand(1000, k, generator=gen, dtype=torch.float64) - 1)
        # on a face: one of the first d - k inputs (which place a point on the front) at 0 or 1
        test_e = torch.rand(1000, 6, generator=gen, dtype=torch.float64)
        which = torch.randint(0, 6 - k, (1000,), generator=gen)
        test_e[torch.arange(1000), which] = torch.randint(0, 2, (1000,), generator=gen).double()
        for n in sizes:
            X = torch.rand(n, 6, generator=gen, dtype=torch.float64)
            Y = -f.evaluate_true(X)
            Yw = warp_objectives(Y, m)
            fits = warp_fits(Y)
            for kind in ("np", "gp"):
                make = factory(kind)[0]
                model = make(X, Yw)
                for name, T in (("uniform", test_u), ("near-front", test_f), ("face", test_e)):
                    truth = -f.evaluate_true(T)
                    with torch.no_grad():
                        post = model.posterior(T.unsqueeze(-2))
                        mu = post.mean.reshape(len(T), -1)[:, :m]
                        sd = post.variance.reshape(len(T), -1)[:, :m].clamp_min(1e-12).sqrt()
                    for j in range(m):
                        tw = fits[j].forward(truth[:, j:j + 1]).squeeze(-1)
                        ll = torch.distributions.Normal(mu[:, j], sd[:, j]).log_prob(tw).mean()
                        rho = spearmanr(mu[:, j].numpy(), tw.numpy()).statistic
                        cover = ((tw - mu[:, j]).abs() <= 2 * sd[:, j]).double().mean()
                        rows.append({"seed": seed, "n": n, "model": kind, "test": name, "objective": j,
                                     "spearman": float(rho), "loglik": float(ll), "cover2sd": float(cover)})
    return rows


def summarise_model(rows: list[dict]) -> None:
    keys = sorted({(r["n"], r["test"], r["model"]) for r in rows})
    print("n | test set | model | Spearman per objective (median over seeds) | log-lik per objective | share within "
          "2 sd, per objective")
    for n, test, kind in keys:
        sel = [r for r in rows if (r["n"], r["test"], r["model"]) == (n, test, kind)]
        rho = [statistics.median(r["spearman"] for r in sel if r["objective"] == j) for j in range(4)]
        ll = [statistics.median(r["loglik"] for r in sel if r["objective"] == j) for j in range(4)]
        cover = [statistics.median(r["cover2sd"] for r in sel if r["objective"] == j) for j in range(4)]
        print(f"{n} | {test} | {kind} | " + " ".join(f"{v:.2f}" for v in rho) + " | "
              + " ".join(f"{v:.2f}" for v in ll) + " | " + " ".join(f"{v:.2f}" for v in cover))


def loop_run(variant: str, seed: int, trials: int) -> dict:
    """One run of ``variant`` (``model:ref:opt`` or ``random``) for ``trials`` evaluations."""
    from bo_multi import GAP_FLOOR, hypervolume

    from npbandit.acquisition.multi_objective import (
        AnalyticLogEHVI,
        _reference_point,
        box_decomposition,
        front_rows,
        pareto_front,
        warp_objectives,
    )
    from npbandit.acquisition.optimizers import maximised
    from npbandit.acquisition.proposal import REPEAT_DISTANCE

    prob = problem()
    f, k, m, d = prob.fn, prob.fn.k, prob.num_objectives, prob.dim
    start = time.perf_counter()
    if variant == "random":
        X = torch.rand(trials, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        F = f.evaluate_true(X)
        gap = math.log10(max(prob.max_hv - hypervolume(F.tolist(), [REF] * m), GAP_FLOOR))
        return {"variant": variant, "seed": seed, "gap": gap, "seconds": 0.0}
    kind, ref_kind, opt_kind, warp = (variant.split(":") + ["yj"])[:4]
    make, optimiser, max_context, n_init = factory(kind)
    X = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed).draw(n_init, dtype=torch.float64)
    F = f.evaluate_true(X)  # minimised
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).to(torch.float64)
    inside, gs, refs, flat, face = [], [], [], [], []
    while len(X) < trials:
        Y = -F
        keep = front_rows(Y, m, 0, max_context)
        fits = warp_fits(Y) if warp == "yj" else [_Identity() for _ in range(m)]
        Yw = warp_objectives(Y, m) if warp == "yj" else Y
        model = make(X[keep], Yw[keep])
        front = pareto_front(Yw, m)
        lib_ref = _reference_point(Yw, front)
        # the library's reference point in the objectives' own (minimised) units
        refs.append([-float(fits[j].untransform(lib_ref[j].reshape(1, 1))[0].reshape(-1)[0]) for j in range(m)])
        if ref_kind == "lib":
            ref = lib_ref
        elif ref_kind == "front":
            from botorch.utils.multi_objective.hypervolume import infer_reference_point

            ref = infer_reference_point(front)
        else:
            bench = torch.tensor([[-REF]], dtype=torch.float64)
            ref = torch.stack([fits[j].forward(bench).reshape(()) for j in range(m)])
            front = front[(front > ref).all(-1)]
        acq = AnalyticLogEHVI(model, box_decomposition(ref, front), m)
        seed_t = seed * 1000 + len(X)
        if opt_kind == "lib":
            cand, vals = maximised(optimiser, acq, bounds, seed_t)
        else:
            cand = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed_t).draw(RAND_CANDIDATES,
                                                                                    dtype=torch.float64)
            with torch.no_grad():
                vals = torch.cat([acq(c.unsqueeze(-2)) for c in cand.split(2048)])
        new = torch.cdist(cand, X).amin(-1) >= REPEAT_DISTANCE
        vals = torch.where(new, vals, -torch.inf)
        x = cand[int(torch.argmax(vals))]
        # how flat the acquisition is: the share of 2048 Sobol points within 1 (log units) of the proposal's value
        pool = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed_t + 1).draw(2048, dtype=torch.float64)
        with torch.no_grad():
            pv = acq(pool.unsqueeze(-2))
        flat.append(float((pv >= vals.max() - 1).double().mean()))
        fx = f.evaluate_true(x.unsqueeze(0))
        inside.append(bool((fx < REF).all()))
        gs.append(float(g_of(x, k)))
        face.append(bool(((x[:d - k] == 0) | (x[:d - k] == 1)).any()))
        X, F = torch.cat([X, x.unsqueeze(0)]), torch.cat([F, fx])
    gap = math.log10(max(prob.max_hv - hypervolume(F.tolist(), [REF] * m), GAP_FLOOR))
    return {"variant": variant, "seed": seed, "gap": gap, "seconds": time.perf_counter() - start,
            "share_inside_ref": statistics.fmean(inside), "share_on_face": statistics.fmean(face),
            "median_g": statistics.median(gs),
            "lib_ref_first": refs[0], "lib_ref_last": refs[-1], "flat_share_median": statistics.median(flat),
            "front_last": int(len(pareto_front(-F, m)))}


def db_part(db: str) -> list[dict]:
    """Per completed ``dtlz4-d6m4`` run in the benchmark database ``db``, over its trials after the 13th: the share
    on a face (one of the first three inputs exactly 0 or 1), the share dominating the benchmark's reference point,
    and the median ``g``."""
    from npbandit.storage import list_runs, run_steps

    rows = []
    for r in sorted(list_runs(db, kind="bo_multi"), key=lambda r: (r.policy, r.seed)):
        if r.env_params.get("problem") != "dtlz4-d6m4" or r.status != "completed":
            continue
        steps = run_steps(db, r.id)[13:]
        X = torch.tensor([[s["action"]["params"][f"x{i}"] for i in range(6)] for s in steps], dtype=torch.float64)
        F = torch.tensor([s["action"]["objectives"] for s in steps], dtype=torch.float64)
        rows.append({"method": r.policy, "seed": r.seed,
                     "share_on_face": float(((X[:, :3] == 0) | (X[:, :3] == 1)).any(-1).double().mean()),
                     "share_inside_ref": float((F < REF).all(-1).double().mean()),
                     "median_g": float(g_of(X, 3).median())})
        print(json.dumps(rows[-1]))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file (rewritten after every run)")
    parser.add_argument("--parts", nargs="*", default=["model", "loop"], choices=["model", "loop"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50], help="training points of the model part")
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--variants", nargs="+", default=["random", "np:lib:lib", "np:bench:lib", "np:lib:rand",
                                                          "gp:lib:lib"])
    parser.add_argument("--check-dtlz4", action="store_true")
    parser.add_argument("--db", help="a bo_multi.py database: print its dtlz4-d6m4 runs' proposals' shares (db_part)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    out: dict = {"args": vars(args)}
    if args.check_dtlz4:
        out["check"] = check_dtlz4()
        print(out["check"])
    if args.db:
        out["db"] = db_part(args.db)
        Path(args.out).write_text(json.dumps(out, indent=1))
    if "model" in args.parts:
        out["model"] = model_part(args.seeds, args.sizes)
        summarise_model(out["model"])
        Path(args.out).write_text(json.dumps(out, indent=1))
    if "loop" in args.parts:
        out["loop"] = []
        for seed in args.seeds:
            for variant in args.variants:
                r = loop_run(variant, seed, args.trials)
                out["loop"].append(r)
                print(json.dumps(r), flush=True)
                Path(args.out).write_text(json.dumps(out, indent=1))
        print("variant | median final log10 gap | per seed")
        for variant in args.variants:
            gaps = [r["gap"] for r in out["loop"] if r["variant"] == variant]
            print(f"{variant} | {statistics.median(gaps):.3f} | " + " ".join(f"{g:.3f}" for g in gaps))


if __name__ == "__main__":
    main()
