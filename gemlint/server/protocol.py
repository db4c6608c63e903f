"""``gemlint server``: the Language Server Protocol over stdio, on pygls.

The event loop only talks to the editor. Linting runs on one worker thread (see
:mod:`gemlint.server.session`); a change is linted after a short pause in typing, and a result is
published only if the document still has the version that was linted (a newer edit has its own lint
coming). After a Python buffer changes, the other open documents with cross-file findings are linted
again and re-published when their findings changed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from gemlint.config import ConfigError
from gemlint.diagnostics import Applicability, Diagnostic, Severity
from gemlint.docs import rule_markdown, rule_url
from gemlint.languages import language_of
from gemlint.registry import rule_by_code
from gemlint.server.session import SECTION, Session, Settings, suppression
from gemlint.version import __version__

#: Seconds without an edit before a changed document is linted.
DEBOUNCE_S = 0.25
SOURCE = "gemlint"
FIX_ALL_KIND = lsp.CodeActionKind.SourceFixAll
_SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning, Severity.NOTE: lsp.DiagnosticSeverity.Information}
T = TypeVar("T")
log = logging.getLogger(__name__)


class GemlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.session = Session()
        # One thread: the project model and configuration caches are never shared between threads.
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gemlint-lint")
        self.pending: dict[str, asyncio.Task] = {}
        #: What was last published per document: its version and gemlint's findings (for code actions and hover).
        self.published: dict[str, tuple[int | None, list[Diagnostic]]] = {}
        #: A Python buffer changed since the open documents with cross-file findings were last linted.
        self.dependents_stale = False

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, function, *args)

    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Error) -> None:
        self.window_log_message(lsp.LogMessageParams(kind, message))

    # -- linting -----------------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float = DEBOUNCE_S) -> None:
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._lint_later(uri, delay))

    async def _lint_later(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        # From here on the lint runs to its end (a newer edit schedules its own; this result is then dropped).
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]
        await self.lint(uri)

    async def lint(self, uri: str, *, cascade: bool = True) -> None:
        document = self._open(uri)
        if document is None:
            return
        version, text, path = document.version, document.source, Path(document.path)
        try:
            result = await self.call(self.session.lint, path, text)
        except Exception as error:  # a bug outside the rules: say so, keep serving
            log.exception("linting %s failed", path)
            self.log(f"gemlint: linting {path} failed: {type(error).__name__}: {error}")
            return
        for crash in result.crashes:
            self.log(f"gemlint: {crash}")
        for warning in result.warnings:
            self.log(f"gemlint: {warning}", lsp.MessageType.Warning)
        # Other documents' cross-file findings are out of date even if this result turns out stale.
        self.dependents_stale = self.dependents_stale or result.project_changed
        current = self._open(uri)
        if current is None or current.version != version:
            return  # stale: the document changed (its own lint is scheduled) or was closed
        self.publish(current, result.diagnostics)
        if self.dependents_stale and cascade:
            self.dependents_stale = False
            await self.relint_dependents(exclude=uri)

    async def relint_dependents(self, exclude: str | None = None) -> None:
        """Lint again the open documents whose findings depend on other files (publish if they changed)."""
        for uri in list(self.workspace.text_documents):
            if uri == exclude or self._open(uri) is None:
                continue
            if await self.call(self.session.depends_on_project, Path(to_fs_path(uri))):
                await self.lint(uri, cascade=False)

    def publish(self, document: TextDocument, diagnostics: list[Diagnostic]) -> None:
        previous = self.published.get(document.uri)
        self.published[document.uri] = (document.version, diagnostics)
        if previous is not None and previous[1] == diagnostics:
            return  # the same findings: the editor already shows them
        items = [self.to_lsp(document, diagnostic) for diagnostic in diagnostics]
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(document.uri, items, document.version))

    def clear(self, uri: str) -> None:
        self.published.pop(uri, None)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))

    def _open(self, uri: str) -> TextDocument | None:
        if uri not in self.workspace.text_documents:
            return None
        document = self.workspace.get_text_document(uri)
        return document if document.path and language_of(Path(document.path)) is not None else None

    # -- conversions -------------------------------------------------------------------------------
    def to_lsp(self, document: TextDocument, diagnostic: Diagnostic) -> lsp.Diagnostic:
        rule = rule_by_code(diagnostic.code)
        url = rule_url(rule) if rule is not None else None
        related = [
            lsp.DiagnosticRelatedInformation(
                lsp.Location(uri, self.range_in(uri, item.span.line, item.span.column, item.span.end_line, item.span.end_column)), item.message
            )
            for item in diagnostic.related
            for uri in [self._uri_of(document, item.span.path)]
        ]
        return lsp.Diagnostic(
            range=self.range_in(document.uri, diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column),
            message=diagnostic.message,
            severity=_SEVERITY[diagnostic.severity],
            code=diagnostic.code,
            code_description=lsp.CodeDescription(href=url) if url else None,
            source=SOURCE,
            related_information=related or None,
        )

    def _uri_of(self, document: TextDocument, path: str) -> str:
        absolute = os.path.abspath(path)  # display paths are relative to the working directory
        return from_fs_path(os.path.normpath(absolute)) or document.uri

    def range_in(self, uri: str, line: int, column: int, end_line: int, end_column: int) -> lsp.Range:
        """A gemlint span (1-based, code points, exclusive end) in the client's position encoding."""
        server = ServerTextRange(ServerTextPosition(max(line - 1, 0), max(column - 1, 0)), ServerTextPosition(max(end_line - 1, 0), max(end_column - 1, 0)))
        document = self.workspace.text_documents.get(uri)
        if document is None:
            path = to_fs_path(uri)
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace") if path else ""
            except OSError:
                text = ""
            document = TextDocument(uri, text, position_codec=self.workspace.position_codec)
        return document.range_to_client_units(server)

    def diagnostics_at(self, document: TextDocument, wanted: lsp.Range) -> list[tuple[Diagnostic, lsp.Diagnostic]]:
        version, findings = self.published.get(document.uri, (None, []))
        if version != document.version:
            return []  # findings of an older text: their positions may be wrong now
        found = []
        for diagnostic in findings:
            converted = self.to_lsp(document, diagnostic)
            start, end = converted.range.start, converted.range.end
            if _before(end, wanted.start) or _before(wanted.end, start):
                continue
            found.append((diagnostic, converted))
        return found


