import csv

import numpy as np
import pytest

from core import DataError, GLocalKD, load, write_report
from core.screening import executors, featurize, merge, pipeline, scoring
from core.screening.pipeline import screen


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A SMILES library with bad rows among good ones (an unclosed ring, not a molecule)."""
    from tests.conftest import moses_library

    return moses_library(tmp_path_factory.mktemp("lib") / "lib.smi", 300, {10: "C1CC", 200: "not_a_molecule"})


@pytest.fixture(scope="module")
def model(library):
    graphs = load(library)
    return GLocalKD(epochs=2, hidden_dim=32, out_dim=16, device="cpu", seed=0).fit(graphs)


def _rows(path):
    """The report's rows, without its end row."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if not r["status"].startswith("end of report: ")]


def test_screening_matches_scoring_in_memory(library, model, tmp_path):
    summary = screen(model, library, tmp_path / "screen.csv", chunk_size=37, workers=2)
    assert (summary.rows, summary.scored, summary.rejected, summary.stopped) == (300, 298, 2, False)
    graphs = load(library)
    write_report(tmp_path / "memory.csv", graphs, model.score(graphs))
    streamed, in_memory = _rows(tmp_path / "screen.csv"), _rows(tmp_path / "memory.csv")
    assert [r["id"] for r in streamed] == [r["id"] for r in in_memory]
    assert [r["rank"] for r in streamed[:298]] == [str(k) for k in range(1, 299)]
    a = np.array([float(r["score"]) for r in streamed[:298]])
    b = np.array([float(r["score"]) for r in in_memory[:298]])
    assert np.allclose(a, b, rtol=1e-4)
    assert [r["top_nodes"].split(";")[0].split(":")[0] for r in streamed[:20]] == \
        [r["top_nodes"].split(";")[0].split(":")[0] for r in in_memory[:20]]
    assert {r["status"] for r in streamed[298:]} == {"rejected: line 12: invalid SMILES syntax: C1CC",
                                                     "rejected: line 202: invalid SMILES syntax: not_a_molecule"}


def test_a_consensus_screens_as_it_scores_in_memory(library, tmp_path, monkeypatch):
    """Screening scores each component of a consensus on its own path from the chunk's arrays
    (GLocalKD's forward passes, WL-LESINN's labelled edges, graph size's counts) and never makes
    graph objects: the ranking and the scores are the in-memory ones."""
    from core import make_detector

    graphs = load(library)
    consensus = make_detector("consensus", seed=0, component_params={
        "glocalkd": {"epochs": 2, "hidden_dim": 32, "out_dim": 16, "device": "cpu"}}).fit(graphs)
    monkeypatch.setattr(scoring, "chunk_graphs", lambda chunk: pytest.fail("graph objects were made"))
    screen(consensus, library, tmp_path / "screen.csv", chunk_size=64, workers=1)
    streamed = _rows(tmp_path / "screen.csv")[:298]
    in_memory = consensus.score(graphs)
    order = np.argsort(-in_memory.score, kind="stable")
    assert [r["id"] for r in streamed] == [graphs.meta[i].id for i in order]
    assert np.allclose([float(r["score"]) for r in streamed], in_memory.score[order], rtol=1e-5)


@pytest.fixture(scope="module")
def consensus(library):
    """A consensus weighed by known anomalies: it scores every view, its reserve view too."""
    from core import make_detector

    graphs = load(library)
    model = make_detector("consensus", seed=0, component_params={
        "glocalkd": {"epochs": 2, "hidden_dim": 32, "out_dim": 16, "device": "cpu"}}).fit(graphs.subset(range(200)))
    model.weigh_views(graphs.subset(range(250, 290)))
    return model


