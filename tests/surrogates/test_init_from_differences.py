"""``initialise_from`` (``npbandit train --init-from``) refusing a source of another config
names the fields that differ, with the source's value and this model's, rather than two whole
configs of a dozen fields for the user to compare by eye."""

import pytest
from conftest import tiny_model


def test_the_fields_that_differ_are_named_with_both_values():
    with pytest.raises(ValueError, match=r"they differ in n_latents \(the source's 4, this one's 8\)$"):
        tiny_model("cmanp", x_dim=1, n_latents=8).initialise_from(tiny_model("cmanp", x_dim=1, n_latents=4))


def test_a_cmanp_and_names_the_encoder_fields_that_differ():
    with pytest.raises(ValueError, match=r"starts only from .* they differ in n_latents \(the source's 4, this one's "):
        tiny_model("cmanp-and", x_dim=1).initialise_from(tiny_model("cmanp", x_dim=1, n_latents=4))
