"""NPModel's input domain: data outside the box the network was trained on is refused, naming
where; queries outside it are answered with a warning; rounding on a face is no excursion."""

import warnings

import pytest
import torch
from botorch.exceptions.warnings import InputDataWarning
from botorch.models.transforms import Normalize
from botorch.sampling import SobolQMCNormalSampler
from helpers import data_box

from npbandit import NPModel
from npbandit.models.checks import DOMAIN_EPS, box_excursion
from npbandit.surrogates import build

D = 3


def surrogate():
    torch.manual_seed(0)
    return build("cmanp", 6, 1, size="tiny").eval()


def data(n=8, dtype=torch.float64):
    g = torch.Generator().manual_seed(0)
    X = torch.rand(n, D, generator=g, dtype=dtype)
    return X, torch.sin(5 * X.sum(-1, keepdim=True))


def test_training_data_outside_the_box_is_refused_naming_the_row_column_and_box():
    X, Y = data()
    bad = X.clone()
    bad[5, 2] = 1.25
    refused = (r"train_X row 5, column 2 is 1.25 \(after any input_transform\), outside input_domain \[0, 1\] "
               r"\(that column's: the box the surrogate was trained on; 1 row\(s\) outside\)")
    with pytest.raises(ValueError, match=refused):
        NPModel(surrogate(), bad, Y)
    bounds = torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.2]], dtype=torch.float64)
    bad[6, 0] = -0.5
    refused = (r"train_X row 5, column 2 is 1.25 .*outside bounds \[0, 1.2\] \(that column's, mapped onto "
               r"input_domain \[0, 1\]\^d, .*; 2 row\(s\) outside\); .*bounds=")
    with pytest.raises(ValueError, match=refused):
        NPModel(surrogate(), bad, Y, bounds=bounds)
    with pytest.raises(ValueError, match=r"train_X row 6, column 0 is -1.5 .*outside input_domain \[-1, 0\]"):
        NPModel(surrogate(), torch.cat([X[:6], bad[6:]]) - 1.0, Y, input_domain=(-1.0, 0.0))


def test_input_transforms_the_model_would_use_wrongly_are_refused():
    from botorch.models.transforms.input import ChainedInputTransform, InputPerturbation, InputStandardize, Warp

    X, Y = data()
    box = data_box(X)
    with pytest.raises(ValueError, match=r"Normalize learns its bounds from train_X.*Normalize\(d, bounds=bounds\)"):
        NPModel(surrogate(), X, Y, input_transform=Normalize(D))
    with pytest.raises(ValueError, match="mapped twice"):
        NPModel(surrogate(), X, Y, input_transform=Normalize(D, bounds=box), bounds=box)
    with pytest.raises(ValueError, match=r"learnable parameters \(.*concentration.*requires_grad_\(False\)"
                                         r".*leave it out \(in Ax, out of ModelConfig's input_transform_classes\)"):
        NPModel(surrogate(), X, Y, input_transform=Warp(d=D, indices=list(range(D))))
    frozen = Warp(d=D, indices=list(range(D)))
    frozen.requires_grad_(False)
    assert NPModel(surrogate(), X, Y, input_transform=frozen).posterior(X[:2]).mean.shape == (2, 1)
    perturb = InputPerturbation(perturbation_set=torch.zeros(4, D, dtype=torch.float64), bounds=box)
    with pytest.raises(ValueError, match="InputPerturbation maps each point to several"):
        NPModel(surrogate(), X, Y, input_transform=perturb)
    with pytest.raises(ValueError, match="learns its bounds"):  # found inside a chain too
        NPModel(surrogate(), X, Y, input_transform=ChainedInputTransform(n=Normalize(D)))
    # z-scores of train_X: refused for what the transform does, not as a row outside the box
    with pytest.raises(ValueError, match=r"InputStandardize maps train_X to z-scores .*Normalize\(d, bounds=bounds\)"):
        NPModel(surrogate(), X, Y, input_transform=InputStandardize(D))


def test_an_input_transform_that_changes_the_width_is_refused_naming_the_widths_and_columns():
    # bounds, the box check and columns are in train_X's d columns, and the network reads the
    # transform's output through them: a transform that drops columns (FilterFeatures) must
    # be refused, not read as if it kept them (a crash deep in the box check, or a model
    # whose columns name columns its inputs no longer have)
    from botorch.models.transforms.input import FilterFeatures

    X, Y = data()
    for keep in ([1], [0, 2]):
        with pytest.raises(ValueError, match=rf"input_transform FilterFeatures maps train_X's 3 columns to "
                                             rf"{len(keep)}.*columns=\[\.\.\.\]"):
            NPModel(surrogate(), X, Y, input_transform=FilterFeatures(feature_indices=torch.tensor(keep)))
    kept = FilterFeatures(feature_indices=torch.tensor([0, 1, 2]))  # every column, in order: the width kept
    assert NPModel(surrogate(), X, Y, input_transform=kept).posterior(X[:2]).mean.shape == (2, 1)


