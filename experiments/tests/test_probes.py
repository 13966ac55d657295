"""The probe scripts in experiments/probes/ measure what their docstrings say."""

import numpy as np
import pytest

from npbandit.policies.bo import BOPolicy

from .helpers import load_script, restored_registries, tiny_checkpoint

pytestmark = pytest.mark.lab


def _script(name: str):
    return load_script("probes", name)


@pytest.mark.slow
def test_the_neutral_rule_leaves_the_region_alone_for_a_stale_success_only(tmp_path):
    probe = _script("probe_async_success_rule")
    # a tiny random-weight CMANP card: the region counts the values observed below, whatever is proposed
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    successes = {}
    for rule in probe.RULES:
        policy = BOPolicy(2, model=card, n_init=2, budget=20)
        policy.reset(seed=0)
        for i, x in enumerate(([0.2, 0.2], [0.8, 0.8])):  # the design, given directly
            policy.observe(None, np.array(x), float(i), {})
        first = policy.act(None)
        second = policy.act(None, pending=first[None])  # both proposed knowing the best was 1
        observe = probe._with_rule(rule)
        observe(policy, None, first, 5.0, {})  # a success by either rule
        observe(policy, None, second, 3.0, {})  # beats what it knew (1), not the incumbent (5)
        successes[rule] = policy.region.successes
        assert policy.Y == [0.0, 1.0, 5.0, 3.0]  # observed either way
    assert successes == {"today": 2, "neutral": 1}
    assert "observe" not in vars(policy.region)  # the region's own method is back


def test_the_thompson_probe_runs_both_draws_on_the_suites_problem(tmp_path):
    probe = _script("probe_thompson_candidates")
    out = tmp_path / "probe.json"
    probe.main(["--functions", "branin", "--candidates", "64", "--seeds", "1", "--budget", "7", "--out", str(out)])
    import json

    record = json.loads(out.read_text())
    assert sorted(record) == [f"cmanp-and-bo|branin|64|{draw}|7|0" for draw in ("marginal-thompson", "thompson")]
    assert all(np.isfinite(v) for v in record.values())


def test_the_coherence_probe_reads_the_pairs_the_bar_names(tmp_path):
    import torch

    probe = _script("probe_joint_coherence")
    x = torch.linspace(-2.0, 2.0, 201, dtype=torch.float64)[:200]  # step 0.02: near pairs are neighbours
    g = torch.Generator().manual_seed(0)
    # a draw per row: one shared value on the right half, independent values elsewhere
    shared, own = torch.randn(400, 1, generator=g, dtype=torch.float64), torch.randn(400, 200, generator=g,
                                                                                        dtype=torch.float64)
    draws = torch.where(x > -0.01, shared + 0.1 * own, own)  # x = 0 may round to just below 0
    near, far = probe.pair_correlations(draws, x, -2.0, 4.0)
    assert len(near) == 199 - 120 and min(near) > 0.95  # x_i from 0.4 (index 120, 0.6 of the width) to index 198
    assert len(far) == 5 and min(far) > 0.95  # x_i = 0, 0.02 .. 0.08 (x_i + 1.9 on the grid): both on the shared side
    draws = own  # no correlation anywhere: every pair near 0, within 5 standard errors (0.05 each)
    near, far = probe.pair_correlations(draws, x, -2.0, 4.0)
    assert max(abs(v) for v in near + far) < 0.25
    card = tiny_checkpoint(tmp_path, "cmanp-and", "bo")
    (row,) = [r for r in probe.main(["--checkpoints", str(card), "--seeds", "1", "--draws", "20", "--grid", "40"])
              if r["draw"] == "one block"]
    assert -1.0 <= row["near_min"] <= row["near_mean"] <= 1.0 and 0.0 <= row["far_max_abs"] <= 1.0


