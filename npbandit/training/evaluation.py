"""Fixed-seed evaluation sets and target log-likelihood evaluation.

Every prior has an *evaluation suite*: the named sub-priors a checkpoint is scored
on, declared by the prior class (:meth:`~npbandit.priors.Prior.evaluation_suite`;
``gp1d``: RBF and Matérn-5/2; ``bo``: each input dimension 1..6; ``wheel`` and any prior
that declares none: the training distribution). Evaluation batches come from a seed stream disjoint from
training's, and can be cached to disk (safetensors) so repeated evaluations read the
same tasks without drawing them again.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save

from npbandit.priors import PRIORS, Prior, TaskBatch, make_prior
from npbandit.surrogates import NeuralProcess
from npbandit.surrogates.checkpoint_files import replace_file
from npbandit.validation import check_int

__all__ = ["EVAL_SEED", "EVAL_BATCH_SIZE", "evaluation_suite", "eval_batches", "evaluate", "evaluate_suite",
           "cache_dir", "baseline_log_likelihood", "baseline_suite", "BASELINE", "card_evaluation"]

#: what :func:`baseline_log_likelihood` scores, in the words a checkpoint card uses
BASELINE = "N(0, 1) predictions for every target output, ignoring the context"

# Training streams use the run's seed; evaluation uses this one (and its own
# index range), so the two never share a task.
EVAL_SEED = 2_024_000_017

#: tasks per evaluation batch in training's periodic and final evaluations, whatever the
#: run's training batch: the tasks a prior draws depend on the batch size, so runs at
#: different batch sizes are scored on the same held-out tasks only if this is fixed
EVAL_BATCH_SIZE = 16


def evaluation_suite(prior: str, **params: Any) -> dict[str, Prior]:
    """The named priors a checkpoint trained on ``prior`` is scored on: the prior class's
    :meth:`~npbandit.priors.Prior.evaluation_suite` (by default the prior itself; a
    registered prior may declare its own).

    Args:
        prior: a prior name, a key of :data:`~npbandit.priors.PRIORS`.
        **params: that prior's parameters; for ``gp1d`` the suite sets ``kernel``, for
            ``bo`` each entry takes one of ``dims``.

    Returns:
        ``{suite name: prior}``, e.g. ``{"d=1": ..., ..., "d=6": ...}`` for ``bo``.

    Raises:
        ValueError: an unknown prior name.
        TypeError: a parameter the prior does not take, or a suite that is not a non-empty
            ``{str: Prior}`` dict.
    """
    if prior not in PRIORS:
        make_prior(prior)  # raises the standard error for unknown names
    cls = PRIORS[prior]
    suite = cls.evaluation_suite(**params)
    if (not isinstance(suite, dict) or not suite
            or not all(isinstance(k, str) and isinstance(v, Prior) for k, v in suite.items())):
        raise TypeError(f"{cls.__qualname__}.evaluation_suite must return a non-empty dict {{name: Prior}}, got "
                        f"{suite!r}")
    return suite


def cache_dir() -> Path:
    """Where evaluation sets are cached: ``$NPBANDIT_CACHE/evalsets`` or ``~/.cache/npbandit/evalsets``."""
    root = os.environ.get("NPBANDIT_CACHE") or Path.home() / ".cache" / "npbandit"
    return Path(root) / "evalsets"


def _key(prior: Prior, n_batches: int, batch_size: int, seed: int) -> str:
    blob = json.dumps([prior.spec(), n_batches, batch_size, seed], sort_keys=True, default=str)
    return f"{prior.name}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"


def eval_batches(prior: Prior, n_batches: int, batch_size: int = 16, seed: int = EVAL_SEED,
                 cache: bool = False) -> Iterator[TaskBatch]:
    """The fixed evaluation batches of ``prior`` (deterministic in ``seed``).

    With ``cache=True`` the set is written once to :func:`cache_dir` (a file readable as the
    umask allows, so a cache directory may be shared) and read back afterwards (the
    ``info`` of cached batches is empty).

    Args:
        prior: the prior to draw from.
        n_batches: batches in the set (indices ``0..n_batches - 1`` of the stream).
        batch_size: tasks per batch.
        seed: the stream's seed; the default is disjoint from any training run's.
        cache: read / write the set under :func:`cache_dir`.

    Returns:
        An iterator of ``n_batches`` :class:`~npbandit.priors.TaskBatch` es.

    Raises:
        ValueError: ``n_batches`` / ``batch_size`` not a positive int, ``seed`` not an int.
    """
    check_int("n_batches", n_batches, minimum=1)
    check_int("batch_size", batch_size, minimum=1)
    check_int("seed", seed)
    # checked here, when called; the batches come from a generator, which would check only when first read
    return _eval_batches(prior, n_batches, batch_size, seed, cache)


def _eval_batches(prior: Prior, n_batches: int, batch_size: int, seed: int, cache: bool) -> Iterator[TaskBatch]:
    path = cache_dir() / f"{_key(prior, n_batches, batch_size, seed)}.safetensors"
    if cache and path.exists():
        tensors = load_file(str(path))
        for i in range(n_batches):
            yield TaskBatch(tensors[f"{i}.xc"], tensors[f"{i}.yc"], tensors[f"{i}.xt"], tensors[f"{i}.yt"], {})
        return
    stored: dict[str, torch.Tensor] = {}
    for i in range(n_batches):
        batch = prior.batch(batch_size, seed, i)
        if cache:
            stored.update({f"{i}.xc": batch.xc, f"{i}.yc": batch.yc, f"{i}.xt": batch.xt, f"{i}.yt": batch.yt})
        yield batch
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        # serialised here and written whole by replace_file, not by save_file, whose file is readable by its owner
        # alone whatever the umask: $NPBANDIT_CACHE may be a directory users or workers of other uids share
        replace_file(path, save({k: v.contiguous() for k, v in stored.items()}))


@torch.no_grad()
def evaluate(model: NeuralProcess, batches: Iterator[TaskBatch] | list[TaskBatch], joint: bool = False) -> float:
    """Mean target log-likelihood over batches, weighting every task's targets equally
    (the papers' metric: per batch, mean over tasks and targets; then mean over batches).

    ``joint``: score each task's targets together instead
    (:meth:`~npbandit.surrogates.NeuralProcess.joint_log_likelihood`, its joint
    log-density per target; CMANP-AND in blocks of its ``block_size``). Equal to the
    marginal score for a diagonal model.

    Args:
        model: the surrogate (evaluated in eval mode; its mode is restored after).
        batches: task batches, moved to the model's device and dtype.
        joint: score the targets jointly (above).

    Returns:
        The mean, over batches, of each batch's mean target log-likelihood.

    Raises:
        ValueError: ``batches`` is empty.
    """
    was_training = model.training
    model.eval()
    weight = next(model.parameters())
    total, count = 0.0, 0
    for batch in batches:
        b = batch.to(weight.device, weight.dtype)
        score = model.joint_log_likelihood if joint else model.log_likelihood
        total += float(score(b.xc, b.yc, b.xt, b.yt))
        count += 1
    model.train(was_training)
    if count == 0:
        raise ValueError("no evaluation batches")
    return total / count


def evaluate_suite(model: NeuralProcess, prior: str, n_batches: int, batch_size: int = 16,
                   cache: bool = False, prior_params: dict[str, Any] | None = None,
                   joint: bool = False) -> dict[str, float]:
    """``{suite name: mean target log-likelihood}`` on each prior of the evaluation suite
    (``joint``: see :func:`evaluate`)."""
    suite = evaluation_suite(prior, **(prior_params or {}))
    return {name: evaluate(model, eval_batches(p, n_batches, batch_size, cache=cache), joint=joint)
            for name, p in suite.items()}


def baseline_log_likelihood(batches: Iterator[TaskBatch] | list[TaskBatch]) -> float:
    """The mean target log-likelihood of a predictor that ignores the context and says
    ``N(0, 1)`` for every output (:data:`BASELINE`), weighted as :func:`evaluate` weights a
    model's (log-densities summed over the ``dy`` outputs, averaged over tasks and targets,
    then over batches). The yardstick for a card's log-likelihoods: its value depends on
    the prior's output scale (a 5-output wheel task sums five densities), so a model's
    score means something only next to the baseline on the same tasks.

    Args:
        batches: task batches; only ``yt`` (``[B, M, dy]``) is read.
    """
    total, count = 0.0, 0
    for batch in batches:
        yt = batch.yt.double()
        total += float((-0.5 * yt.square() - 0.5 * math.log(2 * math.pi)).sum(-1).mean())
        count += 1
    if count == 0:
        raise ValueError("no evaluation batches")
    return total / count


def baseline_suite(prior: str, n_batches: int, batch_size: int = 16, cache: bool = False,
                   prior_params: dict[str, Any] | None = None) -> dict[str, float]:
    """``{suite name: N(0, 1) baseline}`` on the same batches :func:`evaluate_suite` scores."""
    suite = evaluation_suite(prior, **(prior_params or {}))
    return {name: baseline_log_likelihood(eval_batches(p, n_batches, batch_size, cache=cache))
            for name, p in suite.items()}


def card_evaluation(model: NeuralProcess, prior: str, n_batches: int, batch_size: int = EVAL_BATCH_SIZE,
                    prior_params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A checkpoint card's ``evaluation`` block: ``model``'s mean target log-likelihood on each
    prior of ``prior``'s evaluation suite (``n_batches`` batches of ``batch_size`` tasks from
    :data:`EVAL_SEED`, ``prior_params`` applied), the :data:`BASELINE` on the same tasks and, for
    a joint-predictive model, the joint score beside them; values rounded to 4 decimals."""
    def rounded(scores: dict[str, float]) -> dict[str, float]:
        return {k: round(v, 4) for k, v in scores.items()}

    evaluation = {"metric": "mean target log-likelihood", "batches_per_entry": n_batches,
                  "prior_params": prior_params, "batch_size": batch_size,
                  "seed": "npbandit.training.evaluation.EVAL_SEED",
                  "log_likelihood": rounded(evaluate_suite(model, prior, n_batches, batch_size,
                                                           prior_params=prior_params)),
                  "baseline": BASELINE,
                  "baseline_log_likelihood": rounded(baseline_suite(prior, n_batches, batch_size,
                                                                    prior_params=prior_params))}
    if model.joint_predictive:
        # the papers' joint metric beside the marginal one, on the same tasks
        evaluation.update({"joint_log_likelihood": rounded(evaluate_suite(model, prior, n_batches, batch_size,
                                                                          prior_params=prior_params, joint=True)),
                           "joint_metric": "joint target log-density per target, targets in "
                                           "autoregressive blocks of joint_block_size (true values folded in)",
                           "joint_block_size": getattr(model.config, "block_size", None)})
    return evaluation
