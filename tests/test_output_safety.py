"""The output folder keeps the user's data: a lock against a second writer, runs complete only
with complete.json, damaged results found, only hopsim's own temporaries removed, clear
errors instead of tracebacks; and Ctrl-C stops a long simulate() call."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import SMALL, finished_runs as finished, run_cli, start_cli, write_spec

import hopsim
from hopsim import cli, engine, outdir
from hopsim.results import VARIABLE_METRICS

SWEEP = '"traffic.load" = [0.1, 0.3, 0.5]\n'
LONG = SMALL.replace("dims = [4, 4]", "dims = [8, 8]").replace("cycles = 1500", "cycles = 3000000")


def hopsim_main(capsys, *args) -> tuple[int, str]:
    """The CLI in this process (quicker than a subprocess): exit code and stderr."""
    capsys.readouterr()
    code = cli.main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.fixture
def swept(tmp_path, capsys):
    path = write_spec(tmp_path, sweep=SWEEP)
    out = tmp_path / "out"
    assert hopsim_main(capsys, "run", path, "--out", out, "--no-plots", "-q")[0] == 0
    assert len(finished(out)) == 3
    return path, out


def test_only_hopsims_own_temporaries_are_removed(swept, capsys):
    path, out = swept
    mine = [out / ".tmp-mine", out / ".old-mine", out / ".hopsim-tmp-mine"]  # no owner file: the user's
    for d in mine:
        d.mkdir()
        (d / "notes.txt").write_text("keep me")
    leftover = outdir.temporary_run_dir(out, "load=0.1")  # as a killed hopsim leaves it
    (leftover / "metrics.json").write_text('{"accepted_load": 0.1')
    assert hopsim_main(capsys, "run", path, "--out", out, "--resume", "--no-plots", "-q")[0] == 0
    for d in mine:
        assert (d / "notes.txt").read_text() == "keep me"
    assert not leftover.exists()

    # A replacement cut short between its renames: the old copy (complete) is put back and
    # --resume counts it.
    name = sorted(finished(out))[0]
    old = out / f"{outdir.OLD_PREFIX}{name}"
    (out / name).rename(old)
    (old / outdir.OWNER).write_text("{}")
    code, err = hopsim_main(capsys, "run", path, "--out", out, "--resume", "--no-plots")
    assert code == 0 and "3 of 3 runs already complete, 0 to run" in err
    assert not old.exists() and not (out / name / outdir.OWNER).exists()


def test_resume_redoes_a_damaged_run(tmp_path, capsys):
    path = write_spec(tmp_path, sweep='"traffic.load" = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]\n')
    out = tmp_path / "out"
    assert hopsim_main(capsys, "run", path, "--out", out, "--no-plots", "-q")[0] == 0
    runs = sorted(finished(out))
    texts = {name: (out / name / "metrics.json").read_text() for name in runs}
    damages = {
        "no marker": lambda d, t: (d / "complete.json").unlink(),
        "truncated": lambda d, t: (d / "metrics.json").write_text(t[: len(t) // 2]),
        "empty": lambda d, t: (d / "metrics.json").write_text(""),
        "braces": lambda d, t: (d / "metrics.json").write_text("{}"),
        # Cut, but padded to the size it had: the size check passes, the JSON check does not.
        "same size": lambda d, t: (d / "metrics.json").write_text(t[: len(t) // 2].ljust(len(t))),
    }
    for name, damage in zip(runs, damages.values()):
        damage(out / name, texts[name])
    code, err = hopsim_main(capsys, "run", path, "--out", out, "--resume", "--no-plots")
    assert code == 0 and "1 of 6 runs already complete, 5 to run" in err
    for name in runs:
        again = json.loads((out / name / "metrics.json").read_text())
        before = json.loads(texts[name])
        assert {k: v for k, v in again.items() if k not in VARIABLE_METRICS} == {
            k: v for k, v in before.items() if k not in VARIABLE_METRICS
        }
    assert len(pd.read_csv(out / "runs.csv")) == 6


def test_report_on_a_damaged_metrics_file_is_a_clear_error(swept, capsys):
    _path, out = swept
    victim = sorted(finished(out))[0]
    metrics = out / victim / "metrics.json"
    for content, said in [('{"accepted_load": 0.1', "truncated or not JSON"), ("{}", "holds {}"), ("", "empty")]:
        metrics.write_text(content)
        code, err = hopsim_main(capsys, "report", out, "--no-plots")
        assert code == 2
        assert f"hopsim: error: {metrics}: {said}, not the metrics of a finished run" in err
    # A folder without its marker (cut short, or from an older hopsim) is left out, and said so.
    metrics.write_text("{\"accepted_load\": 0.1}")
    (out / victim / "complete.json").unlink()
    capsys.readouterr()
    assert cli.main(["report", str(out), "--no-plots"]) == 0
    said = capsys.readouterr().out
    assert "2 of 3 runs complete" in said and "1 run folder(s) left out: no complete.json" in said
    assert len(pd.read_csv(out / "runs.csv")) == 2


def test_a_second_run_into_the_same_folder_is_refused(tmp_path):
    path = write_spec(tmp_path, LONG)
    out = tmp_path / "out"
    first = start_cli("run", path, "--out", out, "--no-plots", "-q")
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not (out / outdir.LOCK_NAME).is_file() or not (out / outdir.LOCK_NAME).read_text():
            time.sleep(0.05)
        second = run_cli("run", write_spec(tmp_path, name="other.toml"), "--out", out, "--no-plots", check=2)
        assert f"another hopsim is writing into this output directory (pid {first.pid} on host {socket.gethostname()}" in second.stderr
        report = run_cli("report", out, check=2)
        assert f"pid {first.pid}" in report.stderr
        assert first.poll() is None, "the first run was disturbed"
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130


def test_a_stale_lock_is_taken_over(tmp_path):
    path = write_spec(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    # What a hopsim killed with SIGKILL leaves: a lock file naming it, and no lock held.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / outdir.LOCK_NAME).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "since": time.time()}))
    proc = run_cli("run", path, "--out", out, "--no-plots", check=0)
    assert f"taking over the lock of a hopsim that ended without releasing it ({dead.pid})" in proc.stderr
    assert len(finished(out)) == 1
    assert (out / outdir.LOCK_NAME).read_text() == ""  # released


def writable(d: Path) -> bool:
    try:
        (d / ".probe").write_text("")
    except OSError:
        return False
    (d / ".probe").unlink()
    return True


def test_a_read_only_out_is_a_clear_error(tmp_path):
    path = write_spec(tmp_path)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if writable(ro):  # root writes anywhere: use a directory no one can write
        ro = Path("/sys")
        if writable(ro):
            pytest.skip("no unwritable directory here")
    proc = run_cli("run", path, "--out", ro, "--no-plots", check=2)
    assert f"hopsim: error: {ro}: cannot write in the output directory" in proc.stderr
    assert "Traceback" not in proc.stderr
    with pytest.raises(hopsim.SpecError, match="cannot write in the output directory"):
        hopsim.run_experiment(path, out=ro, progress=False, plots=False, report=False)


def test_a_very_long_experiment_name(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "n" * 5000
    path = write_spec(tmp_path, SMALL.replace('name = "small"', f'name = "{name}"'))
    assert hopsim_main(capsys, "run", path, "--no-plots")[0] == 0
    folders = list((tmp_path / "hopsim-out").iterdir())
    assert len(folders) == 1 and len(folders[0].name) <= 100 and folders[0].name.startswith("nnnn")
    assert len(finished(folders[0])) == 1
    # Another long name keeps a folder of its own.
    other = write_spec(tmp_path, SMALL.replace('name = "small"', f'name = "{name}x"'), name="other.toml")
    assert hopsim_main(capsys, "run", other, "--no-plots", "-q")[0] == 0
    assert len(list((tmp_path / "hopsim-out").iterdir())) == 2


def test_ctrl_c_interrupts_a_long_simulate_call(tmp_path):
    code = (
        "import sys, time, tomllib, hopsim\n"
        f"spec = tomllib.loads({LONG!r})\n"
        "print('start', flush=True)\n"
        "t = time.time()\n"
        "try:\n"
        "    hopsim.simulate(spec)\n"
        "    print('finished', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    print(f'interrupted {time.time() - t:.2f}', flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout.readline().strip() == "start"
    time.sleep(0.5)
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert stdout.startswith("interrupted"), (stdout, stderr)
    assert time.time() - sent < 5, "Ctrl-C took too long to stop the run"
    assert proc.returncode == 0 and "Traceback" not in stderr


def test_a_cancelled_run_returns_nothing(tmp_path):
    import tomllib

    counter = engine.progress_counter()
    threading.Timer(0.3, counter.cancel).start()
    with pytest.raises(KeyboardInterrupt, match="cancelled"):
        engine.simulate(tomllib.loads(LONG), counter)
    assert 0 < counter.cycles < 3000300


@pytest.mark.parametrize(
    "setting, said",
    [
        ("traffic.load=nan", "traffic.load = NaN"),
        ("run.cycles=inf", "run.cycles = Infinity"),
        ("sweep.traffic.load=[0.1, -inf]", 'traffic.load = -Infinity: must be a finite number (not NaN or infinity) (from [sweep] "traffic.load")'),
    ],
)
def test_nan_or_infinity_names_its_key(tmp_path, capsys, setting, said):
    code, err = hopsim_main(capsys, "validate", write_spec(tmp_path), "--set", setting)
    assert code == 2 and f"hopsim: error: {said}" in err
    with pytest.raises(hopsim.SpecError, match="traffic.load = NaN: must be a finite number"):
        hopsim.simulate(write_spec(tmp_path), overrides={"traffic.load": float("nan")})


def test_another_thread_of_this_process_is_refused_too(tmp_path):
    errors = []

    def second():
        try:
            with outdir.lock(tmp_path):
                pass
        except hopsim.SpecError as e:
            errors.append(str(e))

    with outdir.lock(tmp_path):
        with outdir.lock(tmp_path):  # the same thread, nested: shares it
            t = threading.Thread(target=second)
            t.start()
            t.join()
    assert errors == [f"{tmp_path}: another thread of this process is writing into this output directory; choose another out"]
    with outdir.lock(tmp_path):  # released: free again
        pass
