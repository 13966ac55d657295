"""NPModel inside Ax: construction from model options, the fit step, the shared network,
known noise, cross-validation and warm starts, and a short Ax Client loop."""

import copy
import math
import shutil
import warnings

import pytest
import torch
from botorch.models.transforms import Normalize
from botorch.utils.datasets import SupervisedDataset

from npbandit.models import NPModel, shared_surrogate
from npbandit.surrogates import pretrained

ax = pytest.importorskip("ax", reason="the Ax integration needs the 'ax' extra: pip install -e \".[ax]\"")

from ax.core.search_space import SearchSpaceDigest  # noqa: E402
from ax.generators.torch.botorch_modular.generator import BoTorchGenerator  # noqa: E402
from ax.generators.torch.botorch_modular.surrogate import ModelConfig, Surrogate, SurrogateSpec  # noqa: E402
from ax.generators.torch.botorch_modular.utils import fit_botorch_model  # noqa: E402

pytestmark = pytest.mark.integration

BOUNDS = [(-5.0, 10.0), (0.0, 15.0)]
CONFIG = ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})


def branin(x1: float, x2: float) -> float:
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def dataset(n: int = 10, seed: int = 0, noise: float | None = None) -> SupervisedDataset:
    g = torch.Generator().manual_seed(seed)
    U = torch.rand(n, 2, generator=g, dtype=torch.float64)
    X = torch.stack([-5 + 15 * U[:, 0], 15 * U[:, 1]], dim=-1)
    Y = torch.tensor([[branin(*x)] for x in X.tolist()], dtype=torch.float64)
    Yvar = None if noise is None else torch.full_like(Y, noise)
    return SupervisedDataset(X, Y, Yvar=Yvar, feature_names=["x1", "x2"], outcome_names=["branin"])


def digest() -> SearchSpaceDigest:
    return SearchSpaceDigest(feature_names=["x1", "x2"], bounds=list(BOUNDS))


def normalize() -> Normalize:
    return Normalize(2, bounds=torch.tensor(BOUNDS, dtype=torch.float64).T)


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas / Ax deprecations, not ours
        yield


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory):
    """CONFIG with a tiny random-weight CMANP (a card path) in place of the shipped network: for the
    tests of Ax's machinery around the model, where the shipped network's size costs seconds per
    Ax call (acquisition optimisation, Sobol sensitivity) and shows nothing more."""
    from helpers import tiny_checkpoint

    card = tiny_checkpoint(tmp_path_factory.mktemp("tiny"), "cmanp", "bo")
    return ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": str(card)})


def _branin_client(config: ModelConfig = CONFIG):
    """An Ax Client on Branin whose generation strategy is 5 Sobol trials, then NPModel (`config`)."""
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct

    client = Client(random_seed=0)
    client.configure_experiment(parameters=[RangeParameterConfig(name=n, parameter_type="float", bounds=b)
                                            for n, b in zip(("x1", "x2"), BOUNDS)])
    client.configure_optimization(objective="-branin")
    client.set_generation_strategy(choose_generation_strategy(
        GenerationStrategyDispatchStruct(method="custom", initialization_budget=5, initialization_random_seed=0),
        model_config=copy.deepcopy(config)))
    return client


def _small_client(parameters, initialization_budget: int, config: ModelConfig):
    """An Ax Client over `parameters` minimising `loss`: `initialization_budget` initial trials, then
    NPModel (`config`) with a small acquisition optimisation (2 restarts, 64 raw samples)."""
    from ax.api.client import Client
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct

    client = Client(random_seed=0)
    client.configure_experiment(parameters=parameters)
    client.configure_optimization(objective="-loss")
    strategy = choose_generation_strategy(
        GenerationStrategyDispatchStruct(method="custom", initialization_budget=initialization_budget,
                                         initialization_random_seed=0),
        model_config=copy.deepcopy(config))
    strategy.nodes_by_name["MBM"].generator_specs[0].generator_gen_kwargs = {
        "model_gen_options": {"optimizer_kwargs": {"num_restarts": 2, "raw_samples": 64}}}
    client.set_generation_strategy(strategy)
    return client


