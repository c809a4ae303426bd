"""What the comparison scripts share: the data folder, the machine's name
and writing a table between ``<!-- name: start -->`` / ``<!-- name: end -->``
markers."""

import os
import platform
import re
import subprocess

#: The datasets' folder (see benches/README.md): $RGBM_DATA, or
#: ../shared/data next to the repository.
DATA_DIR = os.environ.get("RGBM_DATA") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data")
)


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def write_between_markers(path, name, table):
    """Replace what lies between the ``name`` markers of the file ``path`` by ``table``."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new, count = re.subn(
        rf"(<!-- {name}: start -->\n).*?(<!-- {name}: end -->)",
        lambda m: m.group(1) + table + "\n" + m.group(2),
        text,
        flags=re.S,
    )
    if count != 1:
        raise SystemExit(f"{path} has no {name} markers")
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


def publish(table, path, name):
    """Print ``table`` and, when ``path`` is given, put it between that file's ``name`` markers."""
    print(table)
    if path:
        write_between_markers(path, name, table)


def git_commit():
    """The repository's commit (``git describe --always --dirty``), or "unknown"."""
    try:
        return subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            cwd=os.path.dirname(os.path.abspath(__file__)),
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# Source for a child process measuring its peak RSS (Linux): status(key)
# reads /proc/self/status in bytes; reset_peak() restarts the VmHWM counter.
PEAK_RSS = r"""
def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
"""


def save_png(fig, path, dpi):
    """Writes a matplotlib figure as a 256-colour PNG: line plots lose
    nothing visible, and the committed figures stay a fraction of their
    full-colour size."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    buf.seek(0)
    with Image.open(buf) as im:
        im.convert("RGB").quantize(colors=256).save(path, optimize=True)


ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]


def adult():
    """Adult's train and test frames and labels, the text columns as
    categories (the training set's, sorted)."""
    import pandas as pd

    def read(name):
        path = os.path.join(DATA_DIR, "adult", name)
        df = pd.read_csv(path, header=None, names=ADULT_COLUMNS, skipinitialspace=True, na_values="?")
        df = df.dropna(subset=["income"])
        y = df.pop("income").str.rstrip(".").eq(">50K").astype(int).to_numpy()
        return df, y

    Xtr, ytr = read("adult-train.csv")
    Xte, yte = read("adult-test.csv")
    for c in Xtr.columns:
        if not pd.api.types.is_numeric_dtype(Xtr[c]):
            cats = sorted(set(Xtr[c].dropna()))
            Xtr[c] = pd.Categorical(Xtr[c], categories=cats)
            Xte[c] = pd.Categorical(Xte[c], categories=cats)
    return Xtr, ytr, Xte, yte
