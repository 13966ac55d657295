"""BOPolicy(output_warp="yeo-johnson") / optimize(output_warp=...): the surrogate sees power-transformed values."""

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

from npbandit import optimize
from npbandit.policies.bo import BOPolicy
from npbandit.storage import list_runs
from npbandit.transforms import YeoJohnson
from npbandit.transforms.yeo_johnson import yeo_johnson_warp


def test_the_warp_keeps_the_order_and_ignores_the_units():
    rng = np.random.default_rng(0)
    y = -np.exp(rng.normal(size=40) * 2)  # a long tail of bad values, as a negated Branin has
    w = yeo_johnson_warp(y)
    assert np.array_equal(np.argsort(w), np.argsort(y)) and np.all(np.diff(w[np.argsort(y)]) > 0)
    np.testing.assert_allclose(yeo_johnson_warp(7.0 * y - 3.0), w, atol=1e-9)  # units do not matter
    # the few good values, crowded at the top of the standardised scale, are spread apart
    top = np.sort(y)[-10:]
    z = (top - y.mean()) / y.std()
    assert np.ptp(np.sort(w)[-10:]) > 2 * np.ptp(z)
    assert np.array_equal(yeo_johnson_warp(np.full(5, 2.5)), np.zeros(5))
    for bad in (np.ones((2, 2)), np.array([0.0, np.nan])):
        with pytest.raises(ValueError, match="y must be"):
            yeo_johnson_warp(bad)


def test_the_yeo_johnson_transform_is_the_warp_bit_for_bit():
    """``YeoJohnson.fit(Y).forward(Y)`` is ``yeo_johnson_warp`` (the arithmetic BOPolicy uses), and
    untransforms back."""
    rng = np.random.default_rng(3)
    for y in (-np.exp(rng.normal(size=40) * 2), rng.normal(size=7) * 1e3 + 5, np.exp(rng.normal(size=25)),
              np.full(5, 2.5), np.array([1.0]), rng.normal(size=12).astype(np.float32)):
        Y = torch.tensor(np.asarray(y, dtype=np.float64)).unsqueeze(-1)
        transform = YeoJohnson.fit(Y)
        warped = transform.forward(Y)
        assert warped.dtype == torch.float64 and np.array_equal(warped.squeeze(-1).numpy(), yeo_johnson_warp(y))
        if np.ptp(y) > 0:
            np.testing.assert_allclose(transform.untransform(warped).numpy(), Y.numpy(), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="shape \\[n, dy\\]"):
        YeoJohnson.fit(torch.zeros(2, 3, 1))


def test_the_policy_gives_the_model_warped_values_and_the_acquisition_their_best(tmp_path, monkeypatch):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    policy = BOPolicy(2, model=str(card), output_warp="yeo-johnson", n_init=5, trust_region=False)  # every point
    assert policy.name.endswith("-yeo-johnson-logei") and policy.params()["output_warp"] == "yeo-johnson"
    policy.reset(0)
    rng = np.random.default_rng(1)
    for _ in range(8):
        x = rng.random(2)
        policy.observe(None, x, float(-np.exp(3 * rng.random())), {})
    seen = {}
    import npbandit.acquisition.proposal as bo  # the proposal step BOPolicy calls

    def spy(model, acquisition, **kwargs):
        seen["train_Y"], seen["best_f"] = model.train_Y.clone(), kwargs["best_f"]
        return np.full(2, 0.5)

    monkeypatch.setattr(bo, "propose", spy)
    policy.act(np.zeros(3))
    expected = torch.tensor(yeo_johnson_warp(np.array(policy.Y)), dtype=torch.float64).unsqueeze(-1)
    assert torch.allclose(seen["train_Y"], expected) and float(seen["best_f"]) == pytest.approx(float(expected.max()))
    with pytest.raises(ValueError, match="output_warp"):
        BOPolicy(2, model=str(card), output_warp="log")


def test_the_policy_tells_the_proposal_step_what_it_has_evaluated_unless_asked_not_to(tmp_path, monkeypatch):
    import npbandit.acquisition.proposal as bo  # the proposal step BOPolicy calls

    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    seen = []
    monkeypatch.setattr(bo, "propose", lambda model, acquisition, **kwargs: seen.append(kwargs["observed"]) or
                        np.full(2, 0.5))
    for avoid in (True, False):
        policy = BOPolicy(2, model=str(card), n_init=3, trust_region=False,  # observed as given, not in a box
                          **({} if avoid else {"avoid_repeats": False}))
        assert policy.params()["avoid_repeats"] is avoid
        policy.reset(0)
        for x in ([0.1, 0.2], [0.3, 0.4], [0.5, 0.6]):
            policy.observe(None, np.array(x), 1.0, {})
        policy.act(np.zeros(3))
    assert torch.equal(seen[0], torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=torch.float64))
    assert seen[1] is None
    with pytest.raises(TypeError, match="avoid_repeats"):
        BOPolicy(2, model=str(card), avoid_repeats=1)
    with pytest.raises(TypeError, match="avoid_repeats"):
        optimize(lambda x: 0.0, [[0], [1]], surrogate=str(card), budget=3, db=None, avoid_repeats="no")


def test_optimize_runs_with_the_warp_and_logs_it(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    result = optimize(lambda x: float((x ** 2).sum()), [[-1, -1], [1, 1]], surrogate=str(card), budget=8, seed=0,
                      db=db, progress=False, output_warp="yeo-johnson")
    assert len(result.history) == 8
    (run,) = list_runs(db)
    assert run.policy.endswith("-yeo-johnson-tr-logei")  # the trust region is on by default for an NP
    with pytest.raises(ValueError, match="output_warp"):
        optimize(lambda x: 0.0, [[0], [1]], surrogate=str(card), budget=3, db=None, output_warp="power")


def test_the_cli_passes_the_warp_on(tmp_path):
    from npbandit.cli import build_parser, main
    from npbandit.policies.bo import OUTPUT_WARPS

    action = next(a for a in build_parser()._subparsers._group_actions[0].choices["optimize"]._actions
                  if a.dest == "output_warp")
    assert tuple(action.choices) == OUTPUT_WARPS
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["optimize", "--function", "branin", "--surrogate", str(card), "--budget", "7",
                 "--output-warp", "yeo-johnson", "--no-trust-region", "--db", db]) == 0
    (run,) = list_runs(db)
    assert run.policy.endswith("-yeo-johnson-logei") and run.policy_params["trust_region"] is False
