"""The paper's AIDS protocol on one fold, on the real data bundled in resources/."""
import numpy as np
from sklearn.model_selection import StratifiedKFold

from core import GLocalKD, load
from core.evaluation.metrics import roc_auc


def test_aids_fold_reaches_auc_095_in_20_epochs(aids_zip):
    graphs = load(aids_zip)
    anomalous = np.array([label == "0" for label in graphs.labels])  # 0 = active: the anomaly class
    train_idx, test_idx = next(StratifiedKFold(5, shuffle=True, random_state=1).split(anomalous, anomalous))
    normal_train = graphs.subset([i for i in train_idx if not anomalous[i]])
    assert len(normal_train) == 1280
    model = GLocalKD(epochs=20, seed=0, device="cpu").fit(normal_train)
    scores = model.score(graphs.subset(test_idx))
    assert roc_auc(anomalous[test_idx], scores.score) >= 0.95
