"""Acquisition: from a BoTorch model to the next point(s) to evaluate.

- :mod:`~npbandit.acquisition.proposal`: :func:`propose` (LogEI, UCB, Thompson, qLogNEI
  maximised over the unit cube or a box in it, repeats avoided) and
  :func:`propose_in_region` (the same inside a trust region's box);
- :mod:`~npbandit.acquisition.maximise`: the acquisition each proposal builds, maximised away
  from the evaluated points (one point, or a qLogNEI batch); :data:`REPEAT_DISTANCE`, what a
  repeat is;
- :mod:`~npbandit.acquisition.optimizers`: how an acquisition is maximised in a box, as
  :class:`AcquisitionOptimizer` objects (:class:`GradientRestarts`: BoTorch's
  ``optimize_acqf``; :class:`CandidateSearch`: batched scoring without gradients);
- :mod:`~npbandit.acquisition.mixed`: the same over a mixed search space (integer, stepped
  and choice parameters), the acquisition judged at snapped points (``TypedCube``; imports
  BoTorch only when it optimises);
- :mod:`~npbandit.acquisition.constrained`: outcome constraints: which observations are
  feasible, the incumbent, and expected improvement weighted by the probability of
  feasibility (:data:`CONSTRAINED_ACQUISITIONS`);
- :mod:`~npbandit.acquisition.pending`: how points still being evaluated enter a proposal,
  as :class:`PendingStrategy` objects (:class:`ConstantLiar`, :class:`KrigingBeliever`,
  :class:`LocalPenalisation`) and :func:`pending_strategy`, which resolves their names;
- :mod:`~npbandit.acquisition.penalty`: the local penalty and the penalised acquisition
  (imports BoTorch; not imported here);
- :mod:`~npbandit.acquisition.thompson`: :func:`thompson_draw`, one posterior draw over candidates;
- :mod:`~npbandit.acquisition.subspace`: how ``D`` inputs are searched with a model of fewer,
  as :class:`SubspaceStrategy` objects (:class:`CountSketch`, :class:`CoordinateSubspace`);
  :mod:`~npbandit.acquisition.redealt_sketch`: :class:`RedealtSketch`, a count sketch re-dealt
  every phase on a slice through the incumbent, its phases begun where a :class:`PhaseSchedule`
  says (:class:`FixedPhases` by default); :mod:`~npbandit.acquisition.relevance`: which
  inputs lead its bins (:func:`~npbandit.acquisition.relevance.concentrated_ard`, the default's);
- :mod:`~npbandit.acquisition.recommend`: the model's recommendation, the evaluated point
  with the best posterior mean (``BOPolicy.recommend``).
"""

from npbandit.acquisition.constrained import CONSTRAINED_ACQUISITIONS, best_feasible, feasible, incumbent
from npbandit.acquisition.indexed_choices import IndexedChoices
from npbandit.acquisition.maximise import REPEAT_DISTANCE
from npbandit.acquisition.optimizers import AcquisitionOptimizer, CandidateSearch, GradientRestarts
from npbandit.acquisition.pending import (
                                          DEFAULT_LIAR,
                                          LIARS,
                                          ConstantLiar,
                                          KrigingBeliever,
                                          LocalPenalisation,
                                          PendingStrategy,
                                          check_liar,
                                          liar_value,
                                          pending_rule,
                                          pending_strategy,
)
from npbandit.acquisition.proposal import ACQUISITIONS, propose, propose_in_region
from npbandit.acquisition.redealt_sketch import FixedPhases, PhaseSchedule, RedealtSketch
from npbandit.acquisition.subspace import CoordinateSubspace, CountSketch, SubspaceStrategy
from npbandit.acquisition.thompson import THOMPSON_BLOCK_SIZE, thompson_draw
from npbandit.acquisition.wide_spaces import default_subspace

__all__ = ["propose", "propose_in_region", "ACQUISITIONS", "REPEAT_DISTANCE", "PendingStrategy", "ConstantLiar",
           "KrigingBeliever", "LocalPenalisation", "pending_strategy", "LIARS", "DEFAULT_LIAR", "check_liar",
           "liar_value", "pending_rule", "thompson_draw", "THOMPSON_BLOCK_SIZE", "SubspaceStrategy", "CountSketch",
           "CoordinateSubspace", "RedealtSketch", "PhaseSchedule", "FixedPhases", "IndexedChoices", "default_subspace",
           "CONSTRAINED_ACQUISITIONS",
           "feasible", "best_feasible", "incumbent", "AcquisitionOptimizer", "GradientRestarts", "CandidateSearch"]
