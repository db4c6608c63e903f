"""Messages say why: the inference context a finding was found in, and what a setting gives up."""

from __future__ import annotations

from gemlint.api import lint_source

ROUTE = '''\
from fastapi import FastAPI
app = FastAPI()

@app.post("/embed")
def embed(text: str):
    return tok(text, padding="max_length", max_length=64)
'''
BASIC_PY = '''\
import onnxruntime as ort
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
session = ort.InferenceSession("model.onnx", options)
'''
BASIC_CPP = '''\
#include <onnxruntime_cxx_api.h>
Ort::Session open(Ort::Env& env) {
    Ort::SessionOptions options;
    options.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_BASIC);
    return Ort::Session(env, "model.onnx", options);
}
'''


def test_gem201_names_the_inference_context():
    [finding] = lint_source(ROUTE, "svc.py")
    assert "(`embed` is an HTTP route handler)" in finding.message


def test_gem501_basic_says_what_it_keeps_and_loses_in_python_and_cpp():
    for source, path in ((BASIC_PY, "svc.py"), (BASIC_CPP, "session.cpp")):
        [finding] = [d for d in lint_source(source, path) if d.code == "GEM501"]
        assert finding.severity.value == "note"
        assert "constant folding, redundant-node eliminations and simple fusions" in finding.message
        assert "loses the extended fusions" in finding.message and "layout optimizations" in finding.message


FORWARDS = '''\
import torch
from ray import serve

@serve.deployment
class Service:
    def __init__(self):
        self.net = torch.nn.Linear(4, 2).eval()

    def predict(self, x):
        return self.net.forward(x)

    def predict_twice(self, x):
        return self.net(x)
'''


def test_gem101_shows_the_forward_call_as_written():
    messages = sorted(f.message.split(" runs ", 1)[0] for f in lint_source(FORWARDS, "svc.py") if f.code == "GEM101")
    assert messages == ["`self.net(...)`", "`self.net.forward(...)`"]


CHAIN = '''\
import torch
from fastapi import FastAPI
from torch import nn

app = FastAPI()
net = nn.Linear(2, 2).eval()

def logits(model, x):
    return model(x)

def score(model, x):
    return logits(model, x)

@app.post("/score")
def route(x: list[float]):
    return score(net, torch.tensor(x))
'''


def test_a_chain_of_callers_reads_as_one_flat_phrase():
    [finding] = [d for d in lint_source(CHAIN, "svc.py") if d.code == "GEM101"]
    assert "(`logits` is called from `score`, called from `route`, an HTTP route handler)" in finding.message
