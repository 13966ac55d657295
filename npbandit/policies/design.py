"""The initial design and quasi-random search: scrambled Sobol points on the unit cube.

The first ``n_init`` points of every BO policy come from :class:`SobolDesign`, seeded by
``reset(seed)``, so every method of a comparison starts from the same points;
:class:`SobolPolicy` hands out the whole run that way (random search's stronger form).
Points are snapped (``SearchSpace.snap``) onto what they will be evaluated at, and a design
skips a point whose snapped value was already handed out while the space has others left.

A design also skips a point within ``REPEAT_DISTANCE`` of an evaluation the policy was given
rather than handed out (``optimize(initial=...)``'s earlier evaluations, failed ones too):
a run continued from an earlier run of the same seed that stopped inside its design goes on
where that one stopped (its points, drawn again by the same sequence, are passed over), and
points from elsewhere, on which no Sobol point lands, leave the design as a cold start's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.maximise import REPEAT_DISTANCE
from npbandit.policies.base import Policy
from npbandit.space.linear_constraints import Polytope

__all__ = ["SobolPolicy", "SobolDesign", "DESIGN_DRAWS", "check_snap", "snap_points"]


#: Sobol draws a design makes for a point whose snapped value is new before it hands out a
#: repeat (a discrete space with fewer values than the design has no new one left)
DESIGN_DRAWS = 64
#: Sobol draws a design with linear constraints makes for one point inside them before it draws
#: from them by hit-and-run instead (a thin polytope, such as a simplex of many inputs)
REJECTION_DRAWS = 2**12
#: points a design drawing by hit-and-run draws at once (one chain, thinned), handed out in turn
CHAIN_POINTS = 64


class SobolDesign:
    """The scrambled Sobol sequence of ``dim`` columns seeded by ``seed``; with ``polytope``
    (linear input constraints, :class:`~npbandit.space.linear_constraints.Polytope`), the
    points of it inside them, by rejection, while :data:`REJECTION_DRAWS` draws find one; where
    they do not (a polytope thinner than about that share of the cube, such as a simplex of many
    inputs), points of BoTorch's hit-and-run sampler inside it (``Polytope.sample``), drawn
    :data:`CHAIN_POINTS` at a time."""

    def __init__(self, dim: int, seed: int | None, polytope: Polytope | None = None) -> None:
        self.engine = torch.quasirandom.SobolEngine(dim, scramble=True, seed=seed)
        self.polytope = polytope
        self._seed = 0 if seed is None else int(seed)
        self._chain: list[np.ndarray] = []
        self._chains = 0

    def next(self) -> np.ndarray:
        if self.polytope is None:
            return self.engine.draw(1, dtype=torch.float64)[0].numpy()
        if self._chains:  # rejection found nothing once: the polytope is too thin for it
            return self._from_chain()
        for _ in range(REJECTION_DRAWS // 256):
            draws = self.engine.draw(256, dtype=torch.float64)
            inside = torch.nonzero(self.polytope.feasible(draws)).reshape(-1)
            if len(inside):  # the sequence goes on after the point taken
                self.engine.reset().fast_forward(self._drawn + int(inside[0]) + 1)
                self._drawn += int(inside[0]) + 1
                return draws[int(inside[0])].numpy()
            self._drawn += 256
        return self._from_chain()

    def _from_chain(self) -> np.ndarray:
        """The next hit-and-run point inside the polytope (a new chain, seeded from the design's
        seed and its count, when the last is used up)."""
        if not self._chain:
            cube = torch.stack([torch.zeros(self.engine.dimension, dtype=torch.float64),
                                torch.ones(self.engine.dimension, dtype=torch.float64)])
            self._chain = list(self.polytope.sample(CHAIN_POINTS, cube, seed=self._seed + 7919 * self._chains).numpy())
            self._chains += 1
            if not self._chain:
                raise RuntimeError("no point of the unit cube satisfies the linear constraints")
        return self._chain.pop(0)

    _drawn = 0

    def next_new(self, snap: Callable[[torch.Tensor], torch.Tensor] | None, seen: set[bytes],
                 lift: Callable[[np.ndarray], np.ndarray] | None = None,
                 given: np.ndarray | None = None) -> np.ndarray:
        """The next point (through ``lift``, then ``snap``) whose bytes are not in ``seen`` and
        that lies no closer than ``REPEAT_DISTANCE`` (Euclidean, in the cube) to any row of
        ``given`` ``[m, d]`` (evaluations the policy was given, not handed out: see the module
        docstring). A Sobol sequence never repeats itself, but snapped onto a small grid or a
        few choices its points do, and a given point may be one of its own. At most
        :data:`DESIGN_DRAWS` draws (one without ``snap``) plus one per given point, then the
        last one even if seen."""
        given = None if given is None or len(given) == 0 else np.asarray(given, dtype=np.float64)
        draws = (DESIGN_DRAWS if snap is not None else 1) + (0 if given is None else len(given))
        for _ in range(draws):
            point = self.next()
            if lift is not None:
                point = lift(point)
            point = snap_points(snap, point)
            if point.tobytes() in seen:
                continue
            if given is None or not (np.linalg.norm(given - point, axis=-1) < REPEAT_DISTANCE).any():
                break
        return point


def check_snap(snap: Any) -> Callable[[torch.Tensor], torch.Tensor] | None:
    if snap is not None and not callable(snap):
        raise TypeError(f"snap must be None or a callable mapping points [..., d] of the unit cube to where they are "
                        f"evaluated (SearchSpace.snap), got {type(snap).__name__}")
    return snap


def snap_points(snap: Callable[[torch.Tensor], torch.Tensor] | None, points: np.ndarray) -> np.ndarray:
    """``points`` ``[..., d]`` through ``snap`` (unchanged without one), as float64 numpy."""
    if snap is None:
        return points
    out = snap(torch.as_tensor(points, dtype=torch.float64))
    return np.asarray(out.detach().cpu(), dtype=np.float64).reshape(np.shape(points))


class SobolPolicy(Policy):
    """Quasi-random search: the next point of a scrambled Sobol sequence.

    ``snap``: as :class:`BOPolicy`'s, each point handed out moved onto what it will be
    evaluated at (``SearchSpace.snap``: a grid value, a choice's encoding). A point given to
    :meth:`observe` or :meth:`observe_failure` that this policy did not hand out (an earlier
    evaluation, ``optimize(initial=...)``) is not handed out again (module docstring).
    ``polytope``: linear input constraints, the points handed out those of the sequence
    inside them (:class:`SobolDesign`)."""

    name = "sobol"

    def __init__(self, dim: int, snap: Callable[[torch.Tensor], torch.Tensor] | None = None,
                 polytope: Polytope | None = None) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive int, got {dim!r}")
        self.dim = dim
        self.snap = check_snap(snap)
        self.polytope = polytope

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.design = SobolDesign(self.dim, seed, self.polytope)
        self._handed_out: set[bytes] = set()
        self._given: list[np.ndarray] = []  # points observed that were not handed out here

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None, pinned: Any = None) -> np.ndarray:
        """The next point ``[d]`` of the sequence; ``pinned`` (a
        :class:`~npbandit.acquisition.pinned.Pinned`, or ``None``): with its columns set."""
        # a point handed out before, observed or still in flight, is not handed out again while
        # the space has values left, nor one given to observe
        point = self.design.next_new(self.snap, self._handed_out, None if pinned is None else pinned.apply,
                                     given=np.array(self._given).reshape(-1, self.dim))
        self._handed_out.add(point.tobytes())
        return point

    def observe(self, obs, action, reward, info) -> None:
        self._note(action)

    def observe_failure(self, obs, action, error: str) -> None:
        self._note(action)

    def _note(self, action: np.ndarray) -> None:
        self._require_reset()
        x = np.asarray(action, dtype=np.float64)
        if x.tobytes() not in self._handed_out:
            self._given.append(x)

    def params(self) -> dict[str, Any]:
        return {"dim": self.dim}
