"""experiments/benchmarks/bo_yardstick.py and bo_interpolation.py: how well a *-bo surrogate
predicts, as NPModel sees the data, and whether it follows its own observations."""

import math

import pytest
import torch

from .helpers import load_benchmark

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def yardstick():
    return load_benchmark("bo_yardstick")


@pytest.fixture(scope="module")
def interpolation():
    return load_benchmark("bo_interpolation")


def test_the_yardstick_scores_in_context_standardised_units(yardstick):
    # a prediction of N(context mean, context var) for a target at the context mean scores the
    # standard normal's log-density at 0 whatever the user units (SCALE, SHIFT)
    mean, var = torch.tensor([yardstick.SHIFT]), torch.tensor([yardstick.SCALE ** 2])
    got = yardstick.gaussian_ll(mean, var, torch.tensor([yardstick.SHIFT]))
    assert got.item() == pytest.approx(-0.5 * math.log(2 * math.pi))


def test_the_exact_gp_row_is_the_ceiling_the_baseline_the_floor(yardstick):
    base, exact = [], []
    for xc, yc, _xt, yt, ll in yardstick.tasks(1, 16):
        assert xc.shape[-1] == 1 and yc.shape[-1] == 1 and ll.shape == yt.shape[:1]
        base.append(float(yardstick.gaussian_ll(yc.mean().expand_as(yt), yc.var().expand_as(yt), yt).mean()))
        exact.append(float(ll.mean()))
    assert sum(exact) / 16 > sum(base) / 16 + 1.0  # at d = 1 the known GP is far above N(context moments)


def test_misfit_is_zero_for_a_model_that_interpolates(yardstick):
    class Interpolator:  # posterior mean = the observations at the observed points
        def __init__(self, y):
            self.y = y

        def posterior(self, x):
            return type("P", (), {"mean": self.y})()

    (xc, yc, *_), = list(yardstick.tasks(2, 1))
    assert yardstick.misfit(Interpolator(yc), xc, yc) == 0.0
    assert yardstick.misfit(Interpolator(yc + yardstick.SCALE), xc, yc) == pytest.approx(1.0)


@pytest.mark.slow
def test_the_yardstick_table_reports_each_models_share_of_the_gap(yardstick, keep_threads, capsys):
    yardstick.main(["--models", "tnpd-bo", "--tasks", "2", "--dims", "1", "--no-gp", "--no-write"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| tnpd-bo |"))
    ll, share = row.split("|")[2].split()
    assert math.isfinite(float(ll)) and share.startswith("(") and share.endswith(")")
    assert "| baseline |" in out and "| exact_gp |" in out and "Median distance" in out
    # the prior's Bayes predictive: attainable from what the models see, so below the exact GP, far above
    # the baseline at d = 1
    bayes = next(line for line in out.splitlines() if line.startswith("| bayes_gp |"))
    share = float(bayes.split("|")[2].split()[1].strip("()"))
    assert 0.5 < share < 1.05 and "effective sample size" in out


def test_the_yardstick_can_skip_the_bayes_row(yardstick, keep_threads, capsys):
    yardstick.main(["--models", "--tasks", "1", "--dims", "1", "--no-gp", "--no-write", "--bayes-samples", "0"])
    out = capsys.readouterr().out
    assert "| exact_gp |" in out and "bayes_gp" not in out


@pytest.mark.slow
def test_the_yardstick_scores_views_and_leaves_joint_models_at_one(yardstick, keep_threads, capsys):
    yardstick.main(["--models", "cmanp-bo", "cmanp-and-bo", "--views", "1", "2", "--tasks", "2", "--dims", "2",
                    "--no-gp", "--no-write"])
    rows = [line.split("|")[1].strip() for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert {"cmanp-bo", "cmanp-bo (2 views)", "cmanp-and-bo"} <= set(rows)
    assert "cmanp-and-bo (2 views)" not in rows  # NPModel refuses views for a joint-predictive surrogate


def test_the_yardstick_help_examples_read_as_typed_and_the_short_names_load(yardstick, capsys):
    # the continued example was joined into one line with a run of spaces; "tnpd" was refused
    with pytest.raises(SystemExit):
        yardstick.main(["--help"])
    examples = [line.strip() for line in capsys.readouterr().out.splitlines() if "bo_yardstick.py" in line
                or line.strip().startswith("--bayes-samples")]
    assert len(examples) >= 4 and not any("   " in line for line in examples)
    assert examples[2].endswith("0.5 \\") and examples[3].startswith("--bayes-samples 0")
    assert yardstick.load_model("tnpd").card["name"] == "tnpd-bo"  # as optimize(surrogate="tnpd") takes it
    with pytest.raises(SystemExit, match="not a network"):
        yardstick.load_model("gp")


def test_the_yardstick_scores_a_model_only_at_the_dims_its_card_trained_it_on(yardstick, keep_threads, capsys,
                                                                               tmp_path):
    # a network 8 wide trained on d = 1..6 got numbers at d = 8
    from npbandit.priors import BOPrior
    from npbandit.surrogates import build
    from npbandit.surrogates.pretrained import save_pretrained

    torch.manual_seed(0)
    card = save_pretrained(build("tnpd", 8, 1, size="tiny"), tmp_path, "wide-tnpd",
                           prior=BOPrior(x_dim=8, dims=(1, 2, 3, 4, 5, 6)).spec(), training={}, evaluation={})
    yardstick.main(["--models", str(card), "--tasks", "1", "--dims", "2", "8", "--no-gp", "--no-write",
                    "--bayes-samples", "0", "--views", "1"])
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| wide-tnpd |"))
    at_2, at_8 = (cell.strip() for cell in row.split("|")[2:4])
    assert at_2 != "n/a" and math.isfinite(float(at_2.split()[0])) and at_8 == "n/a"
    assert yardstick.trained_dims(yardstick.load_model(str(card))) == [1, 2, 3, 4, 5, 6]


def test_interpolation_numbers_of_a_model_that_follows_its_data(interpolation, keep_threads):
    from npbandit import load_surrogate

    got = interpolation.measure(load_surrogate("tnpd-bo"), d=2, n=10, n_tasks=4)
    assert set(got) == {"std@obs", "std@new", "err@obs", "ratio"}
    assert all(math.isfinite(v) and v >= 0 for v in got.values())
    # tnpd-bo attends to every observation: its spread shrinks where it has looked (experiments/log/results.md)
    assert got["std@obs"] < got["std@new"] and got["ratio"] == pytest.approx(got["std@obs"] / got["std@new"])
    assert interpolation.exact_gp_spread(2, 10, 4) > 0.01  # held-out points keep the GP's uncertainty
