import pickle

import numpy as np
import pytest
import torch

from core import GLocalKD, GLocalKDError, ModelFileError, SchemaMismatchError, load

SMALL = dict(hidden_dim=32, out_dim=16, batch_size=4, lr=1e-2, seed=3, device="cpu")


@pytest.fixture
def toy(tu_folder):
    return load(tu_folder)


def test_loss_decreases_and_target_stays_frozen(toy):
    model = GLocalKD(epochs=1, **SMALL).fit(toy)
    before = {k: v.clone() for k, v in model.target_.state_dict().items()}
    model = GLocalKD(epochs=30, **SMALL).fit(toy)
    assert model.loss_history_[-1] < 0.5 * model.loss_history_[0]
    after = model.target_.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # same seed, never trained
    assert not any(p.requires_grad for p in model.target_.parameters())


def test_same_seed_same_scores_other_seed_other_scores(toy):
    a = GLocalKD(epochs=5, **SMALL).fit(toy).score(toy).score
    b = GLocalKD(epochs=5, **SMALL).fit(toy).score(toy).score
    c = GLocalKD(epochs=5, **{**SMALL, "seed": 4}).fit(toy).score(toy).score
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)


def test_score_is_graph_term_plus_lambda_mean_node_error(toy):
    model = GLocalKD(epochs=3, lam=0.5, **SMALL).fit(toy)
    s = model.score(toy)
    assert len(s) == len(toy) and s.node_ptr[-1] == toy.num_nodes
    for i in range(len(toy)):
        errors = s.node_errors_of(i)
        assert len(errors) == toy.graphs[i].num_nodes
        assert np.isclose(errors.mean(), s.node_term[i], rtol=1e-5)
    assert np.allclose(s.score, s.graph_term + 0.5 * s.node_term, rtol=1e-5)
    assert np.array_equal(model.decision_function(toy), s.score)


def test_anomalous_graphs_score_higher(toy):
    normal = toy.with_label("1")
    model = GLocalKD(epochs=60, **SMALL).fit(normal)
    s = model.score(toy)
    labels = np.array(toy.labels)
    assert s.score[labels == "0"].min() > np.median(s.score[labels == "1"])


def test_should_stop_ends_training_cleanly(toy):
    epochs = []

    def stop():  # within the third epoch, polled between its batches
        return len(epochs) >= 2

    model = GLocalKD(epochs=50, **SMALL).fit(toy, on_epoch=epochs.append, should_stop=stop)
    assert model.stopped_early_ and len(model.loss_history_) < 50
    assert len(model.score(toy)) == len(toy)


def test_on_epoch_reports_every_epoch(toy):
    seen = []
    GLocalKD(epochs=4, **SMALL).fit(toy, on_epoch=seen.append)
    assert [e.epoch for e in seen] == [1, 2, 3, 4] and all(e.epochs == 4 for e in seen)
    assert all(e.loss > 0 and e.seconds >= 0 for e in seen)


def test_save_load_round_trip(toy, tmp_path):
    model = GLocalKD(epochs=3, **SMALL).fit(toy)
    model.save(tmp_path / "m.pt")
    again = GLocalKD.load(tmp_path / "m.pt", device="cpu")
    assert again.get_params() == model.get_params()
    assert again.schema_ == model.schema_
    assert np.array_equal(again.score(toy).score, model.score(toy).score)
    assert again.threshold(90) == pytest.approx(model.threshold(90))


def test_bad_model_files_are_refused_plainly(toy, tmp_path):
    model = GLocalKD(epochs=1, **SMALL).fit(toy)
    model.save(tmp_path / "m.pt")
    data = (tmp_path / "m.pt").read_bytes()
    (tmp_path / "trunc.pt").write_bytes(data[: len(data) // 2])
    (tmp_path / "text.pt").write_text("hello")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    for name in ("trunc.pt", "text.pt", "other.pt", "missing.pt"):
        with pytest.raises(ModelFileError):
            GLocalKD.load(tmp_path / name)


class _Boom:
    def __reduce__(self):
        return (exec, ("open('PWNED', 'w').write('x')",))


def test_pickled_code_in_a_model_file_never_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open("evil.pt", "wb") as fh:
        pickle.dump({"format": "glocalkd-studio/model", "x": _Boom()}, fh)
    torch.save({"format": "glocalkd-studio/model", "x": _Boom()}, "evil2.pt")
    for name in ("evil.pt", "evil2.pt"):
        with pytest.raises(ModelFileError):
            GLocalKD.load(name)
    assert not (tmp_path / "PWNED").exists()


def test_schema_mismatch_and_unfitted(toy, smiles_file):
    model = GLocalKD(epochs=1, **SMALL).fit(toy)
    with pytest.raises(SchemaMismatchError):
        model.score(load(smiles_file))
    with pytest.raises(GLocalKDError, match="not trained"):
        GLocalKD().score(toy)
    with pytest.raises(GLocalKDError, match="invalid setting: lr must be a positive number, not -1"):
        GLocalKD(lr=-1).fit(toy)


def test_fewer_graphs_than_batch_and_single_graph(toy):
    one = toy.subset([0])
    model = GLocalKD(epochs=2, **{**SMALL, "batch_size": 300}).fit(one)
    assert len(model.score(toy)) == len(toy)


def test_cuda_asked_for_without_gpu(toy):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU; the error path is for machines without one")
    with pytest.raises(GLocalKDError, match="no CUDA GPU"):
        GLocalKD(epochs=1, device="cuda").fit(toy)


def test_a_stop_before_the_first_epoch_ends_fits_nothing(toy):
    """Stop before the first epoch ended gave an untrained model, which the app installed as
    "Trained (stopped after 0 epochs)" in place of the trained one: nothing was learnt, so nothing
    is fitted and ``Stopped`` says so, for a consensus (its GLocalKD) too."""
    from core import Stopped, make_detector

    gcn = {k: v for k, v in SMALL.items() if k not in ("seed", "device")}
    for model in (GLocalKD(epochs=5, **SMALL), make_detector("consensus", component_params={"glocalkd": gcn})):
        with pytest.raises(Stopped, match="before its first epoch ended"):
            model.fit(toy if model.name == "glocalkd" else _many(toy), should_stop=lambda: True)
        with pytest.raises(GLocalKDError, match="not trained yet"):
            model.score(toy)


def _many(toy):
    """Enough graphs for a consensus to hold out its calibration share."""
    return toy.subset([i % len(toy) for i in range(40)])