def test_the_parsing_workers_score_the_consensus_views_that_need_no_network(library, consensus, tmp_path,
                                                                            monkeypatch):
    """The WL views and graph size are scored in the parsing workers, never in the scoring
    process; the report is byte for byte the one of scoring them in the scoring process."""
    import os

    from core.detectors.known_classifier import KnownClassifier
    from core.detectors.size import SizeBaseline
    from core.detectors.two_step import TwoStepDetector

    every = {"wl-lesinn", "size", "wl-count-lesinn", "known-classifier"}  # the known anomalies' classifier too
    assert set(featurize.worker_views(consensus)) == every
    chunk = featurize.featurize_chunk(list(pipeline.iter_smiles_rows(library)), (),
                                      featurize.worker_views(consensus))
    assert set(chunk["view_scores"]) == every
    assert all(len(v) == len(chunk["counts"]) == 298 for v in chunk["view_scores"].values())

    main, calls = os.getpid(), []
    for cls, method in ((TwoStepDetector, "score_labelled"), (SizeBaseline, "score_sizes"),
                        (KnownClassifier, "score_labelled")):
        original = getattr(cls, method)

        def counted(self, *args, _original=original, _name=method):
            if os.getpid() == main:  # the forked workers inherit this wrapper; only this process counts
                calls.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(cls, method, counted)
    screen(consensus, library, tmp_path / "workers.csv", chunk_size=64, workers=2)
    assert calls == []

    monkeypatch.setattr(executors, "worker_views", lambda model, every=False: {})  # every view scored in this process
    screen(consensus, library, tmp_path / "main.csv", chunk_size=64, workers=2)
    assert calls  # the structural check above can fail
    assert (tmp_path / "workers.csv").read_bytes() == (tmp_path / "main.csv").read_bytes()


def test_a_chunks_wl_views_compute_its_wl_features_once(library, consensus, monkeypatch):
    """A weighed consensus's parsing workers score WL-LESINN, WL counts and the known-anomaly
    classifier, fitted on the same graphs: the chunk's WL features are computed once, and the
    scores are those of computing them for each view."""
    import contextlib

    from core.detectors import wl_features

    rows = list(pipeline.iter_smiles_rows(library))
    views = featurize.worker_views(consensus, every=True)
    assert {"wl-lesinn", "wl-count-lesinn", "known-classifier"} <= set(views)
    calls = []
    original = wl_features.WLFeatures._features
    monkeypatch.setattr(wl_features.WLFeatures, "_features", lambda self, *a: calls.append(1) or original(self, *a))
    shared = featurize.featurize_chunk(rows, (), views)
    assert len(calls) == 1
    monkeypatch.setattr(wl_features, "shared_transforms", contextlib.nullcontext)  # each view on its own
    apart = featurize.featurize_chunk(rows, (), views)
    assert len(calls) == 4  # the structural check above can fail
    assert shared["view_scores"].keys() == apart["view_scores"].keys()
    assert all(np.array_equal(shared["view_scores"][v], apart["view_scores"][v]) for v in apart["view_scores"])


@pytest.mark.parametrize("weighed", [False, True])
def test_a_chunk_scored_with_its_worker_views_is_scored_as_its_graphs(library, consensus, weighed):
    """score_chunk on the views' scores the workers made equals Consensus.score on the chunk's graphs, bit for bit."""
    from core import make_detector

    model = consensus
    if not weighed:
        model = make_detector("consensus", seed=0, component_params={
            "glocalkd": {"epochs": 2, "hidden_dim": 32, "out_dim": 16, "device": "cpu"}}).fit(load(library))
    chunk = featurize.featurize_chunk(list(pipeline.iter_smiles_rows(library)), (), featurize.worker_views(model))
    assert set(chunk["view_scores"]) == set(model.scored_views()) - {"glocalkd"}
    scored = scoring.score_chunk(model, chunk, 64)
    in_memory = model.score(scoring.chunk_graphs(chunk))
    assert np.array_equal(scored[0], in_memory.score)
    assert all(np.array_equal(a, b) for a, b in zip(scored[1:], (in_memory.graph_term, in_memory.node_term,
                                                                  in_memory.node_errors, in_memory.node_ptr)))


