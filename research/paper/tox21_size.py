"""ROC-AUC of the atom count and of the bond count themselves (bigger = more anomalous) on the
Tox21 testing files, actives anomalous: what the paper's Tox21 GLocalKD numbers compare with.

Then the AUC of an untrained GLocalKD predictor (one epoch at lr 1e-12, trained on the
training file's inactives) with element and with one-hot degree features.

Usage: python -m research.paper.tox21_size [DATASETS]
(DATASETS: the folder holding the Tox21 files; default ../shared/datasets beside the repository)
"""
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from core import GLocalKD, load

ROOT = Path(__file__).resolve().parents[2]

root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "datasets"
for name in ("Tox21_HSE", "Tox21_p53"):
    test = load(root / f"{name}_testing")
    active = np.array([label == "1" for label in test.labels])
    atoms = np.array([g.num_nodes for g in test.graphs])
    bonds = np.array([g.edge_index.shape[1] // 2 for g in test.graphs])
    print(f"{name}: {active.sum()} actives of {len(active)}; AUC of the atom count {roc_auc_score(active, atoms):.3f}, "
          f"of the bond count {roc_auc_score(active, bonds):.3f}; mean atoms {atoms[active].mean():.1f} (actives) "
          f"vs {atoms[~active].mean():.1f}")
    train = load(root / f"{name}_training")
    inactive = train.subset([i for i, label in enumerate(train.labels) if label == "0"])
    for features in ("auto", "degree"):
        model = GLocalKD(epochs=1, lr=1e-12, batch_size=2000, features=features, seed=0).fit(inactive)
        print(f"  untrained predictor, features {features}: AUC {roc_auc_score(active, model.score(test).score):.3f}")
