"""npbandit: Bayesian optimisation and contextual bandits with pretrained neural processes."""

__version__ = "0.1.0.dev0"

from npbandit.surrogates import build  # noqa: E402
from npbandit.surrogates.pretrained import load_surrogate  # noqa: E402

__all__ = ["build", "load_surrogate", "__version__"]
