"""The kinds of file gemlint reads, and how a path is recognised as one."""

from __future__ import annotations

import enum
from pathlib import PurePath


class Language(str, enum.Enum):
    PYTHON = "python"
    YAML = "yaml"  # Kubernetes manifests, Helm charts, docker-compose files
    NATIVE = "native"  # C, C++, CUDA
    DOCKERFILE = "dockerfile"
    TRITON = "triton"  # Triton Inference Server model configurations (config.pbtxt)
    #: Jupyter notebooks (.ipynb): their code cells are linted as one Python module by the Python rules
    #: that say they apply to notebooks (``Rule.notebooks``).
    NOTEBOOK = "notebook"

    @property
    def comment_prefixes(self) -> tuple[str, ...]:
        """Comment openers that may carry a ``noqa`` directive in this language."""
        if self is Language.NATIVE:
            return ("//", "/*")
        return ("#",)


def checks_language(languages: frozenset[Language], notebooks: bool, language: Language) -> bool:
    """Whether a rule of ``languages`` checks files of ``language``: its own languages, and notebooks where it
    is a Python rule that applies to them (``notebooks``)."""
    if language is Language.NOTEBOOK:
        return notebooks and Language.PYTHON in languages
    return language in languages


PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
#: C, C++ and CUDA sources and headers, with the C++ files that templates' and inline functions' definitions are kept
#: in and included from (``engine.inl``, ``impl.ipp``, ``vector.tpp``).
NATIVE_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tpp", ".cu", ".cuh"})
NOTEBOOK_SUFFIX = ".ipynb"
#: The name Triton gives a model's configuration in a model repository.
TRITON_CONFIG_NAME = "config.pbtxt"


def language_of(path: PurePath) -> Language | None:
    """Return the language of ``path`` from its name, or None if gemlint does not read it."""
    return language_of_name(path.name)


def language_of_name(name: str) -> Language | None:
    """:func:`language_of` a file called ``name`` (a walk has names, and making each a path costs more)."""
    dot = name.rfind(".")
    suffix = name[dot:].lower() if 0 < dot < len(name) - 1 else ""  # PurePath.suffix
    if suffix in PYTHON_SUFFIXES:
        return Language.PYTHON
    if suffix in YAML_SUFFIXES:
        return Language.YAML
    if suffix in NATIVE_SUFFIXES:
        return Language.NATIVE
    if suffix == NOTEBOOK_SUFFIX:
        return Language.NOTEBOOK
    if name == TRITON_CONFIG_NAME:
        return Language.TRITON
    lowered = name.lower()
    # Dockerfile, Dockerfile.gpu, serve.Dockerfile, Containerfile
    if lowered in ("dockerfile", "containerfile") or lowered.startswith("dockerfile.") or lowered.endswith(
        ".dockerfile"
    ):
        return Language.DOCKERFILE
    return None
