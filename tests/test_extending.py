"""docs/contributing.md's "Extending npbandit": its examples run as written, and the
protocol tests run on the example surrogate family."""

import importlib.util
import inspect
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import restored_registries

import npbandit.surrogates as surrogates

ROOT = Path(__file__).resolve().parents[1]


def example(heading: str) -> str:
    """The python block under ``### heading`` in the Extending section."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    section = text.split("## Extending npbandit", 1)[1].split("\n## ", 1)[0]
    part = section.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", part, flags=re.S)
    assert len(blocks) == 1, heading
    return blocks[0]


@pytest.fixture
def registries():
    """The registries as they were once the test is over (an example registers a class)."""
    with restored_registries():
        yield


def test_the_acquisition_optimiser_example_runs_and_is_recorded():
    namespace: dict = {}
    exec(example("A new acquisition optimiser"), namespace)
    result = namespace["result"]
    assert len(result.history) == 7 and result.best_value < 0.5
    assert namespace["RandomSearch"]().params() == {"name": "random-search", "n": 256}


def test_the_subspace_example_searches_through_its_embedding():
    namespace: dict = {}
    exec(example("A new subspace strategy"), namespace)
    result = namespace["result"]
    assert len(result.history) == 15
    for h in result.history:  # every point evaluated lies in the embedding: inputs i and i + 6 equal
        assert np.array_equal(h["x"][:2], h["x"][6:])
    search = namespace["Fold"]().bind(8, 6, 0)
    Z = torch.rand(4, 6, dtype=torch.float64)
    assert torch.equal(search.project(search.lift(Z)), Z)


def test_the_bandit_policy_example_runs_through_the_loop_and_is_logged(tmp_path, monkeypatch):
    from npbandit.storage import list_runs

    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(example("A new bandit policy"), namespace)
    result = namespace["result"]
    runs = list_runs("sqlite:///bandits.db")
    (run,) = [r for r in runs if r.id == result.run_id]
    assert run.policy == "eps-greedy" and run.policy_params == {"eps": 0.1}
    assert run.status == "completed" and run.n_steps == 200
    # the sweep: both policies on both tasks and three seeds, each run logged, and nothing run again
    assert len(namespace["results"]) == 12 and all(r.status == "completed" for r in runs)
    swept = sorted((r.policy, r.env_params["delta"], r.seed) for r in runs if r.env_id == "npbandit/WheelBandit-v0")
    assert swept == sorted((p, d, s) for p in ("eps-greedy", "linucb") for d in (0.5, 0.9) for s in (0, 1, 2))
    again = namespace["run_bandit_sweep"](["linucb", lambda env: namespace["EpsilonGreedy"](int(env.action_space.n))],
                                          [namespace["wheel_task"](0.5)], seeds=[0], steps=200,
                                          db="sqlite:///bandits.db", say=None)
    assert [r.run_id for r in again] == [r.run_id for r in namespace["results"][:2]]  # found completed, not run
    assert len(list_runs("sqlite:///bandits.db")) == 13
    three_arms = namespace["gym"].make("npbandit/LinearBandit-v0", context_dim=3, n_arms=3, horizon=5)
    with pytest.raises(ValueError, match="policy 'eps-greedy'"):  # built for 4 arms: check_spaces refuses 3
        namespace["run_episode"](three_arms, namespace["EpsilonGreedy"](4), seed=0)


def test_the_surrogate_example_registers_a_family_the_protocol_tests_pass(registries, tmp_path, monkeypatch):
    from npbandit.surrogates.pretrained import load_surrogate

    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(example("A new surrogate family"), namespace)
    assert "mean-cnp" in surrogates.available_models() and isinstance(namespace["model"], namespace["MeanCNP"])
    # the family's checkpoint, trained on the bo prior, is what optimize ran with
    card = namespace["run"].card
    assert (tmp_path / card).resolve() == tmp_path.resolve() / "runs" / "mean-cnp-bo" / "mean-cnp-bo.json"
    assert isinstance(load_surrogate(card), namespace["MeanCNP"]) and len(namespace["result"].history) == 7
    with pytest.raises(ValueError, match="'mean-cnp' is registered already"):
        surrogates.register_model(type("Again", (namespace["MeanCNP"],), {}))
    # every protocol test parametrised over the registry, on the new family
    spec = importlib.util.spec_from_file_location("protocol_tests", ROOT / "tests/surrogates/test_protocol.py")
    protocol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(protocol)
    ran = []
    for name, test in inspect.getmembers(protocol, inspect.isfunction):
        arguments = inspect.signature(test).parameters
        if name.startswith("test_") and "model_name" in arguments:
            torch.manual_seed(0)
            test(**{"model_name": "mean-cnp", "tmp_path": tmp_path / name}
                 if "tmp_path" in arguments else {"model_name": "mean-cnp"})
            ran.append(name)
    assert len(ran) >= 15


def test_the_prior_example_registers_a_prior_that_trains_on_its_default_suite(registries, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(example("A new prior"), namespace)
    assert list(namespace["suite"]) == ["lines"] and namespace["suite"]["lines"].n == 8
    assert set(namespace["run"].log[-1]["eval_ll"]) == {"lines"} and namespace["run"].step == 2
    assert namespace["surrogate"].card["prior"]["name"] == "lines"
    assert namespace["model"].posterior(namespace["X"]).mean.shape == (5, 1)


def test_a_prior_whose_spec_a_card_cannot_store_is_refused_naming_its_spec(registries, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(example("A new prior").split("suite = ", 1)[0], namespace)  # the prior, registered; nothing trained
    from npbandit.priors import register_prior
    from npbandit.training import TrainConfig, train

    @register_prior
    class TensorNoise(namespace["Lines"]):
        name = "lines-tensor-noise"

        def spec(self):
            return {"name": self.name, "noise_std": torch.tensor(self.noise_std)}  # a tensor: no JSON value

    config = TrainConfig(model="tnpd", prior="lines-tensor-noise", size="tiny", steps=2, eval_every=2, eval_batches=1,
                         final_eval_batches=1, out=str(tmp_path / "run"))
    with pytest.raises(TypeError, match=r"prior 'lines-tensor-noise': TensorNoise.spec\(\) must return a dict of JSON "
                                        r"values .*Tensor is not JSON serializable"):
        train(config, progress=False)


def test_register_model_refuses_what_is_not_a_named_concrete_family(registries):
    from npbandit.surrogates import CMANP, NeuralProcess, NPConfig

    with pytest.raises(TypeError, match="subclass of npbandit.surrogates.NeuralProcess"):
        surrogates.register_model(NPConfig)
    with pytest.raises(TypeError, match=r"must implement \['_condition', '_predict'\]"):
        surrogates.register_model(type("Empty", (NeuralProcess,), {"name": "empty"}))
    # the base class's, not lower-case, empty, with whitespace or a control character ("mean cnp" and "Lines2"
    # were accepted: they could not be typed as one command-line word, or were found under another spelling)
    for name in ("np", "Upper", "Lines2", "", " ", "mean cnp", "cnp\t", "a\x1bb", None):
        with pytest.raises(ValueError, match="cls.name must be a non-empty, lower-case string without whitespace"):
            surrogates.register_model(type("Bad", (CMANP,), {"name": name}))
    with pytest.raises(TypeError, match="config_class must be a frozen dataclass"):
        surrogates.register_model(type("NoConfig", (CMANP,), {"name": "no-config", "config_class": dict}))

    @dataclass  # not frozen: a config changed after its checks and its weights were made (was accepted)
    class Loose:
        d_model: int = 8

    with pytest.raises(TypeError, match="config_class must be a frozen dataclass"):
        surrogates.register_model(type("Loose", (CMANP,), {"name": "loose", "config_class": Loose}))
    with pytest.raises(TypeError, match="replace must be a bool, got str 'yes'"):  # was read as true
        surrogates.register_model(type("Other", (CMANP,), {"name": "cmanp"}), replace="yes")
    with pytest.raises(ValueError, match="'cmanp' is registered already"):
        surrogates.register_model(type("Other", (CMANP,), {"name": "cmanp"}))
    assert surrogates.register_model(CMANP) is CMANP  # the same class again: nothing to refuse
    other = surrogates.register_model(type("Other", (CMANP,), {"name": "cmanp"}), replace=True)
    assert isinstance(surrogates.build("cmanp", 1, 1, size="tiny"), other)


def test_a_checkpoint_of_a_prior_not_registered_here_says_so(tmp_path):
    # NPModel takes a checkpoint of any registered prior: one trained on a prior this process
    # has not registered is refused, saying what is missing
    from helpers import Lines, registered_prior

    from npbandit.models import NPModel
    from npbandit.surrogates import build
    from npbandit.surrogates.pretrained import CheckpointError, load_surrogate, save_pretrained

    with registered_prior(Lines):
        card = save_pretrained(build("tnpd", 1, 1, size="tiny"), tmp_path, "tnpd-lines", prior=Lines().spec(),
                               training={"steps": 1}, evaluation={"log_likelihood": {"lines": 0.0}})
        surrogate = load_surrogate(card)
        X, Y = torch.rand(4, 1, dtype=torch.float64), torch.rand(4, 1, dtype=torch.float64)
        assert NPModel.from_pretrained(surrogate, X, Y).posterior(X).mean.shape == (4, 1)
    with pytest.raises(CheckpointError, match=r"prior 'test-lines' \(not .*\), a prior this process has not registered "
                                              r"\(register_prior; on the command line, --plugin MODULE\)"):
        NPModel.from_pretrained(surrogate, X, Y)


def test_load_surrogate_loads_a_checkpoint_of_a_prior_not_registered_here(tmp_path):
    # the network and its transforms are on the card: loading it, and condition / predict, need no prior;
    # what reads the prior (NPModel's input box and scaling) refuses it, as above
    from helpers import Lines, registered_prior

    from npbandit.surrogates import build
    from npbandit.surrogates.pretrained import load_surrogate, save_pretrained

    with registered_prior(Lines):
        card = save_pretrained(build("tnpd", 1, 1, size="tiny"), tmp_path, "tnpd-lines", prior=Lines().spec(),
                               training={"steps": 1}, evaluation={})
        registered = load_surrogate(card)
    surrogate = load_surrogate(card)
    x = torch.rand(1, 4, 1)
    with torch.no_grad():
        here, there = (s.predict(s.condition(x, x), x).loc for s in (surrogate, registered))
    assert torch.equal(here, there) and surrogate.card["prior"]["name"] == "test-lines"


@dataclass(frozen=True)
class WidthConfig:
    """A family's config that is a frozen dataclass but not an NPConfig."""

    width: int = 4


