"""An MLP block exported as plain ONNX operators, built with onnx.helper: MatMul+Add, GELU (erf form), LayerNorm.

These are the patterns exporters emit and ONNX Runtime fuses (Gemm, Gelu, LayerNormalization).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build_model(hidden: int = 256, layers: int = 4) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []

    def constant(name: str, value) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    x = "x"
    for i in range(layers):
        w = constant(f"w{i}", rng.standard_normal((hidden, hidden)) * 0.05)
        b = constant(f"b{i}", rng.standard_normal(hidden) * 0.05)
        h = node("Add", [node("MatMul", [x, w], f"mm{i}"), b], f"h{i}")
        # GELU: 0.5 * h * (1 + erf(h / sqrt(2)))
        erf = node("Erf", [node("Div", [h, constant(f"sqrt2_{i}", 2**0.5)], f"d{i}")], f"e{i}")
        gelu = node("Mul", [node("Mul", [h, node("Add", [erf, constant(f"one{i}", 1.0)], f"ea{i}")], f"m{i}"), constant(f"half{i}", 0.5)], f"g{i}")
        # LayerNorm: (g - mean) / sqrt(var + eps) * gamma + beta
        centered = node("Sub", [gelu, node("ReduceMean", [gelu], f"mu{i}", axes=[-1])], f"c{i}")
        variance = node("ReduceMean", [node("Pow", [centered, constant(f"two{i}", 2.0)], f"p{i}")], f"v{i}", axes=[-1])
        std = node("Sqrt", [node("Add", [variance, constant(f"eps{i}", 1e-5)], f"ve{i}")], f"s{i}")
        scaled = node("Mul", [node("Div", [centered, std], f"n{i}"), constant(f"gamma{i}", np.ones(hidden))], f"ng{i}")
        x = node("Add", [scaled, constant(f"beta{i}", np.zeros(hidden))], f"ln{i}")
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", hidden])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", hidden])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
