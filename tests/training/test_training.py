"""Trainer: the loss falls on a tiny prior, resuming equals an uninterrupted run."""

import json

import pytest
import torch
from helpers import Lines, registered_prior

from npbandit.priors import BOPrior, GP1DPrior
from npbandit.training import TrainConfig, cosine_lr, eval_batches, evaluate, train


def tiny_config(tmp_path, **kw):
    base = dict(model="tnpd", prior="gp1d", steps=30, out=str(tmp_path / "run"), size="tiny", eval_every=15,
                eval_batches=2, final_eval_batches=2, checkpoint_every=10)
    base.update(kw)
    return TrainConfig(**base)


@pytest.mark.slow
def test_loss_falls_within_a_few_hundred_steps(tmp_path):
    torch.manual_seed(0)
    config = tiny_config(tmp_path, steps=300, lr=2e-3, eval_every=300, prior_params={"max_points": 20})
    held_out = list(eval_batches(GP1DPrior(max_points=20), 8))
    from npbandit.surrogates import build

    torch.manual_seed(config.seed)
    before = evaluate(build("tnpd", 1, 1, size="tiny"), held_out)  # the run's initial weights
    result = train(config, progress=False)
    after = evaluate(result.model, held_out)
    assert after > before + 0.3, (before, after)