def test_the_dimension_agnostic_cmanp_streams_and_reads_any_width():
    """da_cmanp.py's stated properties: update(condition(A), B) == condition(A ∪ B), the state
    constant in N, equivariance to permuting the inputs, one network at two widths, and a width
    mismatch refused."""
    import torch

    from npbandit.surrogates import build

    with restored_registries():
        _script("da_cmanp")  # registers "dacmanp"
        torch.manual_seed(0)
        model = build("dacmanp", 16, 1, size="tiny").double()
    x, y = torch.rand(2, 30, 5, dtype=torch.float64), torch.randn(2, 30, 1, dtype=torch.float64)
    xt = torch.rand(2, 4, 5, dtype=torch.float64)
    whole = model.predict(model.condition(x, y), xt)
    streamed_state = model.condition(x[:, :11], y[:, :11])
    for start in (11, 12, 25):
        end = {11: 12, 12: 25, 25: 30}[start]
        streamed_state = model.update(streamed_state, x[:, start:end], y[:, start:end])
    streamed = model.predict(streamed_state, xt)
    torch.testing.assert_close(streamed.mean, whole.mean, rtol=0, atol=1e-12)
    torch.testing.assert_close(streamed.stddev, whole.stddev, rtol=0, atol=1e-12)
    sizes = {t.shape for t in (streamed_state.data_state.log_norm, streamed_state.data_state.mean_value)}
    small = model.condition(x[:, :3], y[:, :3]).data_state
    assert sizes == {small.log_norm.shape, small.mean_value.shape}  # nothing grows with N
    perm = torch.tensor([3, 0, 4, 1, 2])
    permuted = model.predict(model.condition(x[..., perm], y), xt[..., perm])
    torch.testing.assert_close(permuted.mean, whole.mean, rtol=0, atol=1e-12)
    narrow = model.predict(model.condition(x[..., :2], y), xt[..., :2])
    assert narrow.mean.shape == (2, 4, 1) and torch.isfinite(narrow.mean).all()
    with pytest.raises(ValueError, match="input column"):
        model.predict(model.condition(x, y), xt[..., :3], check=False)


def test_the_inducing_point_np_streams_and_reads_any_width():
    """da_inducing.py's stated properties: update(condition(A), B) == condition(A ∪ B), the state
    constant in N, one network at two widths, joint logits summed over inputs, a width mismatch
    refused."""
    import torch

    from npbandit.surrogates import build

    with restored_registries():
        probe = _script("da_inducing")  # registers "daind"
        torch.manual_seed(0)
        model = build("daind", 16, 1, size="tiny", n_inducing=8).double()
    x, y = torch.rand(2, 30, 5, dtype=torch.float64), torch.randn(2, 30, 1, dtype=torch.float64)
    xt = torch.rand(2, 4, 5, dtype=torch.float64)
    whole = model.predict(model.condition(x, y), xt)
    state = model.condition(x[:, :11], y[:, :11])
    for start, end in ((11, 12), (12, 25), (25, 30)):
        state = model.update(state, x[:, start:end], y[:, start:end])
    streamed = model.predict(state, xt)
    torch.testing.assert_close(streamed.mean, whole.mean, rtol=0, atol=1e-12)
    torch.testing.assert_close(streamed.stddev, whole.stddev, rtol=0, atol=1e-12)
    small = model.condition(x[:, :3], y[:, :3]).data_state
    assert (state.data_state.log_norm.shape, state.data_state.mean_value.shape) == (
        small.log_norm.shape, small.mean_value.shape)  # nothing grows with N
    # the logit of two points is the sum over inputs of their cells' dot products
    q, k = torch.randn(1, 2, 3, 5, 4, dtype=torch.float64), torch.randn(1, 2, 7, 5, 4, dtype=torch.float64)
    expected = sum(q[..., i, :] @ k[..., i, :].transpose(-1, -2) for i in range(5))
    torch.testing.assert_close(probe.JointAttention.scores(q, k), expected)
    narrow = model.predict(model.condition(x[..., :2], y), xt[..., :2])
    assert narrow.mean.shape == (2, 4, 1) and torch.isfinite(narrow.mean).all()
    with pytest.raises(ValueError, match="input column"):
        model.predict(model.condition(x, y), xt[..., :3], check=False)


def test_the_early_steps_probe_reports_a_finite_running_loss_every_interval():
    with restored_registries():
        probe = _script("dimension_agnostic")
        out = probe.early_steps("datnp", [1, 2], steps=4, lr=1e-3, every=2)
    assert [step for step, _ in out] == [2, 4]
    assert all(np.isfinite(loss) for _, loss in out)


def test_widen_lists_every_width_and_keeps_the_weights(tmp_path):
    import json

    card = tmp_path / "net.json"
    card.write_text(json.dumps({"name": "net", "weights": "net.safetensors", "sha256": "ab",
                                "use": {"x_dims": [1, 2], "prior": "bo"}}))
    (tmp_path / "net.safetensors").write_bytes(b"weights")
    with restored_registries():
        out = _script("dimension_agnostic").widen(str(card), str(tmp_path / "wide"), max_dim=5)
    meta = json.loads(out.read_text())
    assert meta["use"] == {"x_dims": [1, 2, 3, 4, 5], "prior": "bo"} and meta["sha256"] == "ab"
    assert meta["name"] == "net-wide" and (out.parent / meta["weights"]).read_bytes() == b"weights"
