"""Search spaces: named float, int and choice parameters, and the unit cube a surrogate searches.

    from npbandit.space import Choice, Float, Int

    space = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh"])}
    npbandit.optimize(train_and_score, space)          # called with {"lr": ..., "layers": ..., "act": ...}

See :mod:`npbandit.space.parameters` for how each kind of parameter sits in the cube and
:class:`SearchSpace` for the space as a whole.
"""

from npbandit.space.parameters import Choice, Float, Int, Parameter
from npbandit.space.search_space import SearchSpace, as_search_space, parameter_from_description

__all__ = ["Float", "Int", "Choice", "Parameter", "SearchSpace", "as_search_space", "parameter_from_description"]