@pytest.mark.slow
def test_resume_gives_the_same_result_as_an_uninterrupted_run(tmp_path):
    straight = train(tiny_config(tmp_path / "a", model="cmanp"), progress=False)
    interrupted = tiny_config(tmp_path / "b", model="cmanp")
    first = train(interrupted, progress=False, stop_at=13)
    assert first.step == 13 and first.card is None
    resumed = train(interrupted, progress=False)
    assert resumed.step == 30
    for (k, p), q in zip(straight.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(p, q), k
    # the logged learning curve too: the running training loss goes on from the saved state (step 15's
    # average reaches back past the stop at 13)
    def untimed(run):
        return [{k: v for k, v in entry.items() if k != "elapsed_s"} for entry in run.log]

    assert untimed(straight) == untimed(resumed)
    card = json.loads(resumed.card.read_text())
    assert card["training"]["steps"] == 30 and set(card["evaluation"]["log_likelihood"]) == {"rbf", "matern52"}


def test_init_from_starts_at_the_checkpoints_weights_and_records_it(tmp_path):
    source = train(tiny_config(tmp_path / "src", steps=5), progress=False)
    base_card = json.loads(source.card.read_text())
    # zero steps of change: lr tiny, one step, so the fine-tuned weights stay next to the source's
    tuned = train(tiny_config(tmp_path / "ft", steps=1, lr=1e-12, seed=1, init_from=str(source.card)), progress=False)
    for (k, p), q in zip(source.model.state_dict().items(), tuned.model.state_dict().values()):
        assert torch.allclose(p, q, atol=1e-6), k
    scratch = train(tiny_config(tmp_path / "scratch", steps=1, lr=1e-12, seed=1), progress=False)
    assert any(not torch.allclose(p, q) for p, q in zip(source.model.state_dict().values(),
                                                         scratch.model.state_dict().values()))
    card = json.loads(tuned.card.read_text())
    assert card["training"]["init_from"] == {"name": base_card["name"], "sha256": base_card["sha256"], "steps": 5,
                                             "init_from": None}
    with pytest.raises(ValueError, match="init_from"):  # a different architecture cannot be the start
        train(tiny_config(tmp_path / "bad", steps=1, model="cmanp", init_from=str(source.card)), progress=False)


def test_a_state_saved_before_init_from_existed_still_resumes(tmp_path):
    config = tiny_config(tmp_path, steps=10)
    train(config, progress=False, stop_at=5)
    state = tmp_path / "run" / "train_state.json"
    meta = json.loads(state.read_text())
    del meta["config"]["init_from"]  # what earlier versions wrote
    state.write_text(json.dumps(meta))
    assert train(config, progress=False).step == 10


def test_a_different_run_in_the_same_directory_is_refused(tmp_path):
    train(tiny_config(tmp_path, steps=10), progress=False, stop_at=5)
    with pytest.raises(ValueError, match="different run"):
        train(tiny_config(tmp_path, steps=10, lr=1e-3), progress=False)


def test_a_changed_prior_default_is_not_resumed(tmp_path, monkeypatch):
    """Same command line, but the prior's defaults changed in between (e.g. a new version)."""
    train(tiny_config(tmp_path, steps=10), progress=False, stop_at=5)
    real_spec = GP1DPrior.spec
    monkeypatch.setattr(GP1DPrior, "spec", lambda self: {**real_spec(self), "lengthscale": ["uniform", 0.6, 1.0]})
    with pytest.raises(ValueError, match=r"different prior \(differs in \['lengthscale'\]\)"):
        train(tiny_config(tmp_path, steps=10), progress=False)


def test_config_validation(tmp_path):
    with pytest.raises(ValueError, match="steps"):
        tiny_config(tmp_path, steps=0)
    with pytest.raises(ValueError, match="lr"):
        tiny_config(tmp_path, lr=-1.0)
    with pytest.raises(TypeError, match="unknown config field"):
        train(tiny_config(tmp_path, model_config={"n_latentz": 3}), progress=False)


def test_cosine_schedule():
    assert cosine_lr(1.0, 0, 100) == 1.0
    assert abs(cosine_lr(1.0, 50, 100) - 0.5) < 1e-12
    assert cosine_lr(1.0, 100, 100) == 0.0


def test_eval_sets_are_fixed_and_cacheable(tmp_path, monkeypatch):
    monkeypatch.setenv("NPBANDIT_CACHE", str(tmp_path))
    prior = GP1DPrior()
    fresh = list(eval_batches(prior, 3, cache=True))
    assert list((tmp_path / "evalsets").glob("gp1d-*.safetensors"))
    cached = list(eval_batches(prior, 3, cache=True))
    for a, b in zip(fresh, cached):
        assert torch.equal(a.xc, b.xc) and torch.equal(a.yt, b.yt)


@pytest.mark.parametrize("model", ["retreever", "te-pt-tnp"])
def test_newer_models_train_through_the_same_loop(tmp_path, model):
    result = train(tiny_config(tmp_path, model=model, steps=12, eval_every=12), progress=False)
    card = json.loads(result.card.read_text())
    assert card["model"] == model and all(v == v for v in card["evaluation"]["log_likelihood"].values())


def test_expected_log_prob_is_the_mean_of_sampled_log_probs():
    from torch.distributions import Normal

    from npbandit.surrogates.base import target_log_prob

    g = torch.Generator().manual_seed(0)
    q = Normal(torch.tensor([[[0.3]], [[-1.0]]]), torch.tensor([[[0.7]], [[2.0]]]))
    mean, var = torch.tensor([[[0.1]], [[0.5]]]), torch.tensor([[[0.4]], [[3.0]]])
    draws = mean + var.sqrt() * torch.randn(200_000, 2, 1, 1, generator=g)
    monte_carlo = q.log_prob(draws).mean(0)
    assert torch.allclose(target_log_prob(q, mean, var), monte_carlo, atol=0.01)
    assert torch.equal(target_log_prob(q, mean), q.log_prob(mean))
    with pytest.raises(ValueError, match="yt_var"):
        target_log_prob(q, mean, var[:1])


@pytest.mark.parametrize("model", ["cmanp", "retreever"])
@pytest.mark.slow
def test_expected_training_loss_has_the_sampled_losss_expectation(model):
    """Averaged over target draws, the sampled loss equals the expected loss (same
    optimum), for the plain loss and for ReTreever's composite one."""
    from npbandit.priors import BOPrior
    from npbandit.surrogates import build

    torch.manual_seed(0)
    # ReTreever's REINFORCE term is centred per batch (zero either way): off, so the
    # loss is its two likelihood terms, linear in the targets' log-probabilities
    net = build(model, 6, 1, size="tiny", **({"rl_weight": 0.0} if model == "retreever" else {}))
    net.eval()
    b = BOPrior(dims=(2,), max_context=10).batch(2, 0, 0)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        expected = net.training_loss(b.xc, b.yc, b.xt, b.yt_mean, yt_var=b.yt_var)
        sampled = torch.stack([net.training_loss(b.xc, b.yc, b.xt,
                                                 b.yt_mean + b.yt_var.sqrt() * torch.randn(b.yt.shape, generator=g))
                               for _ in range(300)])
    assert abs(float(sampled.mean() - expected)) < 4 * float(sampled.std()) / 300 ** 0.5
    assert float(sampled.std()) > 0


def test_expected_loss_trains_and_needs_moments(tmp_path):
    config = tiny_config(tmp_path / "bo", model="cmanp", prior="bo", steps=4, loss="expected",
                         prior_params={"max_context": 10}, eval_prior_params={"max_context": 8, "dims": [1, 2]})
    result = train(config, progress=False)
    card = json.loads(result.card.read_text())
    assert card["training"]["loss"] == "expected"
    assert set(card["evaluation"]["log_likelihood"]) == {"d=1", "d=2"}  # scored on eval_prior_params
    with pytest.raises(ValueError, match="yt_mean"):  # the wheel prior has no exact moments
        train(tiny_config(tmp_path / "w", prior="wheel", steps=2, loss="expected"), progress=False)
    with pytest.raises(ValueError, match="loss"):
        tiny_config(tmp_path, loss="mean")


def test_stop_after_seconds_saves_a_resumable_state(tmp_path):
    config = tiny_config(tmp_path, steps=10_000)
    first = train(config, progress=False, stop_after_s=0.5)
    assert 0 < first.step < 10_000 and first.card is None
    state = json.loads((tmp_path / "run" / "train_state.json").read_text())
    assert state["step"] == first.step  # saved at the step where time ran out, not at a checkpoint multiple
    second = train(config, progress=False, stop_after_s=0.2)
    assert second.step > first.step


def test_states_saved_before_a_field_existed_resume(tmp_path):
    config = tiny_config(tmp_path, steps=20)
    train(config, progress=False, stop_at=10)
    path = tmp_path / "run" / "train_state.json"
    meta = json.loads(path.read_text())
    del meta["config"]["loss"]  # a state written before `loss` existed: read as its default
    path.write_text(json.dumps(meta))
    assert train(config, progress=False).step == 20


def test_export_now_writes_a_checkpoint_of_a_run_in_progress(tmp_path):
    config = tiny_config(tmp_path, steps=40)
    with pytest.raises(ValueError, match="no saved state"):
        train(config, progress=False, export_now=True)
    train(config, progress=False, stop_at=10)
    exported = train(config, progress=False, export_now=True)
    assert exported.step == 10
    card = json.loads(exported.card.read_text())
    assert card["training"]["steps"] == 10 and card["training"]["schedule_steps"] == 40
    from npbandit import load_surrogate

    loaded = load_surrogate(exported.card)
    for (k, p), q in zip(exported.model.state_dict().items(), loaded.state_dict().values()):
        assert torch.equal(p, q), k
    assert train(config, progress=False).step == 40  # the run goes on from its state


def test_loader_workers_give_the_same_run(tmp_path):
    inline = train(tiny_config(tmp_path / "a", steps=6, checkpoint_every=100), progress=False, export=False)
    workers = train(tiny_config(tmp_path / "b", steps=6, checkpoint_every=100), progress=False, export=False,
                    loader_workers=2)
    for (k, p), q in zip(inline.model.state_dict().items(), workers.model.state_dict().values()):
        assert torch.equal(p, q), k
    with pytest.raises(ValueError, match="loader_workers"):
        train(tiny_config(tmp_path / "c"), progress=False, loader_workers=-1)



def test_a_network_of_any_width_trains_on_batches_of_their_own_width(tmp_path):
    prior = {"dims": [1, 3, 5], "x_dim": 5, "max_context": 12, "n_target": 6, "padding": "none"}
    result = train(tiny_config(tmp_path / "a", model="datnp", prior="bo", steps=4, prior_params=prior,
                               checkpoint_every=100), progress=False)
    card = json.loads(result.card.read_text())
    assert result.step == 4 and card["prior"]["padding"] == "none" and card["use"]["x_dims"] == [1, 3, 5]
    with pytest.raises(ValueError, match="reads a fixed width x_dim=5"):
        train(tiny_config(tmp_path / "b", model="tnpd", prior="bo", steps=4, prior_params=prior), progress=False)
    padded = {**prior, "padding": "zeros"}  # scored on batches of their own width: refused before any step
    with pytest.raises(ValueError, match="reads a fixed width x_dim=5"):
        train(tiny_config(tmp_path / "c", model="tnpd", prior="bo", steps=4, prior_params=padded,
                          eval_prior_params=prior), progress=False)
    assert not (tmp_path / "c").exists()
    with pytest.raises(ValueError, match="reads any width, but prior 'bo' zero-pads"):  # padding read as inputs
        train(tiny_config(tmp_path / "d", model="datnp", prior="bo", steps=4, prior_params=padded), progress=False)


def test_batches_are_drawn_on_the_training_device_without_workers(tmp_path):
    from npbandit.training.trainer import _batches

    class Recording(GP1DPrior):
        devices = []

        def batch(self, batch_size, seed, index, device=None):
            self.devices.append(device)
            return super().batch(batch_size, seed, index, device)

    prior, config = Recording(max_points=20), tiny_config(tmp_path)
    list(_batches(prior, config, 0, 2, 0, torch.device("cpu")))
    assert Recording.devices == [torch.device("cpu")] * 2


def _sigterm_once_training():
    """SIGTERM to this process once the training loop's handler is in (before it, the
    default action would end pytest itself)."""
    import os
    import signal
    import time

    while signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        time.sleep(0.01)
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGTERM)