class Affine(surrogates.NeuralProcess):
    """The context's mean of y, plus a learnt affine map of x: the smallest family with weights."""

    name = "test-affine"
    config_class = WidthConfig

    def __init__(self, x_dim, y_dim, config=None):
        super().__init__(x_dim, y_dim, config)
        self.lin = torch.nn.Linear(x_dim, y_dim)

    def _condition(self, xc, yc):
        return surrogates.ContextSetState(xc, yc, yc.sum(dim=1) / max(xc.shape[1], 1))

    def _predict(self, state, xt):
        from torch.distributions import Normal

        loc = state.encoding.unsqueeze(1) + self.lin(xt)
        return Normal(loc, torch.ones_like(loc))


def test_a_family_whose_config_is_not_an_npconfig_saves_and_loads_and_an_unregistered_one_names_register_model(
        registries, tmp_path):
    # the card read config.to_dict(), which only NPConfig has: save_pretrained failed with an AttributeError
    from npbandit.surrogates.pretrained import CheckpointError, load_surrogate, save_pretrained

    surrogates.register_model(Affine)
    model = surrogates.build("test-affine", 2, 1, width=3)
    card = save_pretrained(model, tmp_path, "affine", prior={"name": "gp1d"}, training={}, evaluation={})
    loaded = load_surrogate(card)
    assert loaded.card["config"] == {"width": 3} and torch.equal(loaded.lin.weight, model.lin.weight)
    surrogates._MODELS.pop("test-affine")  # the family registered in the process that trained it, not in this one
    with pytest.raises(CheckpointError, match=r"is a 'test-affine' model, a family this process has not registered "
                                              r"\(register_model; on the command line, --plugin MODULE\); "
                                              r"known: \["):
        load_surrogate(card)