@pytest.mark.parametrize("detector", ["wl-lesinn", "pk-lesinn", "size"])
def test_graph_only_detectors_score_a_chunk_as_its_graphs(library, detector):
    from core import make_detector

    model = make_detector(detector, seed=0).fit(load(library))
    chunk = featurize.featurize_chunk(list(pipeline.iter_smiles_rows(library)))
    packed = scoring._packed_scores(model, chunk, 256, "float32", None)
    assert packed is not None
    assert np.array_equal(packed.score, model.score(scoring.chunk_graphs(chunk)).score)
    in_workers = featurize.featurize_chunk(list(pipeline.iter_smiles_rows(library)), (),
                                           featurize.worker_views(model))
    assert np.array_equal(scoring.score_chunk(model, in_workers, 256)[0], packed.score)


def test_a_chunk_featurized_in_small_batches_is_the_same_chunk(library, monkeypatch):
    rows = list(pipeline.iter_smiles_rows(library))
    whole = featurize.featurize_chunk(rows)
    monkeypatch.setattr(featurize, "FEATURIZE_BATCH", 7)
    batched = featurize.featurize_chunk(rows)
    assert whole.keys() == batched.keys() and len(whole["counts"]) == 298
    for key, value in whole.items():
        assert np.array_equal(value, batched[key]) if isinstance(value, np.ndarray) else value == batched[key], key


def test_a_chunk_featurized_in_parts_and_joined_is_the_same_chunk(library, consensus):
    """join_parts of consecutive parts (one of them all rejected, with the views' scores, the
    chemist's columns and the standardised SMILES) is featurize_chunk of the whole chunk."""
    from core.io.report import extra_columns

    rows = list(pipeline.iter_smiles_rows(library))
    columns = extra_columns(properties=True, alerts=True, standardised=True)
    views = featurize.worker_views(consensus)
    whole = featurize.featurize_chunk(rows, columns, views)
    starts = [0, 10, 11, 150, 201]  # rows[10] is the unclosed ring: a part with no molecule
    parts = [featurize.featurize_chunk(rows[a:b], columns, views) for a, b in zip(starts, starts[1:] + [len(rows)])]
    assert "view_scores" not in parts[1] and len(parts[1]["rejects"]) == 1
    joined = featurize.join_parts(parts, starts)
    assert whole.keys() == joined.keys() and len(whole["counts"]) == 298 and "inputs" in whole
    for key, value in whole.items():
        if key == "view_scores":
            assert value.keys() == joined[key].keys()
            assert all(np.array_equal(value[name], joined[key][name]) for name in value)
        else:
            assert np.array_equal(value, joined[key]) if isinstance(value, np.ndarray) else value == joined[key], key


def test_part_count_leaves_two_workers_whole_chunks_and_cuts_for_more():
    """A part per worker but one, of min_part rows or more: two workers parse whole chunks."""
    assert executors.part_count(20_000, 2) == 1
    assert executors.part_count(20_000, 16) == 15
    assert executors.part_count(20_000, 16, min_part=5_000) == 4
    assert executors.part_count(500, 16) == 1 and executors.part_count(0, 16) == 1
    assert executors.part_count(20_000, 1) == 1


def test_the_schedule_model_plays_the_products_part_rule():
    """benchmarks.schedule_model cuts chunks by part_count: two workers' schedule is the one of
    whole chunks; sixteen parse parts, and the scorer waits less."""
    from benchmarks.schedule_model import simulate

    whole, product = (simulate(20_000, 2, 2, 300e-6, 300e-6, rule) for rule in ("whole", "product"))
    assert whole == product
    whole, product = (simulate(100_000, 16, 16, 520e-6, 110e-6, rule) for rule in ("whole", "product"))
    assert product["tasks"] > whole["tasks"] == 11
    assert product["scorer_waited_seconds"] < whole["scorer_waited_seconds"]


