"""NPModel with a network that reads any width (``any_x_dim``, DATNP): the problem's own columns,
never zero padding, with and without symmetric views."""

import pytest
import torch
from botorch.exceptions import InputDataWarning
from helpers import tiny_checkpoint

from npbandit.models import NPModel
from npbandit.surrogates import build


def _data(d=3, n=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, d, generator=g, dtype=torch.float64)
    return X, (X - 0.4).pow(2).sum(-1, keepdim=True), torch.rand(5, 1, d, generator=g, dtype=torch.float64)


def _posterior_mean(model, Xq):
    with torch.no_grad():
        return model.posterior(Xq).mean


def test_the_network_reads_the_problems_columns_without_padding():
    X, Y, Xq = _data()
    torch.manual_seed(0)
    wide = build("datnp", 6, 1, size="tiny").eval()
    exact = build("datnp", 3, 1, size="tiny").eval()
    exact.load_state_dict(wide.state_dict())
    # built 6 wide, given 3 columns: the same answer as the network built for 3, so no zero
    # columns were added (a padded network's answer changes with its padding)
    torch.testing.assert_close(_posterior_mean(NPModel(wide, X, Y), Xq), _posterior_mean(NPModel(exact, X, Y), Xq),
                               rtol=0, atol=0)


def test_symmetric_views_of_a_network_of_any_width(tmp_path):
    X, Y, Xq = _data(d=4)
    card = tiny_checkpoint(tmp_path, model="datnp")
    one, four = NPModel.from_pretrained(card, X, Y), NPModel.from_pretrained(card, X, Y, n_views=4)
    mean = _posterior_mean(four, Xq)
    assert mean.shape == (5, 1, 1) and bool(torch.isfinite(mean).all())
    assert not torch.allclose(mean, _posterior_mean(one, Xq))  # the reflected views answer differently


def test_a_network_trained_narrower_than_it_was_built_reads_as_many_columns_as_it_was_trained_on(tmp_path):
    from npbandit.priors import BOPrior
    from npbandit.surrogates.pretrained import save_pretrained

    torch.manual_seed(0)
    prior = BOPrior(dims=(1, 2, 3, 4), x_dim=8, padding="none")  # built 8 wide, trained on d <= 4
    card = save_pretrained(build("datnp", 8, 1, size="tiny"), tmp_path, "datnp-narrow", prior=prior.spec(),
                           training={"steps": 1}, evaluation={"log_likelihood": {"test": 0.0}})
    X, Y, Xq = _data(d=6)
    with pytest.warns(InputDataWarning, match="reads at most 4"):
        model = NPModel.from_pretrained(card, X, Y)
    assert len(model.columns) == 4 and _posterior_mean(model, Xq).shape == (5, 1, 1)
