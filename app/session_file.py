"""Session files (``.glocalkd-session``): the whole window in one file, reopened without training.

A session file is a zip holding ``session.json`` (the data file's path, loader options and
SHA-256 digest; the training form; the filters, flag rule and view choices; the selected
molecule; the open tabs and which one is shown), ``model.pt`` (the trained model's own file, so
reopening never retrains) and ``reports/N.csv`` for each scored file's ranked report that lives
only in the window (reports opened from disk are referred to by path and digest). The writing and
reading here are the background jobs of :class:`app.controllers.sessions.SessionsController`;
no Qt. Every file is written through :func:`core.atomic_output`.
"""
from __future__ import annotations

import functools
import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any

from core import SESSION_SUFFIX as SUFFIX

FORMAT = "glocalkd-session"
VERSION = 1
FILTER = f"GLocalKD Studio session (*{SUFFIX})"


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in blocks).

    Args:
        path: the file.

    Returns:
        ``"sha256:"`` and 64 hexadecimal digits.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def write_session(path: str, doc: dict, model, reports: list[dict], job=None) -> str:
    """Write a session file (a background job).

    Args:
        path: the session file to write.
        doc: what the window holds (:meth:`SessionsController.capture`): JSON values.
        model: the trained model (None, or one without a model file: the session holds none).
        reports: per open report tab, ``{"path", "embed", "review", "view"}``: embedded reports are
            copied into the file, the others referred to by path and digest; the marks on its rows
            and how the tab showed them are kept.
        job: the runner's job handle (closing the window stops reading and scoring the data).

    Returns:
        The path written.

    Raises:
        GLocalKDError: ``path`` is one of the reports it keeps.
        OSError: ``path`` cannot be written (a folder of that name, no such folder), naming it;
            checked before the model and reports are gathered.
    """
    from core import atomic_output, check_outputs, scratch_folder

    check_outputs([path], [r["path"] for r in reports if r.get("path")])  # as every command checks its outputs
    doc = json.loads(json.dumps(doc))  # a copy, and a check that it is plain JSON (the data's digest is its graphs')
    with scratch_folder("glocalkd-session-") as tmp:
        model_bytes = None
        if model is not None and model.can_save:
            model.save(Path(tmp) / "model.pt")
            model_bytes = (Path(tmp) / "model.pt").read_bytes()
        doc["model"] = "model.pt" if model_bytes is not None else None
        entries = []
        embedded: list[tuple[str, str]] = []
        for k, report in enumerate(reports):
            entry = {"title": report.get("title", ""), "scored": bool(report.get("embed"))}
            if report.get("embed"):
                entry["embedded"] = f"reports/{k}.csv"
                entry["name"] = Path(report["path"]).name
                embedded.append((entry["embedded"], report["path"]))
                if report.get("input"):  # the file it was scored from: a stopped scoring resumes after reopening
                    entry["input"] = report["input"]
            else:
                entry["path"] = report["path"]
                entry["digest"] = file_digest(report["path"]) if Path(report["path"]).is_file() else ""
            if report.get("review"):
                entry["review"] = report["review"]  # the marks on its rows, with their IDs
            if report.get("view"):
                entry["view"] = report["view"]  # how its tab showed them: filters, query and sort
            entries.append(entry)
        doc["reports"] = entries
        doc["format"], doc["version"] = FORMAT, VERSION
        with atomic_output(path, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("session.json", json.dumps(doc, indent=2))
            if model_bytes is not None:
                zf.writestr("model.pt", model_bytes)
            for name, source in embedded:
                zf.write(source, name)
    return path


# the loader's options a session keeps (core.load's), each with what it may hold: {"smiles_column": 5}
# reached the loader and failed there with a traceback
_DATA_OPTIONS = {"smiles_column": (str, type(None)), "id_column": (str, type(None)),
                 "label_column": (str, type(None)), "standardise": bool}


def _loader_options(options: object) -> bool:
    """Whether ``options`` are loader options a session may hold (:data:`_DATA_OPTIONS`)."""
    return isinstance(options, dict) and all(k in _DATA_OPTIONS and isinstance(v, _DATA_OPTIONS[k])
                                             for k, v in options.items())


def _changed(data: dict, source: str, digest: str) -> bool:
    """Whether the data read now (its graphs' ``digest`` as read, :func:`core.graphs_digest`; a TU
    folder's too) differs from the session's, or, in a session of an older version, its file's bytes."""
    if data.get("graphs"):
        return digest != data["graphs"]
    return bool(data.get("digest")) and Path(source).is_file() and file_digest(source) != data["digest"]


@dataclass
class Reopened:
    """A session read back: what the window shows again, and what it has to say about it."""

    path: str
    doc: dict
    model: Any = None
    loaded: Any = None  # app.tasks.Loaded of the data file (None: missing, or the session had none)
    scored: tuple | None = None  # app.tasks.score's (scores, size model, size scores, graphs)
    reports: list[tuple[dict, Any]] = field(default_factory=list)  # (entry, RankedReport)
    problems: list[str] = field(default_factory=list)  # each: what happened and what the user can do
    # the review marks on each file the session names that is not opened (moved, replaced): they wait
    # for it (:func:`kept_marks`), each {"kind": "data" or "report", "path", "name", "digest", "graphs", "marks"}
    waiting: list[dict] = field(default_factory=list)


def kept_marks(out: Reopened, kind: str, path: str, marks: object, digest: str | None = None,
               graphs: str | None = None) -> str:
    """Keep the review marks on a file the session names but could not open (its data file or a
    report, moved or replaced) waiting for that file, and say so: a report's marks were dropped
    with its entry, for good, while the data file's came back once it was opened where it is now.

    Args:
        out: the session being read; the marks go in its :attr:`Reopened.waiting`.
        kind: ``"data"`` or ``"report"``.
        path: the file as the session names it.
        marks: its saved marks (:func:`app.review_book.marks_with_ids`).
        digest: its bytes' digest when saved (:func:`file_digest`), if known.
        graphs: the data's graphs' digest when saved (:func:`core.graphs_digest`), if known.

    Returns:
        The sentence that says the marks come back, to follow the problem; "" without marks.
    """
    from core import counted

    if not isinstance(marks, list) or not marks:
        return ""
    name = Path(path).name
    out.waiting.append({"kind": kind, "path": path, "name": name, "digest": digest, "graphs": graphs,
                        "marks": marks})
    return (f" Its {counted(len(marks), 'review mark')} {'comes' if len(marks) == 1 else 'come'} back when you "
            f"open {name} where it is now.")


_FIELDS = {"model": (str, type(None)), "model_note": (str,), "data": (dict, type(None)), "reports": (list,),
           "training": (dict,), "review": (list,), "form": (dict,), "view": (dict,), "filters": (dict,),
           "similarity": (dict,), "selected": (dict, type(None)), "current_tab": (int,), "bottom_tab": (int,)}


def check_document(doc: dict) -> None:
    """Check that a session document holds what the window reads, each field of its kind, so that a
    damaged or hand-edited file is refused as damaged and never half-restores the window.

    Args:
        doc: the parsed ``session.json``.

    Raises:
        ValueError: a field of the wrong kind, naming it.
    """
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise ValueError(f"{what} is not what a session holds")

    for name, kinds in _FIELDS.items():
        if name in doc:
            need(isinstance(doc[name], kinds) and not isinstance(doc[name], bool), name)
    data = doc.get("data")
    if data:
        need(isinstance(data.get("path"), str) and data["path"].strip() != ""
             and _loader_options(data.get("options") or {}) and isinstance(data.get("digest") or "", str)
             and isinstance(data.get("graphs") or "", str), "data")
    need(_marks_ok(doc.get("review") or []), "review")
    for entry in doc.get("reports", []):
        need(isinstance(entry, dict) and any(isinstance(entry.get(k), str) and entry[k] for k in ("embedded", "path"))
             and isinstance(entry.get("review") or [], list), "a report entry")
        need(_marks_ok(entry.get("review") or []), "a report entry's review")
        need(entry.get("name") is None or _bare_name(entry["name"]), "a report entry's name")
        scored = entry.get("input")
        need(scored is None or (isinstance(scored, dict) and isinstance(scored.get("path"), str)
                                and _loader_options(scored.get("options"))), "a report entry's input")
        need(_view_ok(entry.get("view") or {}), "a report entry's view")
    filters = doc.get("filters") or {}
    need(_view_ok(filters) and isinstance(filters.get("smarts", ""), str)
         and all(_number(filters.get(k)) for k in ("percentile", "rate"))
         and all(isinstance(filters.get(k, False), bool) for k in ("grouped", "flagged_only"))
         and isinstance(filters.get("group"), (str, type(None))), "filters")
    similarity = doc.get("similarity") or {}
    need(isinstance(similarity.get("query", ""), str) and _number(similarity.get("minimum")), "similarity")
    training = doc.get("training") or {}
    need(isinstance(training.get("trained_on_shown", 0), int) and not isinstance(training.get("trained_on_shown"), bool)
         and all(isinstance(training.get(k), (str, type(None))) for k in ("normal_label", "known_label")), "training")


def _marks_ok(marks: object) -> bool:
    """Whether review marks are as :func:`app.review_book.marks_with_ids` writes them: each a row's
    index, ID and SMILES and a verdict of True or False (a hand-edited "not anomaly", "false" or
    null once came back as an anomaly, or as "not anomaly")."""
    return isinstance(marks, list) and all(
        isinstance(m, dict) and isinstance(m.get("anomaly"), bool) and isinstance(m.get("id", ""), str)
        and isinstance(m.get("smiles", ""), str)
        and (m.get("index") is None or (isinstance(m["index"], int) and not isinstance(m["index"], bool)))
        for m in marks)


def _number(value: object) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def _view_ok(view: object) -> bool:
    """Whether a tab's view (the training tab's filters, a report tab's ``view``) holds a text filter,
    ranges of numbers, a similarity query and a sort of the kinds the window reads."""
    if not isinstance(view, dict):
        return False
    ranges, similarity, sort = view.get("ranges", {}), view.get("similarity") or {}, view.get("sort")
    return (isinstance(view.get("text", ""), str) and isinstance(ranges, dict)
            and all(isinstance(v, list) and len(v) == 2 and all(map(_number, v)) for v in ranges.values())
            and isinstance(similarity, dict) and isinstance(similarity.get("query", ""), str)
            and _number(similarity.get("minimum"))
            and (sort is None or (isinstance(sort, list) and len(sort) == 2 and all(isinstance(v, str) for v in sort))))


def _bare_name(name: object) -> bool:
    """Whether ``name`` is a file name alone (no folder, not ``..``): an embedded report is copied to
    the scratch folder under its name, so a name such as ``/home/x/.bashrc`` or ``../../x`` in a
    shared session file wrote anywhere the user can write."""
    return (isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name
            and "\0" not in name and Path(name).name == name)


def _held(path: str, what: str, read: Callable[[], Any]) -> Any:
    """Read a part the session file holds (copied to a scratch file first): a part that does not
    read is the session file's damage, so the error names the session file, not the scratch copy."""
    from core import GLocalKDError

    try:
        return read()
    except GLocalKDError as exc:
        raise GLocalKDError(f"{path}: not a GLocalKD Studio session file, or damaged: {what} does not read "
                            f"({str(exc).split(': ', 1)[-1]})") from None


def read_session(path: str, scratch: str, device: str, job=None) -> Reopened:
    """Read a session file back (a background job): its model (never trained again), its data file
    (read and scored with that model when it is where it was), and its reports. A missing or
    changed file is said in :attr:`Reopened.problems` with what to do; the rest still opens.

    Args:
        path: the session file.
        scratch: a folder for the reports the session holds (the window's scratch folder).
        device: where the model runs.
        job: the runner's job handle (unused).

    Returns:
        The reopened session.

    Raises:
        GLocalKDError: the file is not a session file (a model file is said to be one), or is damaged.
    """
    from core import ZIP_ERRORS, GLocalKDError, atomic_output, file_kind, load_detector, make_scratch, read_report

    from . import tasks

    if file_kind(path) == "model":  # a model file, whatever its name: not a damaged session
        raise GLocalKDError(f"{path}: a GLocalKD Studio model file, not a session file: open it with File ▸ Open, "
                            "which loads the model")
    try:
        with zipfile.ZipFile(path) as zf:
            doc = json.loads(zf.read("session.json"))
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise GLocalKDError(f"{path}: not a GLocalKD Studio session file")
            if doc.get("version") != VERSION:
                raise GLocalKDError(f"{path}: session file version {doc.get('version')!r} is not one this version "
                                    f"reads ({VERSION})")
            check_document(doc)
            model_bytes = zf.read(doc["model"]) if doc.get("model") else None
            embedded = {e["embedded"]: zf.read(e["embedded"]) for e in doc.get("reports", []) if e.get("embedded")}
    except ZIP_ERRORS as exc:
        raise GLocalKDError(f"{path}: not a GLocalKD Studio session file, or damaged ({exc})") from None
    job = job if job is not None else tasks.Job()
    out = Reopened(path, doc)
    folder = make_scratch("session-", scratch)
    if model_bytes is not None:
        with atomic_output(folder / "model.pt", "wb") as fh:
            fh.write(model_bytes)
        out.model = _held(path, "its model", lambda: load_detector(folder / "model.pt", device=device))
    elif doc.get("model_note"):
        out.problems.append(doc["model_note"])
    data = doc.get("data")
    if data:
        source = data["path"]
        keep = functools.partial(kept_marks, out, "data", source, doc.get("review"), data.get("digest"),
                                 data.get("graphs"))
        if not Path(source).is_file() and not Path(source).is_dir():
            out.problems.append(f"The data file {source} is not there any more (moved, renamed or deleted). The "
                                "session's model is loaded: open the data file where it is now (File ▸ Open) and "
                                "it is scored with that model, without training." + keep())
        else:
            try:
                out.loaded = tasks.load_data(source, data.get("options") or {}, job)
            except GLocalKDError as exc:
                out.problems.append(f"The data file {source} could not be read now ({exc}). The session's model "
                                    "is loaded: open the data file again (File ▸ Open) once it reads." + keep())
            if out.loaded is not None and _changed(data, source, out.loaded.digest):
                out.problems.append(f"The data file {source} has changed since the session was saved. It is read "
                                    "and scored as it is now with the session's model (not trained again); rows, "
                                    "the selection and the Evaluation tab may differ. Train again if the change "
                                    "matters.")
        if out.loaded is not None:
            if out.model is not None and len(out.loaded.graphs):
                train = doc.get("training") or {}
                out.scored = tasks.score(out.model, out.loaded.graphs, train.get("normal_label"), None, job)
    for k, entry in enumerate(doc.get("reports", [])):
        if entry.get("embedded"):  # a folder of its own: two reports of one name never share a file
            target = folder / str(k) / (entry.get("name") or Path(entry["embedded"]).name)
            target.parent.mkdir()
            with atomic_output(target, "wb") as fh:
                fh.write(embedded[entry["embedded"]])
            report = _held(path, f"its report {entry['embedded']}", functools.partial(read_report, target))
            if entry.get("input"):  # scored in the window: a stopped scoring resumes from its file
                report.scored_input = {"path": entry["input"]["path"], "options": dict(entry["input"]["options"])}
            out.reports.append((entry, report))
        elif not Path(entry["path"]).is_file():
            gone = "is a folder now" if Path(entry["path"]).is_dir() else "is not there any more"
            out.problems.append(f"The report {entry['path']} {gone}: its tab is not opened. Open it "
                                "where it is now (File ▸ Open)."
                                + kept_marks(out, "report", entry["path"], entry.get("review"), entry.get("digest")))
        else:
            try:
                report = read_report(entry["path"])
            except GLocalKDError as exc:  # replaced by something else: that tab only is left out, as a data file is
                out.problems.append(f"The report {entry['path']} could not be read now ({exc}): its tab is not "
                                    "opened. Open it again (File ▸ Open) once it reads."
                                    + kept_marks(out, "report", entry["path"], entry.get("review"),
                                                 entry.get("digest")))
                continue
            if entry.get("digest") and file_digest(entry["path"]) != entry["digest"]:
                out.problems.append(f"The report {entry['path']} has changed since the session was saved; it is "
                                    "shown as it is now.")
            out.reports.append((entry, report))
    return out


__all__ = ["SUFFIX", "FORMAT", "VERSION", "FILTER", "file_digest", "write_session", "read_session",
           "Reopened", "kept_marks"]
