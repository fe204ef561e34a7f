"""``score`` and ``screen`` read a molecule file with one reader and score it on one streaming path."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.cli.main import main

TRAIN = ["--epochs", "1", "--hidden", "16", "--out-dim", "8", "--device", "cpu"]



TABLE = ('id,smiles,label\n'
         'a,CCO,1\n'
         '"b\nsecond line",CCN,0\n'  # a quoted id with a line break is one row, not a phantom one
         'h,"CC\nO",1\n'  # a SMILES with a line break is rejected, never scored as CC
         'q,"CCC,1\n'  # an unmatched quote is rejected
         'c,c1ccccc1,\n'
         '=cmd,C1CC,1\n')


def test_score_and_screen_write_the_same_report(model_file, tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_text(TABLE)
    for command in ("score", "screen"):
        assert main([command, str(model_file), str(data), "-o", str(tmp_path / f"{command}.csv"),
                     "--device", "cpu"]) == 0, capsys.readouterr().err
    assert (tmp_path / "score.csv").read_bytes() == (tmp_path / "screen.csv").read_bytes()
    text = (tmp_path / "screen.csv").read_text()
    assert '"b\nsecond line"' in text and "unmatched quote" in text and "contains a space or line break" in text
    assert "'=cmd" in text  # spreadsheet-safe


def test_score_and_screen_reject_a_name_without_its_smiles_as_load_does(model_file, tmp_path, capsys):
    data = tmp_path / "gap.smi"
    data.write_text("CCO a\n mol20\nCCN b\n")
    for command in ("score", "screen"):
        assert main([command, str(model_file), str(data), "-o", str(tmp_path / f"{command}.csv"),
                     "--device", "cpu"]) == 0, capsys.readouterr().err
    assert (tmp_path / "score.csv").read_bytes() == (tmp_path / "screen.csv").read_bytes()
    assert "rejected: line 2: no SMILES before the name 'mol20'" in (tmp_path / "screen.csv").read_text()


def test_screen_reads_rows_as_load_does(tmp_path):
    from core import load
    from core.screening.pipeline import iter_smiles_rows

    data = tmp_path / "t.csv"
    data.write_text(TABLE)
    graphs = load(data)
    rows = list(iter_smiles_rows(data))
    assert len(rows) == len(graphs) + len(graphs.rejects) == 6
    assert [r.id for r in rows if r.problem is None and r.id != "h"][:3] == [m.id for m in graphs.meta][:3]
    assert {r.line for r in graphs.rejects} == {5, 7, 9}


@pytest.mark.parametrize("content", ["", "id,smiles\n", "# only a comment\n\n", "id,smiles\na,C1CC\nb,Xyz\n"])
def test_screen_exits_2_where_score_does(model_file, tmp_path, capsys, content):
    data = tmp_path / "bad.csv"
    data.write_text(content)
    for command in ("score", "screen"):
        assert main([command, str(model_file), str(data), "-o", str(tmp_path / "r.csv"), "--device", "cpu"]) == 2
        err = capsys.readouterr().err
        assert "glocalkd: error: " in err and "Traceback" not in err
    assert not (tmp_path / "r.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".screen-")]


def test_an_interrupt_before_the_first_row_keeps_the_old_report(model_file, tmp_path, capsys, monkeypatch):
    from core.screening import scoring

    data = tmp_path / "t.smi"
    data.write_text("CCO a\nCCN b\n")
    report = tmp_path / "r.csv"
    report.write_text("the old report\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(scoring, "score_chunk", interrupted)
    assert main(["screen", str(model_file), str(data), "-o", str(report), "--device", "cpu"]) == 130
    assert report.read_text() == "the old report\n"
    assert "left as it was" in capsys.readouterr().err


def _children(pid):
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _as_from_a_terminal() -> None:
    """The child's SIGINT and SIGHUP as a terminal gives them, also when this suite runs under
    nohup or in the background (they are then inherited ignored, and screen respects that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, "Ctrl+C", signal.SIGKILL])
