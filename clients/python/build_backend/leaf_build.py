"""The build backend of leaf_client (PEP 517 and PEP 660), standard library
only, so that `pip install ./clients/python` builds offline: with a backend
from an index (setuptools, flit), pip's isolated build would first have to
download it.

It builds a pure-Python wheel of src/leaf_client, an sdist, and an editable
wheel that points at src/.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "leaf_client"
DIST = "leaf-client"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")


def _version():
    with open(os.path.join(SRC, NAME, "__init__.py"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("__version__"):
                return line.split("=")[1].strip().strip("\"'")
    raise RuntimeError("no __version__ in leaf_client/__init__.py")


def _metadata():
    readme = ""
    path = os.path.join(ROOT, "README.md")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\n"
        f"Version: {_version()}\n"
        "Summary: The Python client of leaf: ids leased in ranges and handed out in-process\n"
        "License: MIT\n"
        "License-File: LICENSE\n"
        "Requires-Python: >=3.11\n"
        "Classifier: License :: OSI Approved :: MIT License\n"
        "Classifier: Programming Language :: Python :: 3\n"
        "Classifier: Typing :: Typed\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _files():
    """The package's files: (path in the wheel, bytes)."""
    out = []
    pkg = os.path.join(SRC, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") or name == "py.typed":
            with open(os.path.join(pkg, name), "rb") as f:
                out.append((f"{NAME}/{name}", f.read()))
    return out


def _wheel(directory, files):
    version = _version()
    info = f"{NAME}-{version}.dist-info"
    wheel_name = f"{NAME}-{version}-py3-none-any.whl"
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        licence = f.read()
    files = files + [
        (f"{info}/METADATA", _metadata().encode()),
        (f"{info}/licenses/LICENSE", licence),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: leaf_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    with zipfile.ZipFile(os.path.join(directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0)), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        record.append(f"{info}/RECORD,,")
        z.writestr(zipfile.ZipInfo(f"{info}/RECORD", date_time=(2026, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, _files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, [(f"__editable__.{NAME}.pth", (SRC + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = f"{DIST.replace('-', '_')}-{_version()}"
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "LICENSE", "build_backend/leaf_build.py"] + [
            os.path.join("src", p) for p, _ in _files()
        ]:
            path = os.path.join(ROOT, rel)
            if os.path.exists(path):
                t.add(path, arcname=f"{base}/{rel}")
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkg_info)
        t.addfile(ti, io.BytesIO(pkg_info))
    return name
