"""NPModel on data wider than its network: the columns it reads (chosen by relevance, listed or
injected), predictions flat in the others, and the refusals of what cannot work."""

import pytest
import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.models.transforms import Normalize
from botorch.optim import optimize_acqf
from botorch.sampling import SobolQMCNormalSampler
from botorch.utils.datasets import SupervisedDataset
from helpers import tiny_checkpoint

from npbandit.exceptions import CheckpointError
from npbandit.models import ColumnSelector, NPModel, RelevantColumns
from npbandit.models.columns import relevance
from npbandit.surrogates import build

D = 10


def surrogate(name="cmanp", x_dim=6, seed=0):
    torch.manual_seed(seed)
    return build(name, x_dim, 1, size="tiny").eval()


def wide_data(n=30, seed=0):
    """Outputs that follow column 7 (a trend) and column 2 (a bowl at 0.5); the other eight are noise."""
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, D, generator=g, dtype=torch.float64)
    Y = X[:, [7]] + 4 * (X[:, [2]] - 0.5) ** 2 + 0.01 * torch.randn(n, 1, generator=g, dtype=torch.float64)
    return X, Y


def test_relevance_scores_a_trend_and_a_bowl_and_nothing_else():
    X, Y = wide_data()
    center = X[int(torch.argmin(Y))]
    score = relevance(X, Y, center)
    assert score.shape == (D,) and score.dtype == torch.float64 and ((score >= 0) & (score <= 1 + 1e-12)).all()
    noise = [i for i in range(D) if i not in (2, 7)]
    assert min(score[2], score[7]) > score[noise].max()
    X[:, 4] = 0.3  # a constant column carries nothing
    assert relevance(X, Y, center)[4] == 0
    assert torch.equal(relevance(X[:2], Y[:2], center), torch.zeros(D, dtype=torch.float64))  # two points: nothing
    # unchanged by shifting and scaling a column or the output (Normalize, bounds, Standardize)
    scaled = relevance(3 * X - 1, -2 * Y + 5, 3 * center - 1)
    assert torch.allclose(scaled, relevance(X, Y, center))


def test_relevant_columns_pick_the_columns_that_carry_the_signal():
    X, Y = wide_data()
    assert RelevantColumns().select(X, Y, 2) == (2, 7)
    assert RelevantColumns().select(X, -Y, 2) == (2, 7)  # maximised or minimised: the same columns
    chosen = RelevantColumns().select(X, Y, 6)
    assert len(chosen) == 6 and {2, 7} <= set(chosen) and list(chosen) == sorted(chosen)
    assert RelevantColumns().select(X[:2], Y[:2], 3) == (0, 1, 2)  # no signal yet: the first columns


def test_relevant_columns_keep_every_input_of_an_additive_bowl_among_inert_columns():
    # the Ax review's case: x0..x3 all matter, x4..x7 are inert, 20 points. Each input's own
    # correlation with the output is diluted by the other three's variation, so chance
    # correlations of inert columns outrank one of them (here x2) unless the columns' effects
    # are fitted together
    g = torch.Generator().manual_seed(9)
    X = torch.rand(20, 8, generator=g, dtype=torch.float64)
    Y = ((X[:, :4] - torch.tensor([0.3, 0.7, 0.4, 0.6], dtype=torch.float64)) ** 2).sum(-1, keepdim=True)
    assert {0, 1, 2, 3} <= set(RelevantColumns().select(X, Y, 6))
    order = [4, 5, 6, 7, 0, 1, 2, 3]  # the same inputs last: found where they are, not by index
    assert RelevantColumns().select(X[:, order], Y, 6)[-4:] == (4, 5, 6, 7)
    # unchanged by shifting and scaling a column or the output, and by the output's sign
    scaled = RelevantColumns().select(5 * X[:, order] - 2, -3 * Y + 1, 6)
    assert scaled == RelevantColumns().select(X[:, order], Y, 6)


def test_relevant_columns_share_credit_between_inputs_that_move_together():
    # an optimiser's proposals move the inputs that matter together: x1 follows x0 (with a
    # little scatter) and both matter, x2..x5 are inert. Taking out x0's fit before scoring
    # the rest would leave x1 nothing; the joint fit keeps both
    g = torch.Generator().manual_seed(0)
    X = torch.rand(16, 6, generator=g, dtype=torch.float64)
    X[:, 1] = X[:, 0] + 0.1 * torch.rand(16, generator=g, dtype=torch.float64)
    Y = ((X[:, :2] - 0.3) ** 2).sum(-1, keepdim=True)
    assert {0, 1} <= set(RelevantColumns().select(X, Y, 3))


