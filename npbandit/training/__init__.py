"""Meta-training: the trainer loop and evaluation sets."""

from npbandit.training.evaluation import EVAL_SEED, eval_batches, evaluate, evaluate_suite, evaluation_suite
from npbandit.training.trainer import TrainConfig, TrainResult, cosine_lr, train

__all__ = ["TrainConfig", "TrainResult", "train", "cosine_lr", "EVAL_SEED", "eval_batches", "evaluate",
           "evaluate_suite", "evaluation_suite"]
