"""The window's actions in one table: text, shortcut, tip, menu, toolbar and the rule that enables each.

The window builds the table once (:func:`build_actions`), lays the menus out with
:func:`install_menus` and, whenever its state may have changed, enables every action in one
loop (:func:`update_actions`) over :class:`Facts`, the few facts the rules read.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from .review_book import report_unavailable

# The jobs Stop (Esc) stops, by name: training (the model keeps what it learnt), scoring a file (the
# rows scored so far), an export (nothing written), reading a data file or a report, weighing the
# views by known anomalies (the model as it was) and scoring the open graphs with a model (they
# stay unscored). A tab's rows scored again for its review stop too (app.controllers.review).
STOPPABLE = ("train", "score_file", "export", "load", "weigh", "score")
# The jobs Stop does not stop: they run to their end. Most take a moment; the chemical-space map
# ("map") can take a minute on a large set.
# Every job the window starts is named in one of the two (tests/app/test_stopping.py): a new job is
# never left out of Stop by oversight.
RUN_TO_END = ("warmup", "map", "html", "smarts", "similarity", "session", "save_model", "load_model")


@dataclass(frozen=True)
class Facts:
    """What the enablement rules read: the window's state at one moment."""

    busy: bool  # a background job runs
    has_data: bool  # graphs are open
    has_model: bool  # a model is trained or loaded
    stoppable: bool  # a job Stop stops runs (STOPPABLE, or a tab's rows scored again)
    weighable: bool  # the model is a consensus whose views known anomalies can weigh
    has_rows: bool  # the active tab has scored rows to export
    savable: bool  # the model can be saved to a file
    reviewable: bool = False  # the active tab's rows (training graphs or a scored file's) can learn from marks
    resumable: bool = False  # the active tab is a file's scoring that was stopped, which can go on
    resume_note: str = ""  # why a stopped scoring's tab cannot go on now (another model open, ...)
    has_reports: bool = False  # report tabs are open (a session keeps them, with or without data or model)
    review_note: str = ""  # why the review actions are off, when they are


@dataclass(frozen=True)
class ActionSpec:
    """One action: ``slot`` names the window's method it triggers, or a method of one of the window's
    controllers (``"clipboard.copy_rows"``)."""

    name: str
    text: str
    slot: str
    menu: str
    enabled_when: Callable[[Facts], bool]
    shortcut: QKeySequence.StandardKey | str | None = None
    tip: str = ""
    toolbar: bool = False


WEIGH_TIP = ("The consensus combines views, each a detector of its own: GLocalKD, WL counts (Weisfeiler-Lehman "
             "subtree counts: which small neighbourhoods a graph has) and graph size. Give a file of graphs known "
             "to be anomalous (e.g. reference actives; anomalies only, not the training data): each view is then "
             "trusted as far as it ranks them above the normal graphs, and a classifier learns their "
             "substructures (a logistic regression on the WL counts, seconds). No network is trained.")
REVIEW_TIPS = ("Mark the selected rows as anomalies: the consensus learns from them and re-ranks the rows not "
               "yet reviewed, without training again",
               "Mark the selected rows as not anomalous: graphs like them rank lower",
               "Clear the selected rows' marks")
SAVE_MODEL_TIPS = ("Save the trained model", "This detector has no model file (an isolation forest or OCGCN); it "
                   "retrains in the time a file would take to load")


def _always(_facts: Facts) -> bool:
    return True


