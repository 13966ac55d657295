"""What one ``optimize_acqf`` LogEI proposal costs with a model that costs nothing: BoTorch's own floor.

Issue 47's bar asks an NP proposal through ``NPModel`` + LogEI ``optimize_acqf`` (10 restarts, 512
raw samples, one thread) to take at most 0.25x a fitted ``SingleTaskGP``'s fit plus the same
optimisation at N = 50. This probe separates the optimiser's and the acquisition's own cost from the
network's. Three models on N uniform points of Hartmann-6 (seeds 0..S-1), one after the other per
seed, each proposal timed alone:

- ``free``: a BoTorch ``Model`` whose posterior is a closed-form Gaussian (mean a smooth bowl, a
  constant variance): no network, no kernel; what is left is LogEI, the posterior object, the
  raw-sample screen and scipy's L-BFGS-B through BoTorch's wrapper;
- ``gp``: ``SingleTaskGP`` (Normalize, Standardize) fitted with ``fit_gpytorch_mll``, then the same
  optimisation (the bar's reference; the fit is timed with it);
- ``np``: ``NPModel.from_pretrained(checkpoint, X, Y, bounds=...)``, then the same optimisation.

Per model: seconds per proposal, acquisition evaluations (forward calls of the acquisition
function, the raw-sample screen included) and ms per evaluation, medians over seeds. The reading:
``free``'s ms per evaluation times the NP's evaluations is what the NP's proposal would cost with
a network that took no time at all.

    python experiments/probes/probe_optimize_acqf_floor.py --seeds 10 --n 50
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings


def _free_model(d: int):
    """A BoTorch model with a closed-form Gaussian posterior: mean ``-|x - 0.3|^2``, variance 0.05."""
    import torch
    from botorch.models.model import Model
    from botorch.posteriors import GPyTorchPosterior
    from gpytorch.distributions import MultivariateNormal

    class FreeModel(Model):
        num_outputs = 1

        def posterior(self, X, output_indices=None, observation_noise=False, posterior_transform=None):
            mean = -((X - 0.3) ** 2).sum(-1)
            cov = torch.diag_embed(torch.full_like(mean, 0.05))
            return GPyTorchPosterior(MultivariateNormal(mean, cov))

    del d
    return FreeModel()


def _propose(model, best_f: float, bounds):
    """One LogEI proposal by ``optimize_acqf`` (10 restarts, 512 raw samples); returns the number of
    acquisition evaluations."""
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf

    acq = LogExpectedImprovement(model, best_f=best_f)
    calls = [0]
    forward = acq.forward

    def counted(X):
        calls[0] += 1
        return forward(X)

    acq.forward = counted  # an instance attribute: counts this object's calls only
    optimize_acqf(acq, bounds=bounds, q=1, num_restarts=10, raw_samples=512)
    return calls[0]


def main(argv: list[str] | None = None) -> None:
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Normalize, Standardize
    from botorch.test_functions import Hartmann
    from gpytorch.mlls import ExactMarginalLogLikelihood

    from npbandit.models import NPModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="tnpd-bo")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    d = 6
    f = Hartmann(dim=d, negate=True)
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).double()
    rows: dict[str, list[tuple[float, int]]] = {"free": [], "gp": [], "np": []}
    for seed in range(-1, args.seeds):  # seed -1: a warm-up, not recorded
        gen = torch.Generator().manual_seed(max(seed, 0))
        X = torch.rand(args.n, d, generator=gen, dtype=torch.float64)
        Y = f(X).unsqueeze(-1)
        best = float(Y.max())
        torch.manual_seed(max(seed, 0))
        t = time.perf_counter()
        evals = _propose(_free_model(d), 0.0, bounds)
        free = (time.perf_counter() - t, evals)
        torch.manual_seed(max(seed, 0))
        t = time.perf_counter()
        gp = SingleTaskGP(X, Y, input_transform=Normalize(d=d), outcome_transform=Standardize(m=1))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        evals = _propose(gp, best, bounds)
        gp_row = (time.perf_counter() - t, evals)
        torch.manual_seed(max(seed, 0))
        t = time.perf_counter()
        model = NPModel.from_pretrained(args.checkpoint, X, Y, bounds=bounds)
        evals = _propose(model, best, bounds)
        np_row = (time.perf_counter() - t, evals)
        if seed >= 0:
            rows["free"].append(free)
            rows["gp"].append(gp_row)
            rows["np"].append(np_row)
    print(f"Hartmann-6, N = {args.n}, seeds 0..{args.seeds - 1}, one torch thread; "
          f"np: {args.checkpoint}; medians over seeds")
    print("| model | s/proposal | evaluations | ms/evaluation |")
    print("|---|---:|---:|---:|")
    for name, cells in rows.items():
        s = statistics.median(c[0] for c in cells)
        e = statistics.median(c[1] for c in cells)
        ms = statistics.median(1000 * c[0] / c[1] for c in cells)
        print(f"| {name} | {s:.3f} | {e:g} | {ms:.2f} |")
    free_ms = statistics.median(1000 * c[0] / c[1] for c in rows["free"])
    np_evals = statistics.median(c[1] for c in rows["np"])
    gp_s = statistics.median(c[0] for c in rows["gp"])
    print(f"free model's ms/evaluation x np's evaluations: {free_ms * np_evals / 1000:.3f} s "
          f"= {free_ms * np_evals / 1000 / gp_s:.2f}x the GP's proposal (bar: 0.25x)")


if __name__ == "__main__":
    main()