def test_the_local_executor_parses_each_chunk_in_its_part_count(library, consensus, tmp_path, monkeypatch):
    """Every chunk goes to the pool in part_count parts, which join into the chunk: the report
    is the one of whole chunks, byte for byte."""
    sizes = []
    original = executors.ParsingPool.submit

    def counted(self, rows, extras=()):
        sizes.append(len(rows))
        return original(self, rows, extras)

    monkeypatch.setattr(executors.ParsingPool, "submit", counted)
    screen(consensus, library, tmp_path / "whole.csv", chunk_size=400, view_scores=True, properties=True,
           executor=executors.LocalExecutor(consensus, 3, min_part=1000))
    assert sizes == [50, 100, 150]  # chunks of 50, 100 and 150 rows, each whole (parts of 1,000 rows or more)
    sizes.clear()
    executor = executors.LocalExecutor(consensus, 3, min_part=20)
    summary = screen(consensus, library, tmp_path / "parts.csv", chunk_size=400, view_scores=True, properties=True,
                     executor=executor)
    assert 0 < executor.waited < summary.seconds  # the scorer waits for the first chunk at least
    assert sizes == [25, 25, 50, 50, 75, 75]  # two parts each: a part per worker but one
    assert (tmp_path / "parts.csv").read_bytes() == (tmp_path / "whole.csv").read_bytes()
    sizes.clear()
    screen(consensus, library, tmp_path / "two.csv", chunk_size=400, executor=executors.LocalExecutor(consensus, 2,
                                                                                                        min_part=20))
    assert sizes == [50, 100, 150]  # two workers: whole chunks


def test_a_library_file_given_twice_is_refused(library, model, tmp_path):
    """``screen a.csv a.csv --scheduler local:1`` scored every molecule twice (merge-reports refuses
    the same report twice); the run refuses the same file named twice, by any name, for every executor."""
    from core.errors import DataError

    link = tmp_path / "again.smi"
    link.symlink_to(library)
    for paths in ([library, library], [library, link]):
        with pytest.raises(DataError, match="a library file given twice"):
            screen(model, paths, tmp_path / "r.csv", workers=1)
    assert not (tmp_path / "r.csv").exists()


def test_multi_level_merge(library, model, tmp_path, monkeypatch):
    monkeypatch.setattr(merge, "MERGE_FAN_IN", 3)
    screen(model, library, tmp_path / "a.csv", chunk_size=20, workers=1)
    rows = _rows(tmp_path / "a.csv")
    scores = [float(r["score"]) for r in rows if r["status"] == "ok"]
    assert len(scores) == 298 and scores == sorted(scores, reverse=True)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".screen-")]


def test_a_stopped_run_keeps_every_row_already_scored(library, model, tmp_path):
    calls = []
    summary = screen(model, library, tmp_path / "s.csv", chunk_size=50, workers=1,
                     on_progress=lambda read, scored: calls.append(read), should_stop=lambda: len(calls) >= 3)
    assert summary.stopped and calls[:3] == [6, 18, 42]  # chunks of 6, 12 and 24 rows (then 48, then 50 each)
    assert summary.rows == calls[-1] < 300  # a chunk already read ahead is scored too, never dropped
    rows = _rows(tmp_path / "s.csv")
    assert len(rows) == summary.rows and summary.last_line >= 43


def test_a_stopped_runs_report_says_where_it_stopped_and_is_never_merged_as_whole(library, model, tmp_path):
    """A stopped run's end row read like a finished one's: merge-reports took 3,840 rows of 30,000
    for a whole shard, and q-values were computed over them alone."""
    from core import merge_reports, read_report

    calls = []
    summary = screen(model, library, tmp_path / "s.csv", chunk_size=50, workers=1,
                     on_progress=lambda read, scored: calls.append(read), should_stop=lambda: len(calls) >= 3)
    report = read_report(tmp_path / "s.csv")
    assert summary.stopped and report.intact and report.stopped_after == summary.last_line
    whole = screen(model, library, tmp_path / "w.csv", chunk_size=50, workers=1)
    assert not whole.stopped and read_report(tmp_path / "w.csv").stopped_after is None
    with pytest.raises(DataError, match=f"s.csv.*stopped after input line {summary.last_line}"):
        merge_reports([tmp_path / "s.csv"], tmp_path / "m.csv")
    assert not (tmp_path / "m.csv").exists()


