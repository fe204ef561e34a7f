"""Training edge cases and model files that are not ours: plain project errors, never a crash."""
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from core import DataError, GLocalKD, GLocalKDError, ModelFileError, ParameterError, SchemaMismatchError, Stopped, load
from core.data.graphset import GraphMeta, GraphSet
from core.detectors.glocalkd import MODEL_VERSION
from core.runtime.model_files import DIGEST_KEY, write_model_file
from tests.conftest import path, ring, write_tu

SMALL = dict(hidden_dim=8, out_dim=4, batch_size=4, lr=1e-2, seed=0, device="cpu")


def _set(graphs):
    return GraphSet(graphs, [GraphMeta(id=str(i), line=i + 1) for i in range(len(graphs))], source="mem")


def _attr_graph(value, n=3):
    return Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=n, node_attr=torch.full((n, 2), value))


@pytest.fixture
def toy(tmp_path):
    graphs = [(4 + i % 3, ring(4 + i % 3), 1) for i in range(9)] + [(5, path(5), 0) for _ in range(3)]
    return load(write_tu(tmp_path / "TOY", "TOY", graphs))


def test_fewer_graphs_than_the_batch_and_a_single_graph(toy):
    for graphs in (toy.subset([0, 1, 2]), toy.subset([5])):
        model = GLocalKD(epochs=3, **{**SMALL, "batch_size": 300}).fit(graphs)
        assert len(model.loss_history_) == 3 and np.isfinite(model.loss_history_).all()
        assert len(model.score(toy)) == len(toy)


def test_identical_graphs_score_identically(toy):
    same = toy.subset([0] * 6)
    scores = GLocalKD(epochs=3, **SMALL).fit(same).score(same).score
    assert np.isfinite(scores).all() and np.allclose(scores, scores[0])


def test_zero_variance_features(toy):
    flat = _set([_attr_graph(0.0) for _ in range(5)])
    model = GLocalKD(epochs=2, features="attributes", **SMALL).fit(flat)
    assert np.isfinite(model.score(flat).score).all()
    constant = _set([_attr_graph(3.0) for _ in range(5)])
    assert np.isfinite(GLocalKD(epochs=2, **SMALL).fit(constant).score(constant).score).all()


def test_non_finite_attributes_are_refused_not_trained_on(toy):
    hand_made = _set([_attr_graph(1.0), _attr_graph(float("nan")), _attr_graph(float("inf"))])
    model = GLocalKD(epochs=1, **SMALL)
    with pytest.raises(DataError, match="graph 1 has NaN or infinite node features"):
        model.fit(hand_made)
    assert not hasattr(model, "predictor_")
    trained = GLocalKD(epochs=1, **SMALL).fit(hand_made.subset([0]))
    with pytest.raises(DataError, match=r"mem:3: graph 2 has NaN or infinite"):
        trained.score(hand_made.subset([0, 2]))


def test_overflowing_attributes_diverge_with_a_message():
    huge = _set([_attr_graph(1e30) for _ in range(4)])
    model = GLocalKD(epochs=3, **SMALL)
    with pytest.raises(GLocalKDError, match="training diverged: the loss became (inf|nan) in epoch 1"):
        model.fit(huge)
    with pytest.raises(GLocalKDError, match="not trained"):
        model.score(huge)


def test_a_model_that_overflows_on_its_own_training_graphs_is_said_to_have_diverged(tmp_path):
    """A learning rate of 1e9 gave finite losses and then infinite scores of the training graphs,
    and the message blamed "a damaged or edited model file" where no file was involved."""
    path = tmp_path / "three.smi"
    path.write_text("CCO a\nCCN b\nc1ccccc1 c\n")
    model = GLocalKD(epochs=1, **{**SMALL, "lr": 1e9})
    with pytest.raises(GLocalKDError, match="^training diverged: the trained model scores graphs NaN or infinite; "
                                            "lower the learning rate") as info:
        model.fit(load(path))
    assert "model file" not in str(info.value)
    with pytest.raises(GLocalKDError, match="not trained"):
        model.score(load(path))