def test_an_unknown_family_or_prior_name_says_how_to_register_one(tmp_path):
    # a family or prior of one's own, named before its module registered it, was refused with the registered names
    # alone ("prior must be one of ['bo', 'gp1d', 'wheel']"), not saying that a registration (or --plugin) was missing
    from npbandit.priors import make_prior
    from npbandit.training import TrainConfig

    plugin = r"on the command line, --plugin MODULE imports the module that adds it\)"
    with pytest.raises(ValueError, match=r"name must be one of \[.*'tnpd'\], got 'mean-cnp' \(one of your own is "
                                         r"added with npbandit.surrogates.register_model; " + plugin):
        surrogates.build("mean-cnp", 1, 1)
    with pytest.raises(ValueError, match=r"prior must be one of \['bo', 'gp1d', 'wheel'\], got 'lines' \(one of your "
                                         r"own is added with npbandit.priors.register_prior; " + plugin):
        make_prior("lines")
    with pytest.raises(ValueError, match=r"model must be one of .*, got 'mean-cnp' \(.*register_model; " + plugin):
        TrainConfig(model="mean-cnp", prior="bo", steps=1, out=str(tmp_path))
    with pytest.raises(ValueError, match=r"prior must be one of .*, got 'lines' \(.*register_prior; " + plugin):
        TrainConfig(model="tnpd", prior="lines", steps=1, out=str(tmp_path))