# in the order of the menus and the toolbar
ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("open", "&Open…", "open_dialog", "&File", lambda f: not f.busy, QKeySequence.StandardKey.Open,
               "Open a SMILES, CSV/TSV, SDF file, a TU collection (.zip), a ranked report, a session or a model", toolbar=True),
    ActionSpec("open_folder", "Open TU &folder…", "open_folder_dialog", "&File", lambda f: not f.busy),
    ActionSpec("train", "&Train", "train", "&Model", lambda f: f.has_data and not f.busy, "Ctrl+T",
               "Train the detector on the normal graphs", toolbar=True),
    ActionSpec("stop", "&Stop", "stop", "&Model", lambda f: f.stoppable, "Esc",
               "Stop training or scoring (what is done so far is kept)", toolbar=True),
    ActionSpec("weigh", "&Weigh views by known anomalies…", "weigh_dialog", "&Model",
               lambda f: f.weighable and not f.busy, tip=WEIGH_TIP),
    ActionSpec("score_file", "Score &another file…", "score_file_dialog", "&File",
               lambda f: f.has_model and not f.busy, "Ctrl+Shift+O",
               "Score another file with the trained model; its results open in a new tab", toolbar=True),
    ActionSpec("resume_scoring", "Res&ume stopped scoring", "report_tabs.resume_active", "&File",
               lambda f: f.resumable and not f.busy, tip="Score the rest of this tab's file, whose scoring was "
               "stopped: its rows are kept and the file is read on after the line where it stopped"),
    ActionSpec("export", "&Export…", "export_dialog", "&File", lambda f: f.has_rows and not f.busy,
               QKeySequence.StandardKey.Save, "Export the ranked rows as CSV or SDF", toolbar=True),
    ActionSpec("html", "Export &HTML report…", "html_dialog", "&File", lambda f: f.has_rows and not f.busy,
               "Ctrl+Shift+E", "One HTML file: data, model, top molecules with heatmaps, histogram and ROC"),
    ActionSpec("load_model", "&Load model…", "load_model_dialog", "&File", lambda f: not f.busy, "Ctrl+L",
               toolbar=True),
    ActionSpec("save_model", "Save &model…", "save_model_dialog", "&File", lambda f: f.savable and not f.busy,
               "Ctrl+Shift+S", toolbar=True),
    ActionSpec("open_session", "Open sess&ion…", "sessions.open_dialog", "&File", lambda f: not f.busy,
               tip="Open a saved session: data, model, settings, filters, selection and tabs, without training"),
    ActionSpec("save_session", "Sa&ve session…", "sessions.save_dialog", "&File",
               lambda f: (f.has_data or f.has_model or f.has_reports) and not f.busy,
               tip="Save everything in the window to one file: data file paths, the trained model, settings, "
                   "filters, flag rule, selection and tabs"),
    ActionSpec("quit", "&Quit", "close", "&File", _always, QKeySequence.StandardKey.Quit),
    ActionSpec("copy", "&Copy", "clipboard.copy_rows", "&Edit", lambda f: f.has_data or f.has_rows,
               QKeySequence.StandardKey.Copy, "Copy the selected rows as tab-separated text with a header and the "
               "SMILES (pastes into Excel and DataWarrior)"),
    ActionSpec("copy_image", "Copy as &image", "clipboard.copy_image", "&Edit", lambda f: f.has_data or f.has_rows,
               "Ctrl+Shift+C", "Copy the selected rows' structures as one picture, each with its ID and score"),
    ActionSpec("mark_anomaly", "Mark as &anomaly", "reviewing.mark_anomaly", "&Review", lambda f: f.reviewable and not f.busy, "Ctrl+1",
               REVIEW_TIPS[0]),
    ActionSpec("mark_normal", "Mark as &not anomaly", "reviewing.mark_normal", "&Review", lambda f: f.reviewable and not f.busy, "Ctrl+2",
               REVIEW_TIPS[1]),
    ActionSpec("clear_mark", "&Clear mark", "reviewing.clear_mark", "&Review", lambda f: f.reviewable and not f.busy, "Ctrl+0",
               REVIEW_TIPS[2]),
    ActionSpec("about", "&About", "about", "&Help", _always),
)

# each menu's layout: action names, "-" for a separator, "@name" for a submenu the window fills
MENUS: dict[str, tuple[str, ...]] = {
    "&File": ("open", "open_folder", "@Open &demo data", "@Open &recent", "-", "open_session", "@Recent sessio&ns",
              "save_session", "-", "score_file", "resume_scoring", "export", "html", "-", "load_model", "save_model", "-", "quit"),
    "&Edit": ("copy", "copy_image"),
    "&Model": ("train", "stop", "-", "weigh"),
    "&Review": ("mark_anomaly", "mark_normal", "-", "clear_mark"),
    "&Help": ("about",),
}