def test_model_options_build_the_model():
    ds = dataset()
    inputs = NPModel.construct_inputs(ds, checkpoint="cmanp-bo")
    assert inputs["surrogate"] is shared_surrogate("cmanp-bo")  # float32, whatever the data's dtype
    assert inputs["input_domain"] == (0.0, 1.0) and inputs["standardize"] is True and "train_Yvar" not in inputs
    assert inputs["n_views"] == pretrained.checkpoint_use(inputs["surrogate"].card)["n_views"] == 4  # the card's
    model = NPModel(**inputs, input_transform=normalize(), outcome_transform=None)
    assert model.posterior(ds.X[:3].unsqueeze(-2)).mean.shape == (3, 1, 1)
    inputs = NPModel.construct_inputs(dataset(noise=0.5), checkpoint="cmanp-bo", network_dtype=torch.float64,
                                      restandardize_tol=0.5, n_views=1)
    assert torch.equal(inputs["train_Yvar"], torch.full((10, 1), 0.5, dtype=torch.float64))
    assert next(inputs["surrogate"].parameters()).dtype == torch.float64 and inputs["restandardize_tol"] == 0.5
    assert inputs["n_views"] == 1
    with pytest.raises(ValueError, match="checkpoint"):
        NPModel.construct_inputs(ds)
    with pytest.raises(TypeError, match="lengthscale"):
        NPModel.construct_inputs(ds, checkpoint="cmanp-bo", lengthscale=1.0)
    with pytest.raises(ValueError, match="categorical"):
        NPModel.construct_inputs(ds, checkpoint="cmanp-bo", categorical_features=[1])
    # what Ax passes for an unordered choice parameter: its OneHot transform's 0/1 columns, inputs
    # like any other (npbandit.space encodes a choice of three or more values the same way)
    def one_hot(levels):
        return SupervisedDataset(torch.cat([ds.X, torch.eye(levels, dtype=torch.float64)[torch.arange(10) % levels]],
                                           -1), ds.Y, outcome_names=["branin"],
                                 feature_names=["x1", "x2"] + [f"c_OH_PARAM_{k}" for k in range(levels)])

    assert NPModel.construct_inputs(one_hot(3), checkpoint="cmanp-bo")["train_X"].shape == (10, 5)
    with pytest.raises(pretrained.CheckpointError, match=r"5 of the 7 columns are Ax's one-hot encoding of choice "
                                                         r"parameters \['c'\]"):
        NPModel.construct_inputs(one_hot(5), checkpoint="cmanp-bo", columns="all")
    from helpers import data_box

    wide = NPModel.construct_inputs(one_hot(5), checkpoint="cmanp-bo")  # by default: the 6 most relevant columns
    seven = Normalize(7, bounds=data_box(wide["train_X"]))
    assert len(wide["columns"]) == 6 and NPModel(**wide, input_transform=seven).columns == wide["columns"]
    with pytest.raises(pretrained.CheckpointError):
        NPModel.construct_inputs(ds, checkpoint="cmanp-wheel")  # a bandit checkpoint for BO data


def test_a_checkpoint_is_loaded_once_and_again_when_replaced(tmp_path, monkeypatch):
    shutil.copy(pretrained.WEIGHTS_DIR / "te-pt-tnp-bo.json", tmp_path / "net.json")
    card = (tmp_path / "net.json").read_text().replace('"te-pt-tnp-bo.safetensors"', '"net.safetensors"')
    (tmp_path / "net.json").write_text(card)
    shutil.copy(pretrained.WEIGHTS_DIR / "te-pt-tnp-bo.safetensors", tmp_path / "net.safetensors")
    loads = []
    real = pretrained.load_surrogate
    monkeypatch.setattr(pretrained, "load_surrogate", lambda *a, **k: loads.append(a) or real(*a, **k))
    ds = dataset()
    first = [NPModel.construct_inputs(ds, checkpoint=tmp_path / "net")["surrogate"] for _ in range(5)]
    assert len(loads) == 1 and all(s is first[0] for s in first)
    (tmp_path / "net.safetensors").touch()  # replaced (same bytes, new file time): loaded and verified again
    assert NPModel.construct_inputs(ds, checkpoint=tmp_path / "net")["surrogate"] is not first[0]
    assert len(loads) == 2