def _before(a: lsp.Position, b: lsp.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


server = GemlintServer()


# -- life cycle ------------------------------------------------------------------------------------
@server.feature(lsp.INITIALIZE)
def initialize(ls: GemlintServer, params: lsp.InitializeParams) -> None:
    root = ls.workspace.root_path
    if root and os.path.isdir(root):
        # Paths in messages are relative to the workspace, as a run of the command line there shows them.
        os.chdir(root)
        ls.session.cwd = Path(root)
    try:
        ls.session.configure(Settings.from_json(params.initialization_options))
    except ConfigError as error:
        ls.log(f"gemlint: {error}; using the defaults")


@server.feature(lsp.INITIALIZED)
async def initialized(ls: GemlintServer, params: lsp.InitializedParams) -> None:
    capabilities = ls.client_capabilities.workspace
    watched = capabilities.did_change_watched_files if capabilities else None
    if watched is not None and watched.dynamic_registration:
        patterns = ["**/*.py", "**/pyproject.toml", "**/gemlint.toml", "**/.gemlint.toml"]
        options = lsp.DidChangeWatchedFilesRegistrationOptions([lsp.FileSystemWatcher(glob_pattern=pattern) for pattern in patterns])
        try:
            await ls.client_register_capability_async(
                lsp.RegistrationParams([lsp.Registration("gemlint-watched-files", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, options)])
            )
        except Exception as error:  # the client said it could, then would not: files changed outside go unseen
            ls.log(f"gemlint: could not watch the workspace's files ({error})", lsp.MessageType.Warning)
    if await _pull_configuration(ls):
        for uri in list(ls.workspace.text_documents):  # opened before the settings came
            ls.schedule(uri, 0)


async def _pull_configuration(ls: GemlintServer) -> bool:
    """Settings from ``workspace/configuration`` (section ``gemlint``), when the client offers them."""
    capabilities = ls.client_capabilities.workspace
    if not (capabilities and capabilities.configuration):
        return False
    try:
        values = await ls.workspace_configuration_async(lsp.ConfigurationParams([lsp.ConfigurationItem(section=SECTION)]))
    except Exception as error:
        ls.log(f"gemlint: could not read the editor's settings: {error}", lsp.MessageType.Warning)
        return False
    if not values or values[0] is None:
        return False
    try:
        settings = Settings.from_json(values[0])
    except ConfigError as error:
        ls.log(f"gemlint: {error}; the settings were not changed")
        return False
    await ls.call(ls.session.configure, settings)
    return True


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GemlintServer, params: lsp.DidChangeConfigurationParams) -> None:
    changed = await _pull_configuration(ls)
    if not changed and isinstance(params.settings, dict) and SECTION in params.settings:
        try:
            await ls.call(ls.session.configure, Settings.from_json(params.settings[SECTION]))
        except ConfigError as error:
            ls.log(f"gemlint: {error}; the settings were not changed")
            return
    for uri in list(ls.workspace.text_documents):
        ls.schedule(uri, 0)


