"""npbandit: Bayesian optimisation and contextual bandits with pretrained neural processes.

``import npbandit`` is cheap: it registers the Gymnasium environments (by entry point, so
no environment module is loaded until ``gymnasium.make`` asks for one) and imports no
torch, BoTorch, SQLAlchemy or plotting library. The names below load their module on
first use: :func:`optimize`, :class:`OptimizeResult` and :class:`ParetoResult` (:mod:`npbandit.api`),
:class:`Optimizer` and :class:`Trial` (ask and tell, :mod:`npbandit.ask_tell`),
:func:`build` (:mod:`npbandit.surrogates`), :func:`load_surrogate`
(:mod:`npbandit.surrogates.pretrained`) and :class:`NPModel` (BoTorch's model interface).
"""

from typing import Any

import npbandit.envs  # noqa: F401  (registers the Gymnasium environments)
import npbandit.integrations  # noqa: F401  (lets an Ax loop configured with NPModel alone find npbandit.integrations.ax)
from npbandit._version import __version__

__all__ = ["optimize", "OptimizeResult", "ParetoResult", "Optimizer", "Trial", "build", "load_surrogate", "NPModel",
           "__version__"]

_LAZY = ("optimize", "OptimizeResult", "ParetoResult", "Optimizer", "Trial", "build", "load_surrogate", "NPModel")


def __getattr__(name: str) -> Any:
    # the import statements are spelled out (not importlib) so that tools reading imports see them
    if name in ("optimize", "OptimizeResult", "ParetoResult"):
        from npbandit import api as module  # the results: imported there from npbandit.optimize_result
    elif name in ("Optimizer", "Trial"):
        from npbandit import ask_tell as module
    elif name == "build":
        from npbandit import surrogates as module
    elif name == "load_surrogate":
        from npbandit.surrogates import pretrained as module
    elif name == "NPModel":
        from npbandit import models as module
    else:
        raise AttributeError(f"module 'npbandit' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value  # later look-ups find it without calling here again
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
