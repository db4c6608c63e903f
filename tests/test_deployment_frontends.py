"""The YAML, Helm and Dockerfile front-ends: safe, positioned, tolerant, bounded."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gemlint.analysis.deployment import env_settings, health_checks, parse_duration
from gemlint.analysis.probe_commands import command_targets, inference_request, local_urls
from gemlint.api import lint_source
from gemlint.frontends import dockerfile_file, helm, yaml_file
from gemlint.frontends.yaml_nodes import Mapping, compose_documents
from gemlint.text import SourceError


class _Source:
    def __init__(self, path: Path) -> None:
        self.path = path


def _yaml(text: str, path: str = "deploy.yaml"):
    return yaml_file.parse(_Source(Path(path)), text)


def test_nodes_carry_one_based_positions_and_multiple_documents():
    documents = compose_documents("a: 1\n---\nkind: Pod\nspec:\n  x: [1, 2]\n")
    assert len(documents) == 2
    second = documents[1]
    assert isinstance(second, Mapping)
    key, value = second.entry("spec")
    assert (key.start.line, key.start.column) == (4, 1)
    assert second.mapping("spec").entry("x")[0].start == type(key.start)(5, 3)


def test_unknown_and_python_tags_are_plain_values_never_constructed(tmp_path):
    marker = tmp_path / "constructed"
    text = f'a: !Ref Param\nb: !!python/object/apply:os.system ["touch {marker}"]\nc: !!binary aGk=\n'
    document = compose_documents(text)[0]
    assert document.text("a") == "Param"
    assert [item.value for item in document.entry("b")[1].items] == [f"touch {marker}"]
    assert not marker.exists()


def test_a_yaml_bomb_is_a_parse_error_not_a_hang():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index, name in enumerate("bcdefghi"):
        previous = "abcdefghi"[index]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    started = time.perf_counter()
    with pytest.raises(SourceError, match="YAML bomb"):
        compose_documents("\n".join(lines) + "\n")
    assert time.perf_counter() - started < 10


def test_a_catalogue_that_merges_one_anchor_into_each_entry_is_read():
    # A gallery of 1,500 entries, each merging the same defaults: aliases repeat far more nodes than the bomb
    # budget alone allows, but not many times more than the file holds itself.
    defaults = "defaults: &defaults\n" + "".join(f"  option_{index}: value_{index}\n" for index in range(12))
    entries = "".join(f"  - <<: *defaults\n    name: model-{index}\n    url: https://example.org/{index}\n" for index in range(1500))
    document = compose_documents(defaults + "entries:\n" + entries)[0]
    last = document.sequence("entries")[-1]
    assert last.text("name") == "model-1499" and last.text("option_11") == "value_11"


def test_yaml_bomb_through_the_engine_is_gem000():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index, name in enumerate("bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{'abcdefghi'[index]}"] * 9) + "]")
    lines.append("kind: Pod\nspec: {containers: [{name: x, livenessProbe: {httpGet: {path: /}}}]}")
    found = lint_source("\n".join(lines) + "\n", "bomb.yaml")
    assert [d.code for d in found] == ["GEM000"]


def test_merge_keys_and_aliases_are_expanded():
    document = compose_documents("base: &b {x: 1, y: 2}\nthing:\n  <<: *b\n  y: 3\ncopy: *b\n")[0]
    thing = document.mapping("thing")
    assert thing.text("x") == "1" and thing.text("y") == "3"
    assert document.mapping("copy").text("y") == "2"


@pytest.mark.parametrize("text", ["a: [1, 2\n", "key: value\n  bad indent: x\n", "- a\nb: c\n", "\t- tab\n"])
def test_invalid_yaml_is_gem000_with_a_line(text):
    # (A YAML file that mentions nothing a rule looks for is not parsed at all, like Python files no rule can match.)
    found = lint_source("# livenessProbe\n" + text, "broken.yaml")
    assert [d.code for d in found] == ["GEM000"]
    assert found[0].line >= 1 and "YAML" in found[0].message


def test_opencv_storage_yaml_is_no_manifest_and_no_parse_error():
    # cv::FileStorage writes `%YAML:1.0`, which YAML parsers refuse; tracker configs mention GPUs and probes.
    text = "%YAML:1.0\n# livenessProbe; gpu memory\nBaseConfig:\n  minDetectorConfidence: 0.2\n"
    assert lint_source(text, "tracker_config.yml") == []
    # The directive YAML spells with a space is YAML: the file is read, and a broken one is reported.
    assert [d.code for d in lint_source("%YAML 1.2\n---\n# livenessProbe\na: [1, 2\n", "broken.yaml")] == ["GEM000"]


def test_protocol_buffer_text_under_a_yaml_name_is_no_yaml_and_no_parse_error():
    # DeepStream's nvinferserver configs are protobuf text format in `.yml` files, often with Windows line ends.
    text = "# livenessProbe; gpu\r\ninfer_config {\r\n  unique_id: 1\r\n  backend {  # the server\r\n    triton { model_name: \"m\" }\r\n  }\r\n}\r\n"
    assert lint_source(text, "config_infer.yml") == []
    # A YAML flow mapping opened after a key is YAML: a broken one is still reported.
    assert [d.code for d in lint_source("# livenessProbe\nserver: {\n  port: [1, 2\n", "broken.yml")] == ["GEM000"]


def test_terraform_template_directives_make_a_template_not_a_broken_file():
    text = "# livenessProbe\nserver:\n  replicas: 1\n%{ if metrics ~}\n  metrics: true\n%{ endif ~}\n"
    assert lint_source(text, "values.yaml") == []


def test_deeply_nested_yaml_is_reported():
    # livenessProbe: a word the YAML rules look for, so the file reaches the parser.
    text = "# livenessProbe\na: " + "[" * 5000 + "]" * 5000 + "\n"
    found = lint_source(text, "deep.yaml")
    assert [(d.code, d.line, d.message) for d in found] == [("GEM000", 2, "invalid YAML: exceeded maximum nesting depth")]


def test_templated_yaml_outside_a_chart_is_read_tolerantly():
    text = (
        "kind: Deployment\napiVersion: apps/v1\n"
        "spec:\n  replicas: {{ replicas }}\n  template:\n    spec:\n      containers:\n"
        "        - name: x\n{% if debug %}\n          env:\n            - {name: CUDA_LAUNCH_BLOCKING, value: \"1\"}\n{% endif %}\n"
    )
    # The setting sits in a template's `{% if debug %}` block: not reported; the same file without the block is.
    assert lint_source(text, "k8s/jinja.yaml") == []
    unguarded = text.replace("{% if debug %}\n", "").replace("{% endif %}\n", "")
    assert [(d.code, d.line) for d in lint_source(unguarded, "k8s/jinja.yaml")] == [("GEM404", 10)]


def _chart(tmp_path: Path, values: str, template: str) -> Path:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(values)
    path = chart / "templates" / "deploy.yaml"
    path.write_text(template)
    return path


def test_helm_values_defaults_fill_paths_and_included_blocks(tmp_path):
    path = _chart(
        tmp_path,
        "probe:\n  httpGet: {path: /healthz, port: 8000}\n  periodSeconds: 4\nreplicas: 5\nstartup: /live\n",
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n"
        "      containers:\n        - name: a\n          livenessProbe:\n            {{- toYaml .Values.probe | nindent 12 }}\n"
        "          startupProbe:\n            httpGet:\n              path: {{ .Values.startup | default \"/x\" }}\n"
        "          {{- with .Values.probe }}\n          readinessProbe:\n            {{- toYaml . | nindent 12 }}\n          {{- end }}\n",
    )
    document = yaml_file.parse(_Source(path), path.read_text())
    checks = {check.kind: check for check in health_checks(document)}
    liveness = checks["liveness"]
    assert liveness.targets.http[0].path == "/healthz" and liveness.period_s == 4.0
    assert liveness.replicas == "5 replicas" and liveness.start.line == 9
    assert checks["startup"].targets.http[0].path == "/live"
    assert checks["readiness"].targets.http[0].path == "/healthz"


def test_helm_renderer_keeps_every_line_in_place():
    template = "a: 1\n{{- if .Values.x }}\nb: {{ .Values.y }}\n{{- end }}\n{{/* a\nmulti-line comment */}}\nc: 3\n"
    rendered = helm.render(template, None)
    assert rendered.text.count("\n") == template.count("\n")
    document = compose_documents(rendered.text)[0]
    assert document.entry("c")[0].start.line == 7
    assert document.text("b") == helm.PLACEHOLDER


def test_templated_env_values_are_configuration_not_literals(tmp_path):
    path = _chart(
        tmp_path,
        'blocking: "1"\n',
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: a\n"
        "          env:\n            - name: CUDA_LAUNCH_BLOCKING\n              value: {{ .Values.blocking | quote }}\n",
    )
    document = yaml_file.parse(_Source(path), path.read_text())
    (setting,) = env_settings(document)
    assert setting.name == "CUDA_LAUNCH_BLOCKING" and setting.value is None


def test_a_broken_helm_document_loses_only_itself(tmp_path):
    path = _chart(
        tmp_path,
        "",
        "kind: Pod\napiVersion: v1\nspec: {{ if }} [\n---\napiVersion: v1\nkind: Pod\nspec:\n  containers:\n"
        "    - name: a\n      livenessProbe: {httpGet: {path: /h}}\n",
    )
    document = yaml_file.parse(_Source(path), path.read_text())
    assert [check.targets.http[0].path for check in health_checks(document)] == ["/h"]


def test_dockerfile_instructions_with_lines_flags_and_json_form():
    document = dockerfile_file.parse(
        None,
        "FROM python:3.11\n# comment\nENV A=1 \\\n    B=\"two words\"\nHEALTHCHECK --interval=5s --timeout=2s \\\n"
        "  CMD curl -f http://localhost:8000/healthz || exit 1\nHEALTHCHECK CMD [\"python\", \"hc.py\"]\nHEALTHCHECK NONE\n",
    )
    checks = health_checks(document)
    assert [(c.start.line, c.period_s) for c in checks] == [(5, 5.0), (7, 30.0)]
    assert checks[0].targets.http[0].path == "/healthz" and checks[0].targets.http[0].port == "8000"
    assert checks[1].targets.scripts == ["hc.py"]
    assert [(s.name, s.value, s.start.line) for s in env_settings(document)] == [("A", "1", 3), ("B", "two words", 3)]


def test_dockerfile_build_arguments_are_not_literals():
    document = dockerfile_file.parse(None, "FROM x\nARG D=0\nENV CUDA_LAUNCH_BLOCKING=$D\nENV CUDA_LAUNCH_BLOCKING ${D}\n")
    assert [s.value for s in env_settings(document)] == [None, None]


def test_empty_and_comment_only_dockerfiles_are_fine():
    assert lint_source("", "Dockerfile") == []
    assert lint_source("# just a comment\n", "Dockerfile") == []


def test_dockerfile_noqa_on_the_line_above_suppresses():
    text = "FROM x\n# noqa: GEM404\nENV CUDA_LAUNCH_BLOCKING=1\nENV CUDA_LAUNCH_BLOCKING=1\n"
    assert [(d.code, d.line) for d in lint_source(text, "Dockerfile")] == [("GEM404", 4)]


def test_gem404_not_flagged_in_test_or_benchmark_folders():
    text = "FROM x\nENV CUDA_LAUNCH_BLOCKING=1\n"
    assert [d.code for d in lint_source(text, "docker/Dockerfile")] == ["GEM404"]
    assert lint_source(text, "tests/docker/Dockerfile") == []
    assert lint_source(text, "benchmarks/Dockerfile") == []


def test_compose_environment_forms():
    text = (
        "services:\n  a:\n    image: x\n    environment:\n      - CUDA_LAUNCH_BLOCKING=1\n      - OTHER=${X}\n"
        "  b:\n    image: y\n    environment:\n      CUDA_LAUNCH_BLOCKING: ${BLOCK:-1}\n"
    )
    assert [(d.code, d.line) for d in lint_source(text, "compose.yaml")] == [("GEM404", 5)]


@pytest.mark.parametrize(
    "text,seconds",
    [("30s", 30.0), ("1m30s", 90.0), ("500ms", 0.5), ("2h", 7200.0), ("15", 15.0), ("soon", None), ("", None)],
)
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_probe_commands():
    targets = command_targets(argv=["sh", "-c", "curl -fsS http://127.0.0.1:8080/v2/health/live && python /app/hc.py"])
    assert [(t.path, t.port) for t in targets.http] == [("/v2/health/live", "8080")]
    assert targets.scripts == ["/app/hc.py"]
    assert command_targets(argv=["python3", "-u", "-m", "app.health"]).modules == ["app.health"]
    assert command_targets(shell="wget -qO- localhost:9000/ping?x=1").http[0].path == "/ping"
    assert command_targets(shell="curl -X POST http://localhost/infer").http[0].method == "POST"
    assert command_targets(argv=["grpc_health_probe", "-addr=:50051"]).http == []
    assert local_urls("curl http://upstream.internal/healthz") == []


@pytest.mark.parametrize(
    ("command", "inference"),
    [
        ('curl -X POST "http://localhost:{{ .Values.port }}/v1/completions" -d \'{"prompt": "hi"}\'', True),
        ("curl -sf http://127.0.0.1:8000/v1/chat/completions -d @ping.json", True),
        ("curl -s -d '{}' localhost:8080/v2/models/resnet/versions/1/infer", True),
        ("curl -sf -X POST http://localhost:8080/v1/models/resnet:predict --data @x.json", True),
        ("curl -sf -X POST localhost:8080/invocations -d @payload.json", True),
        ("curl -sf http://localhost:8000/v1/completions", False),  # a GET: no inference
        ("curl -sf -X POST http://localhost:8000/v1/models", False),  # the models' list
        ("curl -sf -X POST http://upstream:8000/v1/completions -d '{}'", False),  # not the container's own server
    ],
)
def test_inference_requests_of_model_server_apis(command, inference):
    assert (inference_request(command_targets(shell=command)) is not None) is inference


def test_helm_named_templates_and_list_includes(tmp_path):
    """The shape of vLLM's chart: probes come from a named template in _helpers.tpl, lists from values."""
    path = _chart(
        tmp_path,
        "liveness:\n  httpGet: {path: /health, port: 8000}\n  periodSeconds: 10\n"
        "command: [vllm, serve]\nextraPorts: [{name: metrics, containerPort: 9000}]\n",
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "        - name: vllm\n          command :\n          {{- with .Values.command }}\n"
        "          {{- toYaml . | nindent 10 }}\n          {{- end }}\n"
        "          ports:\n            - name: http\n              containerPort: 8000\n"
        "            {{- with .Values.extraPorts }}\n            {{- toYaml . | nindent 12 }}\n            {{- end }}\n"
        "          {{- include \"chart.probes\" . | indent 10 }}\n          resources: {}\n",
    )
    (path.parent / "_helpers.tpl").write_text(
        '{{- define "chart.probes" -}}\n{{- if .Values.liveness }}\nlivenessProbe:\n'
        "{{- with .Values.liveness }}\n{{- toYaml . | nindent 2 }}\n{{- end }}\n{{- end }}\n{{- end }}\n"
    )
    document = yaml_file.parse(_Source(path), path.read_text())
    (check,) = health_checks(document)
    assert (check.kind, check.start.line, check.period_s) == ("liveness", 18, 10.0)
    assert [(t.path, t.port) for t in check.targets.http] == [("/health", "8000")]
    container = document.documents[0].mapping("spec").mapping("template").mapping("spec").sequence("containers")[0]
    assert [item.value for item in container.sequence("command")] == ["vllm", "serve"]
    assert [port.text("name") for port in container.sequence("ports")] == ["http", "metrics"]