def test_a_stop_once_the_last_chunk_is_sent_leaves_a_whole_run(library, model, tmp_path):
    """A Stop that came while the last chunks were in flight took them all, yet marked the run
    stopped: its end row said "stopped after input line 301" of a 300-line library, the app offered
    to resume a run that had nothing left, and merge-reports refused the report as cut short."""
    from core import merge_reports, read_report

    seen = []
    summary = screen(model, library, tmp_path / "s.csv", chunk_size=100, workers=2,
                     on_progress=lambda read, scored: seen.append(read), should_stop=lambda: seen[-1:] >= [200])
    assert seen[-1] == summary.rows == 300 and any(r >= 200 for r in seen[:-1])  # asked before the last chunk came
    assert not summary.stopped and read_report(tmp_path / "s.csv").stopped_after is None
    merge_reports([tmp_path / "s.csv"], tmp_path / "m.csv")  # a whole run merges
    assert len(_rows(tmp_path / "m.csv")) == 300
    for at in (6, 18, 42, 90, 100):  # a Stop with chunks still unsent is a stop, and loses no row it read
        seen.clear()
        summary = screen(model, library, tmp_path / "t.csv", chunk_size=100, workers=2,
                         on_progress=lambda read, scored: seen.append(read), should_stop=lambda at=at: seen[-1:] >= [at])
        report = read_report(tmp_path / "t.csv")
        assert summary.stopped == (summary.rows < 300) and len(report) + len(report.rejects) == summary.rows
        assert report.stopped_after == (summary.last_line if summary.stopped else None)


def test_chunks_start_small_then_keep_their_size():
    rows = [(k, str(k), "C") for k in range(1, 101)]
    chunks = list(pipeline.chunks(iter(rows), 16))
    assert [len(c) for c in chunks] == [2, 4, 8, 16, 16, 16, 16, 16, 6]
    assert [r for c in chunks for r in c] == rows
    assert [len(c) for c in pipeline.chunks(iter(rows[:3]), 1)] == [1, 1, 1]


def test_scores_do_not_depend_on_thread_count_or_batch(library, tmp_path):
    """Screening picks its thread count by timing (see ``_scoring_threads``): that is only
    sound because a molecule's score is bitwise the same whatever the threads, and whatever
    else shares its batch (see ``core.nn.gcn.MIN_PRODUCT_ROWS`` and ``core.nn.row_groups``)."""
    import torch

    paper_width = GLocalKD(epochs=1, device="cpu", seed=0).fit(load(library))
    rows = list(pipeline.iter_smiles_rows(library))
    chunk = featurize.featurize_chunk(rows)
    before = torch.get_num_threads()
    try:
        runs = []
        for threads, batch in ((1, 256), (2, 256), (2, 7), (1, 7)):
            torch.set_num_threads(threads)
            runs.append(scoring.score_chunk(paper_width, chunk, batch))
        switching = scoring.score_chunk(paper_width, chunk, 7, threads=iter([1, 2] * 50).__next__)
    finally:
        torch.set_num_threads(before)
    for run in runs[1:] + [switching]:
        for a, b in zip(runs[0], run):
            assert np.array_equal(a, b)


def test_scoring_leaves_the_cores_of_busy_workers_and_restores_threads(library, model, tmp_path, monkeypatch):
    import torch

    assert [scoring.scoring_threads(2, busy) for busy in (0, 1, 2, 3)] == [2, 1, 1, 1]
    assert [scoring.scoring_threads(8, busy) for busy in (0, 3, 8)] == [8, 5, 1]
    asked = []
    policy = scoring.scoring_threads
    monkeypatch.setattr(executors, "scoring_threads", lambda threads, busy: asked.append(busy) or policy(threads, busy))
    before = torch.get_num_threads()
    screen(model, library, tmp_path / "r.csv", chunk_size=40, workers=2, batch_graphs=8)
    assert torch.get_num_threads() == before
    assert asked and all(0 <= busy <= 2 for busy in asked)