def test_sigterm_saves_the_state_and_stops(tmp_path):
    import signal
    import threading

    config = tiny_config(tmp_path, steps=100_000, checkpoint_every=100_000)
    timer = threading.Thread(target=_sigterm_once_training)
    timer.start()
    result = train(config, progress=False)
    timer.join()
    assert 0 < result.step < 100_000 and result.card is None and result.stopped_by == signal.SIGTERM
    state = json.loads((tmp_path / "run" / "train_state.json").read_text())
    assert state["step"] == result.step  # saved where it stopped, not at a checkpoint multiple
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is gone again


def test_the_card_records_the_n01_baseline_on_the_evaluation_tasks(tmp_path):
    from npbandit.training.evaluation import baseline_suite

    result = train(tiny_config(tmp_path, steps=2, eval_every=2, checkpoint_every=2), progress=False)
    evaluation = json.loads(result.card.read_text())["evaluation"]
    assert set(evaluation["baseline_log_likelihood"]) == set(evaluation["log_likelihood"]) == {"rbf", "matern52"}
    expected = baseline_suite("gp1d", 2, 16)
    assert evaluation["baseline_log_likelihood"] == pytest.approx(expected, abs=1e-4)
    assert "N(0, 1)" in evaluation["baseline"]


def test_evaluations_score_the_same_tasks_whatever_the_training_batch(tmp_path):
    # lr so small that the weights stay the run's initial ones (same seed): equal scores then
    # mean equal evaluation tasks, which a batch-size-dependent evaluation set would not give
    scores = []
    for batch_size in (4, 8):
        result = train(tiny_config(tmp_path / f"b{batch_size}", steps=1, eval_every=1, checkpoint_every=1,
                                   batch_size=batch_size, lr=1e-12), progress=False)
        card = json.loads(result.card.read_text())
        assert card["evaluation"]["batch_size"] == 16
        scores.append((result.log[-1]["eval_ll"], card["evaluation"]["log_likelihood"]))
    (periodic_a, final_a), (periodic_b, final_b) = scores
    assert periodic_a == pytest.approx(periodic_b, abs=1e-5) and final_a == pytest.approx(final_b, abs=1e-4)