def test_a_latin1_dockerfile_is_read_as_docker_reads_it(tmp_path):
    from gemlint.api import lint_paths

    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_bytes("# Mainteneur: Séverine\nFROM python:3.11\nENV CUDA_LAUNCH_BLOCKING=1\n".encode("latin-1"))
    found = {(Path(d.path).name, d.code) for d in lint_paths([tmp_path], jobs=1)}
    # Docker takes the bytes as they are (YAML, by its specification, must be UTF-8 and still is).
    assert ("Dockerfile", "GEM404") in found and ("Dockerfile", "GEM000") not in found


@pytest.mark.parametrize(
    "text, line",
    [
        ("FROM x\nRUN a\nENV A\nEXPOSE 80\n", 3),
        ("FROM x\nRUN <<EOF\necho ok\nEOF\nRUN b\nRUN <<END\necho never closed\n", 6),  # a closed heredoc before
        ("ENV A\n", 1),
    ],
)
def test_a_broken_dockerfile_is_reported_at_the_failing_line(text, line):
    # The last line lets GEM404's text prefilter through, so that the file is parsed at all.
    (finding,) = lint_source(text + "ENV CUDA_LAUNCH_BLOCKING=0\n", "Dockerfile")
    assert (finding.code, finding.line) == ("GEM000", line)
    assert finding.message.startswith("invalid Dockerfile: ")


def test_custom_resource_definitions_are_not_composed_and_other_documents_keep_their_lines():
    schema = "\n".join(f"      field{index}:\n        livenessProbe: {{type: object}}" for index in range(200))
    text = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec:\n  versions:\n    schema:\n"
        f"{schema}\n---\nkind: Pod\nspec:\n  containers:\n    - name: a\n---\nkind: 'CustomResourceDefinition'\nspec: {{}}\n"
    )
    documents = _yaml(text).documents
    assert [document.text("kind") for document in documents] == ["Pod"]
    assert documents[0].start.line == text.splitlines().index("kind: Pod") + 1


def test_a_broken_document_after_a_definition_reports_its_own_line():
    text = "kind: CustomResourceDefinition\nspec: {}\n---\nkind: Pod\nspec: [\n"
    with pytest.raises(SourceError) as raised:
        _yaml(text)
    assert raised.value.line >= 5
