"""Property-based: random bytes and near-valid files never make a loader raise anything but
the project's own error type, and every row it read is either a graph or a reject."""
import gzip
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import GLocalKDError, load
from tests.conftest import sdf_ethanol

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=True)

SMILES = ["CCO", "c1ccccc1", "CC(=O)[O-].[Na+]", "[CH3]", "C", "[U]", "N#N", "C1CC1", "O=C=O",
          "C[N+](C)(C)C", "c1ccncc1", "CC(C)(C)Br"]
NOISE = st.sampled_from(list(",;\t|\"'#()[]=+-@%0123456789 \\/*.:$\r\n\x00\xe9\ufeff") + ["C", "c1", "xyz"])


def _check(path: Path, **kwargs) -> None:
    try:
        graphs = load(path, **kwargs)
    except GLocalKDError:
        return
    lines = [m.line for m in graphs.meta] + [r.line for r in graphs.rejects]
    assert len(graphs) + len(graphs.rejects) > 0
    if graphs.format != "tu":
        assert all(isinstance(n, int) and n >= 1 for n in lines)
        assert len(lines) == len(set(lines))  # no row counted twice
    for g in graphs.graphs:
        assert g.num_nodes >= 1
        if g.edge_index.numel():
            assert int(g.edge_index.max()) < g.num_nodes and int(g.edge_index.min()) >= 0


_ROOT: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _fuzz_root(tmp_path_factory):
    """One pytest-managed folder for all examples (function-scoped tmp_path does not suit hypothesis)."""
    _ROOT.append(tmp_path_factory.mktemp("fuzz"))
    yield
    _ROOT.pop()


def _folder() -> Path:
    return Path(tempfile.mkdtemp(dir=_ROOT[-1]))


def _write(name: str, data: bytes, gz: bool = False) -> Path:
    folder = _folder()
    path = folder / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@FUZZ
@given(data=st.binary(max_size=600), suffix=st.sampled_from([".csv", ".tsv", ".smi", ".sdf", ".tab"]),
       gz=st.booleans())
def test_random_bytes(data, suffix, gz):
    _check(_write("x" + suffix, data, gz))


@st.composite
def mutated(draw, text: str) -> str:
    """``text`` with a few random insertions, deletions and replacements."""
    chars = list(text)
    for _ in range(draw(st.integers(0, 6))):
        if not chars:
            break
        i = draw(st.integers(0, len(chars) - 1))
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        if op == "insert":
            chars.insert(i, draw(NOISE))
        elif op == "delete":
            del chars[i]
        else:
            chars[i] = draw(NOISE)
    return "".join(chars)


@st.composite
def smiles_file(draw) -> str:
    lines = []
    for _i in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["mol", "mol", "mol", "blank", "comment"]))
        if kind == "mol":
            lines.append(f"{draw(st.sampled_from(SMILES))} {draw(st.sampled_from(['', 'id', 'a b', 'x,y']))}")
        else:
            lines.append("" if kind == "blank" else "# note")
    return draw(mutated("\n".join(lines)))


@FUZZ
@given(text=smiles_file(), encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "utf-16"]))
def test_near_valid_smiles_files(text, encoding):
    _check(_write("x.smi", text.encode(encoding, errors="replace")))


@st.composite
def table_file(draw) -> tuple[str, str]:
    delimiter = draw(st.sampled_from([",", "\t", ";"]))
    header = draw(st.permutations(["id", "smiles", "label"]))
    rows = [delimiter.join(header)]
    for i in range(draw(st.integers(0, 8))):
        values = {"id": draw(st.sampled_from([f"m{i}", '"a,b"', '"q ""x"""', "", '"multi\nline"'])),
                  "smiles": draw(st.sampled_from(SMILES + ["", "C1CC", "CC O"])),
                  "label": draw(st.sampled_from(["0", "1", "", "nan", "1.0"]))}
        rows.append(delimiter.join(values[h] for h in header))
    return draw(mutated("\r\n".join(rows) if draw(st.booleans()) else "\n".join(rows))), delimiter


@FUZZ
@given(table=table_file(), suffix=st.sampled_from([".csv", ".tsv", ".txt"]))
def test_near_valid_tables(table, suffix):
    text, _ = table
    _check(_write("x" + suffix, text.encode("utf-8", errors="replace")))




@FUZZ
@given(records=st.lists(st.tuples(st.sampled_from(["a", "", "x y"]), st.sampled_from(["0", "1", ""])),
                        max_size=4),
       data=st.data())
def test_near_valid_sdf(records, data):
    text = "".join(sdf_ethanol(title=t, value=label) for t, label in records)
    _check(_write("x.sdf", data.draw(mutated(text)).encode("utf-8", errors="replace")))


def _tu_texts(graphs):
    a, ind, glab, nlab, attr = [], [], [], [], []
    offset = 0
    for g, (n, label) in enumerate(graphs, start=1):
        for j in range(n - 1):
            a += [f"{offset + j + 1}, {offset + j + 2}", f"{offset + j + 2}, {offset + j + 1}"]
        for j in range(n):
            ind.append(str(g))
            nlab.append(str(j % 3))
            attr.append(f"{j * 0.5}, {g}")
        glab.append(str(label))
        offset += n
    return {"A": a, "graph_indicator": ind, "graph_labels": glab, "node_labels": nlab, "node_attributes": attr}


@FUZZ
@given(graphs=st.lists(st.tuples(st.integers(1, 4), st.integers(0, 1)), min_size=1, max_size=4),
       target=st.sampled_from(["A", "graph_indicator", "graph_labels", "node_labels", "node_attributes"]),
       data=st.data())
def test_near_valid_tu(graphs, target, data):
    folder = _folder() / "T"
    folder.mkdir()
    texts = _tu_texts(graphs)
    for name, lines in texts.items():
        text = "\n".join(lines) + "\n"
        if name == target:
            text = data.draw(mutated(text))
        (folder / f"T_{name}.txt").write_bytes(text.encode("utf-8", errors="replace"))
    if data.draw(st.booleans()):
        (folder / f"T_{data.draw(st.sampled_from(list(texts)))}.txt").unlink(missing_ok=True)
    _check(folder)
