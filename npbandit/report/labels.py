"""How ``npbandit report`` names a run: in its tables and in its figures' legends.

A row of a table (a line of a figure) is one policy *with one setting*. Runs of one
policy whose logged settings differ (UCB's ``beta``, ``n_init``, the evaluations kept in
flight...) are separate rows, told apart by the settings that differ (:class:`RowKey`). A
run that did not log such a setting shows ``?`` for it (it ran before the setting was
logged), except for a setting logged only when used (``initial``, the earlier evaluations
``optimize(initial=...)`` started from; ``subspace``, a strategy for inputs wider than the
model): a run without it shows nothing of it.

Tables name the policy by its id, as the run recorded it and as the command line takes
it (``tnpd-bo-tr-logei``, ``gp-ucb  beta=2``). Legends name it for a reader
(:func:`policy_label`): ``tnpd-bo-tr-logei`` is ``TNP-D (trust region, LogEI)``, read off
the parts the id is made of -- the surrogate (a checkpoint ``<model>-<prior>``, ``gp``),
an output warp, ``-tr`` for a trust region, and the acquisition or decision rule. A name
given by the user (``labels={"tnpd-bo-tr-logei": "TNP-D"}``, ``npbandit report --label``)
replaces the derived one.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npbandit.storage import RunRow

__all__ = ["RowKey", "row_keys", "policy_label", "check_label_overrides", "MODEL_NAMES", "ACQUISITION_NAMES",
           "BASELINE_NAMES"]

#: a surrogate model's registry name -> its name in the literature
MODEL_NAMES = {"tnpd": "TNP-D", "cmanp": "CMANP", "cmanp-and": "CMANP-AND", "lbanp": "LBANP",
               "retreever": "ReTreever", "te-pt-tnp": "TE-PT-TNP", "datnp": "DATNP", "gp": "GP"}
#: a BO acquisition's or a bandit decision rule's id -> its readable name
ACQUISITION_NAMES = {"logei": "LogEI", "ucb": "UCB", "thompson": "Thompson sampling",
                     "marginal-thompson": "marginal Thompson sampling", "qlognei": "qLogNEI"}
#: output warps (``BOPolicy(output_warp=...)``) -> readable names
WARP_NAMES = {"yeo-johnson": "Yeo-Johnson warp"}
#: policies that are named once and for all (no parts to read), by run kind
BASELINE_NAMES = {"bo": {"sobol": "Sobol search"},
                  "bandit": {"uniform": "Uniform", "linucb": "LinUCB", "lin-ts": "Linear TS", "gp-ucb": "GP-UCB"}}
#: the checkpoint prior a policy of each run kind naturally uses: left out of its readable name
_NATURAL_PRIOR = {"bo": "bo", "bandit": "wheel"}
#: the priors checkpoints are trained on (``<model>-<prior>``)
_PRIORS = ("bo", "wheel", "gp1d")
#: readable names of the settings that tell rows of one policy apart in a legend
_SETTING_NAMES = {"batch_size": "batch size", "n_init": "initial design", "initial": "warm start"}
#: settings a run logs only when it uses them: one without such a setting did without it, and
#: its label says nothing of it (not ``?``); its row stays apart from the runs that logged one
_LOGGED_WHEN_USED = frozenset({"initial", "subspace"})
#: logged policy settings that do not tell rows apart: the problem's width, a continued run's source
_NOT_SETTINGS = frozenset({"dim", "initial_from"})


def _settings(run: RunRow) -> dict[str, Any]:
    """How a run's policy was set up: its logged ``policy_params`` (less ``dim``, which the
    problem fixes, and ``initial_from``, the run a continued run continues: where its given
    points come from, not how it was set up) and, for black-box runs, the evaluations it kept in flight
    (``batch_size``; sequential runs, which do not log it, kept one). A subspace strategy,
    logged as ``subspace`` (its name) and flat ``subspace_<setting>`` keys, is read as one
    named component (``{"name": "redealt-sketch", "phase_start": 40, ...}``), so runs with
    different strategies show the strategies, not each other's settings as missing. The
    checkpoint's hash is one too (``checkpoint``, its first 12 hex digits): two trainings that
    export one name (``cmanp-bo``) are two networks, as a sweep tells their runs apart."""
    out = {k: v for k, v in run.policy_params.items() if k not in _NOT_SETTINGS}
    if run.checkpoint_sha256:
        out["checkpoint"] = run.checkpoint_sha256[:12]
    if isinstance(out.get("subspace"), str):
        strategy = {"name": out["subspace"]}
        for key in [k for k in out if k.startswith("subspace_")]:
            strategy[key[len("subspace_"):]] = out.pop(key)
        out["subspace"] = strategy
    if run.kind == "bo":
        out["batch_size"] = run.env_params.get("batch_size", 1)
    return out


def _setting_text(value: Any, others: Sequence[Any] = ()) -> str:
    """A setting's value as a label shows it: a float in ``%g``, a str as itself, a
    component logged as a dict with a ``"name"`` (``acq_optimizer``) by its name, followed
    by those of its other entries that differ among the values of the same name in
    ``others`` (the values the rows being told apart hold): ``candidate-search``,
    ``candidate-search(rounds=4)``; a dict without a name (the policy of each branch,
    ``branch``) by the entries that differ among the unnamed dicts of ``others``,
    ``(trust_region_budget=17)``; anything else as JSON."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        named = "name" in value
        peers = [o for o in others if isinstance(o, dict) and ("name" in o) == named
                 and (not named or o["name"] == value["name"])]
        keys = sorted({k for p in peers for k in p} - {"name"}, key=str)
        differ = [k for k in keys if len({_canonical(p[k]) if k in p else None for p in peers}) > 1]
        inner = ", ".join(f"{k}={_setting_text(value[k], [p[k] for p in peers if k in p]) if k in value else '?'}"
                          for k in differ)
        if named:
            return _setting_text(value["name"]) + (f"({inner})" if inner else "")
        if inner:
            return f"({inner})"
    return json.dumps(value)


