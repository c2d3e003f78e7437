"""Install a plug-in project the way pip lays it out, offline: packages plus a .dist-info.

`pip install ./project` needs a build backend and, with build isolation, the network;
the tests only need what `importlib.metadata` and the import system read afterwards: the
project's packages on a path and `<name>-<version>.dist-info/` holding `METADATA` and
`entry_points.txt` written from the project's `pyproject.toml`.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path


def install_plugin(project: Path, site: Path) -> Path:
    """Copy `project`'s top-level packages into `site` and write its dist-info; its path."""
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site.mkdir(parents=True, exist_ok=True)
    for package in sorted(p for p in project.iterdir() if (p / "__init__.py").is_file()):
        shutil.copytree(package, site / package.name)
    name, version = meta["name"], meta["version"]
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    groups = meta.get("entry-points", {})
    lines = [
        line
        for group in sorted(groups)
        for line in (f"[{group}]", *(f"{k} = {v}" for k, v in sorted(groups[group].items())), "")
    ]
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    return info