def build_actions(window: QMainWindow) -> dict[str, QAction]:
    """One QAction per row of :data:`ACTIONS`, triggering the window's method of that row.

    Args:
        window: the main window; it owns the actions and has each row's ``slot`` method (looked up when
            the action is triggered when it is a controller's: the controllers come after the actions).

    Returns:
        The actions by name.
    """
    actions = {}
    for spec in ACTIONS:
        action = QAction(spec.text, window)
        action.triggered.connect(getattr(window, spec.slot) if "." not in spec.slot else
                                 lambda _checked=False, slot=spec.slot: attrgetter(slot)(window)())
        if spec.shortcut:
            action.setShortcut(spec.shortcut)
        action.setStatusTip(spec.tip or spec.text)
        if spec.tip and spec.name == "weigh":  # long: shown as a tooltip too
            action.setToolTip(spec.tip)
        actions[spec.name] = action
    return actions


def install_menus(window: QMainWindow, actions: dict[str, QAction]) -> dict[str, QMenu]:
    """Lay the actions out in the menu bar (:data:`MENUS`) and the toolbar.

    Args:
        window: the main window.
        actions: from :func:`build_actions`.

    Returns:
        The submenus the window fills itself, by their text (e.g. ``"Open &recent"``).
    """
    submenus = {}
    bar = window.menuBar()
    for title, items in MENUS.items():
        menu = bar.addMenu(title)
        menu.setToolTipsVisible(True)  # e.g. why the review actions are off
        for item in items:
            if item == "-":
                menu.addSeparator()
            elif item.startswith("@"):
                submenus[item[1:]] = menu.addMenu(item[1:])
            else:
                menu.addAction(actions[item])
    tools = window.addToolBar("Main")
    tools.setObjectName("main_toolbar")
    tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    for spec in ACTIONS:
        if spec.toolbar:
            tools.addAction(actions[spec.name])
    return submenus


GROUPED_NOTE = ("The rows are grouped by scaffold: open a group (double-click it) to mark its molecules, "
                "or untick Group by scaffold")


def facts_of(state, busy: bool, stoppable: bool, report=None, grouped: bool = False, resumable: bool = False,
             resume_note: str = "", has_reports: bool = False) -> Facts:
    """The facts the rules read, from the window's state.

    Args:
        state: the :class:`app.state.AppState`.
        busy: a background job runs (re-ranking by review marks does not count: marks apply at once).
        stoppable: training or scoring a file runs.
        report: the ranked report of the active tab when it is a report's tab (its rows can be
            exported, and reviewed with the open consensus), None on the training tab.
        grouped: the training tab shows scaffold groups, not molecules: a mark would go to a row
            of the table behind them (the review actions are off).
        resumable: the active tab is a file's scoring that was stopped and can be resumed.
        resume_note: why the active tab's stopped scoring cannot be resumed now ("" when it can).
        has_reports: report tabs are open (any tab, active or not).

    Returns:
        The facts.
    """
    model = state.model
    review_note = report_unavailable(model, report) if report is not None else state.review_unavailable()
    if report is None and grouped and not review_note:
        review_note = GROUPED_NOTE
    return Facts(busy=busy, has_data=state.graphs is not None and len(state.graphs) > 0, has_model=model is not None,
                 stoppable=stoppable, weighable=state.weighable(), savable=model is not None and model.can_save,
                 has_rows=state.scores is not None or report is not None, reviewable=not busy and not review_note,
                 review_note=review_note, resumable=resumable, resume_note=resume_note, has_reports=has_reports)


def update_actions(actions: dict[str, QAction], facts: Facts) -> None:
    """Enable each action by its rule.

    Args:
        actions: from :func:`build_actions`.
        facts: the window's state now.
    """
    for spec in ACTIONS:
        actions[spec.name].setEnabled(spec.enabled_when(facts))
    actions["save_model"].setToolTip(SAVE_MODEL_TIPS[0] if facts.savable or not facts.has_model
                                     else SAVE_MODEL_TIPS[1])
    resume = next(spec for spec in ACTIONS if spec.name == "resume_scoring")
    actions["resume_scoring"].setToolTip(facts.resume_note or resume.tip)  # why it is off, as the review's notes
    actions["resume_scoring"].setStatusTip(facts.resume_note or resume.tip)
    for name, tip in zip(("mark_anomaly", "mark_normal", "clear_mark"), REVIEW_TIPS):
        shown = tip if facts.reviewable or not facts.review_note else facts.review_note
        actions[name].setToolTip(shown)
        actions[name].setStatusTip(shown)
