from core.cli.progress import Progress


def test_progress_in_a_log_is_a_plain_line_every_ten_seconds(capsys):
    now = [0.0]
    with Progress(unit="mol", clock=lambda: now[0]) as bar:  # capsys: stderr is not a terminal
        for k in range(1, 31):
            now[0] = k * 1.0
            bar.update(k * 100, k * 90)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["glocalkd: 1,000 mol read, 900 scored (100/s)", "glocalkd: 2,000 mol read, 1,800 scored (100/s)",
                     "glocalkd: 3,000 mol read, 2,700 scored (100/s)"]
