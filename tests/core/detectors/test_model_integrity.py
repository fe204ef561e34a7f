"""Model files carry a digest of their contents: a flipped bit is a ModelFileError naming the file,
never a model that scores every molecule inf; contents no model has are refused with or without
a digest; and a non-finite score never reaches a report."""
from __future__ import annotations

import struct
import zipfile

import numpy as np
import pytest
import torch

from core import GLocalKD, ModelFileError, load, make_detector
from core.cli.main import main
from core.data.scores import NonFiniteScoreError, Scores
from core.detectors.model_file import load_detector
from core.runtime.model_files import DIGEST_KEY, read_model_file, state_digest, write_model_file
from tests.conftest import DEMO_DATA

TINY = {"epochs": 2, "hidden_dim": 16, "out_dim": 8, "device": "cpu"}


@pytest.fixture(scope="module")
def herg():
    return load(DEMO_DATA / "herg.tab")


@pytest.fixture(scope="module")
def glocalkd_file(herg, tmp_path_factory):
    path = tmp_path_factory.mktemp("g") / "g.pt"
    GLocalKD(**TINY).fit(herg.subset(range(120))).save(path)
    return path


def _records(path):
    """(name, offset of the data, size) of each tensor record in a torch zip file."""
    data = path.read_bytes()
    out = []
    for info in zipfile.ZipFile(path).infolist():
        if "/data/" in info.filename and info.file_size:
            h = info.header_offset
            name_len, extra_len = struct.unpack("<HH", data[h + 26:h + 30])
            out.append((info.filename, h + 30 + name_len + extra_len, info.file_size))
    return out


def _damaged_copy(path, target, offset, xor_bytes):
    data = bytearray(path.read_bytes())
    for k, x in enumerate(xor_bytes):
        data[offset + k] ^= x
    target.write_bytes(bytes(data))
    return target


def _refused(path, pattern="damaged model file"):
    with pytest.raises(ModelFileError, match=pattern) as info:
        load_detector(path, device="cpu")
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_one_flipped_bit_in_a_weight_is_refused(glocalkd_file, tmp_path):
    weight = torch.load(glocalkd_file, weights_only=True)["predictor"]["convs.0.lin.weight"]
    raw = weight.numpy().tobytes()
    data = glocalkd_file.read_bytes()
    name, offset, size = next(r for r in _records(glocalkd_file) if data[r[1]:r[1] + r[2]] == raw)
    # bit 6 of a float32's last byte: the exponent's top bit, 0.01 becomes about 3e36
    flipped = _damaged_copy(glocalkd_file, tmp_path / "flipped.pt", offset + 3, [1 << 6])
    assert torch.load(flipped, weights_only=True)["predictor"]["convs.0.lin.weight"].isfinite().all()
    _refused(flipped, "do not match the digest")


