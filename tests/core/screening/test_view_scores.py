"""A ranked report's view columns (``--view-scores``): each view's raw score, carried from the
scoring through the chunk files, ``--top`` and the shard merge to ``read_report``, from which a
review re-ranks without scoring the rows again."""
from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest

from core import DataError, Review, apply_marks, load, load_detector, make_detector, read_report, report_graphs, write_report
from core.cli.main import main
from core.io.report import COLUMNS, extra_columns, header_extras
from core.screening.merge import merge_reports
from core.screening.pipeline import screen

pytestmark = pytest.mark.usefixtures("no_hang")

VIEWS = ["glocalkd", "wl-lesinn", "size", "wl-count-lesinn"]  # the components, then the reserve view


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    from tests.conftest import RESOURCES

    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        rows = [line.strip() for line in fh][1:401]
    rows[10] = "C1CC"  # unclosed ring
    rows[200] = "not_a_molecule"
    path = tmp_path_factory.mktemp("lib") / "lib.smi"
    path.write_text("smiles name\n" + "\n".join(f"{s} mol{k}" for k, s in enumerate(rows)) + "\n")
    return path


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, library):
    """An unweighed consensus: it does not combine its reserve view, so only the view columns score it."""
    path = tmp_path_factory.mktemp("model") / "consensus.pt"
    model = make_detector("consensus", seed=0, component_params={
        "glocalkd": {"epochs": 1, "hidden_dim": 16, "out_dim": 8, "device": "cpu"}})
    model.fit(load(library).subset(range(300))).save(path)
    return path


@pytest.fixture(scope="module")
def model(model_file):
    return load_detector(model_file, device="cpu")


def _table(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _run(kind, client, model_file, library, out, **options):
    if kind == "local":
        return screen(load_detector(model_file, device="cpu"), library, out, chunk_size=37, workers=2, **options)
    from core.screening.cluster import screen_on_cluster

    return screen_on_cluster(model_file, [library], out, client, chunk_size=37, device="cpu", **options)


@pytest.fixture(scope="module")
def plain(tmp_path_factory, model_file, library):
    out = tmp_path_factory.mktemp("plain") / "plain.csv"
    screen(load_detector(model_file, device="cpu"), library, out, chunk_size=37, workers=2)
    return out


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_the_view_columns_are_each_views_own_scores_and_change_no_other_cell(kind, request, model_file, model,
                                                                            library, plain, tmp_path):
    if kind == "dask":
        pytest.importorskip("distributed")
    client = request.getfixturevalue("client") if kind == "dask" else None
    out = tmp_path / "views.csv"
    _run(kind, client, model_file, library, out, view_scores=True)
    with_views, without = _table(out), _table(plain)
    assert with_views[0] == [*COLUMNS, *(f"view:{v}" for v in VIEWS)] and model.views == VIEWS
    width = len(COLUMNS)
    # every other cell byte for byte the same (the final scores bitwise too), rejected rows' view cells empty
    assert [row[:width] for row in with_views[:-1]] == [row[:width] for row in without[:-1]]
    assert with_views[-1][10].split("; ")[:2] == without[-1][10].split("; ")[:2]  # rows, model; not the digest
    rejected = [row for row in with_views[1:-1] if row[10] != "ok"]
    assert len(rejected) == 2 and all(row[width:] == [""] * 4 for row in rejected)

    report = read_report(out)
    assert list(report.view_scores) == VIEWS and report.model_fingerprint == model.fingerprint()
    graphs = report_graphs(report)
    for name in VIEWS:
        own = model.components_[name].score(graphs).score
        assert own.dtype == np.float32
        np.testing.assert_array_equal(report.view_scores[name], own.astype(np.float64))
    cells = [row[width:] for row in with_views[1:len(report) + 1]]
    assert all(np.float32(float(text)) == np.float32(report.view_scores[VIEWS[k]][i])
               for i, row in enumerate(cells) for k, text in enumerate(row))


@pytest.mark.parametrize("weighed", [False, True])
def test_a_chunks_scores_are_bitwise_the_same_with_the_view_scores(model_file, library, weighed):
    """Asking for the views' scores scores the reserve views in the parsing workers too, and
    changes no bit of the combined scores, terms or node errors."""
    from core.screening import featurize, pipeline, scoring

    model = load_detector(model_file, device="cpu")
    if weighed:  # it combines its reserve view too
        model.weigh_views(load(library).subset(range(300, 340)))
    rows = list(pipeline.iter_smiles_rows(library))
    plain = featurize.featurize_chunk(rows, (), featurize.worker_views(model))
    every = featurize.featurize_chunk(rows, (), featurize.worker_views(model, every=True))
    assert set(every["view_scores"]) == {"wl-lesinn", "size", "wl-count-lesinn"} | ({"known-classifier"} if weighed
                                                                                     else set())
    assert set(plain["view_scores"]) == set(model.scored_views()) - {"glocalkd"}
    without = scoring.score_chunk(model, plain, 64)
    with_views = scoring.score_chunk(model, every, 64, views=tuple(model.views))
    assert len(without) == 5 and len(with_views) == 6
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(without, with_views[:5]))
    graphs = scoring.chunk_graphs(every)
    assert list(with_views[5]) == VIEWS
    for name in VIEWS:
        np.testing.assert_array_equal(with_views[5][name], model.components_[name].score(graphs).score)


