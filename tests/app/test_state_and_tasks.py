"""The app's state and background jobs without a window: no Qt, no qtbot."""
import csv
import subprocess
import sys

import numpy as np
import pytest

from app import tasks
from app.state import AppState, app_wording, view_weights_text, with_suffix

SMALL = {"hidden_dim": 16, "out_dim": 8, "epochs": 2, "batch_size": 64}


@pytest.fixture(scope="module")
def herg_trained():
    from tests.conftest import DEMO_DATA

    loaded = tasks.load_data(str(DEMO_DATA / "herg.tab"), {}, tasks.Job())
    trained = tasks.train(loaded.graphs, "glocalkd", SMALL, None, tasks.Job())
    state = AppState()
    state.set_data(loaded.path, loaded.graphs, loaded.schema_text)
    state.set_trained(trained.model, trained.scores, trained.n_train, trained.normal_label, trained.size_model,
                      trained.size_scores)
    return state


def test_state_and_tasks_never_import_qt():
    code = ("import sys, app.state, app.tasks\n"
            "assert not [m for m in sys.modules if m.startswith('PySide6')], 'Qt imported'\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def test_the_main_window_module_does_not_load_torch():
    """The window can appear before torch (seconds) has loaded: torch loads in the warm-up job."""
    code = "import sys, app.main_window\nassert 'torch' not in sys.modules and 'rdkit' not in sys.modules\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert run.returncode == 0, run.stderr[-2000:]


def test_default_training_uses_all_graphs_as_the_command_does(herg_trained):
    """The app's default (normal_label None) trains on all 655 graphs, as `glocalkd train` does."""
    assert herg_trained.trained_on_shown == 655 and herg_trained.normal_label is None
    assert len(herg_trained.training_indices()) == 655


def test_evaluation_uses_cores_minority_rule_and_keeps_the_size_baseline(herg_trained):
    from core import choose_anomaly_label, roc_auc

    st = herg_trained
    assert st.default_anomaly_label() == choose_anomaly_label(st.graphs, "minority") == "0"
    ev = st.evaluation("0")
    labels = np.array([lab == "0" for lab in st.graphs.labels])
    assert ev.auc == pytest.approx(roc_auc(labels, st.scores.score))
    assert ev.reference is not None and "graph size alone" in ev.text
    assert ev.fpr[0] == 0 and ev.tpr[-1] == 1
    other = st.evaluation("1")  # two classes: one of the two AUCs is below 0.5, and says so
    assert other.auc == pytest.approx(1 - ev.auc)
    low, high = sorted((ev, other), key=lambda e: e.auc)
    assert low.auc < 0.5 and "(below 0.5: the detector scores label " in low.text
    assert "below 0.5" not in high.text


def test_a_loaded_model_is_scored_with_a_size_baseline_fitted_on_the_normal_graphs(herg_trained, tmp_path):
    """A model file does not keep its training sizes: scoring refits the baseline, so the ROC keeps it."""
    st = herg_trained
    path = tmp_path / "m.pt"
    st.model.save(path)
    model = tasks.load_model(str(path), "cpu", tasks.Job())
    fresh = AppState()
    fresh.set_data(st.data_path, st.graphs, st.schema_text)
    fresh.set_model(model)
    scores, size_model, size_scores, scored, _ = tasks.score(model, st.graphs, None, None, tasks.Job())
    assert scored is st.graphs  # a model that does not standardise reads the graphs as they are
    fresh.set_scores(scores, size_model, size_scores)
    assert size_scores is not None and "graph size alone" in fresh.evaluation("0").text


def test_flags_and_p_values(herg_trained):
    st = herg_trained
    st.percentile = 90.0
    flagged = st.flagged()
    assert flagged.sum() == (st.scores.score > np.percentile(st.model.train_scores_, 90.0)).sum()
    p = st.p_values()
    top = int(st.scores.ranking()[0])
    assert p[top] == p.min() and 0 < p.min() <= p.max() <= 1


def test_similar_training_molecules_leave_the_query_out(herg_trained):
    st = herg_trained
    hits = st.similar_training_molecules(0, k=5)
    assert len(hits) == 5 and all(j != 0 for j, _ in hits)
    sims = [s for _, s in hits]
    assert sims == sorted(sims, reverse=True) and 0 < sims[0] <= 1


def test_similar_training_molecules_of_a_smiles_keep_a_training_molecule_itself(herg_trained):
    """A SMILES from elsewhere (a scored file's row) is compared with every training molecule: the
    same molecule is found at similarity 1, where its graph index leaves it out."""
    from core import SimilarityIndex

    st = herg_trained
    smiles = st.graphs.meta[0].smiles
    hits = st.similar_training_molecules(smiles, k=5)
    assert hits[0] == (0, 1.0)
    assert hits[1:] == st.similar_training_molecules(0, k=4)
    train = st.training_indices()
    direct = SimilarityIndex([st.graphs.meta[j].smiles for j in train]).nearest("CCOc1ccccc1N", 5)
    assert st.similar_training_molecules("CCOc1ccccc1N", k=5) == [(int(train[j]), s) for j, s in direct]
    assert st.similar_training_molecules("C1CC", k=5) == []  # does not parse: nothing


def test_the_shared_index_is_built_once_by_the_first_job_and_waited_for_by_the_others():
    import threading
    import time

    from app.state import SharedIndex

    shared, builds = SharedIndex(), []

    def build():
        builds.append(1)
        time.sleep(0.2)  # the other threads ask meanwhile
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(shared.get(build))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and len(got) == 3 and got[0] is got[1] is got[2] is shared.built()
    shared.offer(object())  # one is built: kept
    assert shared.built() is got[0]


def test_export_csv_visible_rows_and_flag_column(herg_trained, tmp_path):
    st = herg_trained
    rows = np.array([5, 17, 300])
    out = tmp_path / "visible.csv"
    n = tasks.export_csv(str(out), st.graphs, st.scores, rows, st.flagged())
    got = list(csv.DictReader(out.open()))[:-1]  # less the end row
    assert n == 3 and sorted(r["id"] for r in got) == sorted(st.graphs.meta[i].id for i in rows)
    ranks = [int(r["rank"]) for r in got]
    assert ranks == sorted(ranks)  # ranked, with the ranks among all graphs
    flags = st.flagged()
    index = {m.id: k for k, m in enumerate(st.graphs.meta)}
    assert all(r["flagged"] == ("1" if flags[index[r["id"]]] else "0") for r in got)
    out_all = tmp_path / "all.csv"
    assert tasks.export_csv(str(out_all), st.graphs, st.scores, None, flags) == 655


def test_export_sdf_has_scores_as_sd_properties(herg_trained, tmp_path):
    from rdkit import Chem

    st = herg_trained
    out = tmp_path / "ranked.sdf"
    n = tasks.export_sdf(str(out), st.graphs, st.scores, None, st.flagged(), st.p_values())
    mols = [m for m in Chem.SDMolSupplier(str(out)) if m is not None]
    assert n == len(mols) == 655
    first = mols[0]
    assert first.GetProp("rank") == "1" and first.GetProp("id") == st.graphs.meta[int(st.scores.ranking()[0])].id
    for prop in ("score", "p_value", "flagged", "top_atoms", "label"):
        assert first.HasProp(prop), prop
    assert float(first.GetProp("score")) == pytest.approx(float(st.scores.score.max()), rel=1e-5)


def test_screen_file_streams_molecules_with_progress(herg_trained, tmp_path):
    from tests.conftest import DEMO_DATA

    job = tasks.Job()
    report, summary = tasks.screen_file(herg_trained.model, str(DEMO_DATA / "herg.tab"), str(tmp_path / "r.csv"),
                                        job, workers=1)
    assert summary is not None and summary.scored == 655 == len(report)  # core.screen wrote it
    assert job.reports and job.reports[-1].rows == 655 and job.reports[-1].total == 655
    assert job.reports[-1].rate > 0 and "rows/s" in job.reports[-1].text()


def test_screen_progress_eta():
    p = tasks.ScreenProgress(rows=250, scored=240, total=1000, seconds=5.0)
    assert p.rate == 50 and p.eta == 15 and "ETA 15 s" in p.text()


def test_model_files_get_their_extension():
    assert with_suffix("/x/herg_model") == "/x/herg_model.pt"
    assert with_suffix("/x/herg_model.pt") == "/x/herg_model.pt"


def test_error_messages_use_the_apps_words():
    from core import DataError, ParameterError

    error = DataError("no SMILES column found (columns: 'a', 'b'); name it with {smiles_column}", "t.csv", 1,
                      params=("smiles_column",))
    assert "column dialog" in app_wording(error) and "smiles" not in app_wording(error).split(";")[1]
    worded = app_wording(ParameterError("use {normal_label} or {batch_size}", "normal_label", "batch_size"))
    assert worded == "use the Normal graphs setting or the Batch size setting"


def test_the_default_consensus_on_too_few_graphs_trains_glocalkd_as_the_command_line_does(tu_folder):
    """The form names its default detector, so the plan's rule for the default (GLocalKD on every
    graph when there are too few to calibrate) never applied: a consensus of 12 graphs was refused,
    and one of 20 was fitted on 1. The app trains what ``glocalkd train`` without --detector trains,
    with the GCN settings of the form, and says why."""
    from core import load

    graphs = load(tu_folder)  # 12 graphs: too few to hold out the consensus's calibration share
    trained = tasks.train(graphs, "consensus", SMALL, None, tasks.Job())
    assert trained.model.name == "glocalkd" and not trained.model.is_calibrated
    assert trained.model.hidden_dim == SMALL["hidden_dim"] and len(trained.model.loss_history_) == SMALL["epochs"]
    assert trained.notes[0] == ("training GLocalKD: the default consensus needs a calibration share (12 graphs are "
                                "too few to calibrate)")


def test_html_report_is_one_self_contained_file(herg_trained, tmp_path):
    st = herg_trained
    out = tmp_path / "report.html"
    drawn = tasks.export_html(str(out), st.graphs, st.scores, st.model, "0", st.threshold(), st.p_values(), top_n=5)
    html = out.read_text()
    assert drawn == 5 and html.count("<svg") == 5 + 3  # five heatmaps, the histogram, the ROC and the colour legend
    top = st.graphs.meta[int(st.scores.ranking()[0])].id
    assert top in html and "ROC-AUC" in html and "p-value" in html and "hidden_dim" in html
    import re

    assert not re.search(r"""(src|href)=["'](?!#)""", html)  # nothing to fetch (only in-page SVG links)


def test_known_anomalies_weigh_a_consensus_and_are_never_trained_on():
    from core import GLocalKDError
    from tests.conftest import DEMO_DATA

    loaded = tasks.load_data(str(DEMO_DATA / "herg.tab"), {}, tasks.Job())
    params = {"component_params": {"glocalkd": SMALL}}
    trained = tasks.train(loaded.graphs, "consensus", params, "1", tasks.Job(), known_label="0")
    model = trained.model
    # hERG lists 7 molecules with both labels: the same graphs to the model, left out of training and said so
    assert trained.known_label == "0" and trained.n_train == sum(lab == "1" for lab in loaded.graphs.labels) - 7
    assert any("7 graphs of the data are known anomalies too" in note for note in trained.notes)
    assert set(model.known_anomaly_auc_) == set(model.views)
    text = view_weights_text(model)
    assert text.startswith("Views weighed by known anomalies: ") and "WL-LESINN" in text
    assert view_weights_text(model, compact=True).startswith("View weights (known anomalies): ")
    # without a normal label, the model trains on every graph but the known anomalies (as glocalkd train)
    others = tasks.train(loaded.graphs, "consensus", params, None, tasks.Job(), known_label="0")
    assert others.n_train == trained.n_train and others.model.known_anomaly_auc_ == model.known_anomaly_auc_
    with pytest.raises(GLocalKDError, match="cannot be both"):
        tasks.train(loaded.graphs, "consensus", params, "0", tasks.Job(), known_label="0")
    assert view_weights_text(tasks.train(loaded.graphs, "consensus", params, "1", tasks.Job()).model) == ""


def test_a_file_of_known_anomalies_weighs_a_copy_of_a_trained_consensus(tmp_path):
    from core import DataError, GLocalKDError, load
    from tests.conftest import DEMO_DATA

    loaded = tasks.load_data(str(DEMO_DATA / "herg.tab"), {}, tasks.Job())
    graphs = loaded.graphs
    trained = tasks.train(graphs, "consensus", {"component_params": {"glocalkd": SMALL}}, "1", tasks.Job())
    actives = [m.smiles for m in graphs.meta if m.label == "0"]
    known_file = tmp_path / "known.smi"
    known_file.write_text("\n".join(actives[:8] + ["not a molecule"]) + "\n")

    result = tasks.weigh(trained.model, str(known_file), {}, graphs, tasks.Job())
    assert (result.n_known, result.n_rejected, result.path) == (8, 1, str(known_file))
    assert trained.model.known_anomaly_auc_ is None  # the window's model is left as it was
    expected = dict(result.model.known_anomaly_auc_)
    reference = load(str(known_file))
    assert trained.model.weigh_views(reference) == expected  # as glocalkd weigh weighs them
    assert result.model.view_weights_ == trained.model.view_weights_
    assert np.array_equal(result.scores.score, trained.model.score(graphs).score)
    assert len(result.scores) == len(graphs)

    for name, rows in (("none.smi", ["not a molecule"]), ("two.smi", actives[:2])):
        (tmp_path / name).write_text("\n".join(rows) + "\n")
        with pytest.raises(DataError, match=f"{name}.*(no molecule could be read|at least 3 known anomalies)"):
            tasks.weigh(trained.model, str(tmp_path / name), {}, graphs, tasks.Job())
    glocalkd = tasks.train(graphs, "glocalkd", SMALL, "1", tasks.Job()).model
    with pytest.raises(GLocalKDError, match="a glocalkd model has a single view"):
        tasks.weigh(glocalkd, str(known_file), {}, graphs, tasks.Job())


def test_the_smarts_job_matches_in_chunks_and_stops_between_them(monkeypatch):
    from core import smarts_matches
    from tests.conftest import DEMO_DATA

    smiles = [m.smiles for m in tasks.load_data(str(DEMO_DATA / "herg.tab"), {}, tasks.Job()).graphs.meta]
    monkeypatch.setattr(tasks, "SMARTS_CHUNK", 100)  # 655 molecules: seven chunks
    result = tasks.match_smarts(smiles, "c1ccccc1Cl", tasks.Job())
    expected = smarts_matches(smiles, "c1ccccc1Cl")
    assert result.valid and not result.stopped and 0 < expected.sum() < len(smiles)
    np.testing.assert_array_equal(result.mask, expected)
    assert tasks.match_smarts(smiles, "[[bad", tasks.Job()) == tasks.SmartsMatch(None, valid=False)
    assert tasks.match_smarts([], "c1ccccc1", tasks.Job()).mask.shape == (0,)

    class StopsAfterTwoChunks(tasks.Job):
        looks = 0

        def stopped(self) -> bool:
            self.looks += 1
            return self.looks > 2

    job = StopsAfterTwoChunks()
    seen = []
    monkeypatch.setattr("core.smarts_matches", lambda chunk, pattern: seen.append(len(chunk)) or smarts_matches(chunk, pattern))
    assert tasks.match_smarts(smiles, "c1ccccc1Cl", job) == tasks.SmartsMatch(None, stopped=True)
    assert seen == [100, 100]  # two chunks matched, then it stopped


def test_a_session_named_with_its_suffix_in_capitals_keeps_its_name(qtbot, window, tmp_path):
    """The session's own suffix rule was case-sensitive, unlike the models': ``S.GLOCALKD-SESSION``
    was saved as ``S.GLOCALKD-SESSION.glocalkd-session``. Both use app.state.with_suffix."""
    from app.session_file import SUFFIX

    assert with_suffix("/x/S.GLOCALKD-SESSION", SUFFIX) == "/x/S.GLOCALKD-SESSION"
    assert with_suffix("/x/work", SUFFIX) == "/x/work.glocalkd-session"
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "S.GLOCALKD-SESSION"
    window.sessions.save(str(path))
    qtbot.waitUntil(lambda: not window.runner.busy(), timeout=60000)  # the save runs in the background
    assert [p.name for p in folder.iterdir()] == ["S.GLOCALKD-SESSION"]
