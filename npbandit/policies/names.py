"""The names of the bandit policies, parsed and checked before anything runs: the baselines
(:data:`BASELINES`, no checkpoint), and a checkpoint with a decision rule (:data:`RULES`), a
``*-wheel`` one (:class:`~npbandit.policies.np_bandit.NPBanditPolicy`) or a ``*-bo`` one
(:class:`~npbandit.policies.per_arm.PerArmNPPolicy`). A baseline's name is read without the
checkpoint registry, so naming one loads no torch.
"""

from __future__ import annotations

from npbandit.exceptions import CheckpointError
from npbandit.policies.problem import ARM_PRIORS, check_arm_checkpoint

__all__ = ["BASELINES", "BANDIT_PRIORS", "RULES", "parse_bandit_policy_name", "check_bandit_policy_name"]

#: bandit policies that need no checkpoint
BASELINES = ("uniform", "linucb", "lin-ts", "gp-ucb")
#: decision rules of :class:`~npbandit.policies.np_bandit.NPBanditPolicy`
RULES = ("ucb", "thompson", "marginal-thompson")
#: priors whose checkpoints are bandit surrogates (context -> one reward per arm)
BANDIT_PRIORS = ("wheel",)


def parse_bandit_policy_name(name: str) -> tuple[str, str] | None:
    """``<checkpoint>[-ucb|-thompson|-marginal-thompson]`` -> ``(checkpoint, rule)``: a
    ``*-wheel`` checkpoint runs as :class:`~npbandit.policies.np_bandit.NPBanditPolicy`, a ``*-bo`` one as
    :class:`~npbandit.policies.per_arm.PerArmNPPolicy` (``cmanp-bo-thompson``); a bare
    model name means its ``-wheel`` checkpoint (``cmanp`` -> ``cmanp-wheel``); a checkpoint
    path is taken as it is; ``None`` for the baselines (:data:`BASELINES`), which take no
    rule (``linucb-thompson`` is refused). A baseline's name is answered before the
    checkpoint registry (and torch with it) is imported."""
    if not isinstance(name, str):
        raise TypeError(f"policy must be a name, got {type(name).__name__}")
    if name in BASELINES:
        return None
    from npbandit.surrogates import available_models

    rule = "ucb"
    for suffix in ("-ucb", "-marginal-thompson", "-thompson"):
        if name.endswith(suffix):
            name, rule = name[: -len(suffix)], suffix[1:]
            break
    if name in BASELINES:
        raise ValueError(f"policy {name!r} is a baseline with its own rule: no -{rule} suffix")
    return (f"{name}-wheel" if name.lower() in available_models() else name), rule


def check_bandit_policy_name(name: str, *, context_dim: int = 2, n_arms: int = 5) -> None:
    """Check a bandit policy name before anything runs, for a bandit with ``context_dim``-D
    contexts and ``n_arms`` arms (the wheel bandit's by default): a baseline; a checkpoint
    trained on a bandit prior with ``context_dim`` inputs and ``n_arms`` outputs (the
    ``*-wheel`` ones); or a ``bo`` checkpoint, one regression per arm
    (:mod:`npbandit.policies.per_arm`; contexts wider than it are projected), with the rule
    ``ucb`` or ``thompson``.

    Raises:
        ValueError: an unknown name (with the closest known names), or a checkpoint
            trained for something else (``CheckpointError``, listing those that fit).
        FileNotFoundError: a known checkpoint whose card or weights file is missing.
    """
    import difflib

    from npbandit.surrogates.pretrained import (
        UnknownCheckpointError,
        check_checkpoint_kind,
        checkpoint_use,
        fitting_checkpoints,
        read_card,
        weights_file,
    )

    parsed = parse_bandit_policy_name(name)
    if parsed is None:
        return
    checkpoint, rule = parsed
    try:
        card = read_card(checkpoint)
    except UnknownCheckpointError as err:
        if err.path is not None:  # a path: a run's directory (the checkpoints in it) or nothing there
            raise ValueError(f"policy {name!r}: {err}") from None
        fit = fitting_checkpoints(prior=BANDIT_PRIORS, x_dim=context_dim, y_dim=n_arms)
        fit += fitting_checkpoints(prior=ARM_PRIORS, y_dim=1)  # any width: wider contexts are projected
        known = [*BASELINES, *fit, *(c.rsplit("-", 1)[0] for c in fit)]
        close = difflib.get_close_matches(name.lower(), known, n=2, cutoff=0.6)  # LinUCB, as other libraries spell it
        hint = f" -- did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ValueError(f"policy must be {', '.join(BASELINES)} or a bandit checkpoint "
                         "[-ucb|-thompson|-marginal-thompson] "
                         f"({', '.join(fit) or 'none shipped'}, or a checkpoint path); got {name!r}{hint}") from None
    try:
        weights_file(card)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"policy {name!r}: {err}") from None
    if checkpoint_use(card)["prior"] in ARM_PRIORS:  # one regression per arm
        if rule == "marginal-thompson":
            raise ValueError(f"policy {name!r}: a 'bo' checkpoint models each arm apart, so its Thompson draws are "
                             "marginal already: use -thompson")
        check_arm_checkpoint(card, context_dim, f"bandit policy {name!r}")
        return
    try:
        check_checkpoint_kind(card, prior=BANDIT_PRIORS, x_dim=context_dim, y_dim=n_arms,
                              purpose=f"bandit policy {name!r}")
    except CheckpointError as err:  # say which checkpoints serve this bandit the other way
        arms = fitting_checkpoints(prior=ARM_PRIORS, y_dim=1)  # any width: wider contexts are projected
        names = ", ".join(repr(a) for a in arms) or "none shipped"
        raise CheckpointError(f"{str(err).rstrip('.')}. For {context_dim}-dimensional contexts and {n_arms} arms, "
                              f"name a policy that fits one regression per arm on a 'bo' checkpoint instead: {names}"
                              ) from None