def test_a_review_from_the_reports_view_scores_is_the_review_of_its_graphs(model, library, tmp_path):
    screen(model, library, tmp_path / "r.csv", chunk_size=64, workers=1, view_scores=True)
    report = read_report(tmp_path / "r.csv")
    graphs = report_graphs(report)
    for marks in ({}, {0: False, 4: False}, {1: True, 2: True, 7: True, 3: False}):
        direct = apply_marks(Review(model, graphs), marks).rerank()
        read = apply_marks(Review.from_view_scores(model, report.view_scores), marks).rerank()
        np.testing.assert_array_equal(read.statistic, direct.statistic)
        np.testing.assert_array_equal(read.p_values, direct.p_values)
        assert read.weights == direct.weights and read.known_auc == direct.known_auc
    assert marks and direct.known_auc is not None  # the last marks weighed the views


def test_a_review_from_view_scores_refuses_what_it_cannot_do(model):
    from core import GLocalKDError

    scores = {v: np.zeros(3) for v in VIEWS}
    assert Review.from_view_scores(model, scores).size == 3
    with pytest.raises(GLocalKDError, match="view"):
        Review.from_view_scores(model, {v: np.zeros(3) for v in VIEWS[:-1]})
    with pytest.raises(GLocalKDError, match="graphs"):
        Review.from_view_scores(model, scores, similarity=True)
    with pytest.raises(GLocalKDError, match="graphs"):
        Review.from_view_scores(model, scores, classifier=True)
    with pytest.raises(GLocalKDError, match="length"):
        Review.from_view_scores(model, {**scores, "size": np.zeros(4)})
    with pytest.raises(GLocalKDError, match="no score"):
        Review.from_view_scores(model, {**scores, "size": np.array([0.0, np.nan, 1.0])})


def test_a_report_written_in_memory_carries_the_view_columns_too(model, library, tmp_path):
    """``write_report`` (``glocalkd score`` of a TU collection, the app's other files) writes the
    same columns, the reserve view scored for them."""
    from core import write_report

    graphs = load(library)
    scores = model.score(graphs)
    views = model.view_scores(graphs, scores)
    assert list(views) == VIEWS
    write_report(tmp_path / "m.csv", graphs, scores, view_scores=views)
    write_report(tmp_path / "plain.csv", graphs, scores)
    report = read_report(tmp_path / "m.csv")
    order = scores.ranking()
    for name in VIEWS:
        np.testing.assert_array_equal(report.view_scores[name], model.components_[name].score(graphs).score[order])
    width = len(COLUMNS)
    # the same rows (the end rows differ: their digests are of other bytes)
    assert [r[:width] for r in _table(tmp_path / "m.csv")[:-1]] == [r[:width] for r in _table(tmp_path / "plain.csv")[:-1]]
    assert report.intact and report.model_fingerprint == ""  # an end row that names no model unless named

    # named, the report ends as a screened one does: the rows, the model, a digest of the bytes before
    import hashlib

    from core.io.report import parse_end_row

    write_report(tmp_path / "named.csv", graphs, scores, view_scores=views, model=model.fingerprint())
    assert read_report(tmp_path / "named.csv").model_fingerprint == model.fingerprint()
    text = (tmp_path / "named.csv").read_bytes()
    body, last = text[:text.rstrip(b"\r\n").rfind(b"\n") + 1], _table(tmp_path / "named.csv")[-1]
    unnamed = (tmp_path / "m.csv").read_bytes()
    assert body == unnamed[:unnamed.rstrip(b"\r\n").rfind(b"\n") + 1]
    assert parse_end_row(last) == (len(graphs) + len(graphs.rejects), model.fingerprint(),
                                   hashlib.sha256(body).hexdigest()[:16], None, None, "", "")


