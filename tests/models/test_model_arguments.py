"""NPModel's argument errors: one line naming the argument and what it got."""

import pytest
import torch

from npbandit import NPModel
from npbandit.surrogates import build


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return build("tnpd", 3, 1, size="tiny").eval()


def test_integer_inputs_are_refused_with_their_dtype_and_the_fix(net):
    with pytest.raises(TypeError, match=r"train_X must be a floating-point torch.Tensor, got one of dtype torch.int64"):
        NPModel(net, torch.ones(4, 2, dtype=torch.long), torch.rand(4, 1, dtype=torch.float64))
    with pytest.raises(TypeError, match="train_Y must be a floating-point torch.Tensor, got list"):
        NPModel(net, torch.rand(4, 2, dtype=torch.float64), [[0.0]] * 4)
    model = NPModel(net, torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"X must be a floating-point torch.Tensor, got one of dtype torch.int64 "
                                        r"\(convert it: X.double\(\)\)"):
        model.posterior(torch.ones(4, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="X must be a floating-point torch.Tensor, got list"):
        model.posterior([[0.5, 0.5]])


def test_bounds_in_the_wrong_order_name_the_column(net):
    bounds = torch.tensor([[0.0, 5.0], [1.0, -5.0]], dtype=torch.float64)  # column 1 upside down
    with pytest.raises(ValueError, match=r"column 1 has 5 \.\. -5"):
        NPModel(net, torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64), bounds=bounds)
