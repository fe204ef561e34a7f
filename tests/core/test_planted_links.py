"""Every file the library writes for a user is written whole, beside its target, under a name
nobody can guess: a link planted at the target's name, or at any name a writer once used for its
temporary file, is replaced, never written through; the new file gets the umask's permissions."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from core import GLocalKD, load, write_report


def new_file_mode() -> int:
    """What any program gives a new file: 0666 less the umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


# the names writers used for their temporary files: a fixed name is one an attacker can plant
PLANTED = ("{}", ".{}.tmp", "{}.tmp", "{}.top.tmp")


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scored")
    data = folder / "lib.smi"
    data.write_text("CCO a\nCCN b\nc1ccccc1 c\nCC(=O)O d\nCCCl e\nCCOC f\n")
    graphs = load(data)
    model = GLocalKD(epochs=2, hidden_dim=16, out_dim=8, seed=0).fit(graphs)
    return graphs, model, model.score(graphs)


def _plant(folder: Path, name: str) -> list[Path]:
    """Victim files outside ``folder``'s outputs, each reached by a link at one planted name."""
    victims = []
    for k, pattern in enumerate(PLANTED):
        victim = folder / f"victim{k}.txt"
        victim.write_text(f"precious {victim.name}\n")
        victim.chmod(0o600)
        link = folder / pattern.format(name)
        if not link.exists() and not link.is_symlink():
            link.symlink_to(victim)
        victims.append(victim)
    return victims


def _check(folder: Path, name: str, victims: list[Path]) -> None:
    for victim in victims:
        assert victim.read_text() == f"precious {victim.name}\n", f"written through a link: {victim}"
        assert victim.stat().st_mode & 0o777 == 0o600
    out = folder / name
    assert out.is_file() and not out.is_symlink() and out.stat().st_size > 0
    assert out.stat().st_mode & 0o777 == new_file_mode()
    assert not [p for p in folder.iterdir() if p.name.startswith(f".{name}.") and p.name.endswith(".tmp")
                and not p.is_symlink()]


def _report(path, graphs, model, scores):
    write_report(path, graphs, scores)


def _html(path, graphs, model, scores):
    from core import html_report

    html_report(path, graphs, scores, model.get_params(), top_n=2)


def _sdf(path, graphs, model, scores):
    from core import write_sdf

    write_sdf(path, graphs, scores)


def _model(path, graphs, model, scores):
    model.save(path)


def _keep_top(path, graphs, model, scores):
    from core import screen

    library = Path(path).with_name("top-library.smi")
    library.write_text("".join(f"{m.smiles} {m.id}\n" for m in graphs.meta))
    assert screen(model, library, path, workers=1, top=2).scored == len(graphs)
    assert len(Path(path).read_text().splitlines()) == 1 + 2 + 1  # header, the 2 best, the end row


def _summary(path, graphs, model, scores):
    from core.screening.pipeline import ScreenSummary, write_summary

    assert Path(path).name.endswith(".summary.json")
    write_summary(ScreenSummary(rows=6, scored=6, rejected=0, seconds=0.1, report="r.csv"),
                  str(path)[: -len(".summary.json")], top=2)


def _result_json(path, graphs, model, scores):
    from core.evaluation.results import EvaluationResult, write_json, write_markdown

    result = EvaluationResult(dataset="d", data_path="d", protocol="cv")
    if str(path).endswith(".md"):
        write_markdown(result, path)
    else:
        write_json(result, path)


WRITERS = {"report.csv": _report, "report.html": _html, "molecules.sdf": _sdf, "model.pt": _model,
           "top.csv": _keep_top, "r.csv.summary.json": _summary, "result.json": _result_json,
           "result.md": _result_json}


@pytest.mark.parametrize("name", list(WRITERS))
def test_a_writer_replaces_planted_links_and_gives_the_usual_permissions(tmp_path, scored, name):
    graphs, model, scores = scored
    if name == "top.csv":  # a report cut in place: it exists, links wait at the other names
        write_report(tmp_path / name, graphs, scores)
    victims = _plant(tmp_path, name)
    WRITERS[name](tmp_path / name, graphs, model, scores)
    _check(tmp_path, name, victims)


def test_the_html_report_gets_the_permissions_of_every_other_output(tmp_path, scored):
    graphs, model, scores = scored
    _html(tmp_path / "r.html", graphs, model, scores)
    _report(tmp_path / "r.csv", graphs, model, scores)
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == (tmp_path / "r.csv").stat().st_mode & 0o777 \
        == new_file_mode()


def test_screen_top_never_writes_through_a_planted_link(tmp_path, scored):
    from core.cli.main import main

    _, model, _ = scored
    model.save(tmp_path / "m.pt")
    data = tmp_path / "lib.smi"
    data.write_text("CCO a\nCCN b\nc1ccccc1 c\nCC(=O)O d\nCCCl e\nnot_a_smiles f\n")
    victims = _plant(tmp_path, "r.csv")
    (tmp_path / "r.csv").unlink()  # the report itself is written first, then cut to the best rows in place
    assert main(["screen", str(tmp_path / "m.pt"), str(data), "-o", str(tmp_path / "r.csv"), "--top", "2",
                 "--workers", "1", "--device", "cpu"]) == 0
    _check(tmp_path, "r.csv", [v for v in victims if v.name != "victim0.txt"])
    rows = (tmp_path / "r.csv").read_text().splitlines()
    assert len([r for r in rows if ",ok," in r]) == 2 and "rejected" in rows[-2]  # the 2 best, the rejected row