def test_sigterm_and_sighup_stop_screen_like_ctrl_c(model_file, tmp_path, sig):
    """As ``timeout`` or a batch scheduler stops a run: exit 130, the report of the rows scored,
    no temporary folder, no worker left behind. Ctrl+C reaches the whole process group (the
    workers print no traceback); a parent killed outright takes its workers with it."""
    from tests.conftest import RESOURCES
    import gzip

    with gzip.open(RESOURCES / "moses_sample.csv.gz", "rt") as fh:
        smiles = [line.strip() for line in fh][1:]
    data = tmp_path / "lib.smi"
    data.write_text("\n".join(f"{s} m{k}" for k, s in enumerate(smiles * 20)) + "\n")
    report = tmp_path / "r.csv"
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.Popen([sys.executable, "-m", "core", "screen", str(model_file), str(data), "-o", str(report),
                             "--chunk-size", "64", "--workers", "2", "--device", "cpu"],
                            stderr=subprocess.PIPE, text=True, env=env, cwd=root, start_new_session=True,
                            preexec_fn=_as_from_a_terminal)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait for a few chunks scored
        tmp = [p for p in tmp_path.iterdir() if p.name.startswith(".screen-")]
        if tmp and len(list(tmp[0].glob("chunk*.csv"))) >= 3:
            break
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert workers
    if sig == "Ctrl+C":
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends it: to every process of the group
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGKILL:
        time.sleep(1)
        assert not [w for w in workers if w.is_running() and w.status() != "zombie"]
        return
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted after line" in err
    lines = report.read_text().splitlines()
    assert lines[0].startswith("rank,") and len(lines) > 50  # chunks of 8, 16, 32 rows at least
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".screen-")]
    time.sleep(0.5)
    assert not [w for w in workers if w.is_running() and w.status() != "zombie"]


def test_an_sdf_file_is_streamed_too_and_reads_as_load_reads_it(model_file, tmp_path, capsys):
    from core import load
    from core.io.ranked_report import read_report
    from tests.conftest import sdf_ethanol

    data = tmp_path / "m.sdf"
    data.write_text(sdf_ethanol("first") + sdf_ethanol("second") + "broken\nnot a molblock\nM  END\n$$$$\n")
    for command in ("score", "screen"):
        assert main([command, str(model_file), str(data), "-o", str(tmp_path / f"{command}.csv"),
                     "--device", "cpu"]) == 0, capsys.readouterr().err
    assert (tmp_path / "score.csv").read_bytes() == (tmp_path / "screen.csv").read_bytes()
    report, graphs = read_report(tmp_path / "screen.csv"), load(data)
    assert sorted(report.ids) == sorted(m.id for m in graphs.meta) and set(report.smiles) == {"CCO"}
    assert [r.reason for r in report.rejects] == [f"line {graphs.rejects[0].line}: {graphs.rejects[0].reason}"]


def test_properties_and_alerts_are_the_same_from_score_and_screen(model_file, tmp_path, capsys):
    from core import PROPERTY_COLUMNS, read_report

    data = tmp_path / "t.csv"
    data.write_text("id,smiles\nasp,CC(=O)Oc1ccccc1C(=O)O\nacr,C=CC(=O)N\nq,C[N+](C)(C)C\nbad,C1CC\n")
    for command in ("score", "screen"):
        assert main([command, str(model_file), str(data), "-o", str(tmp_path / f"{command}.csv"), "--device", "cpu",
                     "--properties", "--alerts"]) == 0, capsys.readouterr().err
    assert (tmp_path / "score.csv").read_bytes() == (tmp_path / "screen.csv").read_bytes()
    report = read_report(tmp_path / "screen.csv")
    row = {i: k for k, i in enumerate(report.ids)}
    assert set(report.properties) == set(PROPERTY_COLUMNS)
    assert report.properties["mw"][row["asp"]] == pytest.approx(180.16)
    assert report.properties["formal_charge"][row["q"]] == 1
    assert "Michael_acceptor" in report.alerts[row["acr"]] and report.alerts[row["q"]] != ""
    assert len(report.rejects) == 1
    # off by default: the usual columns only
    assert main(["screen", str(model_file), str(data), "-o", str(tmp_path / "plain.csv"), "--device", "cpu"]) == 0
    plain = read_report(tmp_path / "plain.csv")
    assert plain.properties == {} and plain.alerts is None
    assert list(plain.score) == list(report.score)


def test_every_command_stops_on_sigterm_as_on_ctrl_c(tmp_path):
    """SIGTERM (a job scheduler, ``kill``) killed every command but ``screen`` outright: exit -15,
    no message, and ``merge-reports`` left its scratch folder beside the report. Every command now
    runs where SIGTERM raises KeyboardInterrupt, so its clean-up runs and it exits 130. Each
    command's work here makes a scratch folder, then is sent SIGTERM."""
    script = tmp_path / "stopped.py"
    script.write_text(f"""
import importlib, os, signal, sys, time
cli = importlib.import_module("core.cli.main")
from core.runtime.scratch import make_scratch, remove_scratch

def run(args):
    folder = make_scratch(".work-", {str(tmp_path)!r})
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
    finally:
        remove_scratch(folder)

for name, module in cli.COMMANDS.items():
    module.run = run
sys.exit(cli.main(sys.argv[1:]))
""")
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    for argv in (["merge-reports", str(data), "-o", str(tmp_path / "m.csv")], ["train", str(data), "-o",
                 str(tmp_path / "m.pt")], ["info", str(data)], ["evaluate", str(data)]):
        done = subprocess.run([sys.executable, str(script), *argv], capture_output=True, text=True, timeout=120)
        assert done.returncode == 130 and "interrupted" in done.stderr, (argv, done.returncode, done.stderr)
        assert not list(tmp_path.glob(".work-*")), argv  # the command's clean-up ran


