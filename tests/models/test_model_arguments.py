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


def test_batched_training_data_is_refused_naming_the_shape_and_what_to_do(net):
    # a BoTorch user's batched model (SingleTaskGP on b x n x d, batch_cross_validation's folds)
    X, Y = torch.rand(5, 4, 2, dtype=torch.float64), torch.rand(5, 4, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"train_X must be a 2-D tensor \(n x columns\), got shape \(5, 4, 2\): "
                                         r"NPModel holds one data set.*build one NPModel per data set"):
        NPModel(net, X, Y)
    with pytest.raises(ValueError, match=r"train_Y must be a 2-D tensor \(n x columns\), got shape \(5, 4, 1\): "):
        NPModel(net, X[0], Y)


def test_batched_training_data_gets_the_same_message_through_from_pretrained():
    # from_pretrained checks the data before the constructor does (to choose its columns and
    # options): a forgotten squeeze of draw_sobol_samples(bounds, n, q=1) gives n x 1 x d
    X, Y = torch.rand(6, 1, 2, dtype=torch.float64), torch.rand(6, 1, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"train_X must be a 2-D tensor \(n x columns\), got shape \(6, 1, 2\): "
                                         r"NPModel holds one data set.*build one NPModel per data set"):
        NPModel.from_pretrained("tnpd-bo", X, Y)
    with pytest.raises(ValueError, match=r"train_Y must be a 2-D tensor \(n x columns\), got shape \(6, 1, 1\): "
                                         r"NPModel holds one data set"):
        NPModel.from_pretrained("tnpd-bo", X[:, 0], Y)


def test_new_observations_of_the_wrong_kind_name_the_argument(net):
    model = NPModel(net, torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64))
    X, Y = torch.rand(2, 2, dtype=torch.float64), torch.rand(2, 1, dtype=torch.float64)
    with pytest.raises(TypeError, match=r"^X must be a floating-point torch.Tensor, got one of dtype torch.int64$"):
        model.condition_on_observations(torch.zeros(2, 2, dtype=torch.long), Y)
    with pytest.raises(TypeError, match=r"^Y must be a floating-point torch.Tensor, got one of dtype torch.int64$"):
        model.condition_on_observations(X, torch.zeros(2, 1, dtype=torch.long))
    with pytest.raises(TypeError, match=r"^X must be a floating-point torch.Tensor, got list$"):
        model.condition_on_observations(X.tolist(), Y)
    for name, bad in (("X", (X.masked_fill(torch.eye(2, dtype=torch.bool), float("nan")), Y)),
                      ("Y", (X, Y.masked_fill(Y > -1, float("inf"))))):
        with pytest.raises(ValueError, match=rf"^{name} contains NaN or infinite values$"):
            model.condition_on_observations(*bad)
    assert model.train_X.shape == (4, 2)


def test_bounds_in_the_wrong_order_name_the_column(net):
    bounds = torch.tensor([[0.0, 5.0], [1.0, -5.0]], dtype=torch.float64)  # column 1 upside down
    with pytest.raises(ValueError, match=r"column 1 has 5 \.\. -5"):
        NPModel(net, torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64), bounds=bounds)


def test_batch_shapes_that_do_not_broadcast_name_the_arguments(net):
    from botorch.sampling import SobolQMCNormalSampler

    def points(*shape):
        return torch.rand(*shape, dtype=torch.float64)

    model = NPModel(net, points(4, 2), points(4, 1))
    fantasy = model.fantasize(points(3, 1, 2), SobolQMCNormalSampler(torch.Size([2])))
    assert fantasy.batch_shape == (2, 3)
    with pytest.raises(ValueError, match=r"X's batch shape \(4,\) must broadcast .* batch_shape \(2, 3\)"):
        fantasy.posterior(points(4, 1, 2))
    with pytest.raises(ValueError, match=r"observation_noise must be .* \(4, 3, 1\), got shape \(2, 1\)"):
        model.posterior(points(4, 3, 2), observation_noise=points(2, 1))
    with pytest.raises(ValueError, match=r"X's and Y's batch shapes \(3,\) and \(4,\) must broadcast"):
        model.condition_on_observations(points(3, 1, 2), points(4, 1, 1))
    with pytest.raises(ValueError, match=r"model's batch_shape \(2, 3\)"):
        fantasy.condition_on_observations(points(4, 1, 2), points(4, 1, 1))


def test_a_network_dtype_that_is_no_torch_dtype_is_refused_by_its_own_name():
    # Ax's model_options pass it through untouched: a string there must be named as network_dtype,
    # the option the user wrote, not as the loader's dtype
    from botorch.utils.datasets import SupervisedDataset

    ds = SupervisedDataset(torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64),
                           feature_names=["a", "b"], outcome_names=["y"])
    for bad in ("float64", torch.int64):
        with pytest.raises(TypeError, match=r"network_dtype must be a floating-point torch.dtype .* got "):
            NPModel.construct_inputs(ds, checkpoint="cmanp-bo", network_dtype=bad)


def test_an_unknown_model_option_is_refused_naming_every_option_taken():
    # Ax's model_options reach construct_inputs: a misspelt key is named, beside every key it takes
    from botorch.utils.datasets import SupervisedDataset

    ds = SupervisedDataset(torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64),
                           feature_names=["a", "b"], outcome_names=["y"])
    with pytest.raises(TypeError, match=r"unknown model option\(s\) \['colums'\]; it takes checkpoint, network_dtype "
                                        r"and \['bounds', .*'columns', 'covariance'\]"):
        NPModel.construct_inputs(ds, checkpoint="cmanp-bo", colums="all")


def test_an_observation_noise_tensor_of_negative_or_missing_variances_is_refused(net):
    """A noise variance below zero, or NaN, has no meaning: refused naming the value, not raised to
    gpytorch's floor (a negative one made the posterior's variance 1e-10 with only a gpytorch
    warning about numerical instability) nor carried into the posterior as NaN."""
    model = NPModel(net, torch.rand(4, 2, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64))
    X = torch.rand(3, 2, dtype=torch.float64)
    for bad in (-0.5, float("nan"), float("inf")):
        noise = torch.tensor([[0.1], [bad], [0.2]], dtype=torch.float64)
        with pytest.raises(ValueError, match=r"observation_noise must hold finite variances >= 0, got "
                                             rf"{bad} at index \(1, 0\)"):
            model.posterior(X, observation_noise=noise)
    zero = model.posterior(X, observation_noise=torch.zeros(3, 1, dtype=torch.float64)).variance
    torch.testing.assert_close(zero, model.posterior(X).variance, rtol=0, atol=0)


def test_unstandardised_outputs_far_from_the_networks_scale_are_warned_of(net):
    import warnings

    from botorch.exceptions.warnings import InputDataWarning
    from botorch.models.transforms import Standardize

    X = torch.rand(12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = 1e4 + 300 * torch.sin(5 * X.sum(-1, keepdim=True))  # raw units: of order 1e4
    with pytest.warns(InputDataWarning, match=r"standardize=False.*train_Y column 0 reaches 1\.0\de\+04 in "
                                              r"magnitude.*standardize=True"):
        NPModel(net, X, Y, standardize=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NPModel(net, X, Y)  # the default standardises them
        NPModel(net, X, Y, standardize=False, outcome_transform=Standardize(1))  # on the network's scale already
        NPModel(net, X, (Y - Y.mean()) / Y.std(), standardize=False)
        NPModel(net, X, 30 * (Y - Y.mean()) / Y.std(), standardize=False)  # past 10, not far: a pooled scale
