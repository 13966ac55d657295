"""npbandit: Bayesian optimisation and contextual bandits with pretrained neural processes."""

__version__ = "0.1.0.dev0"

import npbandit.envs  # noqa: E402,F401  (registers the Gymnasium environments)
import npbandit.integrations  # noqa: E402,F401  (lets an Ax loop find npbandit.integrations.ax; imports no framework)
from npbandit.api import OptimizeResult, optimize  # noqa: E402
from npbandit.surrogates import build  # noqa: E402
from npbandit.surrogates.pretrained import load_surrogate  # noqa: E402


def __getattr__(name: str):
    # NPModel pulls in BoTorch; import it only when asked for
    if name == "NPModel":
        from npbandit.models import NPModel

        return NPModel
    raise AttributeError(f"module 'npbandit' has no attribute {name!r}")


__all__ = ["optimize", "OptimizeResult", "build", "load_surrogate", "NPModel", "__version__"]