def test_relevant_columns_on_thin_or_degenerate_data():
    X, Y = wide_data(n=2)
    assert RelevantColumns().select(X, Y, 4) == (0, 1, 2, 3)  # two points: no evidence
    assert RelevantColumns().select(*wide_data(n=12)[:1], torch.ones(12, 1), 2) == (0, 1)  # a constant output
    X, Y = wide_data(n=30)
    X[:, 0] = 0.5  # a constant column explains nothing
    X[:, 1] = (torch.arange(30) % 2).double()  # a 0/1 column (a one-hot value): a trend and no bowl
    chosen = RelevantColumns().select(X, Y + 0.5 * X[:, 1:2], 3)
    assert 0 not in chosen and {1, 2, 7} == set(chosen)
    assert RelevantColumns().select(X, Y, 20) == tuple(range(D))  # wider than the data: every column
    with pytest.raises(ValueError, match="ridge must be a positive number"):
        RelevantColumns(ridge=0.0)


def test_a_model_on_wide_data_reads_the_relevant_columns_and_is_flat_in_the_others():
    X, Y = wide_data()
    model = NPModel(surrogate(), X, Y)
    assert len(model.columns) == 6 and {2, 7} <= set(model.columns)
    others = [i for i in range(D) if i not in model.columns]
    g = torch.Generator().manual_seed(1)
    Xt = torch.rand(5, 3, D, generator=g, dtype=torch.float64)
    moved = Xt.clone()
    moved[..., others] = torch.rand(5, 3, len(others), generator=g, dtype=torch.float64)
    before, after = model.posterior(Xt), model.posterior(moved)
    assert before.mean.shape == (5, 3, 1)
    assert torch.equal(before.mean, after.mean) and torch.equal(before.variance, after.variance)
    shifted = Xt.clone()
    shifted[..., 7] = 1 - shifted[..., 7]
    assert not torch.allclose(model.posterior(shifted).mean, before.mean)
    # the acquisition's gradient: zero in the columns the model does not read
    x = Xt[:1, :1].clone().requires_grad_(True)
    LogExpectedImprovement(model, best_f=Y.max())(x).sum().backward()
    assert (x.grad[..., others] == 0).all() and (x.grad[..., list(model.columns)] != 0).any()
    bounds = torch.stack([torch.zeros(D), torch.ones(D)]).to(torch.float64)
    candidate, _ = optimize_acqf(LogExpectedImprovement(model, best_f=Y.max()), bounds, q=1, num_restarts=2,
                                 raw_samples=16)
    assert candidate.shape == (1, D)


def test_points_equal_in_the_read_columns_share_a_draw():
    X, Y = wide_data()
    model = NPModel(surrogate(), X, Y)
    others = [i for i in range(D) if i not in model.columns]
    pair = X[:1].repeat(2, 1)
    pair[1, others] = 1 - pair[1, others]  # another point to the objective, the same point to the model
    cov = model.posterior(pair).distribution.covariance_matrix
    assert torch.allclose(cov, cov[0, 0].expand(2, 2))


def test_listed_columns_are_the_model_on_those_columns():
    X, Y = wide_data()
    s = surrogate()
    Xt = torch.rand(4, 1, D, dtype=torch.float64)
    listed = NPModel(s, X, Y, columns=[9, 0, 4])
    narrow = NPModel(s, X[:, [9, 0, 4]], Y)
    assert listed.columns == (9, 0, 4) and narrow.columns == (0, 1, 2)
    assert torch.equal(listed.posterior(Xt).mean, narrow.posterior(Xt[..., [9, 0, 4]]).mean)
    # a selection of every column in order is no selection; "relevant" on narrow data reads it all
    assert NPModel(s, X[:, :3], Y, columns=[0, 1, 2])._columns is None
    assert NPModel(s, X[:, :3], Y, columns="relevant").columns == (0, 1, 2)

    class Last(ColumnSelector):  # an injected rule
        def select(self, X, Y, width):
            return list(range(X.shape[-1] - width, X.shape[-1]))

    assert NPModel(s, X, Y, columns=Last()).columns == (4, 5, 6, 7, 8, 9)


def test_the_columns_survive_new_data_transforms_and_state_dicts():
    X, Y = wide_data()
    s = surrogate()
    lo = torch.full((D,), -1.0, dtype=torch.float64)
    raw = lo + 3 * X  # in [-1, 2]^D: Normalize maps it back
    model = NPModel(s, raw, Y, input_transform=Normalize(D, bounds=torch.stack([lo, lo + 3])))
    assert model.columns == NPModel(s, X, Y).columns  # the rule is unchanged by scaling a column
    child = model.condition_on_observations(raw[:2] * 0.9, Y[:2])
    assert child.columns == model.columns and child.posterior(raw[:3]).mean.shape == (3, 1)
    fantasy = model.fantasize(raw[:2], sampler=SobolQMCNormalSampler(torch.Size([3]), seed=0))
    assert fantasy.columns == model.columns and fantasy.posterior(raw[:3]).mean.shape == (3, 3, 1)
    bounded = NPModel(s, raw, Y, bounds=torch.stack([lo, lo + 3]))
    again = NPModel(s, raw, Y, bounds=torch.stack([lo, lo + 3]), columns=bounded.columns)
    again.load_state_dict(bounded.state_dict())
    assert again.columns == bounded.columns
    assert torch.equal(again.posterior(raw[:4]).mean, bounded.posterior(raw[:4]).mean)