def test_a_resumed_or_exported_run_records_the_source_it_started_from_not_what_is_there_now(tmp_path):
    first = train(tiny_config(tmp_path / "a", steps=3), progress=False)
    other = train(tiny_config(tmp_path / "b", steps=5, seed=1), progress=False)
    started_from = json.loads(first.card.read_text())
    source = tmp_path / "src"
    source.mkdir()
    for suffix in (".json", ".safetensors"):
        (source / f"tnpd-gp1d{suffix}").write_bytes((tmp_path / "a" / "run" / f"tnpd-gp1d{suffix}").read_bytes())
    config = tiny_config(tmp_path / "ft", steps=4, init_from=str(source / "tnpd-gp1d"), checkpoint_every=1)
    train(config, progress=False, stop_at=2)
    # the source is replaced by another checkpoint under the same name (a shipped name re-exported)
    for suffix in (".json", ".safetensors"):
        (source / f"tnpd-gp1d{suffix}").write_bytes((tmp_path / "b" / "run" / f"tnpd-gp1d{suffix}").read_bytes())
    exported = json.loads(train(config, progress=False, export_now=True).card.read_text())
    assert exported["training"]["init_from"]["sha256"] == started_from["sha256"] != json.loads(
        other.card.read_text())["sha256"]
    assert exported["training"]["init_from"]["steps"] == 3
    for path in source.iterdir():  # and removed: the run still resumes, from its own state
        path.unlink()
    done = json.loads(train(config, progress=False).card.read_text())
    assert done["training"]["init_from"]["sha256"] == started_from["sha256"]


