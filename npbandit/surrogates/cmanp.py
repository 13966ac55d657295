"""CMANP: Constant Memory Attentive Neural Process (Feng et al., 2023).

A stack of Constant Memory Attention Blocks (CMABs). Each block computes

    CMAB(L_I, D) = SA(CA(L_I, SA(CA(L_B, D))))

where ``L_B`` are the block's learned latents and ``D`` the embedded context. Only
``CA(L_B, D)`` touches the data, and its queries are constants, so that attention is
kept as a running :class:`~npbandit.surrogates.attention.SoftmaxState` per block.
Adding points folds them in with the exact rolling log-sum-exp update; everything
after it costs ``O(L_B^2 + L_I^2)`` whatever the number of points. Targets read the
output latents of every block through :class:`LatentQueryDecoder`.

Properties held by tests: ``update(condition(A), B) == condition(A ∪ B)``; the state
holds no raw data and nothing whose size grows with ``N``; conditioning in chunks of
``chunk_size`` points (embedding included) gives the same result with peak memory
independent of ``N``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.attention import AttentionBlock, SoftmaxState, StreamingCrossAttentionBlock, StreamingReader
from npbandit.surrogates.base import NeuralProcess, NPConfig
from npbandit.surrogates.fused import FusedCMANP, FusedMemory
from npbandit.surrogates.layers import DecoderMemory, LatentQueryDecoder, mlp
from npbandit.surrogates.states import NPState, select_batch

__all__ = ["CMANPConfig", "CMANPState", "CMAB", "CMANP"]


@dataclass(frozen=True)
class CMANPConfig(NPConfig):
    """CMANP hyperparameters; defaults follow the paper (128 latents per block).

    Attributes:
        n_latents: ``L_I``, the latents passed from block to block.
        n_block_latents: ``L_B``, each block's learned queries into the data.
        chunk_size: ``b_C``, points embedded and absorbed at a time when
            conditioning or updating; bounds peak memory, not the result.
        n_elite: ``K``, context points the decoder also reads one by one: the ``K``
            with the largest first output (an *elite memory*, not in the paper; 0, the
            default, is the paper's CMANP). The latents summarise all the data through
            fixed queries, which blurs the function where the data are dense; for
            optimisation, where the acquisition is maximised near the best points, the
            decoder then reads those points exactly. The state keeps ``K`` points, so it
            stays constant in ``N`` and ``update`` stays exact (the ``K`` best of a
            union are the ``K`` best of the kept ``K`` and the new points).
        elite_context: the elite points also read each layer's latents before the
            targets read them (``LatentQueryDecoder(contextual_points=True)``), so each
            carries what the rest of the data say around it; needs ``n_elite > 0``.
    """

    n_latents: int = 128
    n_block_latents: int = 128
    chunk_size: int = 256
    n_elite: int = 0
    elite_context: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("n_latents", "n_block_latents", "chunk_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(self.n_elite, int) or isinstance(self.n_elite, bool) or self.n_elite < 0:
            raise ValueError(f"n_elite must be a non-negative int, got {self.n_elite!r}")
        if not isinstance(self.elite_context, bool):
            raise ValueError(f"elite_context must be a bool, got {self.elite_context!r}")
        if self.elite_context and self.n_elite == 0:
            raise ValueError("elite_context needs an elite memory (n_elite > 0)")


@dataclass(frozen=True)
class CMANPState(NPState):
    """Everything CMANP keeps about a context set; no tensor grows with ``N``.

    Attributes:
        data_state: the running softmax state of every block's ``CA(L_B, D)``,
            stacked over blocks (``None`` while no point has been seen).
        reader: folds new points into ``data_state`` for all blocks at once; a
            function of the weights only, kept so updates need not rebuild it.
        n_points: number of points absorbed so far.
        n_batch: batch size ``B``.
        grad_enabled: whether autograd was on when the state was built.
        elite: ``[B, K', dx + dy]``, the ``K' = min(N, n_elite)`` points with the
            largest first output, ``(x, y)`` concatenated, best first (ties: the point
            seen first); ``None`` when ``n_elite`` is 0 or no point has been seen.

    The blocks' output latents (``[B, L_I, D]`` per block, what targets read) are a
    function of ``data_state`` and the weights alone, not of the targets. They are
    computed on the first ``predict`` and cached in the state, so a run of ``update``
    calls pays only for folding the new points in, and the ``O(L_B^2 + L_I^2)``
    latent pass once before the next prediction. What the targets read of them (every
    layer's keys and values, and the elite points', a :class:`DecoderMemory`) is cached
    beside them, per dtype of the targets. Both are computed in the state's
    autograd mode (``grad_enabled``), not in the mode of that first ``predict``: a
    state built without gradients then caches no graph (predictions from it can be
    differentiated in ``xt`` any number of times), and one built with gradients
    keeps its path to the weights even when its first prediction ran under
    ``torch.no_grad()``.

    A state built in ``torch.inference_mode()`` also holds ``fused``, the model's weights
    derived once for :class:`~npbandit.surrogates.fused.FusedCMANP` and handed on by
    ``update`` and ``select``; its latents, the points ``update`` folds into it in inference
    mode, and the decoder memory and predictions made from it in inference mode go that way:
    the same function in fewer tensor operations, equal to the modules' up to rounding (a
    bandit policy's steps; the fused decoder memory is cached beside the modules' one).
    Everywhere else -- autograd on (training, an acquisition's gradient in ``xt``) or merely
    off (``torch.no_grad()``, as BoTorch conditions a model) -- the modules run, so those
    results do not change with the path; and so they do for the latents while a block has a
    forward hook, for new points while the embedding has one, and for the targets while the
    decoder has one or the state holds elite points.
    """

    data_state: SoftmaxState | None
    reader: StreamingReader
    n_points: int
    n_batch: int
    grad_enabled: bool
    latent_cache: list[Tensor] = field(default_factory=list, compare=False, repr=False)
    elite: Tensor | None = None
    memory_cache: dict[tuple, DecoderMemory | FusedMemory] = field(
        default_factory=dict, compare=False, repr=False)
    fused: FusedCMANP | None = field(default=None, compare=False, repr=False)

    @property
    def batch_size(self) -> int:
        return self.n_batch

    @property
    def num_points(self) -> int:
        return self.n_points

    def select(self, index: Tensor) -> CMANPState:
        """The state of batch elements ``index`` (see :meth:`NPState.select`): the cached
        latents are selected with it; the decoder memory is rebuilt on the next prediction."""
        data = None
        if self.data_state is not None:  # stacked over blocks: the batch is dim 1
            data = SoftmaxState(select_batch(self.data_state.log_norm, index, 1),
                                select_batch(self.data_state.mean_value, index, 1))
        return CMANPState(data, self.reader, self.n_points, index.numel(), self.grad_enabled,
                          list(select_batch(self.latent_cache, index)), select_batch(self.elite, index),
                          fused=self.fused)


def _hooked(module: nn.Module) -> bool:
    """Whether ``module`` has forward (pre-)hooks: whoever registered them sees its calls,
    so the fused path, which does not call it, stands aside."""
    return bool(module._forward_hooks or module._forward_pre_hooks)


class CMAB(nn.Module):
    """One Constant Memory Attention Block: ``SA(CA(L_I, SA(CA(L_B, D))))``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, n_block_latents: int) -> None:
        super().__init__()
        self.block_latents = nn.Parameter(0.02 * torch.randn(n_block_latents, d_model))
        self.read_data = StreamingCrossAttentionBlock(d_model, n_heads, d_ff)
        self.block_self = AttentionBlock(d_model, n_heads, d_ff, separate_memory_norm=False)
        self.read_block = AttentionBlock(d_model, n_heads, d_ff, separate_memory_norm=True)
        self.latent_self = AttentionBlock(d_model, n_heads, d_ff, separate_memory_norm=False)

    def forward(self, state: SoftmaxState | None, latents: Tensor) -> Tensor:
        """Output latents ``[B, L_I, D]`` from input latents ``[B, L_I, D]`` and the data state."""
        block = self.read_data.read(state, self.block_latents.unsqueeze(0))
        block = self.block_self(block).expand(latents.shape[0], -1, -1)
        return self.latent_self(self.read_block(latents, block))


class CMANP(NeuralProcess):
    """Constant Memory Attentive Neural Process.

    Args:
        x_dim, y_dim: input and output dimensions.
        config: :class:`CMANPConfig` (paper defaults when omitted).
    """

    config_class = CMANPConfig
    name = "cmanp"

    def __init__(self, x_dim: int, y_dim: int, config: CMANPConfig | None = None) -> None:
        super().__init__(x_dim, y_dim, config)
        c = self.config
        self.embed = mlp(x_dim + y_dim, c.d_model, c.d_model, c.emb_depth, c.activation)
        self.initial_latents = nn.Parameter(0.02 * torch.randn(c.n_latents, c.d_model))
        self.blocks = nn.ModuleList(CMAB(c.d_model, c.n_heads, c.d_ff, c.n_block_latents) for _ in range(c.n_layers))
        self.decoder = LatentQueryDecoder(x_dim, y_dim, c.d_model, c.n_heads, c.d_ff, c.n_layers, c.emb_depth,
                                          c.min_std, point_reader=c.n_elite > 0, contextual_points=c.elite_context,
                                          activation=c.activation)

    def condition(self, xc: Tensor, yc: Tensor, *, chunk_size: int | None = None) -> CMANPState:
        """Encode ``xc [B, N, dx]``, ``yc [B, N, dy]`` in chunks of ``chunk_size``
        points (default ``config.chunk_size``); the chunking changes memory, not the result."""
        yc = self._model_outputs("xc", xc, "yc", yc)
        return self._absorb(self._empty_state(xc.shape[0]), xc, yc, chunk_size)

    def _condition(self, xc: Tensor, yc: Tensor) -> CMANPState:
        return self._absorb(self._empty_state(xc.shape[0]), xc, yc, None)

    def _update(self, state: NPState, xu: Tensor, yu: Tensor) -> CMANPState:
        if not isinstance(state, CMANPState):
            raise TypeError(f"state must be a CMANPState, got {type(state).__name__}")
        return self._absorb(state, xu, yu, None)

    def _empty_state(self, batch_size: int) -> CMANPState:
        reader = StreamingReader.from_blocks(
            [block.read_data for block in self.blocks], [block.block_latents for block in self.blocks]
        )
        grad = torch.is_grad_enabled()
        fused = self._fused_weights() if torch.is_inference_mode_enabled() else None
        return CMANPState(None, reader, 0, batch_size, grad, fused=fused)

    def _fused_weights(self) -> FusedCMANP | None:
        """:meth:`FusedCMANP.of` this model, kept and reused until a weight changes (in
        place, as an optimiser or ``load_state_dict`` changes it, or replaced, as ``.to``
        does): building it is a few hundred small tensor operations, more than a
        conditioning on a few points costs."""
        key = tuple((p._version, p.data_ptr(), p.dtype, p.device) for p in self.parameters())
        cached = self.__dict__.get("_fused_cache")
        if cached is None or cached[0] != key:
            cached = (key, FusedCMANP.of(self))
            self.__dict__["_fused_cache"] = cached
        return cached[1]

    def _absorb(self, state: CMANPState, x: Tensor, y: Tensor, chunk_size: int | None) -> CMANPState:
        chunk = self.config.chunk_size if chunk_size is None else chunk_size
        if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk < 1:
            raise ValueError(f"chunk_size must be a positive int, got {chunk!r}")
        if x.shape[1] == 0 and state.num_points > 0:
            return state  # nothing to fold in; keep the cached latents
        data_state = state.data_state
        # the fused path in inference mode (see CMANPState), unless a hook watches the embedding
        fused = state.fused if torch.is_inference_mode_enabled() and not _hooked(self.embed) else None
        for start in range(0, x.shape[1], chunk):
            xs, ys = (x, y) if x.shape[1] <= chunk else (x[:, start:start + chunk], y[:, start:start + chunk])
            if fused is not None:
                data_state = fused.absorb(data_state, xs, ys)
            else:
                data_state = state.reader.absorb(data_state, self.embed(torch.cat([xs, ys], dim=-1)))
        return CMANPState(data_state, state.reader, state.num_points + x.shape[1], state.batch_size,
                          torch.is_grad_enabled(), elite=self._keep_elite(state.elite, x, y), fused=state.fused)

    def _keep_elite(self, elite: Tensor | None, x: Tensor, y: Tensor) -> Tensor | None:
        """The ``n_elite`` points of ``elite`` and ``(x, y)`` with the largest first output.
        A stable sort with the kept points first breaks ties by arrival, so folding points
        in one at a time keeps what conditioning on all of them at once keeps."""
        k = self.config.n_elite
        if k == 0 or x.shape[1] == 0:
            return elite
        points = torch.cat([x, y], dim=-1)
        if elite is not None:
            points = torch.cat([elite.to(points), points], dim=1)
        order = torch.sort(points[..., self.x_dim], dim=1, descending=True, stable=True).indices[:, :k]
        return torch.gather(points, 1, order.unsqueeze(-1).expand(-1, -1, points.shape[-1]))

    def latents(self, state: CMANPState) -> tuple[Tensor, ...]:
        """Output latents of every block, ``[B, L_I, D]`` each (computed once per state,
        in the state's autograd mode; see :class:`CMANPState`)."""
        fused = None if any(_hooked(block) for block in self.blocks) else self._fused(state)
        if not state.latent_cache and fused is not None:
            state.latent_cache.extend(fused.latents(state.data_state))
        elif not state.latent_cache:
            with torch.set_grad_enabled(state.grad_enabled):
                z = self.initial_latents.unsqueeze(0).expand(state.batch_size, -1, -1)
                latents = []
                for g, block in enumerate(self.blocks):
                    z = block(StreamingReader.select(state.data_state, g), z)
                    latents.append(z)
            state.latent_cache.extend(latents)
        return tuple(state.latent_cache)

    def _decoder_memory(self, state: CMANPState, xt: Tensor) -> DecoderMemory:
        """What the decoder's modules read: every block's latents and the embedded elite
        points, projected once per state (and dtype of ``xt``)."""
        key = (xt.dtype, xt.device)
        if key not in state.memory_cache:
            latents = self.latents(state)
            with torch.set_grad_enabled(state.grad_enabled):
                points = None if state.elite is None else self.embed(state.elite.to(xt))
                state.memory_cache[key] = self.decoder.memory(latents, points)
        return state.memory_cache[key]

    def _fused_memory(self, state: CMANPState, fused: FusedCMANP, xt: Tensor) -> FusedMemory:
        """What the fused path's targets read (:meth:`FusedCMANP.memory`), once per state."""
        key = (xt.dtype, xt.device, "fused")
        if key not in state.memory_cache:
            state.memory_cache[key] = fused.memory(self.latents(state))
        return state.memory_cache[key]

    def features(self, state: CMANPState, xt: Tensor) -> Tensor:
        """The decoder's target representations ``[B, M, D]`` at ``xt [B, M, dx]``: what
        the Gaussian head reads (and CMANP-AND's covariance factors)."""
        fused = self._fused_targets(state)
        if fused is not None:
            return fused.features(xt, self._fused_memory(state, fused, xt))
        return self.decoder.features(xt, self._decoder_memory(state, xt))

    def _predict(self, state: NPState, xt: Tensor) -> Normal:
        if not isinstance(state, CMANPState):
            raise TypeError(f"state must be a CMANPState, got {type(state).__name__}")
        fused = self._fused_targets(state)
        if fused is not None:
            return fused.predict(xt, self._fused_memory(state, fused, xt))
        return self.decoder(xt, self._decoder_memory(state, xt))

    @staticmethod
    def _fused(state: CMANPState) -> FusedCMANP | None:
        """The fused path for what a state caches: a state built in inference mode that has
        seen data (see :class:`CMANPState`)."""
        return None if state.grad_enabled or state.data_state is None else state.fused

    def _fused_targets(self, state: CMANPState) -> FusedCMANP | None:
        """The fused path for targets: as :meth:`_fused`, in inference mode now, no elite
        points (the decoder's point reader runs as modules), and no forward hook on the
        decoder (it sees its calls)."""
        if not torch.is_inference_mode_enabled() or state.elite is not None or _hooked(self.decoder):
            return None
        return self._fused(state)

    def initialise_from(self, source: NeuralProcess) -> None:
        """Start from a CMANP with the same config (every weight), or from one that
        differs only in its elite memory (``n_elite``, ``elite_context``), as long as it
        has no layer this model lacks:

        - from one without an elite memory (``n_elite = 0``): its weights are copied and
          the point reader keeps its zero output layers, so this model starts as that
          CMANP and training teaches it to read the elite points;
        - from one with another positive ``n_elite``: the elite memory holds no weights,
          so every weight is copied; the model then reads more (or fewer) of the best
          points than it was trained with, and training adapts it to that;
        - from one without ``elite_context``: the points' latent readers start at zero
          output, so the model starts as the source.

        Raises:
            ValueError: any other model or config, or a source with layers this model
                does not have (an elite reader, or contextual elites; their weights
                would be dropped).
        """
        c = self.config
        if (isinstance(source, CMANP) and type(source) is type(self) and source.config != c
                and (source.x_dim, source.y_dim) == (self.x_dim, self.y_dim)
                and replace(source.config, n_elite=c.n_elite, elite_context=c.elite_context) == c
                and (source.config.n_elite == 0 or c.n_elite > 0)
                and (not source.config.elite_context or c.elite_context)):
            missing, unexpected = self.load_state_dict(source.state_dict(), strict=False)
            optional = []  # the layers this model adds, which start at zero output
            if source.config.n_elite == 0:
                optional.append("decoder.point_layers.")
            if not source.config.elite_context:
                optional.append("decoder.point_context_layers.")
            if unexpected or any(not key.startswith(tuple(optional)) for key in missing):
                raise ValueError(f"the source's weights do not fit: missing {missing}, unexpected {unexpected}")
            return
        super().initialise_from(source)

    def widened(self, n_latents: int, n_block_latents: int, *, noise_std: float = 0.0,
                generator: torch.Generator | None = None) -> CMANP:
        """A copy with more latents that computes the same function (before ``noise_std``).

        Every latent is repeated ``n_latents / L_I`` (``n_block_latents / L_B``) times.
        Softmax attention over a set in which each key/value appears ``k`` times gives
        what it gives over the set itself, and the rest of the network acts per latent,
        so predictions are unchanged; Gaussian ``noise_std`` on the copies then breaks
        their symmetry so training can use the new capacity. This is how a trained
        small CMANP starts a larger one (``npbandit train --init-from``) instead of a
        larger one learning its latent basis from scratch.

        Args:
            n_latents, n_block_latents: the new counts, whole multiples of the current ones.
            noise_std: std of the noise added to every widened latent (0: exact copy).
            generator: for the noise.

        Raises:
            ValueError: a count that is not a whole multiple, or a negative ``noise_std``.
        """
        c = self.config
        for name, new, old in (("n_latents", n_latents, c.n_latents),
                               ("n_block_latents", n_block_latents, c.n_block_latents)):
            if not isinstance(new, int) or isinstance(new, bool) or new < old or new % old:
                raise ValueError(f"{name} must be a whole multiple of the current {old}, got {new!r}")
        if not isinstance(noise_std, (int, float)) or isinstance(noise_std, bool) or noise_std < 0:
            raise ValueError(f"noise_std must be a non-negative number, got {noise_std!r}")
        wide = CMANP(self.x_dim, self.y_dim, replace(c, n_latents=n_latents, n_block_latents=n_block_latents))
        ref = self.initial_latents
        wide.to(device=ref.device, dtype=ref.dtype)
        state = {k: v.detach().clone() for k, v in self.state_dict().items()}

        def tile(value: Tensor, count: int) -> Tensor:
            value = value.repeat(count // value.shape[0], 1)
            if noise_std > 0:
                value = value + noise_std * torch.randn(value.shape, generator=generator).to(value)
            return value

        for key, value in state.items():
            if key == "initial_latents":
                state[key] = tile(value, n_latents)
            elif key.endswith(".block_latents"):
                state[key] = tile(value, n_block_latents)
        wide.load_state_dict(state)
        wide.train(self.training)
        return wide
