"""The one training use case: the command line, the app and the evaluation harness train through
:func:`train_model` over a :class:`TrainSpec`, under one set of rules (:mod:`core.training.plan`)."""
from core.training.plan import TrainingPlan, check_settings, plan_training
from core.training.spec import TrainSpec
from core.training.use_case import TrainedModel, train_model, weigh_known_anomalies

__all__ = ["TrainSpec", "TrainedModel", "TrainingPlan", "check_settings", "plan_training", "train_model",
           "weigh_known_anomalies"]