def test_merge_reports_says_why_a_shard_cannot_be_read(tmp_path, capsys):
    """A shard that does not exist, or a folder given as one, was refused as "PATH:1: not a
    ranked report": the check behind it answered False for a file it could not read. It now
    names the file and why; a file that reads but is no report keeps its own message."""
    from core.cli.main import main

    given = tmp_path / "in"
    given.mkdir()
    table = given / "t.smi"
    table.write_text("CCO a\n")
    for shard, message in ((given / "missing.csv", "missing.csv: no such file"),
                           (given, f"{given}: a folder, not a file"),
                           (table, "t.smi:1: not a ranked report")):
        assert main(["merge-reports", str(shard), "-o", str(tmp_path / "m.csv")]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("not a ranked report") == (shard == table), err


def test_a_command_given_one_of_a_tu_collections_files_reads_the_collection(tu_folder, capsys):
    """``glocalkd info DS_A.txt`` read the collection's edge list as a table of SMILES and
    rejected every row; the loader behind every command now reads the collection beside it."""
    from core.cli.main import main

    a_file = next(tu_folder.glob("*_A.txt"))
    assert main(["info", str(a_file)]) == 0
    from_file = capsys.readouterr().out
    assert main(["info", str(tu_folder)]) == 0
    assert "graphs (tu)" in from_file and from_file == capsys.readouterr().out


@pytest.mark.parametrize("existing", [False, True])
def test_an_interrupted_command_says_what_it_did_not_write(model_file, tmp_path, capsys, monkeypatch, existing):
    """Ctrl+C during a score held in memory (or any command) said only "interrupted": the message
    now names the output left unwritten, and an existing one is kept as it was."""
    from core.screening import score_file as module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "score_file", interrupted)
    data = tmp_path / "t.smi"
    data.write_text("CCO a\nCCN b\n")
    report = tmp_path / "r.csv"
    if existing:
        report.write_text("the old report\n")
    assert main(["score", str(model_file), str(data), "-o", str(report), "--device", "cpu"]) == 130
    assert f"glocalkd: interrupted; not written: {report}" in capsys.readouterr().err
    assert report.exists() == existing and (not existing or report.read_text() == "the old report\n")


def test_score_screen_and_evaluate_read_a_renamed_label_column(model_file, tmp_path, herg_path, capsys):
    """A label column named 'blocker': ``score`` filled the report's labels, ``screen`` refused the
    option (and left every label empty), ``evaluate`` said the data had no labels."""
    import csv

    lines = herg_path.read_text().splitlines()
    data = tmp_path / "herg_b.csv"
    data.write_text("\n".join(["Drug_ID,Drug,blocker", *(line.replace("\t", ",") for line in lines[1:])]) + "\n")
    columns = ["--smiles-column", "Drug", "--id-column", "Drug_ID", "--label-column", "blocker"]
    labels = {}
    for command in ("score", "screen"):
        out = tmp_path / f"{command}.csv"
        assert main([command, str(model_file), str(data), "-o", str(out), "--device", "cpu", *columns]) == 0
        with open(out, newline="") as fh:
            labels[command] = [(r["id"], r["label"]) for r in csv.DictReader(fh) if r["status"] == "ok"]
    assert labels["score"] == labels["screen"] and {label for _, label in labels["screen"]} == {"0", "1"}
    assert main(["evaluate", str(data), "--method", "size", "--folds", "2", "--anomaly", "0", *columns,
                 "--threads", "1"]) == 0
    assert "655 labelled graphs" in capsys.readouterr().err


def test_screen_puts_its_chunk_files_in_scratch_without_a_cluster(model_file, tmp_path, monkeypatch):
    """``screen --scratch DIR`` without --scheduler was accepted and ignored."""
    from core.runtime import scratch as module

    made = []
    real = module.make_scratch
    monkeypatch.setattr(module, "make_scratch", lambda prefix, folder: made.append(str(folder)) or real(prefix, folder))
    import core.screening.pipeline as pipeline

    monkeypatch.setattr(pipeline, "make_scratch", module.make_scratch)
    data = tmp_path / "t.smi"
    data.write_text("CCO a\nCCN b\n")
    (tmp_path / "fast").mkdir()
    assert main(["screen", str(model_file), str(data), "-o", str(tmp_path / "r.csv"), "--device", "cpu",
                 "--workers", "1", "--scratch", str(tmp_path / "fast")]) == 0
    assert str(tmp_path / "fast") in made
