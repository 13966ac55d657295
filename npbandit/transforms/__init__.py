"""Outcome transforms: how the values a caller observes become what a network sees.

One interface, :class:`OutcomeTransform` (``forward`` / ``untransform``, the predictive
and its moments in data units; :mod:`npbandit.transforms.base`), and its
implementations, each in the module named for it:

- :class:`Standardize` -- ``(y - mean) / std`` by the data's statistics
  (:func:`standardization`, the one definition the ``bo`` prior and ``NPModel`` share);
- :class:`Bilog` -- ``symlog(y / scale)``; :class:`Scale` -- ``y / scale``;
- :class:`YeoJohnson` -- standardised, then the most-Gaussian Yeo-Johnson power transform;
- :class:`Chain` -- several in order;
- :class:`RewardEncoding` -- the wheel checkpoints' card record: ``Bilog`` or ``Scale``
  plus the name of the fill the bandit side puts in unplayed arms
  (:class:`npbandit.priors.wheel.RewardFill`).

A model carries one as ``outcome_transform`` (:mod:`npbandit.surrogates.base`); a
checkpoint card declares it (:mod:`npbandit.transforms.spec`).

Two unit systems: *data units*, outputs as observed (a reward of ``50.0``), what
``condition`` / ``update`` take and ``predict`` / ``sample`` / ``joint_log_prob`` answer
in; *model units*, what the network reads and its Gaussian head describes
(``symlog(50) = 3.93``), what a prior's batches hold.
"""

from npbandit.transforms.base import OutcomePredictive, OutcomeTransform
from npbandit.transforms.bilog import Bilog, symexp_moments
from npbandit.transforms.chain import Chain
from npbandit.transforms.reward import (
                                        REWARD_FILLS,
                                        REWARD_TRANSFORMS,
                                        REWARD_TYPE,
                                        RewardEncoding,
                                        decode_rewards,
                                        encode_rewards,
)
from npbandit.transforms.scale import Scale
from npbandit.transforms.spec import transform_from_spec, transform_spec
from npbandit.transforms.standardize import MIN_STD, Standardize, spread, standardization
from npbandit.transforms.yeo_johnson import YeoJohnson

__all__ = ["OutcomeTransform", "OutcomePredictive", "Standardize", "Bilog", "Scale", "YeoJohnson", "Chain",
           "RewardEncoding", "standardization", "spread", "MIN_STD", "symexp_moments", "transform_spec",
           "transform_from_spec", "encode_rewards", "decode_rewards", "REWARD_TRANSFORMS", "REWARD_FILLS",
           "REWARD_TYPE"]