def test_a_new_observation_outside_the_box_is_refused_and_the_model_kept():
    X, Y = data()
    model = NPModel(surrogate(), X, Y, input_transform=Normalize(D, bounds=data_box(X)))
    beyond = X[:1] * 0 + X.max(dim=0).values + 0.01  # past the data's range: outside the box
    with pytest.raises(ValueError, match=r"^X row 0, column 0 is 1.0\d+ .*outside input_domain"):
        model.condition_on_observations(beyond, Y[:1])
    assert model.train_X.shape == (8, D)
    inside = model.condition_on_observations((X[:1] + X[1:2]) / 2, Y[:1])
    assert inside.train_X.shape == (9, D)


def test_a_query_outside_the_box_is_answered_with_a_warning():
    X, Y = data()
    model = NPModel(surrogate(), X, Y, input_transform=Normalize(D, bounds=data_box(X)))
    far = torch.full((2, 1, D), 1.5, dtype=torch.float64)
    with pytest.warns(InputDataWarning, match="outside the box its network was trained on"):
        post = model.posterior(far)
    assert torch.isfinite(post.mean).all()
    with pytest.warns(InputDataWarning):
        assert model.joint_sample(far[:, 0], 2).shape == (2, 2, 1)
    # fantasies are queries: fantasize warns (through its posterior) and conditions on them
    with pytest.warns(InputDataWarning):
        fantasy = model.fantasize(far, SobolQMCNormalSampler(torch.Size([3])))
    assert fantasy.batch_shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.posterior(X[:3].unsqueeze(-2))  # inside the box: no warning


def test_rounding_on_a_face_is_no_excursion():
    # float32 data on the upper face of float64 bounds: BoTorch's Normalize maps it to 1 + one float32 eps
    lo, hi = 0.17679952620371409, 0.4528688488811142
    bounds = torch.tensor([[lo] * D, [hi] * D], dtype=torch.float64)
    X = lo + torch.rand(6, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * (hi - lo)
    X = X.float()
    X[0] = hi
    normalize = Normalize(D, bounds=bounds)
    normalize.eval()
    assert normalize(X[:1]).max() > 1  # the arithmetic's doing, not the data's
    Y = X.sum(-1, keepdim=True)
    model = NPModel(surrogate(), X, Y, input_transform=Normalize(D, bounds=bounds))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.posterior(X[:1].unsqueeze(-2))
    model.condition_on_observations(X[:1], Y[:1])
    # the tolerance: DOMAIN_EPS eps of the dtype (at least float32's), times the box's scale, and no more
    eps32 = torch.finfo(torch.float32).eps
    ones, zeros = torch.ones(D, dtype=torch.float64), torch.zeros(D, dtype=torch.float64)
    edge = torch.full((1, D), 1.0, dtype=torch.float64)
    assert box_excursion("X", edge + (DOMAIN_EPS - 1) * eps32, zeros, ones, "box") is None
    assert "X row 0, column 0" in box_excursion("X", edge + 1e-5, zeros, ones, "box")
    scaled = box_excursion("X", 1000 * edge + (DOMAIN_EPS - 1) * 1000 * eps32, zeros, 1000 * ones, "box")
    assert scaled is None  # relative to the box's scale
    assert box_excursion("X", 1000 * edge + 1e-2, zeros, 1000 * ones, "box") is not None
    assert box_excursion("X", (edge + 1e-7).float(), zeros, ones, "box") is None


def test_float64_values_on_bounds_kept_at_float32_precision_are_inside():
    # Ax's Normalize holds its bounds at float32 precision: 0.1 and 0.7 become 0.10000000149...
    # and 0.69999998..., so the user's 0.1 maps to -2.5e-9, a rounding, not an excursion
    bounds = torch.tensor([[0.1, 0.0], [0.7, 1.0]], dtype=torch.float32).double()
    X = torch.tensor([[0.1, 0.5], [0.7, 0.2], [0.3, 0.9], [0.5, 0.1]], dtype=torch.float64)
    normalize = Normalize(2, bounds=bounds)
    normalize.eval()
    assert normalize(X)[0, 0] < 0 < normalize(X)[1, 0] - 1  # outside by rounding alone
    model = NPModel(surrogate(), X, X.sum(-1, keepdim=True), input_transform=Normalize(2, bounds=bounds))
    model.condition_on_observations(X[:2], X[:2].sum(-1, keepdim=True))
    XF, YF = data()
    XF[2, 1] = 1 + 1e-5
    with pytest.raises(ValueError, match="train_X row 2, column 1"):
        NPModel(surrogate(), XF, YF)


def test_the_box_thresholds_are_kept_per_dtype_and_shared_with_conditioned_models():
    X, Y = data()
    model = NPModel(surrogate(), X, Y)
    on_face = torch.full((1, 1, D), 1 + 1e-7, dtype=torch.float64)  # rounding, in either dtype
    just_past = torch.full((1, 1, D), 1 + 1e-5, dtype=torch.float64)
    for _ in range(2):  # the second time from the kept thresholds
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model.posterior(on_face.float())
            model.posterior(on_face)
        with pytest.warns(InputDataWarning, match="outside the box"):
            model.posterior(just_past)
    assert set(model._box_limits) == {(torch.float32, torch.device("cpu")), (torch.float64, torch.device("cpu"))}
    child = model.condition_on_observations(X[:1], Y[:1])
    assert child._box_limits is model._box_limits
    with pytest.warns(InputDataWarning, match="outside the box"):
        child.posterior(just_past)
    with pytest.raises(ValueError, match=r"X row 0, column 0 is 1.00001"):
        model.condition_on_observations(just_past[0], Y[:1])