@pytest.fixture(scope="module")
def consensus_file(herg, tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "c.pt"
    detector = make_detector("consensus", component_params={"glocalkd": TINY, "wl-lesinn": {"ensemble_size": 8}})
    detector.fit(herg.subset(range(150))).save(path)
    return path


def test_eight_flipped_bytes_anywhere_in_a_consensus_file_are_refused(consensus_file, tmp_path):
    path = consensus_file
    records = [r for r in _records(path) if r[2] >= 8]
    assert len(records) > 20
    for _name, offset, size in records:
        _refused(_damaged_copy(path, tmp_path / "bad.pt", offset + size // 2 - 4 if size > 8 else offset, [0xFF] * 8))


def test_a_damaged_component_of_an_older_consensus_file_names_the_file(consensus_file, tmp_path):
    state = torch.load(consensus_file, weights_only=True)
    del state[DIGEST_KEY]
    weights = state["state"]["components"]["glocalkd"]["state"]["target"]
    weights["convs.0.bias"] = weights["convs.0.bias"][:3]
    torch.save(state, tmp_path / "old.pt")
    _refused(tmp_path / "old.pt", "its GLocalKD: damaged model file .target weights do not match")


def test_a_file_without_digest_still_loads_and_scores_the_same(glocalkd_file, herg, tmp_path):
    state = torch.load(glocalkd_file, weights_only=True)
    assert state[DIGEST_KEY] == state_digest(state) and state[DIGEST_KEY].startswith("sha256:")
    del state[DIGEST_KEY]
    torch.save(state, tmp_path / "old.pt")
    other = herg.subset(range(200, 240))
    np.testing.assert_array_equal(load_detector(tmp_path / "old.pt", device="cpu").score(other).score,
                                  load_detector(glocalkd_file, device="cpu").score(other).score)


def test_the_digest_is_the_same_for_the_same_contents_and_sees_every_kind_of_value():
    state = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.zeros(0), "n": 3, "x": 0.5,
             "s": "é", "l": [1, True, None], "t": (1, 2), "d": {"k": torch.tensor(1, dtype=torch.bfloat16)}}
    same = state_digest(state)
    assert same == state_digest({**state, DIGEST_KEY: "anything"}) == state_digest(dict(reversed(state.items())))
    for change in ({"n": 4}, {"x": 0.5000000001}, {"s": "e"}, {"l": [1, 1, None]}, {"t": [1, 2]},
                   {"w": torch.arange(6, dtype=torch.float32).reshape(3, 2)},
                   {"w": torch.arange(6, dtype=torch.float64).reshape(2, 3)}, {"b": torch.zeros(1)}):
        assert state_digest({**state, **change}) != same, change


@pytest.mark.parametrize("digest", [True, False])
def test_an_impossible_sparse_shape_or_index_is_refused(herg, tmp_path, digest):
    """A kernel's training features with a shape of 10^13 columns loaded and crashed when scoring
    with a ValueError; a damaged index pointer made scipy read out of bounds."""
    make_detector("wl-lesinn", ensemble_size=8).fit(herg.subset(range(100))).save(tmp_path / "wl.pt")
    state = torch.load(tmp_path / "wl.pt", weights_only=True)
    state.pop(DIGEST_KEY)

    def write(name, edit):
        damaged = torch.load(tmp_path / "wl.pt", weights_only=True)
        damaged.pop(DIGEST_KEY)
        edit(damaged["state"]["kernel"]["train_features"])
        if digest:
            write_model_file(tmp_path / name, damaged)
        else:
            torch.save(damaged, tmp_path / name)
        return tmp_path / name

    _refused(write("wide.pt", lambda f: f["shape"].__setitem__(1, 10**13)), r"shape \(100, 10000000000000\)")
    _refused(write("tall.pt", lambda f: f["shape"].__setitem__(0, 10**13)))
    _refused(write("index.pt", lambda f: f["indices"]["__array__"].__setitem__(0, 10**6)))
    _refused(write("pointer.pt", lambda f: f["indptr"]["__array__"].__setitem__(5, -7)))


def test_a_non_finite_number_anywhere_is_refused_whatever_the_digest(glocalkd_file, tmp_path):
    state = torch.load(glocalkd_file, weights_only=True)
    state["target"]["convs.1.bias"][2] = float("inf")
    write_model_file(tmp_path / "inf.pt", state)
    with pytest.raises(ModelFileError, match=r"inf.pt: damaged model file \(target/convs.1.bias holds NaN"):
        read_model_file(tmp_path / "inf.pt")
    state = torch.load(glocalkd_file, weights_only=True)
    state["mean_nodes"] = float("nan")
    write_model_file(tmp_path / "nan.pt", state)
    _refused(tmp_path / "nan.pt", "mean_nodes holds NaN")


def test_no_scores_hold_a_non_finite_score():
    """Every path from a model to a report row builds Scores: they cannot hold inf or NaN."""
    with pytest.raises(NonFiniteScoreError, match=r"1 of 3 graphs a non-finite score \(inf"):
        Scores.graph_only(np.array([1.0, np.inf, 2.0]), np.arange(4))
    with pytest.raises(NonFiniteScoreError, match="nan"):
        Scores(np.array([np.nan], dtype=np.float32), *(np.zeros(1, dtype=np.float32),) * 3, np.array([0, 1]))
    assert len(Scores.graph_only(np.array([1.0, 2.0]), np.arange(3))) == 2  # NaN terms are fine


@pytest.fixture
def overflowing_model(glocalkd_file, tmp_path):
    """A model whose file is whole (its digest matches) but whose weights overflow float32."""
    state = torch.load(glocalkd_file, weights_only=True)
    state["predictor"]["convs.0.lin.weight"].fill_(3e38)
    write_model_file(tmp_path / "huge.pt", state)
    return tmp_path / "huge.pt"


def test_a_model_that_overflows_writes_no_report(overflowing_model, herg, tmp_path, capsys):
    """It loaded, and `score` and `screen` wrote every molecule with score inf and exit code 0."""
    with pytest.raises(NonFiniteScoreError):
        load_detector(overflowing_model, device="cpu").score(herg.subset(range(10)))
    smiles = tmp_path / "m.smi"
    smiles.write_text("".join(f"{herg.meta[i].smiles} m{i}\n" for i in range(30)))
    for command in (["score"], ["screen", "--workers", "1"]):
        out = tmp_path / f"{command[0]}.csv"
        capsys.readouterr()
        rc = main([*command, str(overflowing_model), str(smiles), "-o", str(out)])
        err = capsys.readouterr().err
        assert rc == 2 and "non-finite score" in err and "Traceback" not in err, err
        assert not out.exists()


@pytest.mark.parametrize("name", ["m.csv", "m.SDF", "m.pt.gz", "m.smi"])
def test_no_model_file_is_written_under_a_data_formats_name(herg, tmp_path, name):
    """The one writer of model files refuses a name that promises a table, a structure file or a
    compressed file: the app's Open and every other reader took it for one."""
    from core import GLocalKDError

    model = make_detector("size").fit(herg.subset(range(60)))
    with pytest.raises(GLocalKDError, match=r"name it \.pt"):
        model.save(tmp_path / name)
    assert not (tmp_path / name).exists()
    model.save(tmp_path / "m.model")  # any other suffix is the user's choice
    assert load_detector(tmp_path / "m.model").name == "size"


def test_a_model_file_whose_label_values_are_out_of_order_is_refused(aids_zip, tmp_path):
    """The node features look labels up by binary search: values ``[2, 0, 1]`` in a file written with
    a good digest scored silently with wrong features."""
    model = GLocalKD(**TINY).fit(load(aids_zip).subset(range(40)))
    model.save(tmp_path / "m.pt")
    state = read_model_file(tmp_path / "m.pt")
    state.pop(DIGEST_KEY, None)
    values = state["schema"]["label_values"]
    state["schema"]["label_values"] = values[1:] + values[:1]
    write_model_file(tmp_path / "bad.pt", state)
    with pytest.raises(ModelFileError, match=r"bad\.pt.*not sorted"):
        load_detector(tmp_path / "bad.pt")


@pytest.mark.parametrize("kind", ["glocalkd", "size"])
def test_a_model_file_with_an_empty_calibration_is_refused_by_its_name(herg, tmp_path, kind):
    """Empty calibration scores loaded, and the first p-value failed with a message that named no file."""
    from core.detectors.conformal import fit_calibrated

    model = GLocalKD(**TINY) if kind == "glocalkd" else make_detector("size")
    fit_calibrated(model, herg.subset(range(120)), 0.2)
    model.save(tmp_path / "m.pt")
    state = read_model_file(tmp_path / "m.pt")
    state.pop(DIGEST_KEY, None)
    state["calibration_scores"] = torch.zeros(0, dtype=torch.float64) if kind == "glocalkd" else []
    write_model_file(tmp_path / "empty.pt", state)
    with pytest.raises(ModelFileError, match=r"empty\.pt"):
        load_detector(tmp_path / "empty.pt")


def test_graphs_a_model_overflows_on_are_rejected_and_the_others_scored(tmp_path, capsys):
    """Two TU graphs of finite but huge node attributes (1e30) ended `score` of 30 graphs with no
    report, and the message blamed the model file: they are now rejected with the reason, the
    others scored; a model that overflows on every graph still writes nothing."""
    from core import GLocalKD, load, save_detector
    from core.detectors.stoppable_scoring import OVERFLOW
    from tests.conftest import ring, write_tu

    rng = np.random.default_rng(0)
    graphs = [(int(n), ring(int(n)), int(k % 5 > 0)) for k, n in enumerate(rng.integers(4, 10, size=30))]
    normal = write_tu(tmp_path / "n" / "ATT", "ATT", graphs, attributes=True)
    odd = write_tu(tmp_path / "o" / "ATT", "ATT", graphs, attributes=True)
    values = (odd / "ATT_node_attributes.txt").read_text().splitlines()
    first, third = int(graphs[0][0]), sum(g[0] for g in graphs[:2])  # the first nodes of graphs 2 and 3
    values[first] = "1e30, " + values[first].split(",", 1)[1]  # two attributes a node: the first made huge
    values[third] = "-3e38, " + values[third].split(",", 1)[1]
    (odd / "ATT_node_attributes.txt").write_text("\n".join(values) + "\n")
    model = GLocalKD(epochs=2, hidden_dim=8, out_dim=4, device="cpu").fit(load(normal))
    save_detector(model, tmp_path / "m.pt")
    out = tmp_path / "r.csv"
    assert main(["score", str(tmp_path / "m.pt"), str(odd), "-o", str(out)]) == 0, capsys.readouterr().err
    rows = out.read_text().splitlines()
    assert sum(",ok," in r for r in rows) == 28
    assert [r.split(",")[1] for r in rows if "rejected" in r] == ["2", "3"]
    assert all(OVERFLOW in r for r in rows if "rejected" in r)
