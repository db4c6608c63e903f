"""An ONNX Runtime session created with every graph optimization switched off."""

import onnxruntime as ort


def session_options():
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return options


def create_session(model_path):
    return ort.InferenceSession(model_path, sess_options=session_options(), providers=["CPUExecutionProvider"])


def predict(session, features):
    return session.run(None, {"x": features})[0]
