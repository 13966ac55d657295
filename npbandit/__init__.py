"""npbandit: Bayesian optimisation and contextual bandits with pretrained neural processes."""

from npbandit._version import __version__

import npbandit.envs  # noqa: E402,F401  (registers the Gymnasium environments)
from npbandit.api import OptimizeResult, optimize  # noqa: E402
from npbandit.surrogates import build  # noqa: E402
from npbandit.surrogates.pretrained import load_surrogate  # noqa: E402


def __getattr__(name: str):
    # NPModel pulls in BoTorch; import it only when asked for
    if name == "NPModel":
        from npbandit.surrogates.npmodel import NPModel

        return NPModel
    raise AttributeError(f"module 'npbandit' has no attribute {name!r}")


__all__ = ["optimize", "OptimizeResult", "build", "load_surrogate", "NPModel", "__version__"]
