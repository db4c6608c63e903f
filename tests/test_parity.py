"""Parity checks (gemlint.analysis.parity): two implementations handed one input, their results compared."""

from __future__ import annotations

import libcst as cst
import pytest

from gemlint.analysis.parity import compares_two_implementations
from gemlint.analysis.syntax import iter_subtree


def _compares(code: str) -> bool:
    return compares_two_implementations(iter_subtree(cst.parse_module(code)))


@pytest.mark.parametrize(
    "code",
    [
        "ref = reference(x)\nout = port(x)\nassert torch.allclose(ref, out)\n",
        "ref = reference(x)\nout = port(x)\nprint((ref - out).norm())\n",
        "ref = reference(x)\nout = port(x)\nprint((ref - out).abs().max())\n",
        "ref = reference(x)\nout = port(x)\nassert (ref == out).all()\n",
        # what a call returned, read through an attribute or an item
        "ref = reference(x)\nout = vae.decode(x).sample\nassert (ref == out).all()\n",
        "ref = reference(x)[0]\nout = port(x)\nprint((ref - out).abs().max())\n",
        # the same input, scaled to the units the other implementation expects
        "ref = reference(latents)\nout = vae.decode(0.18215 * latents).sample\nprint((ref - out).abs().max())\n",
        "ref = reference(latents / 2)\nout = port(latents)\nassert torch.allclose(ref, out)\n",
    ],
)
def test_two_implementations_compared_on_one_input(code):
    assert _compares(code)


@pytest.mark.parametrize(
    "code",
    [
        # one model on two inputs: a distance between embeddings, inference
        "a = model(x)\nb = model(y)\nprint((a - b).norm())\n",
        # two models on two inputs
        "a = reference(x)\nb = port(y)\nassert torch.allclose(a, b)\n",
        # an elementwise difference kept as a tensor (a mask), not reduced to its size
        "a = reference(x)\nb = port(x)\nmask = (a - b).abs()\n",
        # elements that differ, or a comparison that is not reduced
        "a = reference(x)\nb = port(x)\nchanged = (a != b).all()\n",
        "a = reference(x)\nb = port(x)\nsame = a == b\n",
        # an input shifted, not scaled: another input
        "a = reference(x)\nb = port(x + noise)\nassert torch.allclose(a, b)\n",
    ],
)
def test_what_is_not_a_parity_check(code):
    assert not _compares(code)