def _canonical(value: Any) -> str:
    """``value`` as text that is equal exactly when the logged values are."""
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True, order=True)
class RowKey:
    """One row of a table, one line of a figure: a policy id and the settings that tell
    it apart from other rows of the same policy.

    Attributes:
        policy: the policy's id as the run recorded it (``gp-ucb``).
        settings: ``(name, value text)`` of each setting that differs between the runs
            of this policy being compared, in name order; ``"?"`` where a run did not log
            it, and left out where it is one logged only when used (``initial``, ``subspace``:
            a run without a warm start, without a subspace strategy). Empty when all of them
            were set up alike. A component logged with its name
            (``{"name": "candidate-search", ...}``) shows the name, and of its other
            entries those that differ between runs of that name (``candidate-search(rounds=4)``).
        kind: the runs' kind, ``"bo"`` or ``"bandit"``.
    """

    policy: str
    settings: tuple[tuple[str, str], ...] = ()
    kind: str = "bo"

    def text(self) -> str:
        """The table label: ``gp-ucb  beta=2`` (the bare id when no setting differs)."""
        return "  ".join([self.policy] + [f"{k}={v}" for k, v in self.settings])

    def legend(self, labels: Mapping[str, str] | None = None) -> str:
        """The legend label: the user's name for the policy (``labels[policy]``) or
        :func:`policy_label`'s, then the settings that differ (``GP-UCB, beta 2``)."""
        name = labels[self.policy] if labels and self.policy in labels else policy_label(self.policy, self.kind)
        return ", ".join([name] + [f"{_SETTING_NAMES.get(k, k.replace('_', ' '))} {v}" for k, v in self.settings])


def row_keys(runs: list[RunRow]) -> dict[int, RowKey]:
    """Each run's row among ``runs`` (runs of one comparable setting, see the module
    docstring), by run id: its policy, and when runs of that policy were set up
    differently, the settings that differ between them (a setting logged only when used
    named only in the runs that logged it). Runs with one key are one row."""
    by_policy: dict[str, list[RunRow]] = defaultdict(list)
    for run in runs:
        by_policy[run.policy].append(run)
    keys = {}
    for policy, group in by_policy.items():
        settings = [_settings(r) for r in group]
        names = sorted(set().union(*settings))
        differ = [k for k in names if len({_canonical(s[k]) if k in s else None for s in settings}) > 1]
        for run, setting in zip(group, settings):
            keys[run.id] = RowKey(policy, tuple(
                (k, _setting_text(setting[k], [s[k] for s in settings if k in s]) if k in setting else "?")
                for k in differ if k in setting or k not in _LOGGED_WHEN_USED), run.kind)
    return keys