def test_a_failure_inside_fit_is_an_exception_and_leaves_no_half_model(toy, monkeypatch):
    model = GLocalKD(epochs=3, **SMALL)

    def broken(*args, **kwargs):
        raise RuntimeError("simulated kernel failure")

    monkeypatch.setattr(GLocalKD, "_errors", broken)
    with pytest.raises(GLocalKDError, match=r"training failed \(RuntimeError: simulated kernel failure\)"):
        model.fit(toy)
    assert not hasattr(model, "predictor_") and not hasattr(model, "schema_")

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(GLocalKD, "_errors", no_memory)
    with pytest.raises(GLocalKDError, match=r"training failed \(out of memory\)"):
        model.fit(toy)


def test_a_failure_while_scoring_is_an_exception(toy, monkeypatch):
    model = GLocalKD(epochs=1, **SMALL).fit(toy)

    def no_memory(*args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(GLocalKD, "_errors", no_memory)
    with pytest.raises(GLocalKDError, match=r"scoring failed \(out of memory\)"):
        model.score(toy)


def test_a_callback_error_is_passed_on_unchanged(toy):
    class Cancelled(Exception):
        pass

    def on_epoch(info):
        raise Cancelled("from the caller")

    model = GLocalKD(epochs=3, **SMALL)
    with pytest.raises(Cancelled, match="from the caller"):
        model.fit(toy, on_epoch=on_epoch)
    assert not hasattr(model, "predictor_")
    trained = GLocalKD(epochs=1, **SMALL).fit(toy)
    with pytest.raises(Cancelled):
        trained.score(toy, batch_size=4, on_progress=lambda done, total: on_epoch(None))


def _stop_at(call):
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) >= call
    return should_stop


