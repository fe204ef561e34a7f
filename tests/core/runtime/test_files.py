"""The one writer (atomic_output, replace_output) and the one output check (check_outputs)."""
from __future__ import annotations

import os

import pytest

from core.errors import GLocalKDError
from core.runtime.files import atomic_output, check_outputs, new_file_mode, replace_output


@pytest.fixture
def umask():
    """Set the process's umask for one test, then restore it."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_file_gets_the_umasks_usual_permissions(tmp_path, umask, mask, mode):
    umask(mask)
    assert new_file_mode() == mode
    with atomic_output(tmp_path / "new.csv", "w") as fh:
        fh.write("x\n")
    assert (tmp_path / "new.csv").stat().st_mode & 0o777 == mode
    finished = tmp_path / "scratch.csv"
    finished.write_text("y\n")
    finished.chmod(0o600)
    replace_output(finished, tmp_path / "moved.csv")
    assert (tmp_path / "moved.csv").stat().st_mode & 0o777 == mode


def test_a_file_written_again_keeps_its_permissions(tmp_path):
    target = tmp_path / "r.csv"
    target.write_text("old\n")
    target.chmod(0o640)
    with atomic_output(target, "w") as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o640


def test_a_link_at_the_name_is_replaced_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    victim.chmod(0o600)
    (tmp_path / "r.csv").symlink_to(victim)
    with atomic_output(tmp_path / "r.csv", "w") as fh:
        fh.write("report\n")
    assert victim.read_text() == "precious\n" and victim.stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "r.csv").is_symlink() and (tmp_path / "r.csv").read_text() == "report\n"
    assert (tmp_path / "r.csv").stat().st_mode & 0o777 == new_file_mode()  # not the victim's


@pytest.mark.parametrize("where", ["missing", "file"])
def test_a_file_that_cannot_be_made_is_named_never_the_temporary_file(tmp_path, where):
    """The one writer's error names the file asked for and why (every writer of core and the app goes
    through it: tests/architecture/test_one_writer.py), not the hidden temporary file beside it."""
    folder = tmp_path / "gone"
    if where == "file":
        folder.write_text("a file where the folder should be")
    target = folder / "out.html"
    with pytest.raises(OSError) as caught, atomic_output(target, "w") as fh:
        fh.write("never")
    assert caught.value.filename == str(target) and ".tmp" not in str(caught.value)
    assert str(folder) in caught.value.strerror  # which folder is missing, or is a file


def test_a_rename_that_fails_names_the_file_never_the_temporary_file(tmp_path):
    """A folder at the name fails the rename, whose error named the hidden temporary file first
    ("'.d.pt.1bx5_qfb.tmp' -> 'd.pt'"); an error of another file the writer reads passes unchanged."""
    import errno

    target = tmp_path / "d.csv"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as caught, atomic_output(target, "w") as fh:
        fh.write("never")
    assert caught.value.filename == str(target) and caught.value.filename2 is None
    assert caught.value.errno == errno.EISDIR and ".tmp" not in str(caught.value)
    assert [p.name for p in tmp_path.iterdir()] == ["d.csv"]
    with pytest.raises(FileNotFoundError) as caught, atomic_output(tmp_path / "r.csv", "w"):
        open(tmp_path / "missing.csv")
    assert caught.value.filename == str(tmp_path / "missing.csv")


def test_the_model_writer_checks_its_file_first_and_names_it(tmp_path, monkeypatch):
    """``save_detector`` to a folder's name said the temporary file's name; it is checked before
    the model's state is encoded, as every command checks its outputs."""
    from core.runtime import model_files

    def refuse(state):
        raise AssertionError("the state was encoded before the file was checked")

    monkeypatch.setattr(model_files, "state_digest", refuse)
    (tmp_path / "d.pt").mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        model_files.write_model_file(tmp_path / "d.pt", {"w": 1})
    assert caught.value.filename == str(tmp_path / "d.pt") and ".tmp" not in str(caught.value)


