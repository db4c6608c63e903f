"""Demo apps as serving code: Gradio callbacks and Streamlit scripts.

The most common public ML demos are not web services with routes but apps whose framework calls the
code per interaction:

* **Gradio** calls a function handed to ``gr.Interface(fn=f)``, ``gr.ChatInterface(f)``, ``gr.on(..., fn=f)``
  or to an event listener of a component or of the Blocks (``btn.click(f, ...)``, ``box.submit(f, ...)``,
  ``demo.load(f)``, ``.then(f)`` on a listener) on every event.
* **Streamlit** reruns a script's module level on every interaction; a function decorated with
  ``st.cache_resource``/``st.cache_data`` (or the older ``st.cache``, ``st.experimental_singleton`` and
  ``st.experimental_memo``) runs once per argument set, which is where models are loaded.

Names are resolved through the module's imports (``import gradio as gr``), never by spelling alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from gemlint.analysis.frameworks import GRADIO_APPS, GRADIO_EVENTS
from gemlint.analysis.syntax import dotted_name, iter_subtree, keyword_arg, positional_arg

if TYPE_CHECKING:  # pragma: no cover
    from gemlint.analysis.module import ModuleAnalysis

#: Streamlit decorators whose function runs once per set of arguments, not per rerun.
STREAMLIT_RUN_ONCE = frozenset(
    {
        "streamlit.cache_resource", "streamlit.cache_data", "streamlit.cache", "streamlit.experimental_singleton",
        "streamlit.experimental_memo", "streamlit.singleton", "streamlit.memo",
    }
)


_PARTIAL = frozenset({"functools.partial"})
#: Wrappers that run the function they are given as it is: Hugging Face Spaces' ZeroGPU (``spaces.GPU(f)``,
#: ``spaces.GPU(duration=60)(f)``), written as a call where a decorator would do.
_RUNNING_WRAPPERS = frozenset({"spaces.GPU", "spaces.zero.GPU"})


def handed_to_gradio(analysis: "ModuleAnalysis") -> list[tuple[str, str]]:
    """(the event listener, or "" for an app that takes the function, and the function's spelling as this module
    writes it: ``predict``, ``self.respond``) for each function this module hands to Gradio. An app's ``load``
    listener runs its function each time a visitor opens the page (``demo.load(fn=load_model, outputs=state)``)."""
    if not analysis.imports_any(("gradio",)):
        return []
    found: list[tuple[str, str]] = []
    for call in analysis.nodes_of(cst.Call):
        func = call.func
        if analysis.resolves_to(func, GRADIO_APPS):
            listener = ""
        elif isinstance(func, cst.Attribute) and func.attr.value in GRADIO_EVENTS and _is_gradio_object(analysis, func.value, 0):
            listener = func.attr.value
        else:
            continue
        handed = keyword_arg(call, "fn") or positional_arg(call, 0)
        spelled = _spelled_callback(_called_function(analysis, handed.value)) if handed is not None else None
        if spelled:
            found.append((listener, spelled))
    return found


def _spelled_callback(function: cst.BaseExpression) -> str | None:
    """How the callback is spelled (``predict``, ``self.respond``); a method of an instance built in place
    (``Generator().generate_image``) as its class's (``Generator.generate_image``)."""
    if isinstance(function, cst.Attribute) and isinstance(function.value, cst.Call):
        owner = dotted_name(function.value.func)
        return f"{owner}.{function.attr.value}" if owner is not None else None
    return dotted_name(function)


def _called_function(analysis: "ModuleAnalysis", handed: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
    """The function a callback runs: itself, the function of ``functools.partial(f, ...)`` or of a wrapper that runs
    it (``spaces.GPU(f)``), the call a ``lambda`` makes (``lambda x: f(runner, x)``), or what a local name bound once
    to one of those runs (``infer_gpu = spaces.GPU(functools.partial(infer))``)."""
    if depth > 4:
        return handed
    if isinstance(handed, cst.Call) and handed.args:
        func = handed.func
        if analysis.resolves_to(func, _PARTIAL) or analysis.resolves_to(func, _RUNNING_WRAPPERS):
            return _called_function(analysis, handed.args[0].value, depth + 1)
        if isinstance(func, cst.Call) and analysis.resolves_to(func.func, _RUNNING_WRAPPERS):
            return _called_function(analysis, handed.args[0].value, depth + 1)  # `spaces.GPU(duration=60)(f)`
    if isinstance(handed, cst.Lambda) and isinstance(handed.body, cst.Call):
        return handed.body.func
    if isinstance(handed, cst.Name):
        values = analysis.assigned_values(handed)
        if len(values) == 1 and isinstance(values[0], cst.Call):
            unwrapped = _called_function(analysis, values[0], depth + 1)
            if unwrapped is not values[0]:
                return unwrapped
    return handed


def _is_gradio_object(analysis: "ModuleAnalysis", expression: cst.BaseExpression, depth: int) -> bool:
    """A Gradio component, Blocks or event (``gr.Button()``, a name bound to one, ``btn.click(...)``)."""
    if depth > 4:
        return False
    if isinstance(expression, cst.Call):
        if analysis.resolves_with_prefix(expression.func, ("gradio.",)):
            return True
        func = expression.func
        # `btn.click(f).then(g)`: the listener's result is an event dependency.
        return isinstance(func, cst.Attribute) and func.attr.value in GRADIO_EVENTS and _is_gradio_object(analysis, func.value, depth + 1)
    if isinstance(expression, cst.Name):
        return any(_is_gradio_object(analysis, value, depth + 1) for value in analysis.assigned_values(expression))
    if isinstance(expression, cst.Attribute):
        return analysis.resolves_with_prefix(expression, ("gradio.",))
    return False


def is_streamlit_app(analysis: "ModuleAnalysis") -> bool:
    """A Streamlit script: it imports streamlit and its module level calls it (``st.title(...)``, a widget), or calls
    a function of the module that does (``if __name__ == "__main__": summarize()``, which Streamlit runs too)."""
    if not analysis.imports_any(("streamlit",)):
        return False
    called: set[str] = set()
    for statement in analysis.module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        for node in iter_subtree(statement):
            if isinstance(node, cst.Call):
                if analysis.resolves_with_prefix(node.func, ("streamlit.",)):
                    return True
                if isinstance(node.func, cst.Name):
                    called.add(node.func.value)
    return any(
        isinstance(node, cst.Call) and analysis.resolves_with_prefix(node.func, ("streamlit.",))
        for statement in analysis.module.body
        if isinstance(statement, cst.FunctionDef) and statement.name.value in called
        for node in iter_subtree(statement.body)
    )


def runs_once(analysis: "ModuleAnalysis", function: cst.FunctionDef) -> bool:
    """``function`` is cached by Streamlit (``@st.cache_resource``): it runs once, not per interaction."""
    return any(
        analysis.resolves_to(decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator, STREAMLIT_RUN_ONCE)
        for decorator in function.decorators
    )


__all__ = ["GRADIO_APPS", "GRADIO_EVENTS", "STREAMLIT_RUN_ONCE", "handed_to_gradio", "is_streamlit_app", "runs_once"]