def test_top_and_the_shard_merge_keep_the_view_columns(model, library, tmp_path):
    full = tmp_path / "full.csv"
    screen(model, library, full, chunk_size=50, workers=2, view_scores=True, properties=True)
    whole = read_report(full)
    by_id = {i: k for k, i in enumerate(whole.ids)}

    top = tmp_path / "top.csv"
    screen(model, library, top, chunk_size=50, workers=2, view_scores=True, properties=True, top=25)
    best = read_report(top)
    assert len(best) == 25 and _table(top)[0] == _table(full)[0]  # properties (made at the merge), then views
    rows = [by_id[i] for i in best.ids]
    for name in VIEWS:
        np.testing.assert_array_equal(best.view_scores[name], whole.view_scores[name][rows])
    for name, values in best.properties.items():
        np.testing.assert_array_equal(values, whole.properties[name][rows])

    lines = library.read_text().splitlines()
    shards = []
    for k, part in enumerate((lines[1:180], lines[180:])):
        shard = tmp_path / f"shard{k}.smi"
        shard.write_text("\n".join([lines[0], *part]) + "\n")
        screen(model, shard, tmp_path / f"shard{k}.csv", chunk_size=50, workers=1, view_scores=True,
               properties=True)
        shards.append(tmp_path / f"shard{k}.csv")
    merge_reports(shards, tmp_path / "merged.csv")
    merged = read_report(tmp_path / "merged.csv")
    assert sorted(merged.ids) == sorted(whole.ids) and merged.model_fingerprint == whole.model_fingerprint
    rows = [by_id[i] for i in merged.ids]
    for name in VIEWS:
        np.testing.assert_array_equal(merged.view_scores[name], whole.view_scores[name][rows])
    screen(model, shards[0].with_suffix(".smi"), tmp_path / "plain0.csv", chunk_size=50, workers=1, properties=True)
    from core import DataError

    with pytest.raises(DataError, match="--view-scores"):  # shards screened with and without the columns
        merge_reports([tmp_path / "plain0.csv", shards[1]], tmp_path / "mixed.csv")