def test_a_resumed_retreever_run_draws_what_the_uninterrupted_one_draws(tmp_path):
    """ReTreever samples tree paths in its loss from torch's global generator: the saved
    state carries it, so resuming is exact for models that sample, as for those that do not."""
    straight = train(tiny_config(tmp_path / "a", model="retreever", steps=6, eval_every=100), progress=False,
                     export=False)
    config = tiny_config(tmp_path / "b", model="retreever", steps=6, eval_every=100)
    train(config, progress=False, stop_at=3)
    torch.manual_seed(123)  # whatever the process drew in between
    resumed = train(config, progress=False, export=False)
    for (k, p), q in zip(straight.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(p, q), k


def test_divergence_stops_before_the_weights_change_and_keeps_the_saved_state(tmp_path, monkeypatch):
    from npbandit.surrogates.tnp import TNPD

    config = tiny_config(tmp_path, steps=10, checkpoint_every=2)
    real = TNPD.training_loss
    calls = {"n": 0}

    def poisoned(self, *args, **kwargs):
        calls["n"] += 1
        loss = real(self, *args, **kwargs)
        return loss * float("inf") if calls["n"] == 4 else loss

    monkeypatch.setattr(TNPD, "training_loss", poisoned)
    with pytest.raises(FloatingPointError, match="at step 4"):
        train(config, progress=False)
    state = json.loads((tmp_path / "run" / "train_state.json").read_text())
    assert state["step"] == 2
    monkeypatch.setattr(TNPD, "training_loss", real)
    assert train(config, progress=False).step == 10  # resumes from the good state


def test_a_non_finite_gradient_is_caught_too(tmp_path, monkeypatch):
    from npbandit.surrogates.tnp import TNPD

    real = TNPD.training_loss

    def bad_gradient(self, *args, **kwargs):
        # finite in value, NaN in gradient: where()'s unused branch still passes sqrt(negative)'s gradient back, times 0
        weight = next(self.parameters())
        return real(self, *args, **kwargs) + torch.where(torch.tensor(True), torch.zeros(()),
                                                         torch.sqrt(-weight.abs().sum() - 1.0))

    monkeypatch.setattr(TNPD, "training_loss", bad_gradient)
    with pytest.raises(FloatingPointError, match="gradient norm at step 1"):
        train(tiny_config(tmp_path, steps=3), progress=False)


@pytest.mark.parametrize("kwargs,error,match", [
    ({"lr": float("inf")}, ValueError, "lr"), ({"lr": float("nan")}, ValueError, "lr"),
    ({"grad_clip": float("inf")}, ValueError, "grad_clip"), ({"seed": 1.5}, ValueError, "seed"),
    ({"seed": True}, ValueError, "seed"), ({"steps": True}, ValueError, "steps"),
    ({"weight_decay": -1.0}, ValueError, "weight_decay"), ({"weight_decay": float("nan")}, ValueError, "weight_decay"),
    ({"model_config": None}, TypeError, "model_config"), ({"prior_params": "kernel=rbf"}, TypeError, "prior_params"),
    ({"device": 5}, TypeError, "device"), ({"model": "tnpx"}, ValueError, "model must be one of"),
    ({"prior": "gp2d"}, ValueError, "prior must be one of"), ({"name": ""}, ValueError, "name"),
    ({"name": "train_state"}, ValueError, "name"), ({"name": "sub/x"}, ValueError, "name"),
    ({"name": "../x"}, ValueError, "name"), ({"name": ".hidden"}, ValueError, "name"),
])
def test_train_config_refuses_what_would_fail_or_mislead_later(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        tiny_config(tmp_path, **kwargs)


def test_a_registered_prior_trains_and_is_scored_on_its_own_suite(tmp_path):
    # a prior the trainer was never told about by name: evaluation_suite once raised "unreachable"
    with registered_prior(Lines):
        result = train(tiny_config(tmp_path, prior="test-lines", prior_params={"n": 4}, steps=2, eval_every=1,
                                   checkpoint_every=2), progress=False)
    card = json.loads(result.card.read_text())
    assert card["prior"] == {"name": "test-lines", "n": 4} and set(card["evaluation"]["log_likelihood"]) == {
        "test-lines"}
    assert [set(e["eval_ll"]) for e in result.log] == [{"test-lines"}] * 2


def test_unusable_settings_fail_before_a_run_directory_exists(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="device"):
        train(tiny_config(tmp_path, device="gpu"), progress=False)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="not available on this machine"):
            train(tiny_config(tmp_path, device="cuda"), progress=False)
    with pytest.raises(ValueError, match="eval-prior-set.*noise_sd"):
        train(tiny_config(tmp_path, eval_prior_params={"noise_sd": 0.1}), progress=False)
    with pytest.raises(ValueError, match="kernel"):  # the gp1d suite scores both kernels: a kernel would be ignored
        train(tiny_config(tmp_path, eval_prior_params={"kernel": "matern52"}), progress=False)
    with pytest.raises(ValueError, match="stop_at"):
        train(tiny_config(tmp_path), progress=False, stop_at=0)
    with pytest.raises(ValueError, match="--export-now"):
        train(tiny_config(tmp_path), progress=False, export_now=True)
    assert not out.exists()


def test_a_resumed_run_compares_its_config_as_saved_and_says_what_differs(tmp_path):
    config = tiny_config(tmp_path, model="tnpd", prior="bo", steps=4, prior_params={"dims": (1, 2)},
                         eval_prior_params={"dims": (1,)})
    train(config, progress=False, stop_at=2)
    assert train(config, progress=False, export=False).step == 4  # (1, 2) was saved as [1, 2]: the same run
    with pytest.raises(ValueError, match=r"lr: saved 0.0005, given 0.001"):
        train(tiny_config(tmp_path, model="tnpd", prior="bo", steps=4, prior_params={"dims": (1, 2)}, lr=1e-3),
              progress=False)


def test_the_same_weights_export_to_the_same_bytes(tmp_path):
    from npbandit.surrogates import build
    from npbandit.surrogates.pretrained import save_pretrained

    torch.manual_seed(0)
    model = build("tnpd", 1, 1, size="tiny")
    digests = {json.loads(save_pretrained(model, tmp_path / str(i), "m", prior={"name": "gp1d"}, training={},
                                          evaluation={}).read_text())["sha256"] for i in range(8)}
    assert len(digests) == 1


def test_evaluation_takes_the_models_dtype_and_checks_its_arguments_when_called():
    from npbandit import load_surrogate

    prior = GP1DPrior(max_points=20)
    model64 = load_surrogate("tnpd-gp1d", dtype=torch.float64)
    model32 = load_surrogate("tnpd-gp1d")
    batches = list(eval_batches(prior, 2))
    assert evaluate(model64, batches) == pytest.approx(evaluate(model32, batches), abs=1e-4)
    for bad in (0, 2.5, "3", True):
        with pytest.raises(ValueError, match="n_batches"):
            eval_batches(prior, bad)  # at the call, not when the generator is first read


def test_the_train_command_exits_128_plus_the_signal_when_stopped_by_one(tmp_path, capsys):
    import signal
    import threading

    from npbandit.cli import main

    args = ["train", "--model", "tnpd", "--prior", "gp1d", "--size", "tiny", "--steps", "100000",
            "--eval-batches", "1", "--out", str(tmp_path / "run")]
    timer = threading.Thread(target=_sigterm_once_training)
    timer.start()
    status = main(args)
    timer.join()
    assert status == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert "SIGTERM" in err and "run the same command to resume" in err
    # a deliberate stop is a success
    step = json.loads((tmp_path / "run" / "train_state.json").read_text())["step"]
    assert main([*args, "--stop-at", str(step + 1)]) == 0


def test_a_second_trainer_on_the_same_run_is_refused_while_the_first_holds_it(tmp_path):
    from npbandit.training.run_state import lock_run

    config = tiny_config(tmp_path, steps=4)
    train(config, progress=False, stop_at=2)
    held = lock_run(tmp_path / "run")  # as a live trainer in another process holds it
    try:
        with pytest.raises(ValueError, match="being trained by another process"):
            train(config, progress=False)
        assert train(config, progress=False, export_now=True).step == 2  # exporting only reads
    finally:
        held.close()
    assert train(config, progress=False).step == 4


def test_a_state_whose_two_files_come_from_different_saves_is_refused(tmp_path, monkeypatch):
    import time as time_module

    config = tiny_config(tmp_path, steps=6, checkpoint_every=1)
    train(config, progress=False, stop_at=2)
    run = tmp_path / "run"
    older = (run / "train_state.json").read_text()
    train(config, progress=False, stop_at=3)
    (run / "train_state.json").write_text(older)  # the JSON of step 2 beside the tensors of step 3
    monkeypatch.setattr(time_module, "sleep", lambda s: None)
    with pytest.raises(ValueError, match="different saves"):
        train(config, progress=False)


def test_export_now_takes_no_stop_and_a_finished_run_is_not_evaluated_again(tmp_path, monkeypatch):
    config = tiny_config(tmp_path, steps=4)
    train(config, progress=False, stop_at=2)
    with pytest.raises(ValueError, match="--stop-at"):
        train(config, progress=False, export_now=True, stop_at=3)
    partial = json.loads(train(config, progress=False, export_now=True).card.read_text())
    assert partial["training"]["device"] == "cpu" and "torch_threads" not in partial["training"]
    done = train(config, progress=False)
    card = done.card.read_text()
    import npbandit.training.trainer as trainer

    monkeypatch.setattr(trainer, "evaluate_suite", lambda *a, **k: pytest.fail("evaluated a finished run again"))
    again = train(config, progress=False)
    assert again.step == 4 and again.card == done.card and again.card.read_text() == card


def test_a_resume_that_names_the_presets_own_value_is_the_same_run(tmp_path):
    from npbandit.surrogates import SIZES

    train(tiny_config(tmp_path, steps=4), progress=False, stop_at=2)
    same = tiny_config(tmp_path, steps=4, model_config={"d_model": SIZES["tiny"]["d_model"]})
    assert train(same, progress=False, export=False).step == 4
    with pytest.raises(ValueError, match="model_config"):  # a different width is another run
        train(tiny_config(tmp_path, steps=4, model_config={"d_model": SIZES["tiny"]["d_model"] * 2}), progress=False)


def test_a_state_whose_bo_spec_cites_the_deprecated_alias_still_resumes(tmp_path):
    # the bo spec's "y" now cites npbandit.transforms.standardize; a state saved while it cited
    # npbandit.scaling describes the same prior and must resume
    assert "(npbandit.transforms.standardize)" in BOPrior().spec()["y"]
    config = tiny_config(tmp_path, prior="bo", prior_params={"max_context": 8, "n_target": 4}, steps=2,
                         eval_every=2, checkpoint_every=1)
    assert train(config, progress=False, stop_at=1).step == 1
    state = tmp_path / "run" / "train_state.json"
    meta = json.loads(state.read_text())
    meta["prior_spec"]["y"] = meta["prior_spec"]["y"].replace("(npbandit.transforms.standardize)",
                                                              "(npbandit.scaling)")
    state.write_text(json.dumps(meta))
    assert train(config, progress=False).step == 2
