"""The setup files agree: pyproject.toml, environment.yml and constraints.txt name the same things."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


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
    assert env.pop("python") == "==3.11"
    assert env == pyproject_requirements()


def test_constraints_pin_every_dependency_within_its_declared_range():
    pins = constraints()
    for name, spec in pyproject_requirements().items():
        assert name in pins, f"{name} is not pinned in constraints.txt"
        assert Requirement(f"{name}{spec}").specifier.contains(pins[name]), (name, pins[name])


def test_torch_is_pinned_to_the_cpu_build_on_disk():
    # An unpinned torch pulls a multi-GB CUDA build on these machines.
    assert constraints()["torch"] == "2.13.0"


def test_pyproject_requires_python_311():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == ">=3.11"


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