def test_a_report_is_intact_only_as_its_model_wrote_it(model, model_file, library, tmp_path):
    """The end row's count and digest vouch for the rows before it (the app then trusts the view
    scores): any edit, a row lost or a row added after the end row, and the report is not intact."""
    out = tmp_path / "s.csv"
    _run("local", None, model_file, library, out, view_scores=True)
    report = read_report(out)
    assert report.intact and report.model_fingerprint == model.fingerprint()
    rows = _table(out)
    graphs = load(library)
    write_report(tmp_path / "m.csv", graphs, model.score(graphs), model=model.fingerprint())
    assert read_report(tmp_path / "m.csv").intact
    write_report(tmp_path / "detector.csv", graphs, model.score(graphs), model=model)  # the detector names itself
    assert read_report(tmp_path / "detector.csv").model_fingerprint == model.fingerprint()
    # written without its model, a report still ends with its end row (it had none, and a merge called it
    # cut short); its rows are vouched for, but it names no model: a merge refuses it, saying how to name it
    write_report(tmp_path / "unnamed.csv", graphs, model.score(graphs))
    unnamed = read_report(tmp_path / "unnamed.csv")
    assert unnamed.intact and unnamed.model_fingerprint == ""
    # worded for the API's user and the app's, whose export of some of a report's rows may be the file given
    with pytest.raises(DataError, match=r"does not name the model that scored it \(a report written by write_report "
                       r"without model=, or a part of a report exported from the app\), so a merge .*: screen the "
                       r"shard \(from the API, write_report\(\.\.\., model=detector\) names it\)"):
        merge_reports([tmp_path / "unnamed.csv"], tmp_path / "merged.csv")
    merge_reports([tmp_path / "detector.csv"], tmp_path / "merged.csv")
    assert read_report(tmp_path / "merged.csv").intact

    def written(name, table):
        with open(tmp_path / name, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows(table)
        return read_report(tmp_path / name)

    assert written("same.csv", rows).intact  # written again as it was: the same bytes
    edited = [list(r) for r in rows]
    edited[3][len(COLUMNS)] = str(float(edited[3][len(COLUMNS)]) + 1.0)  # a view's score
    assert not written("edited.csv", edited).intact
    assert not written("lost.csv", rows[:3] + rows[4:]).intact
    assert not written("added.csv", rows + [rows[3]]).intact


def test_a_header_with_a_malformed_view_group_is_not_a_report(tmp_path):
    good = [*COLUMNS, *extra_columns(True, True, True, ["glocalkd", "size"])]
    assert header_extras(good) == tuple(good[len(COLUMNS):])
    assert header_extras([*COLUMNS, "view:a"]) == ("view:a",)
    assert header_extras([*COLUMNS, "view:a", "view:b", "view:c"]) == ("view:a", "view:b", "view:c")
    extras = list(extra_columns(True, True, True))
    bad = [
        [*COLUMNS, "view:"],  # no view named
        [*COLUMNS, "view:a", "view:a"],  # a view twice
        [*COLUMNS, "view:view:a"],
        [*COLUMNS, *extras, "view:a"],  # after standardised_smiles
        [*COLUMNS, "view:a", *extras[:-1]],  # before the properties
        [*COLUMNS, *extras[:2], "view:a", *extras[2:]],  # among the properties
        [*COLUMNS, "view:a", "alerts", "view:b"],  # not together
        [*COLUMNS, "views:a"],
    ]
    for header in bad:
        assert header_extras(header) is None, header
        path = tmp_path / "r.csv"
        path.write_text(",".join(header) + "\n")
        from core import DataError, is_report

        assert not is_report(path)
        with pytest.raises(DataError, match="not a ranked report"):
            read_report(path)


def test_the_command_line_asks_for_the_view_columns(model_file, model, library, tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["screen", str(model_file), str(library), "-o", str(out), "--device", "cpu", "--view-scores",
                 "--workers", "1"]) == 0
    assert _table(out)[0][len(COLUMNS):] == [f"view:{v}" for v in VIEWS]
    assert main(["score", str(model_file), str(library), "-o", str(tmp_path / "c.csv"), "--device", "cpu",
                 "--view-scores"]) == 0
    assert _table(tmp_path / "c.csv")[0] == _table(out)[0]
    # both name the model, which is the one in the file whether read once or again
    assert read_report(out).model_fingerprint == read_report(tmp_path / "c.csv").model_fingerprint \
        == load_detector(model_file).fingerprint() == model.fingerprint()

    from core import GLocalKD

    single = tmp_path / "g.pt"
    GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(load(library)).save(single)
    capsys.readouterr()
    for command in ("screen", "score"):
        assert main([command, str(single), str(library), "-o", str(tmp_path / "no.csv"), "--device", "cpu",
                     "--view-scores"]) == 2
        err = capsys.readouterr().err
        assert "--view-scores" in err and "consensus with Fisher's rule" in err and "glocalkd" in err
    assert not (tmp_path / "no.csv").exists()


def test_a_reports_rows_scored_again_give_the_views_scores_of_its_graphs(model, library, tmp_path):
    """``report_view_scores``: a report written without view columns is scored again through the
    screening pipeline; each view's score of row i is the one its component gives the row's graph,
    bit for bit, in the report's order."""
    from core import report_view_scores

    screen(model, library, tmp_path / "plain.csv", chunk_size=37, workers=2)
    report = read_report(tmp_path / "plain.csv")
    assert report.view_scores == {} and len(report.rejects) == 2
    scores = report_view_scores(model, report, workers=2)
    assert list(scores) == VIEWS
    graphs = report_graphs(report)
    for name in VIEWS:
        expected = model.components_[name].score(graphs).score
        np.testing.assert_array_equal(scores[name], np.asarray(expected, dtype=np.float32).astype(np.float64))


def test_a_row_that_cannot_be_scored_again_is_named(model, library, tmp_path):
    from core import DataError, report_view_scores

    screen(model, library, tmp_path / "plain.csv", chunk_size=37, workers=1)
    report = read_report(tmp_path / "plain.csv")
    report.smiles[5] = "C1CC"
    with pytest.raises(DataError, match=rf"row 6 \({report.ids[5]}\)"):
        report_view_scores(model, report, workers=1)


@pytest.mark.parametrize("kind", ["local", "dask"])
def test_a_weighed_consensus_reports_its_classifier_view_and_reviews_from_it(kind, request, model_file, library,
                                                                           tmp_path):
    """Weighed by known anomalies, the consensus reports the classifier view's column too, on one
    machine and on a Dask cluster alike, and a review started from the report's columns ranks as
    the model scored."""
    if kind == "dask":
        pytest.importorskip("distributed")
    client = request.getfixturevalue("client") if kind == "dask" else None
    model = load_detector(model_file, device="cpu")
    model.weigh_views(load(library).subset(range(300, 340)))
    weighed = tmp_path / "weighed.pt"
    model.save(weighed)
    out = tmp_path / "views.csv"
    _run(kind, client, weighed, library, out, view_scores=True)
    report = read_report(out)
    assert list(report.view_scores) == [*VIEWS, "known-classifier"] == model.reported_views()
    np.testing.assert_array_equal(report.view_scores["known-classifier"],
                                  model.view("known-classifier").score(report_graphs(report)).score)
    ranked = Review.from_view_scores(model, report.view_scores).rerank()
    np.testing.assert_allclose(ranked.statistic, report.score, rtol=1e-5)  # the report's text: 6 digits
