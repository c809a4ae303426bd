"""The command line runs end to end."""
import subprocess
import sys


def test_demo_runs_and_reports_accuracy():
    out = subprocess.run([sys.executable, "-m", "rgbm_rs", "demo"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "accuracy" in out.stdout
    lines = [l for l in out.stdout.splitlines() if l.startswith("rgbm_rs")]
    assert len(lines) == 2
    for line in lines:
        acc = float(line.split()[-3])
        assert acc > 0.9, line


def test_unknown_command_is_a_usage_error():
    out = subprocess.run([sys.executable, "-m", "rgbm_rs", "fly"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "invalid choice" in out.stderr