def test_a_legal_name_of_250_characters_is_checked_and_written(tmp_path):
    """The temporary and probe files beside a file were named ".NAME." plus a random part, past
    the 255 bytes a name may have: a legal name of 240 to 255 was refused as "File name too long"."""
    target = tmp_path / ("b" * 246 + ".csv")
    check_outputs([target], [])
    with atomic_output(target, "w") as fh:
        fh.write("report\n")
    assert target.read_text() == "report\n" and [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "r.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), atomic_output(target, "w") as fh:
        fh.write("half")
        raise RuntimeError("stop")
    assert target.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["r.csv"]


def test_an_output_inside_an_input_folder_is_refused(tmp_path):
    data = tmp_path / "AIDS"
    data.mkdir()
    (data / "AIDS_A.txt").write_text("1, 2\n")
    for output in (data / "AIDS_A.txt", data / "results.json", data / "sub" / "r.json"):
        with pytest.raises(GLocalKDError, match="is an input of this command"):
            check_outputs([output], [data], make_folders=[output])
    check_outputs([tmp_path / "results.json"], [data])  # beside it is fine


def test_an_output_that_resolves_to_an_input_is_refused(tmp_path):
    data = tmp_path / "d.smi"
    data.write_text("CCO a\n")
    (tmp_path / "link.smi").symlink_to(data)
    os.link(data, tmp_path / "hard.smi")
    (tmp_path / "folder_link").symlink_to(tmp_path, target_is_directory=True)
    for output in (tmp_path / "link.smi", tmp_path / "hard.smi", tmp_path / "folder_link" / "d.smi",
                   tmp_path / "sub" / ".." / "d.smi"):
        with pytest.raises(GLocalKDError, match="is an input"):
            check_outputs([output], [data])


def test_the_same_output_named_twice_is_refused(tmp_path):
    with pytest.raises(GLocalKDError, match="named twice"):
        check_outputs([tmp_path / "r.json", tmp_path / "." / "r.json"], [])


def test_an_output_that_cannot_be_written_is_refused_first(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError):
        check_outputs([blocker / "deeper" / "r.json"], [], make_folders=[blocker / "deeper" / "r.json"])
    with pytest.raises(FileNotFoundError):
        check_outputs([tmp_path / "missing" / "r.csv"], [])
    with pytest.raises(IsADirectoryError):
        check_outputs([tmp_path], [])
    check_outputs([tmp_path / "new" / "deeper" / "r.json"], [], make_folders=[tmp_path / "new" / "deeper" / "r.json"])


def test_a_folder_where_no_file_can_be_made_is_refused_even_for_root():
    """os.access says yes to root everywhere; the check makes (and removes) a file, as the writer will."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")  # (Linux only: a folder no one can create files in)
    with pytest.raises(OSError, match="cannot write in /proc"):
        check_outputs(["/proc/r.json"], [])


def test_a_hard_link_planted_at_the_name_lends_neither_content_nor_permissions(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    victim.chmod(0o666)
    os.link(victim, tmp_path / "r.csv")
    with atomic_output(tmp_path / "r.csv", "w") as fh:
        fh.write("report\n")
    assert victim.read_text() == "precious\n"
    assert (tmp_path / "r.csv").stat().st_mode & 0o777 == new_file_mode()


def test_a_write_that_fails_names_the_file_and_leaves_nothing(tmp_path):
    """A full disk or a file-size limit fails a write with an OSError that names no file
    ("[Errno 28] No space left on device"): the error now names the file being written."""
    import errno

    out = tmp_path / "report.csv"
    with pytest.raises(OSError) as info:
        with atomic_output(out, "w") as fh:
            fh.write("rank,id\n")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert info.value.filename == str(out) and info.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_a_model_file_past_the_file_size_limit_is_one_line_naming_it(tmp_path):
    """torch's writer turned the write's OSError into a RuntimeError, which escaped `glocalkd train`
    as a traceback; a one-line error naming the model file, exit 2, and no file left."""
    import resource
    import subprocess
    import sys

    from tests.conftest import DEMO_DATA, ROOT

    def limit():  # Python ignores SIGXFSZ: a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))

    out = tmp_path / "m.pt"
    done = subprocess.run([sys.executable, "-m", "core", "train", str(DEMO_DATA / "herg.tab"), "-o", str(out),
                           "--detector", "glocalkd", "--epochs", "1", "--hidden", "64", "--threads", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
    assert str(out) in done.stderr and "File too large" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_file_system_is_said_as_such_not_as_permissions(tmp_path, monkeypatch):
    """A folder on a read-only mount was "Permission denied": the user would look at permissions."""
    import errno

    from core.runtime import files

    monkeypatch.setattr(files.os, "access", lambda *a, **k: False)
    monkeypatch.setattr(files.os, "statvfs", lambda _p: type("S", (), {"f_flag": files.os.ST_RDONLY})())
    with pytest.raises(PermissionError, match="Read-only file system") as info:
        files.check_writable(tmp_path / "r.csv")
    assert info.value.errno == errno.EROFS
    monkeypatch.setattr(files.os, "statvfs", lambda _p: type("S", (), {"f_flag": 0})())
    with pytest.raises(PermissionError, match="Permission denied"):
        files.check_writable(tmp_path / "r.csv")


def test_a_report_past_the_file_size_limit_names_the_report_not_a_chunk_file(tmp_path):
    """A streamed score writes chunk files in a private working folder first: the write error named
    no file, then a chunk file (`.screen-…/chunk000….csv`); it names the report."""
    import resource
    import subprocess
    import sys

    from tests.conftest import DEMO_DATA, ROOT

    model = tmp_path / "m.pt"
    done = subprocess.run([sys.executable, "-m", "core", "train", str(DEMO_DATA / "herg.tab"), "-o", str(model),
                           "--detector", "size"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    library = tmp_path / "lib.smi"
    library.write_text("".join(f"c1ccccc1CCN m{i}\n" for i in range(3000)))
    out = tmp_path / "r.csv"

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    done = subprocess.run([sys.executable, "-m", "core", "score", str(model), str(library), "-o", str(out),
                           "--threads", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert done.returncode == 2 and str(out) in done.stderr and "chunk" in done.stderr, done.stderr[-600:]
    assert not out.exists() and not list(tmp_path.glob(".screen-*"))


def test_an_output_that_ends_in_a_slash_names_a_folder_and_is_refused(tmp_path):
    """``-o newdir/`` wrote a file named newdir, and ``-o r1.csv/`` replaced the report r1.csv:
    Path() drops the slash. A name that ends in one names a folder, never a file to write."""
    (tmp_path / "r1.csv").write_text("precious\n")
    for output in (f"{tmp_path}/newdir/", f"{tmp_path}/r1.csv/", f"{tmp_path}/"):
        with pytest.raises(GLocalKDError, match="names a folder .*name the file to write in it"):
            check_outputs([output], [])
    assert (tmp_path / "r1.csv").read_text() == "precious\n" and not (tmp_path / "newdir").exists()
