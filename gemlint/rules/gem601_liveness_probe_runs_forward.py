from __future__ import annotations

from gemlint.analysis.forward_families import forward_label, runs_phrase
from gemlint.diagnostics import RelatedLocation, Severity, Span
from gemlint.languages import Language
from gemlint.rule import DocumentRule


class LivenessProbeRunsForward(DocumentRule):
    code = "GEM601"
    name = "liveness-probe-runs-forward"
    severity = Severity.ERROR
    languages = frozenset({Language.YAML, Language.DOCKERFILE})
    summary = (
        "A liveness/startup probe or container health check reaches a handler that runs a model forward pass, or "
        "sends an inference request of a model server's API."
    )
    rationale = (
        "Kubernetes runs a liveness probe every `periodSeconds` (10 s by default) on every replica, Docker and "
        "compose run `HEALTHCHECK` every `interval` (30 s by default). When the probed handler runs the model, each "
        "check is a forward pass that competes with real traffic for the GPU; under load the check misses its "
        "timeout and the orchestrator restarts a healthy, merely busy replica, which sheds its in-flight requests "
        "and pushes more load onto the others. Liveness should show that the process is alive; whether the model "
        "can serve belongs in a readiness probe on a cheap signal."
    )
    not_flagged = (
        "Readiness probes (a failing readiness probe takes the replica out of rotation without restarting it).",
        "Probes whose handler only returns a status, checks a flag or reads state, however it is mounted. A status "
        "call to an engine (`check_health()`, `is_ready()`) reads state; a one-token generation handed to it does not.",
        "Probes on paths no handler in the project serves, TCP and gRPC probes, and commands that do not request a "
        "local path or run a project script; except a command that POSTs an inference request of a model server's "
        "API, whatever serves it (`/v1/completions`, `/v1/chat/completions`, `/v1/embeddings`, Ollama's "
        "`/api/generate`, TGI's `/generate`, KServe's `/v1/models/<m>:predict` and `/v2/models/<m>/infer`, "
        "TorchServe's `/predictions/<m>`, SageMaker's `/invocations`): the server's code need not be in the "
        "repository for the request to run the model.",
        "Probes of a container whose command serves another application (another service of the project, a module "
        "or program the project does not hold), or listens on another port than the probe asks (read from the "
        "command, an environment variable or the server's default). Without a command in the file, the nearest "
        "application of the project that serves the path is assumed.",
    )
    bad = """\
# deployment.yaml -- the handler of /healthz in app/health.py runs `model.generate(...)`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-server
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: server
          image: llm-server:1.0
          livenessProbe:
            httpGet:
              path: /healthz
              port: 8000
            periodSeconds: 5
"""
    good = """\
# deployment.yaml -- /livez returns {"status": "ok"}; /ready checks that the model is loaded
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm-server
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: server
          image: llm-server:1.0
          livenessProbe:
            httpGet:
              path: /livez
              port: 8000
            periodSeconds: 5
          readinessProbe:
            httpGet:
              path: /ready
              port: 8000
"""
    example_language = Language.YAML
    benchmark = "Service throughput on loopback while a 1 Hz probe runs a forward pass, against a trivial probe."
    tags = ("performance", "serving", "deployment", "kubernetes")
    precision = "high"
    prefilter = ("livenessProbe", "startupProbe", "HEALTHCHECK", "healthcheck")
    cross_file = True
    reads_routes = True

    def check(self) -> None:
        from gemlint.analysis.deployment import health_checks
        from gemlint.project.health_checks import cost, forward_of
        from gemlint.project.files import project_for

        checks = [check for check in health_checks(self.context.document) if check.restarts_on_failure]
        if not checks:
            return
        project = project_for(self.context.config)
        near = self.context.source.path
        for check in checks:
            found = forward_of(project, check, near)
            if found is None:
                self._check_inference_request(check, cost)
                continue
            forward = found.forward
            handler = f"`{found.handler_name}` ({found.handler_file.display}:{found.handler_line})" if found.handler_line else f"`{found.handler_file.display}`"
            via = (" through " + " → ".join(f"`{s.name}`" for s in forward.via)) if forward.via else ""
            self.report_at(
                check.start,
                check.end,
                f"{check.label} {found.target} reaches {handler}, which {runs_phrase(forward.family)} "
                f"({forward.text} at {forward.file.display}:{forward.start.line}{via}): {cost(found.check)}. "
                "Keep liveness cheap; check the model in a readiness probe",
                related=self._related(found),
            )

    def _check_inference_request(self, check, cost) -> None:
        """A check that sends an inference request of a model server's API (``curl -X POST .../v1/completions``):
        a forward pass whoever serves it, the server's image included, whose code is not in the repository."""
        from gemlint.analysis.probe_commands import inference_request

        request = inference_request(check.targets)
        if request is not None:
            target, what = request
            self.report_at(
                check.start,
                check.end,
                f"{check.label} sends POST {target.path}, {what}, to the container's server: {cost(check)}. "
                "Keep liveness cheap; check the model in a readiness probe",
            )

    def _related(self, found) -> list[RelatedLocation]:
        related = []
        file, line = found.handler_file, found.handler_line
        if line:
            function = file.function_at(line)
            start = file.position(function.name).start if function is not None else None
            column = start.column + 1 if start is not None else 1
            name_length = len(function.name.value) if function is not None else 1
            related.append(
                RelatedLocation(Span(file.display, line, column, line, column + name_length), f"`{found.handler_name}` handles {found.target}")
            )
        forward = found.forward
        related.append(
            RelatedLocation(
                Span(forward.file.display, forward.start.line, forward.start.column, forward.end.line, forward.end.column),
                f"{forward_label(forward.family)} {forward.text}",
            )
        )
        return related