def test_screening_needs_a_molecule_model(tu_folder, library, tmp_path):
    from core import SchemaMismatchError

    tu_model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(load(tu_folder))
    with pytest.raises(SchemaMismatchError, match="molecules"):
        screen(tu_model, library, tmp_path / "x.csv")


def test_cli_screen(library, model, tmp_path, capsys):
    from core.cli.main import main

    model.save(tmp_path / "m.pt")
    assert main(["screen", str(tmp_path / "m.pt"), str(library), "-o", str(tmp_path / "r.csv"),
                 "--chunk-size", "100", "--workers", "1", "--device", "cpu"]) == 0
    assert "300 rows: 298 scored, 2 rejected" in capsys.readouterr().err
    assert len(_rows(tmp_path / "r.csv")) == 300


def test_screen_refuses_sizes_below_one(tmp_path, smiles_file):
    from core import GLocalKD, GLocalKDError, load
    from core.screening.pipeline import screen

    model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(load(smiles_file))
    for bad in (dict(batch_graphs=0), dict(chunk_size=0), dict(workers=0)):
        with pytest.raises(GLocalKDError, match="at least 1"):
            screen(model, smiles_file, tmp_path / "r.csv", **bad)


@pytest.mark.parametrize("bad", [dict(chunk_size=2.5), dict(chunk_size="10"), dict(chunk_size=float("nan")),
                                 dict(top=2.5), dict(workers=1.5), dict(top_k=-1), dict(top_k=2.5)])
def test_screen_refuses_counts_that_are_not_whole_numbers(tmp_path, smiles_file, bad):
    """chunk_size=2.5 passed the "< 1" check and failed deep inside with a bare TypeError, and
    top_k=-1 listed every atom but the last; each is refused naming it, before any file is read."""
    from core import ParameterError, load, make_detector, write_report
    from core.screening.pipeline import screen

    model = make_detector("size").fit(load(smiles_file))
    name = next(iter(bad))
    with pytest.raises(ParameterError, match=f"^{name} must be a whole number"):
        screen(model, smiles_file, tmp_path / "r.csv", **({"workers": 1} | bad))
    if name == "top_k":  # a file scored whole writes its report from memory: the same rule
        graphs = load(smiles_file)
        with pytest.raises(ParameterError, match="^top_k must be a whole number"):
            write_report(tmp_path / "w.csv", graphs, model.score(graphs), top_k=bad["top_k"])
    assert not (tmp_path / "r.csv").exists() and not (tmp_path / "w.csv").exists()