def test_ax_fits_an_npmodel_by_doing_nothing():
    from gpytorch.mlls import ExactMarginalLogLikelihood

    inputs = NPModel.construct_inputs(dataset(), checkpoint="cmanp-bo")  # imports npbandit.integrations.ax
    model = NPModel(**inputs, input_transform=normalize())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    fit_botorch_model(model, mll_class=ExactMarginalLogLikelihood, mll_options={})  # NotImplementedError before
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items()) and not model.training


def test_construct_inputs_finds_the_ax_integration_once_ax_is_in_use():
    # a loop configured with the ModelConfig alone never imports npbandit.integrations.ax: the hook
    # npbandit installs imports it from construct_inputs once Ax's fit dispatcher is loaded
    import subprocess
    import sys
    from pathlib import Path

    code = """
import sys, warnings
warnings.simplefilter("ignore")
import torch
from botorch.utils.datasets import SupervisedDataset
from npbandit.models import NPModel
X = torch.rand(5, 2, dtype=torch.float64)
ds = SupervisedDataset(X, X.sum(-1, keepdim=True), feature_names=["a", "b"], outcome_names=["y"])
NPModel.construct_inputs(ds, checkpoint="cmanp-bo")
before = "npbandit.integrations.ax" in sys.modules
from ax.generators.torch.botorch_modular.utils import fit_botorch_model
NPModel.construct_inputs(ds, checkpoint="cmanp-bo")
from npbandit.models.hooks import construct_inputs_hook
from npbandit.integrations.ax import AX_INPUTS, fit_np_model
print(before, construct_inputs_hook() is AX_INPUTS, fit_botorch_model.dispatch(NPModel) is fit_np_model)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "True"]


def test_cross_validation_conditions_each_fold_on_its_own_data():
    # Ax's CV loads the full model's state dict into a model built on each fold's data
    ds = dataset(12)
    generator = BoTorchGenerator(surrogate_spec=SurrogateSpec(model_configs=[copy.deepcopy(CONFIG)]))
    generator.fit(datasets=[ds], search_space_digest=digest())
    keep = torch.ones(12, dtype=torch.bool)
    keep[[2, 7]] = False
    fold = ds.clone(mask=keep)
    mean, cov = generator.cross_validate(datasets=[fold], X_test=ds.X[~keep], search_space_digest=digest())
    fresh = NPModel(**NPModel.construct_inputs(fold, checkpoint="cmanp-bo"), input_transform=normalize())
    post = fresh.posterior(ds.X[~keep].unsqueeze(0))
    assert torch.allclose(mean.reshape(-1), post.mean.reshape(-1))
    assert torch.allclose(torch.diagonal(cov, dim1=-2, dim2=-1).reshape(-1), post.variance.reshape(-1))


def test_a_warm_start_from_another_network_is_refused():
    ds = dataset()
    other = NPModel(**NPModel.construct_inputs(ds, checkpoint="te-pt-tnp-bo"), input_transform=normalize())
    surrogate = Surrogate(surrogate_spec=SurrogateSpec(model_configs=[copy.deepcopy(CONFIG)]))
    with pytest.raises(ValueError, match="another network"):
        surrogate.fit(datasets=[ds], search_space_digest=digest(), state_dict=other.state_dict(), refit=False)
    surrogate.fit(datasets=[ds], search_space_digest=digest())  # and from its own state it starts warm
    state = surrogate.model.state_dict()
    fold = ds.clone(mask=torch.arange(10) > 0)
    Surrogate(surrogate_spec=SurrogateSpec(model_configs=[copy.deepcopy(CONFIG)])).fit(
        datasets=[fold], search_space_digest=digest(), state_dict=state, refit=True)


def test_kept_moments_stay_with_their_model_through_cross_validation_and_warm_starts():
    # while Ax optimises qLogNEI the model keeps its moments at the observed points; a fold's or a
    # warm-started model (built on other data from the state dict) predicts them from its own state
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.sampling import SobolQMCNormalSampler
    from helpers import EmbedCounter

    ds = dataset(12)
    # the marginal path keeps the moments (a correlated posterior reads the observed points again)
    config = ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo",
                                                                      "covariance": "diagonal"})
    generator = BoTorchGenerator(surrogate_spec=SurrogateSpec(model_configs=[copy.deepcopy(config)]))
    generator.fit(datasets=[ds], search_space_digest=digest())
    model = generator.surrogate.model
    keys = set(model.state_dict())
    cand = ds.X[:4].unsqueeze(-2) * 0.9 + 0.5

    def qnei(m):  # the same base samples for every model
        acqf = qLogNoisyExpectedImprovement(m, X_baseline=ds.X, prune_baseline=False,
                                            sampler=SobolQMCNormalSampler(torch.Size([256]), seed=0))
        with torch.no_grad():
            return acqf(cand)

    before = qnei(model)
    counter = EmbedCounter(model.surrogate.decoder)
    views = model._views.n_views  # the network predicts each candidate once per symmetric view
    assert torch.equal(qnei(model), before) and counter.points == 4 * views  # the observed points were kept
    assert set(model.state_dict()) == keys  # nothing of them in the state dict
    keep = torch.ones(12, dtype=torch.bool)
    keep[[2, 7]] = False
    fold = ds.clone(mask=keep)
    mean, _ = generator.cross_validate(datasets=[fold], X_test=ds.X[~keep], search_space_digest=digest())
    fresh = NPModel(**NPModel.construct_inputs(fold, checkpoint="cmanp-bo", covariance="diagonal"),
                    input_transform=normalize())
    assert torch.allclose(mean.reshape(-1), fresh.posterior(ds.X[~keep].unsqueeze(0)).mean.reshape(-1))
    warm = Surrogate(surrogate_spec=SurrogateSpec(model_configs=[copy.deepcopy(config)]))
    warm.fit(datasets=[fold], search_space_digest=digest(), state_dict=model.state_dict(), refit=False)
    Xf = torch.cat([ds.X.expand(4, -1, -1), cand], dim=-2)  # what qLogNEI asks for

    def moments(m, rows_apart=False):  # one row per t-batch: nothing shared, nothing kept
        with torch.no_grad():
            post = m.posterior(Xf.reshape(-1, 1, 2) if rows_apart else Xf)
        return torch.cat([post.mean.reshape(-1), post.variance.reshape(-1)])

    assert torch.allclose(moments(warm.model), moments(fresh, rows_apart=True))
    assert torch.allclose(moments(model), moments(model, rows_apart=True))
    assert torch.equal(qnei(model), before)  # and the full model's kept moments are still its own


@pytest.mark.parametrize("sem", [None, 0.5])
@pytest.mark.slow
def test_an_ax_client_loop_runs_on_the_configuration_alone(sem, monkeypatch, tmp_path, tiny_config):
    from ax.api.client import Client

    built = []
    real = NPModel.construct_inputs.__func__
    monkeypatch.setattr(NPModel, "construct_inputs",
                        classmethod(lambda cls, *a, **k: built.append(real(cls, *a, **k)) or built[-1]))
    client = _branin_client(tiny_config)
    for _ in range(7):
        for index, p in client.get_next_trials(max_trials=1).items():
            value = branin(p["x1"], p["x2"])
            client.complete_trial(index, raw_data={"branin": value if sem is None else (value, sem)})
    assert len(built) >= 2  # a model for each of the two model-based trials
    assert all(("train_Yvar" in inputs) == (sem is not None) for inputs in built)
    assert len({id(inputs["surrogate"]) for inputs in built}) == 1  # one network for every rebuild
    assert len(client._experiment.trials) == 7
    if sem is None:  # saved and loaded through Ax's storage, which names the model class
        client.save_to_json_file(str(tmp_path / "client.json"))
        again = Client.load_from_json_file(str(tmp_path / "client.json"))
        assert len(again.get_next_trials(max_trials=1)) == 1


@pytest.mark.slow
def test_sensitivity_and_top_surfaces_analyses_run_on_an_npmodel(tiny_config):
    # Ax's sensitivity analysis reads the model's device from next(model.parameters()): an NPModel,
    # whose network is no parameter of it, must still yield one (the network's, empty and frozen)
    from ax.analysis.plotly.sensitivity import SensitivityAnalysisPlot
    from ax.analysis.plotly.top_surfaces import TopSurfacesAnalysis
    from ax.core.analysis_card import AnalysisCardGroup, ErrorAnalysisCard, NotApplicableStateAnalysisCard

    client = _branin_client(tiny_config)
    for _ in range(6):  # the last trial from the NPModel, which the analyses then read
        for index, p in client.get_next_trials(max_trials=1).items():
            client.complete_trial(index, raw_data={"branin": branin(p["x1"], p["x2"])})
    assert isinstance(client._generation_strategy.adapter.generator.surrogate.model, NPModel)
    sensitivity, surfaces = client.compute_analyses([SensitivityAnalysisPlot(), TopSurfacesAnalysis(top_k=1)],
                                                    display=False)

    def leaves(card):
        return [leaf for child in card.children for leaf in leaves(child)] if isinstance(card, AnalysisCardGroup) \
            else [card]

    for card in leaves(sensitivity) + leaves(surfaces):
        assert not isinstance(card, (ErrorAnalysisCard, NotApplicableStateAnalysisCard)), card.blob[-2000:]
    assert {"x1", "x2"} <= set(sensitivity.df["parameter_name"])


@pytest.mark.slow
def test_the_example_runs():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "examples" / "ax_client.py"
    done = subprocess.run([sys.executable, str(script), "--trials", "6", "--init", "5"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trial  5 (MBM" in done.stdout and "seconds per model-based trial" in done.stdout


@pytest.mark.slow
def test_an_ax_client_loop_over_a_mixed_search_space(monkeypatch, tiny_config):
    # a log-scale float, an int and an unordered three-value choice: Ax log-transforms the float,
    # keeps the int on its values and one-hot encodes the choice (three columns); the NP models
    # the six columns and Ax's mixed optimiser proposes valid ints and choices
    from ax.api.configs import ChoiceParameterConfig, RangeParameterConfig

    built = []
    real = NPModel.construct_inputs.__func__
    monkeypatch.setattr(NPModel, "construct_inputs", classmethod(
        lambda cls, training_data, **k: built.append(list(training_data.feature_names)) or real(cls, training_data,
                                                                                              **k)))
    client = _small_client([
        RangeParameterConfig(name="x", parameter_type="float", bounds=(-2.0, 3.0)),
        RangeParameterConfig(name="lr", parameter_type="float", bounds=(1e-4, 1e-1), scaling="log"),
        RangeParameterConfig(name="n", parameter_type="int", bounds=(1, 3)),
        ChoiceParameterConfig(name="act", parameter_type="str", values=["relu", "tanh", "gelu"])], 4, tiny_config)
    for _ in range(5):
        for index, p in client.get_next_trials(max_trials=1).items():
            assert -2 <= p["x"] <= 3 and 1e-4 <= p["lr"] <= 1e-1 and p["act"] in ("relu", "tanh", "gelu")
            assert isinstance(p["n"], int) and 1 <= p["n"] <= 3
            loss = (p["x"] - 1) ** 2 + (math.log10(p["lr"]) + 2) ** 2 + abs(p["n"] - 2) + (p["act"] != "tanh")
            client.complete_trial(index, raw_data={"loss": loss})
    nodes = [t.generator_runs[0]._generation_node_name for t in client._experiment.trials.values()]
    assert nodes[4:] == ["MBM"]
    assert built and all(names == ["x", "lr", "n", "act_OH_PARAM_0", "act_OH_PARAM_1", "act_OH_PARAM_2"]
                         for names in built)


def _four_sobol_then_np(tiny_config):
    """Ax's generation strategy of the client loops below: 4 Sobol trials, then the NP's node with a small
    acquisition optimisation (2 restarts, 64 raw samples)."""
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct

    strategy = choose_generation_strategy(
        GenerationStrategyDispatchStruct(method="custom", initialization_budget=4, initialization_random_seed=0),
        model_config=copy.deepcopy(tiny_config))
    strategy.nodes_by_name["MBM"].generator_specs[0].generator_gen_kwargs = {
        "model_gen_options": {"optimizer_kwargs": {"num_restarts": 2, "raw_samples": 64}}}
    return strategy


@pytest.mark.slow
@pytest.mark.parametrize("objective, constraint", [("-f", "c <= 0.5"), ("-f, -g", "c <= 1.5")])
def test_an_ax_client_loop_with_an_outcome_constraint_and_several_objectives(objective, constraint, monkeypatch,
                                                                              tiny_config):
    # several metrics: Ax models each with an NPModel of its own (a ModelList), each built from
    # a one-outcome dataset through construct_inputs; the constrained (and multi-objective)
    # acquisitions run on it
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from botorch.models.model import ModelList

    built = []
    real = NPModel.construct_inputs.__func__
    monkeypatch.setattr(NPModel, "construct_inputs", classmethod(
        lambda cls, training_data, **k: built.append(list(training_data.outcome_names)) or real(cls, training_data,
                                                                                              **k)))
    client = Client(random_seed=0)
    client.configure_experiment(parameters=[RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
                                            for n in ("x1", "x2")])
    client.configure_optimization(objective=objective, outcome_constraints=[constraint])
    client.set_generation_strategy(_four_sobol_then_np(tiny_config))
    for _ in range(6):
        for index, p in client.get_next_trials(max_trials=1).items():
            x1, x2 = p["x1"], p["x2"]
            client.complete_trial(index, raw_data={"f": x1 + x2, "c": x1**2 + x2**2, "g": (x1 - 1) ** 2})
    model = client._generation_strategy.adapter.generator.surrogate.model
    assert isinstance(model, ModelList) and all(isinstance(m, NPModel) for m in model.models)
    assert built and all(len(names) == 1 for names in built)
    assert {names[0] for names in built} >= {"f", "c"}
    nodes = [t.generator_runs[0]._generation_node_name for t in client._experiment.trials.values()]
    assert nodes[4:] == ["MBM", "MBM"]


@pytest.mark.slow
def test_an_ax_client_loop_with_two_objectives_and_their_thresholds_proposes_with_np_models(tiny_config):
    # Ax's multi-objective path end to end: the thresholds become the objective thresholds (not
    # outcome constraints), every model-based trial comes from qLogNEHVI over a ModelList of
    # NPModels (one per metric; Ax's metadata names the NP for each), with a finite reference point
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
    from botorch.models.model import ModelList

    client = Client(random_seed=0)
    client.configure_experiment(parameters=[RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0))
                                            for n in ("x1", "x2")])
    client.configure_optimization(objective="-f, -g", outcome_constraints=["f <= 1.5", "g <= 1.5"])
    config = client._experiment.optimization_config
    assert [str(t) for t in config.objective_thresholds] == ["OutcomeConstraint(f <= 1.5)",
                                                            "OutcomeConstraint(g <= 1.5)"]
    assert not config.outcome_constraints
    client.set_generation_strategy(_four_sobol_then_np(tiny_config))
    for _ in range(6):
        for index, p in client.get_next_trials(max_trials=1).items():
            x1, x2 = p["x1"], p["x2"]
            client.complete_trial(index, raw_data={"f": x1 + x2, "g": (x1 - 1) ** 2 + x2})
    runs = [t.generator_runs[0] for t in client._experiment.trials.values()]
    assert [r._generation_node_name for r in runs[4:]] == ["MBM", "MBM"]
    for run in runs[4:]:
        (used,) = run.gen_metadata["models_used"]
        assert set(used) == {"f", "g"} and all("NPModel" in config for config in used.values())
    acqf = client._generation_strategy.adapter.generator._acquisition.acqf
    assert isinstance(acqf, qLogNoisyExpectedHypervolumeImprovement)
    assert isinstance(acqf.model, ModelList) and [type(m) for m in acqf.model.models] == [NPModel, NPModel]
    assert acqf.ref_point.shape == (2,) and bool(torch.isfinite(acqf.ref_point).all())


@pytest.mark.slow
def test_an_ax_client_loop_over_more_parameters_than_the_checkpoint_takes(monkeypatch, tiny_config):
    # ten parameters, two of which matter: each model reads the 6 most relevant columns of its
    # trial's data, and Ax's optimiser sets all ten
    from ax.api.configs import RangeParameterConfig

    built = []
    real = NPModel.construct_inputs.__func__
    monkeypatch.setattr(NPModel, "construct_inputs",
                        classmethod(lambda cls, *a, **k: built.append(real(cls, *a, **k)) or built[-1]))
    names = [f"x{i}" for i in range(10)]
    client = _small_client([RangeParameterConfig(name=n, parameter_type="float", bounds=(0.0, 1.0)) for n in names],
                           6, tiny_config)
    for _ in range(8):
        for index, p in client.get_next_trials(max_trials=1).items():
            assert set(p) == set(names) and all(0 <= v <= 1 for v in p.values())
            client.complete_trial(index, raw_data={"loss": (p["x3"] - 0.3) ** 2 + (p["x8"] - 0.7) ** 2})
    nodes = [t.generator_runs[0]._generation_node_name for t in client._experiment.trials.values()]
    assert nodes[6:] == ["MBM", "MBM"]
    assert built and all(len(inputs["columns"]) == 6 and inputs["train_X"].shape[-1] == 10 for inputs in built)
    model = client._generation_strategy.adapter.generator.surrogate.model
    assert isinstance(model, NPModel) and model.columns == built[-1]["columns"]


@pytest.mark.slow
def test_a_scalarized_objective_stops_in_botorchs_model_list_and_its_one_metric_form_runs(tiny_config):
    # Ax wraps the metrics' NPModels in a plain BoTorch ModelList (NPModel is no GPyTorchModel), whose
    # PosteriorList BoTorch scalarizes for one point at a time only: qLogNEI, Ax's default, asks for
    # the observed points jointly and stops (the Ax guide, "Several objectives"); reporting the weighted
    # sum as a metric of its own runs
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig

    def loop(objective, score):
        client = Client(random_seed=0)
        client.configure_experiment(parameters=[RangeParameterConfig(name=n, parameter_type="float",
                                                                     bounds=(0.0, 1.0)) for n in ("x1", "x2")])
        client.configure_optimization(objective=objective)
        client.set_generation_strategy(_four_sobol_then_np(tiny_config))
        for _ in range(5):
            for index, p in client.get_next_trials(max_trials=1).items():
                loss, aux = (p["x1"] - 0.3) ** 2, p["x2"]
                client.complete_trial(index, raw_data={"loss": loss, "aux": aux, **({"score": loss + 0.5 * aux}
                                                                                       if score else {})})
        return [t.generator_runs[0]._generation_node_name for t in client._experiment.trials.values()]

    with pytest.raises(NotImplementedError, match="PosteriorList"):
        loop("-loss - 0.5 * aux", score=False)
    assert loop("-score", score=True)[4:] == ["MBM"]