# -- documents -------------------------------------------------------------------------------------
@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GemlintServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GemlintServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GemlintServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: GemlintServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.clear(uri)
    path = to_fs_path(uri)
    if path and await ls.call(ls.session.set_text, Path(path), None):
        await ls.relint_dependents()  # the file's content on disk stands again


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: GemlintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    changed = False
    for event in params.changes:
        path = to_fs_path(event.uri)
        if path:
            changed = await ls.call(ls.session.file_changed, Path(path)) or changed
    if changed:
        await ls.relint_dependents()


# -- code actions ----------------------------------------------------------------------------------
@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND]),
)
async def code_action(ls: GemlintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    document = ls._open(params.text_document.uri)
    if document is None:
        return []
    wanted = [getattr(kind, "value", kind) for kind in params.context.only] if params.context.only else None
    language = language_of(Path(document.path))
    actions: list[lsp.CodeAction] = []
    unsafe = ls.session.settings.unsafe_fixes
    version = document.version
    if wanted is None or any(kind.startswith("quickfix") for kind in wanted):
        for diagnostic, converted in ls.diagnostics_at(document, params.range):
            fix = diagnostic.fix
            if fix is not None and (fix.applicability is Applicability.SAFE or unsafe):
                edits = [
                    lsp.TextEdit(ls.range_in(document.uri, e.start.line, e.start.column, e.end.line, e.end.column), e.content) for e in fix.edits
                ]
                label = f"{diagnostic.code}: {fix.message}" + (" (unsafe fix)" if fix.applicability is Applicability.UNSAFE else "")
                actions.append(_action(label, lsp.CodeActionKind.QuickFix, document, version, edits, [converted], fix.applicability is Applicability.SAFE))
            if diagnostic.code != "GEM000" and language is not None:
                where = suppression(document.source, language, diagnostic.line, diagnostic.code)
                position = ls.range_in(document.uri, where.line, where.column, where.line, where.column)
                actions.append(
                    _action(f"Suppress {diagnostic.code} on this line", lsp.CodeActionKind.QuickFix, document, version, [lsp.TextEdit(position, where.text)], [converted])
                )
    if wanted is None or any(FIX_ALL_KIND.value.startswith(kind) for kind in wanted):
        _, findings = ls.published.get(document.uri, (None, []))
        if any(d.fix is not None and d.fix.applicability is Applicability.SAFE for d in findings):
            fixed = await ls.call(ls.session.fix_all, Path(document.path), document.source)
            current = ls._open(document.uri)
            if fixed != document.source and current is not None and current.version == version:
                end = document.client_position_at_offset(len(document.source)) if document.source else lsp.Position(0, 0)
                whole = lsp.Range(lsp.Position(0, 0), end)
                actions.append(_action("Fix all safe gemlint problems in this file", FIX_ALL_KIND, document, version, [lsp.TextEdit(whole, fixed)], None))
    return actions


def _action(
    title: str, kind: lsp.CodeActionKind, document: TextDocument, version: int | None, edits: list[lsp.TextEdit], diagnostics, preferred: bool = False
) -> lsp.CodeAction:
    change = lsp.TextDocumentEdit(lsp.OptionalVersionedTextDocumentIdentifier(document.uri, version), edits)
    return lsp.CodeAction(title=title, kind=kind, diagnostics=diagnostics, edit=lsp.WorkspaceEdit(document_changes=[change]), is_preferred=preferred or None)


# -- hover -----------------------------------------------------------------------------------------
@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: GemlintServer, params: lsp.HoverParams) -> lsp.Hover | None:
    document = ls._open(params.text_document.uri)
    if document is None:
        return None
    at = lsp.Range(params.position, params.position)
    sections, seen = [], set()
    for diagnostic, _ in ls.diagnostics_at(document, at):
        rule = rule_by_code(diagnostic.code)
        if rule is None or rule.code in seen:
            continue
        seen.add(rule.code)
        sections.append(rule_markdown(rule))
    if not sections:
        return None
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, "\n---\n\n".join(sections)))


def serve() -> None:
    server.start_io()
