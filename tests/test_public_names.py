"""Every public name of npbandit before the library-form redesign (commit 3860c14) still
imports from its old module.

``OLD_PUBLIC_NAMES`` is a frozen snapshot of that API, listed from the 3860c14 tree by AST:
each module's ``__all__``, or, for a module without one (``npbandit.cli``, ``npbandit.demo``),
the names it defines at module level (functions, classes, assignments) without a leading
underscore; names a module only imports are not its API. A moved name passes when its old
module re-exports it, or when the old module is a thin alias that warns ``DeprecationWarning``
on import (accepted here). Do not regenerate this list from the current tree: it is the old
API the current one must keep serving.
"""

import importlib
import warnings

import pytest

OLD_PUBLIC_NAMES = {
    "npbandit": ["optimize", "OptimizeResult", "build", "load_surrogate", "NPModel", "__version__"],
    "npbandit.api": ["optimize", "OptimizeResult", "SURROGATES", "objective_label"],
    "npbandit.cli": ["build_parser", "MODELS_NOTE", "models_text", "main"],
    "npbandit.cluster": ["dask_executor", "leave_stop_signals_to_the_driver", "run_jobs"],
    "npbandit.demo": ["TourReport", "run_tour", "DemoReport", "run_demo"],
    "npbandit.envs": [
        "WheelBanditEnv", "BlackBoxEnv", "ObjectiveError", "available_functions", "make_test_function",
        "objective_value", "problem_objective"
    ],
    "npbandit.envs.blackbox": [
        "BlackBoxEnv", "ObjectiveError", "available_functions", "make_test_function", "objective_value",
        "problem_objective"
    ],
    "npbandit.envs.wheel": ["WheelBanditEnv"],
    "npbandit.integrations": ["NPSampler"],
    "npbandit.integrations.ax": ["fit_np_model"],
    "npbandit.integrations.optuna": ["NPSampler"],
    "npbandit.loop": ["run_episode", "run_wheel_bandits", "EpisodeResult", "RunInterrupted"],
    "npbandit.policies": [
        "Policy", "UniformPolicy", "LinUCBPolicy", "NPBanditPolicy", "GPUCBPolicy", "BOPolicy", "SobolPolicy",
        "ACQUISITIONS", "make_bandit_policy"
    ],
    "npbandit.policies.bandit": [
        "UniformPolicy", "LinUCBPolicy", "NPBanditPolicy", "GPUCBPolicy", "BASELINES", "BANDIT_PRIORS", "RULES",
        "parse_bandit_policy_name", "check_bandit_policy_name"
    ],
    "npbandit.policies.base": ["Policy"],
    "npbandit.policies.bo": [
        "SobolPolicy", "BOPolicy", "ACQUISITIONS", "OUTPUT_WARPS", "LIARS", "DEFAULT_LIAR", "check_liar",
        "liar_value", "pending_rule", "propose", "propose_in_region", "thompson_draw", "yeo_johnson_warp"
    ],
    "npbandit.policies.gp": ["GP_KERNELS", "NOISE_FREE_VAR", "fit_single_task_gp", "gp_hyperparameters"],
    "npbandit.policies.trust_region": ["TrustRegion"],
    "npbandit.priors": [
        "Prior", "TaskBatch", "GP1DPrior", "BOPrior", "WheelPrior", "make_prior", "PRIORS", "step_generator"
    ],
    "npbandit.priors.base": ["TaskBatch", "Prior", "step_generator"],
    "npbandit.priors.bayes": ["BayesPosterior"],
    "npbandit.priors.gp": ["GP1DPrior", "BOPrior"],
    "npbandit.priors.kernels": [
        "KERNELS", "kernel_matrix", "mixed_kernel_matrix", "sample_gp", "sample_gp_conditional"
    ],
    "npbandit.priors.wheel": [
        "WheelPrior", "wheel_mean_rewards", "encode_rewards", "RewardEncoding", "REWARD_TRANSFORMS", "REWARD_FILLS",
        "sample_unit_disc", "N_ARMS", "SMALL_REWARD_STD", "LARGE_REWARD_STD"
    ],
    "npbandit.report": [
        "report_text", "bandit_summary", "bo_summary", "plot_regret", "regret_figure", "Problem",
        "SIMPLE_REGRET_SHARE"
    ],
    "npbandit.scaling": ["standardization", "MIN_STD"],
    "npbandit.storage": [
        "DEFAULT_URL", "Run", "Step", "Meta", "open_db", "RunLogger", "list_runs", "run_steps", "effective_status",
        "display_url", "shared_url", "StorageError", "SchemaVersionError", "STATUSES", "STALE_AFTER",
        "HEARTBEAT_EVERY", "COMMIT_EVERY", "SCHEMA_VERSION"
    ],
    "npbandit.surrogates": [
        "build", "model_config", "available_models", "SIZES", "NeuralProcess", "NPConfig", "NPState",
        "ContextSetState", "CMANP", "CMANPConfig", "CMANPState", "CMANPAND", "CMANPANDConfig", "LBANP", "LBANPConfig",
        "TNPD", "TNPDConfig", "TEPTTNP", "TEPTTNPConfig", "ReTreever", "ReTreeverConfig"
    ],
    "npbandit.surrogates.attention": [
        "SoftmaxState", "extend_softmax_state", "StreamingReader", "MultiHeadAttention", "FeedForward",
        "AttentionBlock", "TranslationEquivariantAttention", "StreamingCrossAttentionBlock"
    ],
    "npbandit.surrogates.base": [
        "NPState", "ContextSetState", "NeuralProcess", "NPConfig", "target_log_prob", "hold_out_noise",
        "MIN_LATENT_VAR"
    ],
    "npbandit.surrogates.cmanp": ["CMANPConfig", "CMANPState", "CMAB", "CMANP"],
    "npbandit.surrogates.cmanp_and": ["CMANPANDConfig", "CMANPAND", "expected_joint_log_prob", "FACTOR_INIT_SCALE"],
    "npbandit.surrogates.layers": ["mlp", "GaussianHead", "DecoderMemory", "LatentQueryDecoder"],
    "npbandit.surrogates.lbanp": ["LBANPConfig", "LBANP"],
    "npbandit.surrogates.npmodel": ["NPModel", "NPLikelihood", "shared_surrogate"],
    "npbandit.surrogates.pretrained": [
        "CheckpointError", "UnknownCheckpointError", "save_pretrained", "load_surrogate", "available_checkpoints",
        "read_card", "checkpoint_use", "checkpoint_transforms", "outcome_transform", "check_checkpoint_kind",
        "fitting_checkpoints", "WEIGHTS_DIR", "CARD_FORMAT"
    ],
    "npbandit.surrogates.retreever": ["ReTreeverConfig", "ReTreever", "Tree", "tree_shape", "build_tree_order"],
    "npbandit.surrogates.te_pt_tnp": ["TEPTTNPConfig", "TEPTTNP"],
    "npbandit.surrogates.tnp": ["TNPDConfig", "TNPD"],
    "npbandit.surrogates.views": ["InputViews", "symmetry_count"],
    "npbandit.training": [
        "TrainConfig", "TrainResult", "train", "cosine_lr", "EVAL_SEED", "eval_batches", "evaluate", "evaluate_suite",
        "evaluation_suite"
    ],
    "npbandit.training.evaluation": [
        "EVAL_SEED", "EVAL_BATCH_SIZE", "evaluation_suite", "eval_batches", "evaluate", "evaluate_suite", "cache_dir",
        "baseline_log_likelihood", "baseline_suite", "BASELINE"
    ],
    "npbandit.training.trainer": ["TrainConfig", "train", "TrainResult"],
    "npbandit.transforms": [
        "RewardEncoding", "OutcomePredictive", "encode_rewards", "decode_rewards", "symexp_moments", "transform_spec",
        "transform_from_spec", "REWARD_TRANSFORMS", "REWARD_FILLS"
    ],
    "npbandit.validation": [
        "check_bool", "check_int", "check_real", "check_range", "check_render_mode", "check_options", "check_device",
        "check_float_dtype"
    ],
}


@pytest.mark.parametrize("module_name", sorted(OLD_PUBLIC_NAMES))
def test_every_public_name_still_imports_from_its_old_module(module_name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # an alias module may warn; that is allowed
        module = importlib.import_module(module_name)
        missing = [name for name in OLD_PUBLIC_NAMES[module_name] if not hasattr(module, name)]
    assert not missing, f"{module_name} no longer provides {missing}"


def test_the_snapshot_covers_the_old_package():
    assert len(OLD_PUBLIC_NAMES) == 45
    assert sum(map(len, OLD_PUBLIC_NAMES.values())) == 251
