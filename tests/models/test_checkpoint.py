"""npbandit.models.checkpoint: the network shared by every model of a checkpoint."""

import json

from helpers import tiny_checkpoint

from npbandit.models import shared_surrogate


def test_the_shared_network_is_loaded_again_when_its_card_changes_over_the_same_weights(tmp_path):
    """``shared_surrogate`` keys its cache on the card's whole content, not only the weights'
    sha256: a card edited over the same weights (a new ``min_std``, as a shipped card's std floor
    once changed) gives a network built from the new card; an unchanged card, the same network."""
    card_path = tiny_checkpoint(tmp_path)
    first = shared_surrogate(card_path)
    assert shared_surrogate(card_path) is first
    card = json.loads(card_path.read_text())
    card["config"]["min_std"] = 0.01
    card_path.write_text(json.dumps(card))
    edited = shared_surrogate(card_path)
    assert edited is not first and edited.card["config"]["min_std"] == 0.01
    assert first.card["config"]["min_std"] == 0.001