def _model_name(checkpoint: str, kind: str) -> tuple[str, list[str]]:
    """The surrogate's readable name and what to say of it in brackets: ``tnpd-bo`` ->
    ``("TNP-D", [])`` (the kind's natural prior left out), ``cmanp-gp1d`` ->
    ``("CMANP", ["gp1d prior"])``, ``gp`` -> ``("GP", [])``; a checkpoint path is named by
    its file's stem, and a name of another form (a fine-tuned checkpoint's own) is kept."""
    if "/" in checkpoint or os.sep in checkpoint:
        return Path(checkpoint).stem, []
    if checkpoint in MODEL_NAMES:
        return MODEL_NAMES[checkpoint], []
    # the longest model name first: cmanp-and-bo is CMANP-AND's, not CMANP's with prior "and-bo"
    for model in sorted(MODEL_NAMES, key=len, reverse=True):
        if checkpoint.startswith(model + "-"):
            prior = checkpoint[len(model) + 1:]
            if prior == _NATURAL_PRIOR[kind]:
                return MODEL_NAMES[model], []
            if prior in _PRIORS:
                return MODEL_NAMES[model], [f"{prior} prior"]
    return checkpoint, []


def policy_label(policy: str, kind: str = "bo") -> str:
    """A policy's readable name, read off the parts of its id.

    Black-box (``kind="bo"``): ``<surrogate>[-<warp>][-tr]-<acquisition>`` ->
    ``TNP-D (Yeo-Johnson warp, trust region, LogEI)``; ``sobol`` -> ``Sobol search``.
    Bandit (``kind="bandit"``): ``<checkpoint>-<rule>`` -> ``CMANP (UCB)``; ``uniform``,
    ``linucb``, ``lin-ts``, ``gp-ucb`` -> ``Uniform``, ``LinUCB``, ``Linear TS``, ``GP-UCB``. An id of no known form
    is returned unchanged.

    Raises:
        TypeError: ``policy`` is not a str.
        ValueError: ``kind`` is not ``"bo"`` or ``"bandit"``.
    """
    if not isinstance(policy, str):
        raise TypeError(f"policy must be a str, got {type(policy).__name__}")
    if kind not in BASELINE_NAMES:
        raise ValueError(f"kind must be one of {sorted(BASELINE_NAMES)}, got {kind!r}")
    if policy in BASELINE_NAMES[kind]:
        return BASELINE_NAMES[kind][policy]
    rest, parts = policy, []
    # the longest rule first: -marginal-thompson also ends in -thompson
    for acquisition in sorted(ACQUISITION_NAMES, key=len, reverse=True):
        if rest.endswith("-" + acquisition):
            rest, parts = rest[: -len(acquisition) - 1], [ACQUISITION_NAMES[acquisition]]
            break
    else:
        return policy
    if kind == "bo":
        if rest.endswith("-tr"):
            rest, parts = rest[:-3], ["trust region", *parts]
        for warp, name in WARP_NAMES.items():
            if rest.endswith("-" + warp):
                rest, parts = rest[: -len(warp) - 1], [name, *parts]
    if not rest:
        return policy
    model, about = _model_name(rest, kind)
    return f"{model} ({', '.join(about + parts)})"


def check_label_overrides(labels: Mapping[str, str] | None, policies: set[str]) -> dict[str, str]:
    """``labels`` (policy id -> the name a legend shows) checked against the ``policies``
    being drawn; returns it as a dict (``{}`` for ``None``).

    Raises:
        TypeError: ``labels`` is not a mapping of str to str.
        ValueError: a key names no policy being drawn (the message lists those that are),
            or a name is empty.
    """
    if labels is None:
        return {}
    if not isinstance(labels, Mapping):
        raise TypeError(f"labels must be a mapping of policy id to name, got {type(labels).__name__}")
    out = {}
    for policy, name in labels.items():
        if not isinstance(policy, str) or not isinstance(name, str):
            raise TypeError(f"labels must map str to str, got {policy!r}: {name!r}")
        if not name.strip():
            raise ValueError(f"labels[{policy!r}] is empty: give the name the legend should show")
        if policy not in policies:
            raise ValueError(f"labels names policy {policy!r}, which no plotted run used; the plotted policies are "
                             f"{', '.join(sorted(policies)) or 'none'}")
        out[policy] = name
    return out
