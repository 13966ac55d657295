"""npbandit: Bayesian optimisation and contextual bandits with pretrained neural processes."""

from npbandit.surrogates import build

__version__ = "0.1.0.dev0"

__all__ = ["build", "__version__"]