def test_from_pretrained_and_construct_inputs_choose_from_the_data(tmp_path):
    card = tiny_checkpoint(tmp_path)
    X, Y = wide_data()
    model = NPModel.from_pretrained(card, X, Y)
    assert model.columns == RelevantColumns().select(X, Y, 6)
    assert NPModel.from_pretrained(card, X, Y, columns=[3]).columns == (3,)
    ds = SupervisedDataset(X, Y, feature_names=[f"x{i}" for i in range(D)], outcome_names=["y"])
    inputs = NPModel.construct_inputs(ds, checkpoint=card)
    assert inputs["columns"] == model.columns
    assert NPModel(**inputs).columns == model.columns
    assert NPModel.construct_inputs(ds, checkpoint=card, columns=[1, 2])["columns"] == (1, 2)
    # by the dataset's feature names (Ax's parameter names), mixed with indices too
    assert NPModel.construct_inputs(ds, checkpoint=card, columns=["x7", "x2", 4])["columns"] == (7, 2, 4)
    with pytest.raises(ValueError, match=r"columns names \['lr'\], which the dataset's feature_names .*x9"):
        NPModel.construct_inputs(ds, checkpoint=card, columns=["x1", "lr"])
    narrow = SupervisedDataset(X[:, :4], Y, feature_names=[f"x{i}" for i in range(4)], outcome_names=["y"])
    assert "columns" not in NPModel.construct_inputs(narrow, checkpoint=card)  # every column, as before
    with pytest.raises(CheckpointError, match="columns='all'"):
        NPModel.construct_inputs(ds, checkpoint=card, columns="all")


@pytest.mark.parametrize("columns, error, match", [
    ("most", ValueError, r"columns must be one of \['all', 'relevant'\]"),
    ("all", CheckpointError, r"train_X has 10 columns but the network reads at most 6 inputs \(columns='all'\)"),
    ([0, 0], ValueError, "columns must be 1 to 6 distinct column indices"),
    ([], ValueError, "columns must be 1 to 6 distinct"),
    (list(range(7)), ValueError, "columns must be 1 to 6 distinct"),
    ([10], ValueError, r"columns must be column indices in 0\.\.9"),
    ([True], ValueError, "column indices"),
    (2.5, TypeError, "columns must be None, one of"),
])
def test_bad_columns_are_refused_by_name(columns, error, match):
    X, Y = wide_data(n=5)
    with pytest.raises(error, match=match):
        NPModel(surrogate(), X, Y, columns=columns)


def test_a_selector_that_breaks_its_contract_is_named():
    class Greedy(ColumnSelector):
        def select(self, X, Y, width):
            return list(range(width + 1))

    X, Y = wide_data(n=5)
    with pytest.raises(ValueError, match="the columns Greedy selected must be 1 to 6 distinct"):
        NPModel(surrogate(), X, Y, columns=Greedy())


def test_columns_chosen_for_the_user_are_named_in_a_warning_and_a_chosen_rule_is_quiet():
    import warnings

    from botorch.exceptions.warnings import InputDataWarning

    from npbandit import NPModel
    from npbandit.surrogates import build

    torch.manual_seed(0)
    net = build("tnpd", 3, 1, size="tiny").eval()
    X = torch.rand(12, 5, dtype=torch.float64)
    Y = X[:, 4:] ** 2
    with pytest.warns(InputDataWarning, match=r"reads the 3 RelevantColumns judges most relevant") as caught:
        model = NPModel(net, X, Y)
    assert "model.columns lists them" in str(caught[0].message) and len(model.columns) == 3
    with warnings.catch_warnings(record=True) as again:  # Python's default filter: once per call site and text
        warnings.simplefilter("default")
        for order in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [1, 0, 2, 4, 3]) * 2:  # other columns chosen, same text
            NPModel(net, X[:, order], Y)
    assert len([w for w in again if issubclass(w.category, InputDataWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", InputDataWarning)
        NPModel(net, X, Y, columns="relevant")  # the same rule, asked for: no warning
        NPModel(net, X[:, :3], Y)  # narrow enough to read whole: nothing chosen
