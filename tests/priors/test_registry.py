"""The prior registry: register_prior's checks, and each prior's evaluation suite."""

import pytest
import torch
from helpers import Lines, registered_prior

from npbandit.priors import PRIORS, BOPrior, GP1DPrior, Prior, TaskBatch, WheelPrior, make_prior, register_prior
from npbandit.training import TrainConfig, train
from npbandit.training.evaluation import eval_batches, evaluation_suite


@pytest.fixture
def lines():
    with registered_prior(Lines):
        yield Lines


def test_a_registered_prior_gets_the_default_suite_its_own_tasks_at_the_evaluation_seed(lines):
    suite = evaluation_suite("test-lines", n=5)
    assert list(suite) == ["test-lines"] and isinstance(suite["test-lines"], Lines) and suite["test-lines"].n == 5
    first = next(iter(eval_batches(suite["test-lines"], 1, 3)))
    assert torch.equal(first.xc, Lines(5).batch(3, 2_024_000_017, 0).xc)


def test_the_shipped_suites_are_the_sub_priors_they_always_were():
    # the suites moved from an if-chain on names into the prior classes: the same priors, the same batches
    def same(a, b):
        assert type(a) is type(b) and a.spec() == b.spec()
        for x, y in zip(eval_batches(a, 2, 3), eval_batches(b, 2, 3)):
            assert all(torch.equal(s, t) for s, t in zip((x.xc, x.yc, x.xt, x.yt), (y.xc, y.yc, y.xt, y.yt)))

    gp1d = evaluation_suite("gp1d", kernel="matern52", max_points=20)
    assert list(gp1d) == ["rbf", "matern52"]
    same(gp1d["rbf"], GP1DPrior("rbf", max_points=20))
    same(gp1d["matern52"], GP1DPrior("matern52", max_points=20))
    bo = evaluation_suite("bo", max_context=20)
    assert list(bo) == [f"d={d}" for d in range(1, 7)]
    for d in (1, 6):
        same(bo[f"d={d}"], BOPrior(dims=(d,), max_context=20))
    assert list(evaluation_suite("bo", dims=(2, 3))) == ["d=2", "d=3"]
    wheel = evaluation_suite("wheel", n_context=64)
    assert list(wheel) == ["wheel"]
    same(wheel["wheel"], WheelPrior(n_context=64))
    assert GP1DPrior.suite_fixed == ("kernel",) and BOPrior.suite_fixed == WheelPrior.suite_fixed == ()


def test_register_prior_refuses_what_is_not_a_named_concrete_prior(lines):
    assert register_prior(Lines) is Lines  # the same class again: nothing to refuse
    with pytest.raises(TypeError, match="subclass of npbandit.priors.Prior"):
        register_prior(object)
    with pytest.raises(TypeError, match=r"must implement \['sample'\]"):
        register_prior(type("Half", (Prior,), {"name": "half", "spec": lambda self: {}}))
    # one rule with the model registry's: "mean lines" and "Lines2" were accepted
    for name in (" ", "", "mean lines", "Lines2", None):
        with pytest.raises(ValueError, match="cls.name must be a non-empty, lower-case string without whitespace"):
            register_prior(type("Nameless", (Lines,), {"name": name}))
    with pytest.raises(TypeError, match="replace must be a bool"):  # "yes" was read as true
        register_prior(type("Other", (Lines,), {"name": "bo"}), replace="yes")
    # what training builds the network from (x_dim=None was accepted, and failed in build)
    for attrs, match in (({"x_dim": None}, "cls.x_dim must be an int >= 1, got None"),
                         ({"y_dim": 0}, "cls.y_dim must be an int >= 1, got 0"),
                         ({"x_dim": True}, "cls.x_dim must be an int >= 1, got True"),
                         ({"input_domain": (1.0, 0.0)}, r"cls.input_domain must be \(low, high\) with low < high")):
        with pytest.raises(ValueError, match=match):
            register_prior(type("Shapeless", (Lines,), {"name": "shapeless", **attrs}))
    assert "shapeless" not in PRIORS
    with registered_prior(type("WideBo", (BOPrior,), {"name": "wide-bo"})):  # x_dim left to the constructor, as bo's
        assert PRIORS["wide-bo"](x_dim=8, dims=(8,)).x_dim == 8
    with pytest.raises(ValueError, match="'bo' is registered already.*replace=True"):
        register_prior(type("Other", (Lines,), {"name": "bo"}))
    assert PRIORS["bo"] is BOPrior


