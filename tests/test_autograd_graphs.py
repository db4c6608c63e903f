"""The autograd-graph data flow (gemlint.analysis.autograd_graphs), asked directly as rules ask it."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from gemlint.analysis.autograd_graphs import CALLER, FORWARD, OUTSIDE, AutogradGraphs, referenced_besides_calls
from gemlint.config import default_config
from gemlint.discovery import SourceFile
from gemlint.python_lint import PythonFileContext
from gemlint.languages import Language


def graphs_of(source: str) -> AutogradGraphs:
    module = cst.parse_module(source)
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    config = default_config(Path("/nonexistent-gemlint-root"))
    context = PythonFileContext(SourceFile(Path("train.py"), Language.PYTHON, "train.py", "train.py"), source, module, wrapper, config)
    return AutogradGraphs(context.analysis)


def backward(graphs: AutogradGraphs, text: str):
    """The recorded backward pass whose call's source text is ``text``, and its function's flow."""
    analysis = graphs.analysis
    [node] = [n for n in analysis.nodes_of(cst.Call) if analysis.module.code_for_node(n) == text]
    flow = graphs.function(graphs.scope_of(node))
    return flow, flow.backwards[node]


def forward_calls(graphs: AutogradGraphs, event) -> set[str]:
    return {graphs.analysis.module.code_for_node(o.node) for o in event.origins if o.kind == FORWARD}


def test_a_loss_carries_the_graphs_of_what_it_is_built_from_and_detach_breaks_the_link():
    graphs = graphs_of(
        "import torch\n"
        "def step(actor, critic, s, a):\n"
        "    q = critic(s, a)\n"
        "    pi = actor(s)\n"
        "    loss = (q - pi.detach()).pow(2).mean() + torch.tanh(q).sum()\n"
        "    loss.backward()\n"
    )
    _, event = backward(graphs, "loss.backward()")
    assert forward_calls(graphs, event) == {"critic(s, a)"}
    assert {o.node.name.value for o in event.origins if o.kind == CALLER} == {"s", "a"}


def test_no_grad_item_numpy_and_constructors_carry_no_graph():
    graphs = graphs_of(
        "import torch\n"
        "def step(model, target_net, x):\n"
        "    with torch.no_grad():\n"
        "        target = target_net(x) * 2\n"
        "    scale = model(x).mean().item()\n"
        "    array = model(x).cpu().numpy()\n"
        "    ones = torch.ones(3)\n"
        "    loss = (target + scale + ones).sum() + torch.as_tensor(array).sum()\n"
        "    loss.backward()\n"
    )
    _, event = backward(graphs, "loss.backward()")
    assert not event.origins


def test_a_forward_recomputed_in_a_loop_is_fresh_each_iteration_and_a_carried_state_links_them():
    source = (
        "def fit(rnn, loader, opt):\n"
        "    hidden = None\n"
        "    for x, y in loader:\n"
        "        out, hidden = rnn(x, hidden)\n"
        "        {loss}\n"
        "        loss.backward(retain_graph=True)\n"
    )
    carried = graphs_of(source.format(loss="loss = (out - y).pow(2).mean()"))
    flow, event = backward(carried, "loss.backward(retain_graph=True)")
    assert {o.generation for o in event.origins if o.kind == FORWARD} == {0, 1}
    assert flow.reuses(event)[0] == "reused"

    fresh = graphs_of(source.format(loss="loss = (out - y).pow(2).mean()").replace("rnn(x, hidden)", "rnn(x, None)"))
    flow, event = backward(fresh, "loss.backward(retain_graph=True)")
    assert {o.generation for o in event.origins if o.kind == FORWARD} == {0}
    verdict, evidence = flow.reuses(event)
    assert (verdict, evidence) == ("free", None)


def test_separate_forwards_are_free_and_the_next_backward_is_the_evidence():
    graphs = graphs_of(
        "def step(model, xa, xb):\n"
        "    first = model(xa.float()).sum()\n"
        "    first.backward(retain_graph=True)\n"
        "    second = model(xb.float()).sum()\n"
        "    second.backward()\n"
    )
    flow, event = backward(graphs, "first.backward(retain_graph=True)")
    verdict, evidence = flow.reuses(event)
    assert verdict == "free"
    assert graphs.analysis.module.code_for_node(evidence.node) == "second.backward()"


def test_a_graph_that_leaves_the_function_is_reused():
    for leaving in ("return loss", "self.last = loss", "sink.append(loss)", "yield loss", "hand_over(loss)"):
        graphs = graphs_of(
            "class Trainer:\n"
            "    def step(self, model, x, sink, hand_over):\n"
            "        loss = model(x).sum()\n"
            "        loss.backward(retain_graph=True)\n"
            f"        {leaving}\n"
        )
        flow, event = backward(graphs, "loss.backward(retain_graph=True)")
        assert flow.reuses(event)[0] == "reused", leaving


def test_a_graph_from_outside_the_function_is_not_judged():
    graphs = graphs_of(
        "class Explainer:\n"
        "    def forward(self, model, x):\n"
        "        self.scores = model(x)\n"
        "    def backward(self, one_hot):\n"
        "        self.scores.backward(gradient=one_hot, retain_graph=True)\n"
        "def partial(loss, layer):\n"
        "    return grad(loss, layer, retain_graph=True)\n"
    )
    flow, event = backward(graphs, "self.scores.backward(gradient=one_hot, retain_graph=True)")
    assert {o.kind for o in event.origins} == {OUTSIDE}
    assert flow.reuses(event)[0] == "unknown"


def test_a_same_file_helper_that_backpropagates_its_argument_is_a_later_backward():
    graphs = graphs_of(
        "def apply(loss, opt):\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        "def step(model, x, opt):\n"
        "    out = model(x)\n"
        "    out.sum().backward(retain_graph=True)\n"
        "    apply(out.mean(), opt)\n"
    )
    flow, event = backward(graphs, "out.sum().backward(retain_graph=True)")
    verdict, evidence = flow.reuses(event)
    assert verdict == "reused"
    assert graphs.analysis.module.code_for_node(evidence.node) == "apply(out.mean(), opt)"


def test_elements_appended_once_per_step_have_graphs_of_their_own_when_a_counter_picks_them():
    source = (
        "import torch\n"
        "def replay(model, inputs, opt):\n"
        "    outputs = []\n"
        "    for x in inputs:\n"
        "        {append}\n"
        "    for k in range(len(outputs)):\n"
        "        outputs[k].sum().backward(retain_graph=True)\n"
        "    {after}\n"
    )
    own = graphs_of(source.format(append="outputs.append(model(x))", after="opt.step()"))
    flow, event = backward(own, "outputs[k].sum().backward(retain_graph=True)")
    assert {o.picked is not None for o in event.origins if o.kind == FORWARD} == {True}
    assert flow.reuses(event) == ("free", None)

    # Two elements per step share one forward; a sum over the list afterwards goes through every element.
    for append, after in (
        ("y = model(x); outputs.append(y[0]); outputs.append(y[1])", "opt.step()"),
        ("outputs.append(model(x))", "torch.stack(outputs).sum().backward()"),
    ):
        graphs = graphs_of(source.format(append=append, after=after))
        flow, event = backward(graphs, "outputs[k].sum().backward(retain_graph=True)")
        assert flow.reuses(event)[0] == "reused", (append, after)


def test_a_hidden_state_links_the_elements_of_a_list():
    graphs = graphs_of(
        "def replay(rnn, inputs, opt):\n"
        "    h, outputs = None, []\n"
        "    for x in inputs:\n"
        "        h = rnn(x, h)\n"
        "        outputs.append(h)\n"
        "    for k in range(len(outputs)):\n"
        "        outputs[k].sum().backward(retain_graph=True)\n"
    )
    flow, event = backward(graphs, "outputs[k].sum().backward(retain_graph=True)")
    assert flow.reuses(event)[0] == "reused"


def test_a_name_used_other_than_by_calling_it_may_be_called_unseen():
    analysis = graphs_of(
        "from losses import probe\n"
        "def run(model, batch, schedule):\n"
        "    probe(model, batch)\n"
        "    schedule(every=10, probe=None)\n"
    ).analysis
    assert not referenced_besides_calls(analysis, "probe")
    for use in ("schedule(probe)", "hooks = {'probe': probe}", "self.fn = probe"):
        analysis = graphs_of(f"from losses import probe\ndef run(self, schedule):\n    probe()\n    {use}\n").analysis
        assert referenced_besides_calls(analysis, "probe"), use


def test_without_a_project_a_returned_graph_keeps_the_benefit_of_the_doubt():
    graphs = graphs_of(
        "import torch\n"
        "def probe(model, x):\n"
        "    loss = model(x).sum()\n"
        "    grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)\n"
        "    return loss, grads\n"
        "def report(model, x):\n"
        "    loss, grads = probe(model, x)\n"
        "    return loss.item()\n"
    )
    flow, event = backward(graphs, "torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)")
    assert graphs.result_callers(flow.scope) is None
    assert flow.reuses(event)[0] == "reused"


class _NoOtherModules:
    """The project model of a project of one file: no callers or callees elsewhere."""

    def graph_callers(self, analysis, function):
        return []

    def graph_summary(self, analysis, call):
        return None

    def external_name(self, dotted):
        return None


def test_a_returned_graph_is_judged_by_every_caller_of_the_function():
    source = (
        "import torch\n"
        "def probe(model, x):\n"
        "    loss = model(x).sum()\n"
        "    grads = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)\n"
        "    return loss, grads\n"
        "def report(model, x, log):\n"
        "    loss, grads = probe(model, x)\n"
        "    {use}\n"
    )
    verdicts = {}
    for use in (
        "log.info(loss.item())",
        "loss.backward()",
        "return loss",
        "optimizer.step(lambda: probe(model, x)[0])",
        "meter.update(loss)",
        "kept = Wrapper(loss)",
    ):
        graphs = graphs_of(source.format(use=use))
        graphs.analysis.outside = _NoOtherModules()
        flow, event = backward(graphs, "torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)")
        verdicts[use] = flow.reuses(event)[0]
    assert verdicts == {
        "log.info(loss.item())": "free",
        "loss.backward()": "reused",
        "return loss": "reused",
        "optimizer.step(lambda: probe(model, x)[0])": "reused",
        "meter.update(loss)": "reused",
        "kept = Wrapper(loss)": "reused",
    }
