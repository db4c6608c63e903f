"""A parsed Python file as the analyses see it (the engine's rule context extends it)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from gemlint.analysis.module import ModuleAnalysis
from gemlint.config import Config
from gemlint.discovery import OnSourceFile, SourceFile
from gemlint.frontends.python_module import parse_module

if TYPE_CHECKING:  # pragma: no cover
    import ast

    from gemlint.analysis.import_names import ImportNames
    from gemlint.analysis.outside import OutsideFacts
    from gemlint.analysis.triage import Triage


@dataclass
class PythonSource(OnSourceFile):
    """One Python file: its text, LibCST tree and metadata wrapper, and what the rest of the project says
    about it (``outside``: the project model, injected from above; None when a file is analysed alone)."""

    source: SourceFile
    text: str
    module: cst.Module
    wrapper: cst.MetadataWrapper
    config: Config
    #: What the file's ``ast`` showed (None when only LibCST could parse it).
    triage: "Triage | None" = None
    outside: "OutsideFacts | None" = None
    #: The names the file binds only by imports, read from the triage's ``ast`` tree before it was let go
    #: (None: the analysis parses the text again if it asks).
    import_names: "ImportNames | None" = None
    #: The triage's ``ast`` tree, kept for a file of modest size (None: the analysis parses the text again if
    #: it asks, as for a file so large that its tree and LibCST's would not both fit).
    ast_tree: "ast.Module | None" = None
    #: An analysis of the same tree made earlier in the run (the project's, of a file whose routes it read):
    #: what that one found of the tree alone is taken rather than found again.
    earlier: "ModuleAnalysis | None" = None

    @cached_property
    def analysis(self):
        """The shared semantic facts of this module, computed once for all analyses and rules that ask."""
        return ModuleAnalysis(self)


def analyse_text(source: SourceFile, text: str, config: Config, outside: "OutsideFacts | None" = None) -> ModuleAnalysis:
    """The analysis of ``text`` (the file ``source``) parsed with LibCST; raises what the parse raises."""
    module = parse_module(text)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    return PythonSource(source, text, module, wrapper, config, outside=outside).analysis
