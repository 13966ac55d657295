"""Thompson draws: one posterior draw of the objective over a set of candidates.

:func:`thompson_draw` is what ``propose(acquisition="thompson")`` maximises over its Sobol
candidates; ``joint=False`` (``"marginal-thompson"``) draws every candidate from its own
marginal instead, the ablation that isolates what a joint draw adds.
"""

from __future__ import annotations

import torch

__all__ = ["thompson_draw", "THOMPSON_BLOCK_SIZE"]

#: candidates a GP sample path is evaluated on at a time (bounds the memory of a draw)
_PATH_CHUNK = 1024

#: candidates per autoregressive block of a joint NP's Thompson draw; ``None``: every
#: candidate in one block, one draw from the head's one-shot joint (low rank plus diagonal,
#: consistent, so it is the joint of the candidates given the data; cost linear in their
#: number). One block, because drawing in blocks drifts: each block's drawn values are
#: folded into the context with ``update``, and a joint NP's predictive barely narrows at the
#: points it is given (it does not interpolate them), so every block adds a fresh spread on
#: top of a mean moved by the blocks before.
THOMPSON_BLOCK_SIZE: int | None = None


def thompson_draw(model, candidates: torch.Tensor, seed: int, *, joint: bool = True) -> torch.Tensor:
    """One posterior draw of the objective at ``candidates`` (``[n, d]``), shape ``[n]``.

    ``joint=False``: every candidate drawn from its own marginal
    (``posterior(candidates.unsqueeze(-2))``), whatever the model, as below for a diagonal
    NP: the ablation of the joint draw (``acquisition="marginal-thompson"``).

    - An exact GP (``SingleTaskGP`` and other GPyTorch ``ExactGP`` models): one function
      drawn path-wise (BoTorch's ``draw_matheron_paths``: a random-feature prior draw,
      1024 features, plus the exact data update) and evaluated at every candidate, so
      the draw is joint across candidates at memory linear in ``n`` (constant per
      chunk of candidates). Drawing each candidate independently instead would make the
      argmax of ``n`` independent draws an optimistic upper bound, not a Thompson sample.
    - An ``NPModel`` whose surrogate has a joint predictive (``joint_predictive``,
      e.g. CMANP-AND): :meth:`NPModel.joint_sample`, the surrogate's autoregressive
      ``sample`` in blocks of :data:`THOMPSON_BLOCK_SIZE` candidates, joint across all of
      them, at memory constant in the data and linear in ``n``. Like the GP's, the draw is
      of the latent objective: the NP's noise estimate is held out, as in its posterior.
    - Any other model, the diagonal NPs among them: independent per candidate
      (``posterior(candidates.unsqueeze(-2))``). A diagonal NP's posterior says the
      candidates are independent given the data, so this is a draw from its own joint,
      as BoTorch's ``MaxPosteriorSampling`` would take it; but since that joint ignores
      how ``f`` at nearby points moves together, the argmax over thousands of candidates
      is optimistic, closer to a UCB with a large ``beta`` than to a Thompson sample. It
      is kept (not refused) so diagonal checkpoints keep their behaviour; use a joint
      model (``cmanp-and``) for a Thompson sample of the function.

    ``seed`` seeds the NP's joint draw; the GP path and the diagonal draw read torch's
    global generator, which :func:`npbandit.acquisition.proposal.propose` seeds.
    """
    from gpytorch.models import ExactGP

    if not isinstance(candidates, torch.Tensor) or not candidates.is_floating_point() or candidates.dim() != 2:
        raise TypeError(f"candidates must be a floating-point torch.Tensor of shape [n, d], got "
                        f"{getattr(candidates, 'shape', type(candidates).__name__)}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if not isinstance(joint, bool):
        raise TypeError(f"joint must be a bool, got {type(joint).__name__}")
    if not joint:
        return model.posterior(candidates.unsqueeze(-2)).rsample().reshape(-1)
    if isinstance(model, ExactGP) and not is_np_model(model):
        from botorch.sampling.pathwise import draw_matheron_paths

        path = draw_matheron_paths(model, sample_shape=torch.Size([1]))
        return torch.cat([path(chunk).reshape(-1) for chunk in candidates.split(_PATH_CHUNK)])
    if is_np_model(model) and model.surrogate.joint_predictive:
        return _np_joint_draw(model, candidates, seed)
    return model.posterior(candidates.unsqueeze(-2)).rsample().reshape(-1)


def is_np_model(model) -> bool:
    """Whether ``model`` is an :class:`~npbandit.models.NPModel` (imported only
    when asked: it pulls in BoTorch)."""
    from npbandit.models import NPModel

    return isinstance(model, NPModel)


def _np_joint_draw(model, candidates: torch.Tensor, seed: int) -> torch.Tensor:
    """A joint NP's draw at ``candidates`` ``[n, d]`` -> ``[n]``, from a generator seeded by ``seed``."""
    if model.batch_shape != torch.Size() or model.num_outputs != 1:
        raise ValueError("a joint Thompson draw needs an NPModel with one output and no batch shape, got "
                         f"batch_shape {tuple(model.batch_shape)} and {model.num_outputs} outputs")
    device = next(model.surrogate.parameters()).device
    generator = torch.Generator(device=device).manual_seed(seed)
    block_size = candidates.shape[0] if THOMPSON_BLOCK_SIZE is None else THOMPSON_BLOCK_SIZE
    return model.joint_sample(candidates, 1, generator, block_size=block_size).reshape(-1)
