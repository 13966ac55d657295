"""``ModelListGP`` of ``NPModel``s: it switches modes without BoTorch's "Could not update
``train_inputs``" warning (the list calls each member's ``_set_transformed_inputs`` directly,
on ``eval()``, ``train()`` and inside acquisitions such as qHVKG, and an NP keeps its
transformed context in its own state), and answers for some of its outputs (it hands each
member NumPy integer indices)."""

import warnings

import numpy as np
import pytest
import torch
from botorch.models import ModelListGP
from botorch.models.transforms import Normalize, Standardize
from conftest import tiny_model

from npbandit import NPModel


def _models():
    generator = torch.Generator().manual_seed(0)
    bounds = torch.tensor([[0.0, -1.0], [2.0, 3.0]], dtype=torch.float64)
    X = bounds[0] + (bounds[1] - bounds[0]) * torch.rand(9, 2, dtype=torch.float64, generator=generator)
    Y = torch.stack([X.sum(-1), (X ** 2).sum(-1)], dim=-1)
    net = tiny_model("tnpd", x_dim=2)
    return X, [NPModel(net, X, Y[:, i:i + 1], input_transform=Normalize(2, bounds=bounds),
                       outcome_transform=Standardize(m=1)) for i in range(2)]


def test_a_model_list_of_np_models_with_input_transforms_changes_modes_without_warning():
    X, singles = _models()
    models = ModelListGP(*singles)
    before = models.posterior(X[:3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # BoTorch's RuntimeWarning about train_inputs would raise here
        models.train()
        models.eval()
        models.train(False)
        for single in singles:
            single._set_transformed_inputs()
            single._revert_to_original_inputs()
    after = models.posterior(X[:3])
    torch.testing.assert_close(after.mean, before.mean)  # nothing about the data changed
    torch.testing.assert_close(after.variance, before.variance)


def test_a_model_list_of_np_models_answers_for_some_of_its_outputs():
    """``ModelListGP.posterior(X, output_indices=[1])`` hands each member its own indices as
    NumPy integers (BoTorch's ``_get_group_subset_indices``): taken as the ints they are."""
    X, singles = _models()
    models = ModelListGP(*singles)
    one = models.posterior(X[:3], output_indices=[1])
    torch.testing.assert_close(one.mean, singles[1].posterior(X[:3]).mean)
    torch.testing.assert_close(one.variance, singles[1].posterior(X[:3]).variance)


def test_numpy_integer_output_indices_are_ints():
    X = torch.rand(9, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    Y = torch.cat([X.sum(-1, keepdim=True), X.prod(-1, keepdim=True)], dim=-1)
    model = NPModel(tiny_model("tnpd", x_dim=2), X, Y)
    picked = model.posterior(X[:2], output_indices=[np.int64(1)])
    torch.testing.assert_close(picked.mean, model.posterior(X[:2], output_indices=[1]).mean)
    subset = model.subset_output([np.int32(1)])
    torch.testing.assert_close(subset.posterior(X[:2]).mean, model.posterior(X[:2]).mean[..., 1:])
    for bad in ([np.bool_(True)], [1.0], [np.int64(2)], []):
        with pytest.raises(ValueError, match="non-empty list of output indices below 2"):
            model.posterior(X[:2], output_indices=bad)


def test_a_model_list_of_np_models_takes_a_tensor_observation_noise_as_a_list_of_gps_does():
    """With a tensor ``observation_noise``, ``ModelListGP`` hands its second member the list's
    index ``[1]``: a one-output member reports its one output, as ``SingleTaskGP`` does."""
    X, singles = _models()
    models = ModelListGP(*singles)
    noise = torch.full((3, 2), 0.25, dtype=torch.float64)
    noisy = models.posterior(X[:3], observation_noise=noise)
    plain = models.posterior(X[:3])
    torch.testing.assert_close(noisy.mean, plain.mean)
    assert bool((noisy.variance > plain.variance).all())
    torch.testing.assert_close(singles[1].posterior(X[:3], output_indices=[1]).mean, singles[1].posterior(X[:3]).mean)