def test_shards_screened_apart_merge_into_the_whole_librarys_ranking(tmp_path, smiles_file):
    from core.io.ranked_report import read_report
    from core.screening.merge import merge_reports

    model = GLocalKD(epochs=1, hidden_dim=8, out_dim=4, device="cpu").fit(load(smiles_file))
    lines = smiles_file.read_text().splitlines()
    header, body = lines[0], lines[1:]
    shards = []
    for k, part in enumerate((body[: len(body) // 2], body[len(body) // 2:])):
        shard = tmp_path / f"shard{k}.smi"
        shard.write_text("\n".join([header] + part) + "\n")
        screen(model, shard, tmp_path / f"shard{k}.csv", chunk_size=2, workers=1)
        shards.append(tmp_path / f"shard{k}.csv")
    screen(model, smiles_file, tmp_path / "whole.csv", chunk_size=3, workers=1)
    rows = merge_reports(shards, tmp_path / "merged.csv")
    merged, whole = read_report(tmp_path / "merged.csv"), read_report(tmp_path / "whole.csv")
    assert rows == len(whole) + len(whole.rejects) and len(whole.rejects) >= 1
    assert list(merged.smiles) == list(whole.smiles)  # same ranking (ids of unnamed rows are shard lines)
    assert np.allclose(merged.score, whole.score)
    assert [line.split(",")[0] for line in (tmp_path / "merged.csv").read_text().splitlines()[1:4]] == ["1", "2", "3"]
    assert sorted(r.reason.split(": ", 1)[1] for r in merged.rejects) == \
        sorted(r.reason.split(": ", 1)[1] for r in whole.rejects)
    from core.errors import DataError

    with pytest.raises(DataError, match="not a ranked report"):
        merge_reports([smiles_file], tmp_path / "x.csv")


@pytest.mark.filterwarnings("ignore::core.errors.SlowPrecisionWarning")  # CPUs without bfloat16 warn
def test_bfloat16_screening_ranks_like_float32(tmp_path, herg_path):
    """bfloat16 dense products change scores a little, never the bookkeeping: every row is
    scored, and the ranking agrees closely with float32."""
    from scipy.stats import spearmanr

    from core import GLocalKDError
    from core.io.ranked_report import read_report

    graphs = load(herg_path)
    model = GLocalKD(epochs=3, hidden_dim=64, out_dim=32, batch_size=64, device="cpu").fit(graphs)
    a = read_report(screen(model, herg_path, tmp_path / "f32.csv", workers=1).report)
    b = read_report(screen(model, herg_path, tmp_path / "bf16.csv", workers=1, precision="bfloat16").report)
    assert len(a) == len(b) == len(graphs) and len(a.rejects) == len(b.rejects)
    order_a, order_b = np.argsort(a.ids), np.argsort(b.ids)
    assert not np.array_equal(a.score[order_a], b.score[order_b])  # it really ran in another precision
    assert spearmanr(a.score[order_a], b.score[order_b])[0] > 0.97
    k = len(a) // 10
    assert len(set(a.ids[:k]) & set(b.ids[:k])) >= 0.8 * k  # the top tenth is nearly the same molecules
    with pytest.raises(GLocalKDError, match="precision"):
        screen(model, herg_path, tmp_path / "x.csv", workers=1, precision="float16")


def test_bfloat16_where_the_device_lacks_it_warns_and_still_screens(library, model, tmp_path, monkeypatch, capsys):
    """Without bfloat16 instructions (AVX2 CPUs) torch multiplies bfloat16 in a generic loop, far
    slower than float32: asking for it says so, once, before the run, and the run completes."""
    import warnings

    import core.runtime.device
    from core.cli.main import main
    from core.errors import SlowPrecisionWarning

    monkeypatch.setattr(core.runtime.device, "bfloat16_is_fast", lambda device: False)
    with pytest.warns(SlowPrecisionWarning, match="no bfloat16 instructions") as seen:
        summary = screen(model, library, tmp_path / "slow.csv", workers=1, precision="bfloat16")
    assert len(seen) == 1 and summary.scored == 298 and summary.rejected == 2
    model.save(tmp_path / "m.pt")
    assert main(["screen", str(tmp_path / "m.pt"), str(library), "-o", str(tmp_path / "r.csv"), "--workers", "1",
                 "--device", "cpu", "--precision", "bfloat16"]) == 0
    err = capsys.readouterr().err
    assert "glocalkd: warning: this CPU has no bfloat16 instructions" in err and "298 scored" in err
    monkeypatch.setattr(core.runtime.device, "bfloat16_is_fast", lambda device: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlowPrecisionWarning)
        screen(model, library, tmp_path / "fast.csv", workers=1, precision="bfloat16")
        screen(model, library, tmp_path / "f32.csv", workers=1)


def _count_properties(monkeypatch, log):
    """Make every process (the parsing workers are forked) note each molecule whose properties it
    computes in the file ``log``."""
    from core.data import properties

    real = properties.molecule_properties

    def counted(molecules, *args):
        molecules = list(molecules)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write("x\n" * len(molecules))
        return real(molecules, *args)

    monkeypatch.setattr(properties, "molecule_properties", counted)


@pytest.mark.parametrize("standardise", [False, True])
def test_a_top_report_computes_properties_and_alerts_for_its_rows_only_and_writes_the_same_bytes(
        tmp_path, monkeypatch, standardise):
    """With --top the properties and alerts are made at the merge, for the kept rows only: the
    report is byte for byte the one the parsing workers' per-row cells give, and the first rows of
    the report that keeps every row."""
    from tests.conftest import moses_library

    library = moses_library(tmp_path / "lib.smi", 120, {3: "C1CC", 50: "CC(=O)[O-].[Na+]", 60: "C[NH3+].[Cl-]",
                                                       70: "C=CC(=O)Nc1ccccc1", 80: "[H]OC(=O)c1ccccc1"})
    graphs = load(library, standardise=standardise)
    model = GLocalKD(epochs=1, hidden_dim=16, out_dim=8, device="cpu", seed=0).fit(graphs)
    assert model.standardises is standardise
    options = dict(chunk_size=16, workers=2, properties=True, alerts=True)
    log = tmp_path / "computed.txt"
    _count_properties(monkeypatch, log)
    screen(model, library, tmp_path / "top.csv", top=30, **options)
    assert len(log.read_text().splitlines()) == 30  # not the 119 molecules read
    log.unlink()
    screen(model, library, tmp_path / "all.csv", **options)
    assert len(log.read_text().splitlines()) == 119
    monkeypatch.setattr(pipeline, "deferred_columns", lambda extras, keep: ())  # every row's cells in the workers
    screen(model, library, tmp_path / "per_row.csv", top=30, **options)
    top = (tmp_path / "top.csv").read_bytes()
    assert top == (tmp_path / "per_row.csv").read_bytes()
    kept, every = _rows(tmp_path / "top.csv"), _rows(tmp_path / "all.csv")
    assert kept[:30] == every[:30] and kept[30:] == every[119:]  # the best rows, then the rejected one
    assert {r["mw"] for r in kept[:30]} != {""} and any(r["alerts"] for r in kept[:30])
    assert kept[30]["status"].startswith("rejected") and kept[30]["mw"] == kept[30]["alerts"] == ""


def test_deferred_cells_are_the_workers_cells():
    """The merge's cells of a SMILES are the parsing worker's cells of the molecule it scored."""
    from core.io.molecules import SourceRow
    from core.io.report import extra_columns

    rows = [SourceRow(k + 1, str(k), "", s, None) for k, s in enumerate(
        ["CC(=O)Oc1ccccc1C(=O)O", "C=CC(=O)N", "[H]OC(=O)c1ccccc1", "C[NH3+]", "O=C1C=CC(=O)C=C1"])]
    columns = extra_columns(properties=True, alerts=True)
    chunk = featurize.featurize_chunk(rows, columns)
    assert len(chunk["extra"]) == 5 and any(cells[-1] for cells in chunk["extra"])  # alerts among them
    assert featurize.deferred_cells(chunk["smiles"], columns) == chunk["extra"]
    assert featurize.deferred_cells(["not a smiles"], columns) == [[""] * len(columns)]


def test_a_row_that_kills_the_worker_computing_its_deferred_cells_gets_empty_cells(library, model, tmp_path,
                                                                                  monkeypatch):
    """A molecule whose properties crash their worker (a crash in RDKit) costs only its own cells:
    the other kept rows get theirs, and the report is written."""
    import os

    screen(model, library, tmp_path / "ok.csv", top=20, properties=True, workers=2)
    ok = _rows(tmp_path / "ok.csv")
    deadly = ok[2]["smiles"]
    real = featurize._extra_cells

    def dying(extras):
        cells = real(extras)
        if cells is None:
            return None

        def crash_on_one(mols, decoded=None):
            from rdkit import Chem

            if any(Chem.MolToSmiles(mol) == Chem.CanonSmiles(deadly) for mol in mols):
                os._exit(1)
            return cells(mols, decoded)

        return crash_on_one

    monkeypatch.setattr(featurize, "_extra_cells", dying)  # the merge's workers are forked: they see it
    screen(model, library, tmp_path / "crash.csv", top=20, properties=True, workers=2)
    crash = _rows(tmp_path / "crash.csv")
    assert [r["id"] for r in crash] == [r["id"] for r in ok]
    assert crash[2]["mw"] == "" and ok[2]["mw"] != ""
    assert crash[:2] + crash[3:] == ok[:2] + ok[3:]