def test_should_stop_in_the_first_and_in_the_last_epoch(toy):
    batches = -(-len(toy) // SMALL["batch_size"])  # 3 batches per epoch
    first = GLocalKD(epochs=4, **SMALL)
    with pytest.raises(Stopped, match="before its first epoch ended"):  # nothing learnt: no model (was an untrained one)
        first.fit(toy, should_stop=_stop_at(2))
    with pytest.raises(GLocalKDError, match="not trained yet"):
        first.score(toy)
    epochs = []
    last = GLocalKD(epochs=4, **SMALL).fit(toy, on_epoch=epochs.append, should_stop=_stop_at(3 * batches + 2))
    assert last.stopped_early_ and len(last.loss_history_) == 3 and [e.epoch for e in epochs] == [1, 2, 3]
    never = GLocalKD(epochs=4, **SMALL).fit(toy, should_stop=lambda: False)
    assert not never.stopped_early_ and len(never.loss_history_) == 4


@pytest.mark.parametrize("setting", [dict(epochs=0), dict(epochs=2.5), dict(epochs="3"), dict(batch_size=0),
                                     dict(hidden_dim=True), dict(lr=float("nan")), dict(lam=-1),
                                     dict(features="colour")])
def test_invalid_settings(toy, setting):
    key = next(iter(setting))
    with pytest.raises(ParameterError, match=f"invalid setting: {key} must be ") as failure:
        GLocalKD(**{**SMALL, **setting}).fit(toy)
    assert failure.value.params == (key,)


def test_unknown_device(toy):
    with pytest.raises(GLocalKDError, match="device must be 'auto', 'cpu', 'cuda' or 'cuda:N', not 'tpu'"):
        GLocalKD(epochs=1, **{**SMALL, "device": "tpu"}).fit(toy)


# ------------------------------------------------------------------ model files
@pytest.fixture
def saved(toy, tmp_path):
    model = GLocalKD(epochs=1, **SMALL).fit(toy)
    model.save(tmp_path / "m.pt")
    return tmp_path / "m.pt", torch.load(tmp_path / "m.pt", weights_only=True)


def _refused(path, pattern="."):
    with pytest.raises(ModelFileError, match=pattern) as info:
        GLocalKD.load(path, device="cpu")
    assert "\n" not in str(info.value)
    return info.value


def test_files_that_are_not_ours(tmp_path, saved):
    data = saved[0].read_bytes()
    cases = {"empty.pt": b"", "text.pt": b"hello, world\n", "csv.pt": b"id,smiles\nA,CCO\n",
             "zip.pt": b"PK\x05\x06" + bytes(18), "random.pt": bytes(range(256)) * 8,
             "trunc.pt": data[: len(data) // 2], "tail.pt": data[:-100], "header.pt": data[:64]}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        _refused(tmp_path / name, "not a GLocalKD Studio model file|damaged")
    torch.save([1, 2, 3], tmp_path / "list.pt")
    torch.save({"format": "someone-else/model", "version": 1}, tmp_path / "theirs.pt")
    torch.save(torch.zeros(3), tmp_path / "tensor.pt")
    for name in ("list.pt", "theirs.pt", "tensor.pt"):
        _refused(tmp_path / name, "not a GLocalKD Studio model file")
    _refused(tmp_path / "nothing.pt", "no such model file")
    _refused(tmp_path, "a folder, not a model file")


def _write(path, state, digest):
    """A hand-made model file: with a digest that matches its contents (as the writer of any
    version makes it), or with none (as files written before the digest)."""
    if digest:
        write_model_file(path, state)
    else:
        torch.save({k: v for k, v in state.items() if k != DIGEST_KEY}, path)


@pytest.mark.parametrize("digest", [True, False])
def test_older_and_newer_versions(tmp_path, saved, digest):
    _, state = saved
    for version, pattern in ((0, "version 0 is not read by this release .* train the model again"),
                             (MODEL_VERSION + 1, f"version {MODEL_VERSION + 1} was written by a newer"),
                             ("1", "version entry is '1', not a version number"), (True, "version entry is True"),
                             (None, "version entry is None, not a version number")):
        _write(tmp_path / "v.pt", {**state, "version": version}, digest)
        _refused(tmp_path / "v.pt", pattern)


@pytest.mark.parametrize("damage", [
    lambda s: s.pop("predictor"),
    lambda s: s.update(params={**s["params"], "hidden_dim": 10**9}),
    lambda s: s.update(params={**s["params"], "colour": "red"}),
    lambda s: s.update(params="nonsense"),
    lambda s: s.update(schema={"mode": "telepathy"}),
    lambda s: s.update(schema={**s["schema"], "label_values": [1, 2, 3, 4, 5, 6, 7]}),
    lambda s: s.update(target={k: v[:1] for k, v in s["target"].items()}),
    lambda s: s.update(train_scores=[1.0, 2.0]),
    lambda s: s.update(train_scores="x"),
    lambda s: s.update(train_scores=torch.tensor([float("nan")] * len(s["train_scores"]))),
    lambda s: s.update(train_scores=torch.zeros(0)),  # loaded, then threshold() failed with a bare IndexError
    lambda s: s.update(calibration_scores=torch.tensor([1.0, float("inf")], dtype=torch.float64)),
])
@pytest.mark.parametrize("digest", [True, False])
def test_damaged_contents(tmp_path, saved, damage, digest):
    """Contents no model has are refused whether or not the file's digest matches them."""
    _, state = saved
    state = {**state}
    damage(state)
    _write(tmp_path / "d.pt", state, digest)
    _refused(tmp_path / "d.pt", "damaged model file|not a GLocalKD")


def test_a_different_feature_schema(toy, tmp_path):
    attributed = load(write_tu(tmp_path / "A", "A", [(4, ring(4), 1)] * 3, attributes=True))
    model = GLocalKD(epochs=1, features="attributes", **SMALL).fit(attributed)
    model.save(tmp_path / "attr.pt")
    again = GLocalKD.load(tmp_path / "attr.pt", device="cpu")
    with pytest.raises(SchemaMismatchError, match="expects 2 node attributes per node, this data has none"):
        again.score(toy)
    wider = load(write_tu(tmp_path / "W", "W", [(4, ring(4), 1)] * 2, attributes=True))
    for g in wider.graphs:
        g.node_attr = torch.cat([g.node_attr, g.node_attr], dim=1)
    with pytest.raises(SchemaMismatchError, match="expects 2 node attributes per node, this data has 4"):
        again.score(wider)


def test_a_failed_save_leaves_no_temporary_file(toy, tmp_path, monkeypatch):
    model = GLocalKD(epochs=1, **SMALL).fit(toy)
    model.save(tmp_path / "m.pt")
    before = (tmp_path / "m.pt").read_bytes()

    def broken_save(obj, f, *args, **kwargs):  # f: the open temporary file
        f.write(b"partial") if hasattr(f, "write") else Path(f).write_bytes(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        model.save(tmp_path / "m.pt")
    assert (tmp_path / "m.pt").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["TOY", "m.pt"]


@pytest.mark.parametrize("version, pattern", [(0, "version 0 is not read by this release"),
                                              (2, "version 2 was written by a newer GLocalKD Studio"),
                                              ("1", "version entry is '1', not a version number")])
def test_every_kind_of_model_file_reads_its_version_by_one_rule(toy, tmp_path, version, pattern):
    """A detector's file (here graph size's) and GLocalKD's say the same of a version they cannot
    read: a newer one said "not supported" without saying to update, and "1" read as version 1."""
    from core import load_detector, make_detector

    make_detector("size").fit(toy).save(tmp_path / "size.pt")
    state = torch.load(tmp_path / "size.pt", weights_only=True)
    write_model_file(tmp_path / "size.pt", {**state, "version": version})
    with pytest.raises(ModelFileError, match=pattern) as info:
        load_detector(tmp_path / "size.pt", device="cpu")
    assert str(tmp_path / "size.pt") in str(info.value)


def test_embeddings_of_no_graphs_and_subsets_by_position_only(toy):
    """``graph_embeddings`` of an empty set failed inside torch (score answered it); ``subset`` took
    ``True`` for graph 1 and failed inside numpy on a boolean mask."""
    model = GLocalKD(epochs=1, **SMALL).fit(toy)
    for network in ("predictor", "target", "difference"):
        assert model.graph_embeddings(toy.subset([]), network).shape == (0, SMALL["out_dim"])
    with pytest.raises(IndexError, match="positions"):
        toy.subset([True, False, True])
    with pytest.raises(IndexError, match="positions"):
        toy.subset(np.array([True] * len(toy)))
    with pytest.raises(IndexError, match="not one of this set's 12 graphs"):
        toy.subset([99])
    assert len(toy.subset(np.flatnonzero(np.arange(len(toy)) % 2))) == 6


@pytest.mark.parametrize("name", ["size", "wl-lesinn"])
@pytest.mark.parametrize("scores", [[], [float("nan")]])
def test_every_kind_of_model_file_refuses_empty_or_non_finite_training_scores(tmp_path, toy, name, scores):
    """GLocalKD's file and every other detector's are read by one check of their reference scores."""
    from core import load_detector, make_detector
    from core.data.serialization import decode_state, encode_state
    from core.runtime.model_files import read_model_file

    make_detector(name).fit(toy).save(tmp_path / "m.pt")
    state = read_model_file(tmp_path / "m.pt")
    inner = decode_state(state["state"])
    inner["train_scores"] = np.asarray(scores, dtype=np.float64)
    write_model_file(tmp_path / "d.pt", {**state, "state": encode_state(inner)})
    with pytest.raises(ModelFileError, match="damaged model file .*(training scores|train_scores)"):
        load_detector(tmp_path / "d.pt", device="cpu")

