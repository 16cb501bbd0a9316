"""The setup files agree: pyproject.toml, environment.yml and constraints.txt name the same things,
the Pythons they declare are the ones tested, and the notebooks' stored outputs came from the
pinned versions."""

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from nbval.plugin import get_sanitize_patterns
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# `make unit-and-notebooks PYTHON=python3.X VENV=.venv-py3.X` passed on each of these (3.11 is the
# record's); the CI workflow runs the oldest and the newest.
TESTED_PYTHONS = ("3.11", "3.12", "3.13")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# lnpaper.setup's first lines (src/lnpaper/companion/runtime.py): one line before issue 23, two
# since, so that each fits a book column; notebooks executed before it still show the one.
SETUP_LINE = re.compile(
    r"^lnpaper setup: seed \d+, \d+ threads?(?:,|\nversions:) python ([^,\s]+), torch ([^,\s]+), "
    r"numpy ([^,\s]+), matplotlib ([^,\s]+)$",
    re.MULTILINE,
)


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + [
        dep for extra in project["optional-dependencies"].values() for dep in extra
    ]
    requirements = [Requirement(dep) for dep in listed]
    return {canonicalize_name(r.name): str(r.specifier) for r in requirements}


def environment_requirements() -> dict[str, str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    listed = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            listed += [d for d in dep["pip"] if not d.startswith("-e")]
        else:
            listed.append(dep)
    out = {}
    for dep in listed:
        name, spec = re.match(r"([A-Za-z0-9_.\-]+)(.*)", dep).groups()
        out[canonicalize_name(name)] = spec.replace("=", "==") if spec.startswith("=3") else spec
    out.pop("pip")
    return out


def constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    return pins


def test_environment_yml_names_the_same_dependencies_as_pyproject():
    env = environment_requirements()
    env.pop("python")
    assert env == pyproject_requirements()


def test_constraints_pin_every_dependency_within_its_declared_range():
    pins = constraints()
    for name, spec in pyproject_requirements().items():
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert Requirement(f"{name}{spec}").specifier.contains(pins[name]), (name, pins[name])


def test_torch_is_pinned_to_the_cpu_build_on_disk():
    # An unpinned torch pulls a multi-GB CUDA build on these machines.
    assert constraints()["torch"] == "2.13.0"


def test_the_declared_pythons_are_the_tested_ones():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requires = SpecifierSet(project["requires-python"])
    conda = SpecifierSet(environment_requirements()["python"])
    oldest, newest = Version(TESTED_PYTHONS[0]), Version(TESTED_PYTHONS[-1])
    # pip: from the oldest tested on, uncapped; conda (which installs the newest it may): the range
    assert requires == SpecifierSet(f">={oldest}")
    assert conda == SpecifierSet(f">={oldest},<{newest.major}.{newest.minor + 1}")
    for python in TESTED_PYTHONS:
        assert requires.contains(python) and conda.contains(python), python
    assert not conda.contains(f"{newest.major}.{newest.minor + 1}")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "test.yml").read_text())
    matrix = workflow["jobs"]["test"]["strategy"]["matrix"]
    assert matrix["python"] == [TESTED_PYTHONS[0], TESTED_PYTHONS[-1]]
    assert "make test" in workflow["jobs"]["test"]["steps"][-1]["run"]


def stored_setup_lines(path: Path) -> list[tuple[str, str, str, str]]:
    """(python, torch, numpy, matplotlib) of each setup line in a notebook's stored outputs."""
    notebook = json.loads(path.read_text())
    outputs = [out for cell in notebook["cells"] for out in cell.get("outputs", [])]
    text = "\n".join("".join(out.get("text", "")) for out in outputs)
    return SETUP_LINE.findall(text)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_were_made_with_the_pinned_versions(path):
    # nbval no longer sees these versions (tests/nbval_sanitize.cfg hides them), so this checks them.
    pins = constraints()
    [(python, torch, numpy, matplotlib)] = stored_setup_lines(path)
    assert Version(torch).public == pins["torch"], f"{path.name}: torch {torch}"
    assert numpy == pins["numpy"], f"{path.name}: numpy {numpy}"
    assert matplotlib == pins["matplotlib"], f"{path.name}: matplotlib {matplotlib}"
    assert python.split(".")[:2] in [v.split(".") for v in TESTED_PYTHONS], python


def test_nbval_sees_the_setup_line_without_its_versions_and_nothing_more():
    patterns = get_sanitize_patterns((ROOT / "tests" / "nbval_sanitize.cfg").read_text())

    def sanitize(text: str) -> str:
        for regex, replace in patterns:
            text = re.sub(regex, replace, text)
        return text

    [(python, torch, numpy, matplotlib)] = stored_setup_lines(NOTEBOOKS[0])
    fields = f"python {python}, torch {torch}, numpy {numpy}, matplotlib {matplotlib}"
    stored = f"lnpaper setup: seed 0, 1 thread\nversions: {fields}\nresults: read from the record\n"
    assert sanitize(stored) != stored
    elsewhere = {  # what Python 3.13 with torch from the package index prints, and macOS
        "python 3.13.0, torch 2.13.0+cu130, numpy 2.4.6, matplotlib 3.11.2",
        "python 3.12.1, torch 2.13.0, numpy 2.4.6, matplotlib 3.11.2",
    }
    for other in elsewhere:
        assert sanitize(stored.replace(fields, other)) == sanitize(stored)
    # everything else on the line, and the line after it, is still compared
    for original, changed in [("seed 0", "seed 1"), ("1 thread", "2 threads"), ("record", "run")]:
        assert sanitize(stored.replace(original, changed)) != sanitize(stored), changed


def test_citation_names_the_package_version_and_the_paper():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert str(citation["version"]) == project["version"]
    assert citation["license"] == project["license"] == "MIT"
    paper = citation["references"][0]
    assert paper["title"] == "Layer Normalization" and paper["year"] == 2016


def test_the_license_file_is_the_mit_text_for_the_citations_authors():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    [holder] = [author["name"] for author in citation["authors"]]
    assert re.search(rf"^Copyright \(c\) \d{{4}} {re.escape(holder)}$", text, re.MULTILINE)
    assert "Permission is hereby granted, free of charge" in text
