"""Meta-training loop: Adam + cosine schedule, gradient clipping, periodic
evaluation, resumable checkpoints, deterministic given a seed.

The batch of step ``t`` is ``prior.batch(batch_size, seed, t)``, so a run resumed
at step ``t`` sees exactly the batches an uninterrupted run would; the model,
the optimiser state and the log are saved together every ``checkpoint_every``
steps (safetensors + JSON, written atomically: :mod:`npbandit.training.run_state`).
"""

from __future__ import annotations

import json
import math
import shlex
import signal
import threading
import time
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from npbandit.priors import PRIORS, make_prior
from npbandit.priors.base import check_model_width, checked_spec
from npbandit.surrogates import NeuralProcess, available_models, build, model_config
from npbandit.surrogates.pretrained import save_pretrained
from npbandit.training.evaluation import EVAL_BATCH_SIZE, card_evaluation, evaluate_suite, evaluation_suite
from npbandit.training.run_state import STATE_JSON, load_state, lock_run, save_state
from npbandit.validation import check_bool, check_device, check_int, check_real, unregistered

__all__ = ["TrainConfig", "train", "TrainResult"]

_OLD_CITATION = "(npbandit.scaling)"  # how a bo prior spec cited npbandit.transforms.standardize before


@dataclass
class TrainConfig:
    """Everything that defines a training run (stored with its checkpoints).

    Attributes:
        model, prior: registry names (``npbandit.surrogates.build``, ``npbandit.priors.make_prior``).
        steps: total optimiser steps (the cosine schedule spans them).
        out: run directory (resumable state, log, final checkpoint).
        size, model_config: model size preset and field overrides.
        prior_params: parameters of the prior.
        name: name of the exported checkpoint (default ``<model>-<prior>``).
        batch_size: tasks per training batch.
        lr: Adam's peak learning rate (the cosine schedule starts there).
        weight_decay: Adam's L2 weight decay.
        grad_clip: the gradient-norm clipping threshold.
        seed: seeds the weights' initialisation and the prior's batch stream.
        checkpoint_every: steps between saves of the resumable state.
        eval_every, eval_batches: periodic evaluation on the prior's evaluation suite,
            ``eval_batches`` batches of :data:`~npbandit.training.evaluation.EVAL_BATCH_SIZE`
            (16) tasks per suite entry whatever ``batch_size`` is, so runs at different
            batch sizes are scored on the same tasks.
        final_eval_batches: batches per suite entry (of 16 tasks) for the card's evaluation.
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``...
        init_from: a checkpoint (shipped name or path) whose weights start the run
            (fine-tuning); its model and config must equal this run's, or the model
            must know how to start from it (CMANP-AND from a CMANP with its encoder
            config: :meth:`NeuralProcess.initialise_from`); a refusal names the fields
            that differ and, where some do, the model, size and overrides that match it.
            The optimiser and the schedule start fresh; the card records the checkpoint's name,
            sha256 and steps.
        loss: ``"sampled"`` (negative log-likelihood of the sampled targets, the
            papers' objective) or ``"expected"`` (its expectation under the targets'
            exact predictive moments given the context, for priors whose batches carry
            ``yt_mean`` / ``yt_var``, and ``yt_cov_factor`` for joint models: the same
            optimum with less gradient noise).
        eval_prior_params: parameters of the prior the periodic and final
            evaluations use (default: ``prior_params``). Lets runs on different
            training priors be scored on the same tasks.

    Raises:
        ValueError / TypeError: a field of the wrong type or out of range (naming it), an
            unknown model, prior or loss, or a ``name`` that is not a plain file name.
    """

    model: str
    prior: str
    steps: int
    out: str
    size: str = "paper"
    model_config: dict[str, Any] = field(default_factory=dict)
    prior_params: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    batch_size: int = 16
    lr: float = 5e-4
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    seed: int = 0
    eval_every: int = 1000
    eval_batches: int = 32
    final_eval_batches: int = 256
    checkpoint_every: int = 500
    device: str = "auto"
    init_from: str | None = None
    loss: str = "sampled"
    eval_prior_params: dict[str, Any] | None = None

    LOSSES = ("sampled", "expected")

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "eval_every", "eval_batches", "final_eval_batches", "checkpoint_every"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("seed", self.seed, minimum=0)
        for name in ("lr", "grad_clip"):
            if not check_real(name, getattr(self, name)) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        check_real("weight_decay", self.weight_decay, low=0.0)
        for name in ("model", "prior", "out", "size", "device"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
        for name in ("model_config", "prior_params") + (() if self.eval_prior_params is None else
                                                         ("eval_prior_params",)):
            if not isinstance(getattr(self, name), dict):
                raise TypeError(f"{name} must be a dict, got {type(getattr(self, name)).__name__}")
        if self.loss not in self.LOSSES:
            raise ValueError(f"loss must be one of {self.LOSSES}, got {self.loss!r}")
        if self.model.lower() not in available_models():
            raise unregistered("model", self.model, available_models(), "npbandit.surrogates.register_model")
        if self.prior not in PRIORS:
            raise unregistered("prior", self.prior, sorted(PRIORS), "npbandit.priors.register_prior")
        if self.name is None:
            self.name = f"{self.model}-{self.prior}"
        # the name is the exported files' stem in `out`: a path would write elsewhere (or fail after training)
        # and train_state would overwrite the resumable state
        if (not isinstance(self.name, str) or not self.name or self.name.startswith(".") or "/" in self.name
                or "\\" in self.name or self.name == Path(STATE_JSON).stem):
            raise ValueError(f"name must be a plain file name (no path, not starting with '.', not "
                             f"{Path(STATE_JSON).stem!r}), got {self.name!r}")

    def identity(self) -> dict[str, Any]:
        """The fields a resumed run must share with the saved one."""
        d = asdict(self)
        for volatile in ("out", "device", "eval_every", "eval_batches", "checkpoint_every", "final_eval_batches",
                         "eval_prior_params"):
            d.pop(volatile)
        return d


@dataclass
class TrainResult:
    """What :func:`train` did: the model, the step reached, the log, the exported card
    (``None`` when it stopped early) and the signal that stopped it, if one did."""

    model: NeuralProcess
    step: int
    log: list[dict[str, Any]]
    card: Path | None
    stopped_by: int | None = None  # SIGINT / SIGTERM: saved and stopped early


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return check_device("device (--device)", name)


def cosine_lr(base: float, step: int, total: int) -> float:
    """Learning rate for ``step`` (0-based) of a cosine schedule over ``total`` steps."""
    return 0.5 * base * (1 + math.cos(math.pi * min(step, total) / total))


def _differing_keys(a: dict[str, Any], b: dict[str, Any], defaults: dict[str, Any] | None = None) -> list[str]:
    """Keys whose values differ; a key missing on one side reads as ``defaults[key]``
    (None when not given), so states saved before a field existed still compare equal."""
    defaults = defaults or {}
    return sorted(k for k in set(a) | set(b) if a.get(k, defaults.get(k)) != b.get(k, defaults.get(k)))


def _config_defaults() -> dict[str, Any]:
    return {f.name: f.default for f in fields(TrainConfig) if f.default is not MISSING}


def _same_architecture(config: TrainConfig, saved: dict[str, Any]) -> bool:
    """Whether the saved run's size and overrides resolve to the config this one's do."""
    try:
        before = model_config(config.model, size=saved.get("size", "paper"), **saved.get("model_config", {}))
    except (TypeError, ValueError):
        return False
    return before == model_config(config.model, size=config.size, **config.model_config)


def _is_final_card(path: Path, steps: int) -> bool:
    """Whether ``path`` is the card of the finished run (not of an --export-now on the way)."""
    try:
        training = json.loads(path.read_text()).get("training", {})
    except (OSError, ValueError):
        return False
    return training.get("steps") == steps and "schedule_steps" not in training


def _check_eval_params(config: TrainConfig, eval_params: dict[str, Any]) -> dict[str, Any]:
    """Build the evaluation suite once before training (and return it), so a misspelt
    ``--eval-prior-set`` fails now rather than at the first evaluation; refuse a parameter the
    suite sets itself (the prior's ``suite_fixed``: gp1d's ``kernel``, its suite scoring both kernels)."""
    fixed = sorted(set(PRIORS[config.prior].suite_fixed) & set(config.eval_prior_params or {}))
    if fixed:
        raise ValueError(f"eval_prior_params (--eval-prior-set): the {config.prior} suite sets {fixed} itself; "
                         "they cannot be set")
    try:
        return evaluation_suite(config.prior, **eval_params)
    except TypeError as err:
        flag = "eval_prior_params (--eval-prior-set)" if config.eval_prior_params is not None else \
            "prior_params (--prior-set)"
        raise ValueError(f"{flag}: {err}") from None


def _initialise(model: NeuralProcess, checkpoint: str, config: TrainConfig) -> dict[str, Any]:
    """Copy a checkpoint's weights into ``model`` (:meth:`NeuralProcess.initialise_from`:
    the same model and config, or a model that knows how to start from it, as CMANP-AND
    from CMANP); returns its provenance. A refusal says, where some do, the model, size and
    config overrides of ``config`` with which the run would start from it."""
    from npbandit.surrogates.pretrained import load_surrogate

    source = load_surrogate(checkpoint)  # verifies the card, the sha256 and that the weights fit its config
    try:
        model.initialise_from(source)
    except ValueError as err:
        raise ValueError(f"init_from={checkpoint!r}: {err}{_how_to_match(model, source, config)}") from None
    card = source.card
    training = card.get("training", {})
    return {"name": card["name"], "sha256": card["sha256"], "steps": training.get("steps"),
            "init_from": training.get("init_from")}


def _how_to_match(model: NeuralProcess, source: NeuralProcess, config: TrainConfig) -> str:
    """What a refused ``init_from`` adds: the model, size preset and config overrides (this
    run's own, and the source's values where the preset's differ) with which a network of
    this run's inputs and outputs does start from ``source`` -- each candidate built and
    tried, so the hint is said only when it holds. Where none does: that the inputs and
    outputs differ, where they do (the prior sets them), else ``""``. This run's model first,
    then the fewest overrides, then this run's size."""
    from npbandit.surrogates import SIZES

    wanted = asdict(source.config)
    best = None
    for family in dict.fromkeys((config.model.lower(), source.name)):
        for size in SIZES:
            preset = asdict(model_config(family, size=size))
            own = {k: v for k, v in config.model_config.items() if k in preset} if family == model.name else {}
            sets = {k: v for k, v in wanted.items() if k in preset and {**preset, **own}[k] != v}
            try:
                build(family, model.x_dim, model.y_dim, size=size, **{**own, **sets}).initialise_from(source)
            except (TypeError, ValueError):
                continue
            rank = (family != model.name, len(sets), size != config.size)
            if best is None or rank < best[0]:
                best = (rank, family, size, {**own, **sets})
    if best is None:
        if (source.x_dim, source.y_dim) == (model.x_dim, model.y_dim):
            return ""
        return (f"; no size or model_config (--size, --set) starts this run from it: the source's inputs and "
                f"outputs ({source.x_dim} -> {source.y_dim}) are not this run's ({model.x_dim} -> {model.y_dim}), "
                "which its prior sets")
    _, family, size, sets = best

    def value(v: Any) -> str:  # as --set reads it back: JSON, else the string itself
        if isinstance(v, str):
            try:
                json.loads(v)
            except ValueError:
                return v
        return json.dumps(v)

    flags = ([f"--model {family}"] if family != model.name else []) + [f"--size {size}"] + [
        f"--set {shlex.quote(f'{k}={value(v)}')}" for k, v in sets.items()]
    said = ([f"model {family!r}"] if family != model.name else []) + [f"size {size!r}", f"model_config {sets}"]
    return f"; to start from it, train with {', '.join(said)} (on the command line: {' '.join(flags)})"


class _PriorStream(torch.utils.data.IterableDataset):
    """Batches ``start, start + 1, ...`` of a prior's stream; with ``W`` loader workers,
    worker ``w`` draws the indices ``= w (mod W)`` and the DataLoader's round-robin
    order hands them back in sequence, so the stream is the same for any ``W``.
    ``device``: where each batch is drawn (``Prior.batch``'s ``device``; only without
    workers, which are CPU processes)."""

    def __init__(self, prior: Any, batch_size: int, seed: int, start: int, stop: int,
                 device: torch.device | None = None) -> None:
        self.prior, self.batch_size, self.seed, self.start, self.stop = prior, batch_size, seed, start, stop
        self.device = device

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        if info is not None:
            torch.set_num_threads(1)  # workers share the machine with the optimiser
        for index in range(self.start + worker, self.stop, workers):
            yield self.prior.batch(self.batch_size, self.seed, index, self.device)


def _batches(prior: Any, config: TrainConfig, start: int, stop: int, workers: int, device: torch.device):
    if workers == 0:  # drawn here, on the training device (a GPU does a GP prior's Cholesky factors)
        return iter(_PriorStream(prior, config.batch_size, config.seed, start, stop, device))
    stream = _PriorStream(prior, config.batch_size, config.seed, start, stop)
    return iter(torch.utils.data.DataLoader(stream, batch_size=None, num_workers=workers, prefetch_factor=4,
                                            persistent_workers=False))


class _StopRequests:
    """SIGINT / SIGTERM during training ask the loop to save its state and stop after
    the current step (a second SIGINT interrupts at once); with ``immediate`` (the card's
    evaluation, which has no steps to stop between) either interrupts at once, as a
    ``KeyboardInterrupt``, and ``signum`` says which. Only in the main thread, where Python
    delivers signals; the previous handlers come back on exit."""

    def __init__(self, immediate: bool = False) -> None:
        self.requested = False
        self.immediate = immediate
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.immediate:
            self.signum = signum
            raise KeyboardInterrupt
        if self.requested and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = True
        self.signum = signum

    def __enter__(self) -> _StopRequests:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def _loop(config: TrainConfig, prior: Any, model: NeuralProcess, optimizer: torch.optim.Optimizer, batches: Any,
          device: torch.device, out: Path, prior_spec: dict[str, Any], log: list[dict[str, Any]], bar: Any,
          step: int, last: int, started: float, call_started: float, stop_after_s: float | None,
          eval_params: dict[str, Any], stop: _StopRequests, initial: dict[str, Any] | None,
          running: float | None) -> int:
    """Optimiser steps from ``step`` up to ``last``, the training loss's running average
    going on from ``running`` (``None``: seeded by the first step's loss); saves the state
    every ``checkpoint_every`` steps and where it stops. Returns the step reached."""
    while step < last:
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(config.lr, step, config.steps)
        batch = next(batches).to(device)
        optimizer.zero_grad(set_to_none=True)
        if config.loss == "expected":
            # a joint model's expected loss needs the targets' joint covariance, not only its diagonal
            needed = ("yt_mean", "yt_var", "yt_cov_factor") if model.joint_predictive else ("yt_mean", "yt_var")
            if any(getattr(batch, name) is None for name in needed):
                raise ValueError(f"loss='expected' for {model.name!r} needs a prior whose batches carry "
                                 f"{' / '.join(needed)}; {config.prior!r} with {config.prior_params} does not")
            moments = {"yt_var": batch.yt_var}
            if model.joint_predictive:
                moments["yt_cov_factor"] = batch.yt_cov_factor
            loss = model.training_loss(batch.xc, batch.yc, batch.xt, batch.yt_mean, **moments)
        else:
            loss = model.training_loss(batch.xc, batch.yc, batch.xt, batch.yt)
        # 1-based in messages, as the progress bar and the log count steps; raised before the weights change,
        # so the saved state stays the last good one
        if not torch.isfinite(loss):
            raise FloatingPointError(f"non-finite loss {loss.item()} at step {step + 1}; the state saved at an "
                                     "earlier step is intact: lower --lr (or check the prior) and start again")
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        if not torch.isfinite(norm):
            raise FloatingPointError(f"non-finite gradient norm at step {step + 1}; the state saved at an earlier "
                                     "step is intact: lower --lr (or check the prior) and start again")
        optimizer.step()
        step += 1
        running = loss.item() if running is None else 0.98 * running + 0.02 * loss.item()
        bar.update(1)
        bar.set_postfix(loss=f"{running:.3f}")
        if step % config.eval_every == 0 or step == config.steps:
            scores = evaluate_suite(model, config.prior, config.eval_batches, EVAL_BATCH_SIZE,
                                    prior_params=eval_params)
            entry = {"step": step, "train_loss": running, "eval_ll": scores,
                     "elapsed_s": time.perf_counter() - started, "device": device.type}
            if config.eval_prior_params is not None:  # another yardstick than the training prior: say which
                entry["eval_prior_params"] = eval_params
            log.append(entry)
            bar.write(f"step {step}: train loss {running:.3f}, eval ll " +
                      ", ".join(f"{k} {v:.3f}" for k, v in scores.items()))
        out_of_time = ((stop_after_s is not None and time.perf_counter() - call_started >= stop_after_s)
                       or stop.requested)
        if step % config.checkpoint_every == 0 or step == last or out_of_time:
            save_state(out, config.identity(), prior_spec, model, optimizer, step, log, time.perf_counter() - started,
                       initial, running)
        if out_of_time:
            break
    return step


def train(config: TrainConfig, *, progress: bool = True, export: bool = True, stop_at: int | None = None,
          stop_after_s: float | None = None, export_now: bool = False, loader_workers: int = 0) -> TrainResult:
    """Run (or resume) a training run; export ``<out>/<name>.safetensors`` + card at the end.

    Args:
        config: the run.
        progress: show a progress bar.
        export: export the checkpoint (with its final evaluation) when the run ends.
        stop_at: save the resumable state and return after this step without
            finishing (for time-limited sessions); a later call with the same config
            resumes. SIGINT / SIGTERM do the same: the state is saved after the current
            step and the call returns (no card); during the card's evaluation at the
            end they stop it at once and the call returns the run as saved (no card:
            the same call exports it).
        stop_after_s: likewise, after this many seconds of this call (the state is
            saved at the step where the time ran out).
        export_now: train no further; export the saved state as it stands (a
            checkpoint of a run still in progress). The card's ``steps`` is the state's
            step and ``schedule_steps`` the run's length.
        loader_workers: processes that draw the prior's batches ahead of the
            optimiser on the CPU (0: drawn in this process, on the training device where
            the prior ``computes_on_device``: on a GPU the ``bo`` and ``gp1d`` priors' exact
            GP draws, most of a batch's cost, run there). The batches, and so the run, are
            the same for any number of workers and on any device, up to the device's
            floating-point rounding.

    Returns:
        :class:`TrainResult`: the model (eval mode), the step reached, the log, the
        card's path (``None`` when no card was written) and the stopping signal.

    Resuming: if ``<out>`` holds a saved state of the same run (same model, prior,
    sizes, seed, schedule), training continues from it, with the random generators
    and the ``init_from`` provenance it saved (the source checkpoint is not read
    again: it may have been replaced since); a different run in the same directory
    raises ``ValueError`` rather than mixing the two.

    Raises:
        ValueError: an unusable config (an unknown model or prior, a device this
            machine lacks, evaluation parameters the suite does not take, training or evaluation
            batches that vary in width for a model of fixed width), another run's state in
            ``out``, an ``out`` that is a file, or a state this version cannot load.
        FloatingPointError: the run diverged (non-finite loss, gradients or weights);
            the state saved before it is kept.
    """
    if stop_at is not None:
        check_int("stop_at", stop_at, minimum=1)
    if stop_after_s is not None:
        check_real("stop_after_s", stop_after_s, low=0.0)
    check_bool("export_now", export_now)
    if export_now and (stop_at is not None or stop_after_s is not None):
        raise ValueError("export_now (--export-now) trains no further: stop_at / stop_after_s (--stop-at / "
                         "--max-minutes) would be ignored")
    check_int("loader_workers", loader_workers, minimum=0)
    out = Path(config.out)
    if out.exists() and not out.is_dir():  # e.g. the card of a checkpoint: caught now, not by mkdir's bare errno
        raise ValueError(f"out (--out): {out} is a file, not a run directory (the directory that holds the run's "
                         "resumable state and its exported checkpoint)")
    device = _device(config.device)
    prior = make_prior(config.prior, **config.prior_params)
    eval_params = config.prior_params if config.eval_prior_params is None else config.eval_prior_params
    suite = _check_eval_params(config, eval_params)
    torch.manual_seed(config.seed)
    model = build(config.model, prior.x_dim, prior.y_dim, size=config.size, **config.model_config).to(device)
    for which, p in (("training", prior), *((f"evaluation ({k})", v) for k, v in suite.items())):
        check_model_width(p, model.any_x_dim, f"model {config.model!r} (the {which} prior's batches)")
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    step, log, elapsed, running = 0, [], 0.0, None
    # The prior's full spec is checked too: a changed default (not just a changed
    # --prior-set) must not be resumed into a run that started on other data.
    prior_spec = checked_spec(prior)
    meta = json.loads((out / STATE_JSON).read_text()) if (out / STATE_JSON).exists() else None
    if export_now and meta is None:
        raise ValueError(f"export_now (--export-now): {out} holds no saved state to export")
    if meta is not None:
        # compared key by key after a JSON round trip (as saved: a tuple reads back as a list), with a missing
        # key read as its default, so states saved before a field existed (e.g. init_from) still resume
        saved, given = meta["config"], json.loads(json.dumps(config.identity()))
        defaults = json.loads(json.dumps(_config_defaults()))
        differing = _differing_keys(saved, given, defaults)
        if differing and set(differing) <= {"size", "model_config"} and _same_architecture(config, saved):
            differing = []  # e.g. --set d_model=16 where the size preset says 16 already
        if differing:
            detail = "; ".join(f"{k}: saved {saved.get(k, defaults.get(k))!r}, given {given.get(k, defaults.get(k))!r}"
                               for k in differing)
            raise ValueError(f"{out} holds a different run ({detail}); resume it with its own settings, or use "
                             "another --out (to start from its weights: --export-now, then --init-from the export)")
        saved_spec = meta.get("prior_spec", prior_spec)  # states saved before specs were stored: config only
        # the bo spec's "y" once cited its module by the deprecated alias: the same prior
        saved_spec = json.loads(json.dumps(saved_spec).replace(_OLD_CITATION, "(npbandit.transforms.standardize)"))
        if saved_spec != prior_spec:
            raise ValueError(f"{out} holds a run on a different prior (differs in "
                             f"{_differing_keys(saved_spec, prior_spec)}); use another --out")
    # the provenance saved with the state; states saved before it was: read from the source as it is now
    initial = meta.get("init_from") if meta is not None else None
    if config.init_from is not None and (meta is None or "init_from" not in meta):
        initial = _initialise(model, config.init_from, config)
    out.mkdir(parents=True, exist_ok=True)  # after every check: a refused run leaves no directory behind
    # one trainer per run directory (a scheduler's retry beside a live run would overwrite its state);
    # --export-now only reads the state and may run beside it
    lock = None if export_now else lock_run(out)
    try:
        if meta is not None:
            step, log, elapsed, running = load_state(out, model, optimizer, device)
        finished = out / f"{config.name}.json"
        if not export_now and step == config.steps and _is_final_card(finished, config.steps):
            return TrainResult(model.eval(), step, log, finished)  # done: no second final evaluation
        model.train()
        bar = tqdm(total=config.steps, initial=step, desc=config.name, disable=not progress, dynamic_ncols=True)
        started = time.perf_counter() - elapsed
        call_started = time.perf_counter()
        last = config.steps if stop_at is None else min(stop_at, config.steps)
        if export_now:
            last = step
        batches = _batches(prior, config, step, last, loader_workers, device)
        with _StopRequests() as stop:
            step = _loop(config, prior, model, optimizer, batches, device, out, prior_spec, log, bar, step, last,
                         started, call_started, stop_after_s, eval_params, stop, initial, running)
        bar.close()
    finally:
        if lock is not None:
            lock.close()  # releases the lock
    model.eval()
    card = None
    if export and (step == config.steps or export_now):
        # the card's evaluation takes minutes at the default final_eval_batches: a stop there returns the run as
        # saved (the same call exports it), as a stop during the steps does
        try:
            with _StopRequests(immediate=True) as final:
                card = _export(config, model, prior, out, step, log, initial, elapsed, started, device, eval_params,
                               export_now)
        except KeyboardInterrupt:
            return TrainResult(model, step, log, None, stopped_by=final.signum or signal.SIGINT)
    return TrainResult(model, step, log, card, stopped_by=stop.signum if card is None else None)


def _export(config: TrainConfig, model: NeuralProcess, prior: Any, out: Path, step: int, log: list[dict[str, Any]],
            initial: dict[str, Any] | None, elapsed: float, started: float, device: torch.device,
            eval_params: dict[str, Any], export_now: bool) -> Path:
    """Evaluate the model for its card and export it into ``out``; returns the card's path."""
    evaluation = card_evaluation(model, config.prior, config.final_eval_batches, prior_params=eval_params)
    training = {k: v for k, v in config.identity().items() if k not in ("model", "prior", "prior_params", "name")}
    if initial is not None:
        training["init_from"] = initial
    if step < config.steps:
        training.update({"steps": step, "schedule_steps": config.steps})
    if export_now:  # the run's devices, from its log; this call's threads say nothing about the run
        devices = sorted({entry["device"] for entry in log if entry.get("device")})
        training.update({"optimizer": "Adam", "schedule": "cosine",
                         "device": ", ".join(devices) if devices else str(device),
                         "wall_clock_s": round(elapsed, 1)})
    else:
        training.update({"optimizer": "Adam", "schedule": "cosine", "device": str(device),
                         "wall_clock_s": round(time.perf_counter() - started, 1),
                         "torch_threads": torch.get_num_threads()})
    return save_pretrained(model, out, config.name, prior=prior.spec(), training=training, evaluation=evaluation)