def test_a_suite_that_is_not_named_priors_is_refused(lines, monkeypatch):
    monkeypatch.setattr(Lines, "evaluation_suite", classmethod(lambda cls, **p: [cls(**p)]))
    with pytest.raises(TypeError, match=r"Lines.evaluation_suite must return a non-empty dict \{name: Prior\}"):
        evaluation_suite("test-lines")


class Buggy(Lines):
    """``Lines`` with one bug of its own: ``bug`` names it."""

    name = "test-buggy"

    def __init__(self, bug: str) -> None:
        super().__init__(4)
        self.bug = bug

    def sample(self, batch_size, generator):
        b = super().sample(batch_size, generator)
        if self.bug == "nan":
            b.yt[0, 1, 0] = torch.nan
            return b
        if self.bug == "inf-moment":
            return TaskBatch(b.xc, b.yc, b.xt, b.yt, {}, yt_var=torch.full_like(b.yt, torch.inf))
        if self.bug == "flat-y":
            return TaskBatch(b.xc, b.yc[..., 0], b.xt, b.yt, {})
        if self.bug == "wide-x":
            return TaskBatch(b.xc.expand(-1, -1, 2), b.yc, b.xt.expand(-1, -1, 2), b.yt, {})
        if self.bug == "targets":
            return TaskBatch(b.xc, b.yc, b.xt, b.yt[:, :3], {})
        if self.bug == "too-few":
            return TaskBatch(b.xc[:1], b.yc[:1], b.xt[:1], b.yt[:1], {})
        if self.bug == "ints":
            return TaskBatch(b.xc, b.yc.long(), b.xt, b.yt, {})
        return (b.xc, b.yc, b.xt, b.yt)  # "tuple"


@pytest.mark.parametrize("bug, match", [
    ("nan", r"returned yt with 1 NaN or infinite value\(s\)"),
    ("inf-moment", r"returned yt_var with 12 NaN or infinite value\(s\)"),
    ("flat-y", r"returned yc that is not a float tensor \[batch, points, width\]: Tensor torch.float32 \[3, 4\]"),
    ("wide-x", r"returned xc of shape \[3, 4, 2\]; expected \[3, 4, 1\] \(batch_size 3, 4 context and 4 target"),
    ("targets", r"returned yt of shape \[3, 3, 1\]; expected \[3, 4, 1\]"),
    ("too-few", r"returned xc of shape \[1, 4, 1\]; expected \[3, 4, 1\]"),
    ("ints", "returned yc that is not a float tensor"),
    ("tuple", "must return a TaskBatch, got tuple"),
])
def test_a_priors_bad_batch_is_refused_where_it_is_drawn_naming_its_sample(bug, match):
    # surfaced as the model's input errors ("yc must have shape ...", "yc contains NaN") naming no prior
    with registered_prior(Buggy):
        with pytest.raises(ValueError, match=r"prior 'test-buggy': Buggy.sample\(3, generator\) " + match):
            make_prior("test-buggy", bug=bug).batch(3, seed=0, index=0)


def test_training_and_evaluation_draw_checked_batches(tmp_path):
    with registered_prior(Buggy):
        with pytest.raises(ValueError, match=r"prior 'test-buggy': Buggy.sample\(2, generator\) returned yt with"):
            train(TrainConfig(model="tnpd", prior="test-buggy", prior_params={"bug": "nan"}, size="tiny", steps=1,
                              batch_size=2, eval_every=1, eval_batches=1, final_eval_batches=1, out=str(tmp_path)),
                  progress=False, export=False)
        with pytest.raises(ValueError, match=r"prior 'test-buggy': Buggy.sample\(3, generator\) returned yc"):
            next(iter(eval_batches(Buggy("flat-y"), 1, 3)))
