"""The flake8 plugin: real flake8 in a subprocess finds what the CLI finds, with flake8's noqa and gemlint's config."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import libcst
import pytest
from click.testing import CliRunner

from fixture_harness import FIXTURES, expectations, fixture_files
from gemlint.cli import main
from gemlint.flake8_plugin import Flake8Plugin, _settings

FORMAT = "%(path)s:%(row)d:%(col)d:%(code)s"
FIXTURE_ROOTS = sorted({path.relative_to(FIXTURES).parts[0] for path in fixture_files()})
LINE = 'os.environ["CUDA_LAUNCH_BLOCKING"] = "1"'


Finding = tuple[str, int, int, str]


def _start(cwd: Path, args: tuple[str, ...]) -> subprocess.Popen:
    # One process per run (a later --jobs wins): flake8's worker pool costs more than these few files.
    # The fixture directory is its own project (not a part of the repository that holds it).
    command = [sys.executable, "-m", "flake8", "--isolated", "--select", "GEM", "--jobs", "1", f"--format={FORMAT}", "--gemlint-project-root", ".", *args]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _collect(process: subprocess.Popen) -> set[Finding]:
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode in (0, 1), stderr
    assert "Traceback" not in stderr and "PluginExecutionFailed" not in stderr, stderr
    found = set()
    for line in stdout.splitlines():
        path, row, col, code = line.rsplit(":", 3)
        found.add((path.removeprefix("./"), int(row), int(col), code))
    return found


def flake8(cwd: Path, *args: str) -> set[Finding]:
    return _collect(_start(cwd, args))


def flake8_side_by_side(cwd: Path, *runs: tuple[str, ...]) -> list[set[Finding]]:
    processes = [_start(cwd, args) for args in runs]
    return [_collect(process) for process in processes]


@pytest.fixture(scope="module")
def flake8_on_fixtures() -> dict[str, set[Finding]]:
    """flake8 over each fixture directory (its own project root), the runs side by side to save time."""
    processes = {name: _start(FIXTURES / name, (".",)) for name in FIXTURE_ROOTS}
    return {name: _collect(process) for name, process in processes.items()}


def cli(cwd: Path, monkeypatch, *args: str) -> set[tuple[str, int, int, str]]:
    """The CLI's findings with ``cwd`` as the project root (a fixture directory is a project of its own,
    not a part of the repository it lies in)."""
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, [*args, "--project-root", ".", "--format", "json", "--no-cache"], catch_exceptions=False)
    return {(f["path"], f["line"], f["column"], f["code"]) for f in json.loads(result.stdout)}


@pytest.fixture(autouse=True)
def fresh_settings():
    _settings.cache_clear()
    Flake8Plugin.config_file = None
    yield
    _settings.cache_clear()


# Fixture projects whose findings come from other modules (a caller, a base class, a factory), with some of them.
NEEDS_THE_PROJECT = {
    # whether the renderer's forward differentiates is read from the project index (its distance field's methods,
    # in another module): flake8 alone takes it for the first unguarded forward of the function
    "GEM1xx-implicit-surfaces": ({("evaluate.py", 26, 23, "GEM101")}, {("evaluate.py", 24, 23, "GEM101")}),
    # the route that calls the scorer's method is in another module, found through its parameter's annotation
    "GEM201-injected-services": ({("service/scoring.py", 14, 17, "GEM201")}, set()),
    "GEM1xx": (
        {
            # a validation pass is evaluation code, an entry point the project index finds: the file shows no other
            # sign of inference that flake8's triage, by spelling alone, would admit it on
            ("rl_agent_training.py", 52, 13, "GEM101"),
            # listed beside the first forward of the same `__main__` block, which flake8 alone takes for unguarded
            ("frozen_submodules.py", 50, 22, "GEM101"),
            ("frozen_feature_loss.py", 67, 11, "GEM101"),
            ("restoration_model.py", 24, 13, "GEM101"),  # evaluation code under no inference name: the project index says so
            # flake8 parses the file itself and stops at a Jupytext notebook's IPython lines (its E999)
            ("jupytext_colab_notebook.py", 27, 7, "GEM101"),
            ("guards_up_the_chain.py", 32, 16, "GEM101"),  # likewise
            ("export_through_helper.py", 43, 14, "GEM101"),  # likewise
            ("policy_rollouts.py", 45, 17, "GEM101"),  # evaluation code under no inference name: the project index says so
            ("held_by_a_plain_object.py", 55, 1, "GEM102"),  # the script's module-level run, read from the project index
            # a class imported from another module: without its definition, whether its mode matters is unknown
            ("fastapi_service.py", 18, 1, "GEM102"),
            ("torchserve_handler.py", 10, 9, "GEM102"),
        },
        {
            # a class's modes are read from the project index (its layers, what its constructor puts in eval); a
            # class of the file built from torch layers alone is read from the file too
            ("branch_chosen_blocks.py", 68, 5, "GEM102"),
            ("self_evaluating_wrapper.py", 40, 1, "GEM102"),
            ("triton/arithmetic/1/model.py", 88, 9, "GEM102"),
            ("own_method_results.py", 37, 5, "GEM102"),  # what its own method returns, read from the index
            ("guidance_parts_in_eval.py", 38, 5, "GEM102"),  # what its loader returns in eval mode, likewise
            # the encoder's own `freeze()`, which its constructor calls, is read from the project index
            ("frozen_submodules.py", 44, 5, "GEM102"),
            ("frozen_submodules.py", 49, 16, "GEM101"),
            # a buffer made from a legacy tensor type, a loss whose extractor freezes itself: read from the index
            ("frozen_feature_loss.py", 61, 5, "GEM102"),
            ("frozen_feature_loss.py", 62, 11, "GEM101"),
            ("frozen_feature_loss.py", 63, 5, "GEM102"),
            ("extension_state_model.py", 43, 1, "GEM102"),  # a class holding only state: its attributes read from the index
        },
    ),
    "GEM1xx-local-hub": (
        set(),
        {
            # the local clone the settings name, and the wrapper its hub entry returns, are in detect/yolov5/
            ("app/service.py", 17, 12, "GEM101"),
        },
    ),
    # the model the health route runs is bound in svc/routers/encode.py, reached through the package's import of it
    "GEM602-package-imports": ({("svc/routers/health.py", 10, 1, "GEM602")}, set()),
    "GEM1xx-project": (
        {
            ("handlers/text.py", 8, 16, "GEM101"),  # the TorchServe base is reached through handlers/base.py
            # the Gradio callback whose worker thread the constructor's switch does not reach is in threaded_ui/app.py
            ("threaded_ui/parser.py", 16, 16, "GEM101"),
            ("speaker/pipeline.py", 26, 16, "GEM101"),  # the parameter's annotated class is in speaker/voice.py
            # the route that calls the service, whose `__call__` calls the wrapper's instance, is in callable_wrappers/app.py
            ("callable_wrappers/segmenter.py", 12, 17, "GEM101"),
            ("autoregressive/synthesise.py", 13, 5, "GEM102"),  # the denoiser's dropout is in autoregressive/nets.py
            ("separation/evaluate.py", 14, 11, "GEM101"),  # the model the loader returns is in separation/model.py
            ("exporting/export_acoustic.py", 11, 11, "GEM101"),  # the methods that run the model are in exporting/acoustic.py
            ("research/scripts/cm_sample.py", 7, 5, "GEM102"),  # the denoiser's dropout is in research/consist/nets.py
            # listed beside the first forward of the same `__main__` block, which flake8 alone takes for unguarded
            ("scripts/track_points.py", 12, 11, "GEM101"),
            ("cutout/masks.py", 11, 14, "GEM101"),  # the route that calls it, and the model it passes, are in cutout/app.py
            ("voiceconv/speaker.py", 18, 16, "GEM101"),  # the script that builds a speaker and runs it is voiceconv/say_all.py
            # the models are bound at the top level of imported_models/state.py
            ("imported_models/app.py", 15, 12, "GEM101"),
            ("imported_models/app.py", 32, 12, "GEM101"),
            ("pickled/bot.py", 9, 1, "GEM102"),  # the factory, in pickled/store.py, builds the network it returns
            # the class comes from a star import of star_imported/ranking.py
            ("star_imported/rerank.py", 14, 5, "GEM102"),
            # what the keepers of held_models/keeper.py hold, built in held_models/registry.py
            ("held_models/routes.py", 15, 12, "GEM101"),
            ("held_models/routes.py", 30, 12, "GEM101"),
            ("serving/encoders.py", 8, 12, "GEM101"),  # called from a route in serving/app.py
            ("heads/pooling.py", 22, 12, "GEM101"),  # reached from a route in heads/serve_blend.py
            ("similarity/compare.py", 9, 1, "GEM102"),  # NoisyDistance, in similarity/metric.py, holds a dropout layer
            # the distance's classes are in perceptual/distance.py, their networks in perceptual/networks.py
            ("perceptual/score.py", 14, 21, "GEM101"),
            ("namesake/encoding.py", 9, 12, "GEM101"),  # reached from a Cog predictor in namesake/predict.py
            ("zoo/segment.py", 15, 11, "GEM101"),  # the factories are in zoo/hub.py
            # the scorers and their factories are in metrics/scorers.py
            ("metrics/score_folder.py", 11, 5, "GEM102"),
            ("metrics/score_folder.py", 15, 15, "GEM101"),
            ("denoise/clean_files.py", 12, 5, "GEM102"),  # the factory and its LSTM with dropout are in denoise/network.py
            ("aliased/vectors.py", 11, 14, "GEM101"),  # the route that calls it, under another name, is in aliased/api.py
            # the synthesisers' classes and their blocks are in wavesynth/model.py and wavesynth/blocks.py
            ("wavesynth/synthesise.py", 11, 5, "GEM102"),
            ("wavesynth/synthesise.py", 16, 20, "GEM101"),
            # the criteria, and the dropout of the learned one, are in losses/waveform.py
            ("losses/score_pairs.py", 10, 1, "GEM102"),
            ("losses/score_pairs.py", 18, 27, "GEM101"),
            ("serving/helpers.py", 3, 12, "GEM101"),  # evaluation code, found in the project index
            ("serving/app.py", 12, 1, "GEM102"),  # the model comes from a factory in models/
            ("speech/tts_noisy/synthesize.py", 8, 1, "GEM102"),  # the class is in the recipe's namespace package
            ("script_ops/decode.py", 11, 5, "GEM102"),  # the class and its dropout are in script_ops/op_wrappers.py
            ("restore/parser.py", 13, 16, "GEM101"),  # called from routes in restore/plain.py and restore/serve.py
            ("textenc/embed_texts.py", 9, 1, "GEM102"),  # the class is in another module of the project
            # the networks and the lists their stacks are built from are in styler/networks.py
            ("styler/sample.py", 10, 5, "GEM102"),
            ("styler/sample.py", 12, 5, "GEM102"),
            ("styler/sample.py", 14, 5, "GEM102"),
            # the enhancers, their factories and their stages are in enhancer/backbones.py
            ("enhancer/clean_files.py", 10, 5, "GEM102"),
            ("enhancer/clean_files.py", 11, 5, "GEM102"),
            ("enhancer/clean_files.py", 12, 5, "GEM102"),
            ("serving/app.py", 19, 12, "GEM101"),
            ("predictors/annotated.py", 14, 18, "GEM101"),  # the parameter's annotation names a class in models/
            ("scripts/scoring.py", 9, 13, "GEM101"),  # called from the module-level code of scripts/score_folder.py
            ("serving/by_name.py", 11, 1, "GEM102"),  # built by a registry of factories in models/registry.py
            # the network is loaded by a factory in exporting/tiny.py
            ("exporting/bundle.py", 17, 11, "GEM101"),
            ("exporting/compile_and_check.py", 21, 12, "GEM101"),
            ("exporting/dry_run.py", 15, 11, "GEM101"),
            ("streaming/run.py", 16, 15, "GEM101"),  # the method that runs the layers unguarded is in streaming/depth.py
            # the networks, and the parts that differ between modes, are in stylize/nets.py and stylize/blocks.py
            ("stylize/run.py", 12, 5, "GEM102"),
            ("stylize/run.py", 14, 5, "GEM102"),
            ("reproject/to_points.py", 11, 5, "GEM102"),  # the refiner's dropout is in reproject/layers.py
            ("reproject/extract_codes.py", 15, 17, "GEM101"),  # the quantizer, in reproject/quantize.py, is a module
            ("serving/by_name.py", 12, 1, "GEM102"),  # a project class wrapping that model
            ("serving/towers.py", 18, 12, "GEM101"),  # a submodule of a model whose class is in models/
            ("serving/captioning.py", 10, 29, "GEM101"),  # given a model by a caller in serving/towers.py
            ("serving/captioning.py", 14, 12, "GEM101"),  # likewise
            ("predictors/parts.py", 13, 16, "GEM101"),  # a part of a model whose class is in models/composite.py
            ("audio/serve.py", 10, 1, "GEM102"),  # the model class, and its dropout, are in audio/spectral.py
            ("examples/compiled_diffusion/handler.py", 10, 16, "GEM101"),  # the loader beside it builds a model
            ("detector/predict.py", 8, 11, "GEM101"),  # the model comes from a factory in detector/network.py
            ("vlm/caption_folder.py", 26, 57, "GEM101"),  # the first forward of `main` whose method, in vlm/model.py, runs unguarded
            ("frontends/serve.py", 13, 9, "GEM102"),  # the class and its layers are in frontends/filterbank.py
            ("frontends/serve.py", 22, 25, "GEM101"),  # likewise
            ("wrappers/evaluate.py", 8, 5, "GEM102"),  # the wrapper, and the method that trains it, are in wrappers/
            ("codec/model.py", 25, 16, "GEM101"),  # the codec's quantizer, a module, is in codec/quantize.py
            # the layers, and which of them can hold a parameter, are in packed/layers.py
            ("packed/verify.py", 14, 13, "GEM101"),
            ("packed/verify.py", 25, 12, "GEM101"),
            ("packed/verify.py", 30, 12, "GEM101"),
            ("packed/verify.py", 35, 12, "GEM101"),
            # the tracker's methods are run by the module-level code of pitch/extract.py
            ("pitch/frontend.py", 85, 9, "GEM102"),
            ("pitch/frontend.py", 92, 16, "GEM101"),
            ("formula/read_formula.py", 8, 1, "GEM102"),  # the class is in formula/recognizer.py, beside the script
            ("shop/views.py", 18, 14, "GEM101"),  # the view is listed in shop/urls.py's URL table
            ("run_noisy_layer.py", 8, 5, "GEM102"),  # the layer and its dropout are in kernels/linear.py
            # the classes, and which of them their constructor switches to eval mode, are in captioner/model.py
            ("captioner/caption_batch.py", 12, 5, "GEM102"),
            ("captioner/caption_batch.py", 14, 11, "GEM101"),
        },
        {
            ("serving/app.py", 52, 15, "GEM101"),  # the model's own forward, in models/, disables gradients
            ("solvers/denoising.py", 21, 17, "GEM101"),  # the base class in solvers/base.py runs it under no_grad
            ("scripts/track_points.py", 8, 11, "GEM101"),  # the tracker of the project's own hubconf.py guards itself
            ("research/scripts/cm_fit.py", 12, 5, "GEM103"),  # the loop that trains is in research/consist/loop.py
            # the first forward of its `__main__` block that flake8 alone sees (the one before it is zoo/hub.py's)
            ("zoo/segment.py", 21, 11, "GEM101"),
            ("vlm/caption_folder.py", 12, 12, "GEM101"),  # the decorator factory in vlm/guards.py disables gradients
            ("detector/network.py", 24, 11, "GEM101"),  # torch comes through detector/common.py's star import
            ("flows/evaluate.py", 10, 11, "GEM101"),  # the model's forward, in flows/pair.py, guards its estimator
            ("wavesynth/synthesise.py", 15, 20, "GEM101"),  # `Synth.forward`, in wavesynth/model.py, hands over to a guarded method
            ("vlm/guarded_forward.py", 10, 11, "GEM101"),  # the forward's decorator factory is in vlm/guards.py
            ("vlm/graph_log.py", 11, 5, "GEM101"),  # torch, re-exported by vlm/backends.py, traces the model there
            ("vlm/caption_folder.py", 20, 16, "GEM101"),  # `encode_image`, in vlm/model.py, guards its own forward
            # the front end holds only another package's object: the index tells its class holds no layer it can see
            ("frontends/serve_local.py", 19, 9, "GEM102"),
            ("frontends/serve_local.py", 25, 24, "GEM101"),
            # the `__main__` blocks that only print are checks of modules other files use, known from those files
            ("selfcheck/encoders.py", 20, 12, "GEM101"),
            ("selfcheck/encoders.py", 24, 5, "GEM102"),
            ("selfcheck/encoders.py", 28, 14, "GEM101"),
            ("selfcheck/textenc.py", 7, 12, "GEM101"),
            ("selfcheck/gates.py", 25, 5, "GEM102"),  # printed through `main()`
            ("selfcheck/gates.py", 27, 11, "GEM101"),
            ("recipes/lib/prompts.py", 9, 12, "GEM101"),
            # the class's base, nvtripy's module class, is in tripy_cls/network.py (GEM102 stays silent without
            # the class: its layers are not seen)
            ("tripy_cls/compile_and_run.py", 12, 14, "GEM101"),
            ("metrics/statistics.py", 11, 25, "GEM101"),  # the extractor in metrics/features.py freezes itself as built
            ("metrics/distance.py", 15, 23, "GEM101"),  # likewise, imported with a fallback for a run from its folder
            # that no other module calls the script's leftover helper is known from the other modules
            ("leftovers/export_classifier.py", 18, 12, "GEM101"),
            # that the loaders of vocoder/loading.py hand back their models in eval mode is known from that module
            ("vocoder/serve.py", 51, 9, "GEM102"),
            # that the recogniser's base, in ocrwrap/base.py, is a plain class holding the network is known from there
            # (its own `__call__` runs the network under a guard, which the file shows: no GEM101 even so)
            ("ocrwrap/recognize.py", 22, 5, "GEM102"),
            ("vocoder/serve.py", 60, 1, "GEM102"),
            ("vocoder/serve.py", 61, 1, "GEM102"),
            # that the captioner's constructor turns its gradients off, through two of its methods, is known from
            # captioner/model.py (its first forward then stands for the tagger's, which is reported instead)
            ("captioner/caption_batch.py", 11, 11, "GEM101"),
            # that the project's optimizer, in ddi/schedules.py, builds torch's Adam (the script trains) is known there
            ("ddi/initialise.py", 12, 5, "GEM103"),
            ("ddi/initialise.py", 14, 9, "GEM101"),
            # that `bundlekit` is an installed package, not one of the project's, is known from the project's files
            ("onnx_bundle/export_script.py", 24, 1, "GEM102"),
            ("onnx_bundle/export_script.py", 25, 14, "GEM101"),
            # that the dense block's convolutions, made by a method of its own in dense_blocks/blocks.py, have no mode
            ("dense_blocks/upscale.py", 29, 5, "GEM102"),
        },
    ),
    "GEM1xx-grpc-service": (
        {
            # context from the gRPC servicer in server.py; `self.model` bound by the base class in base.py
            ("textgen/models/causal.py", 8, 16, "GEM101"),
            ("textgen/models/causal.py", 17, 9, "GEM101"),  # an override reached through the base's method
        },
        set(),
    ),
    "GEM502": (
        {
            ("chat_backend/provider.py", 24, 18, "GEM502"),  # the route that calls the loader is in chat_backend/routes.py
            ("retrieval_demo/search.py", 9, 15, "GEM502"),  # the route that calls the search is in retrieval_demo/api.py
            # what `Upscaler.__init__` loads is in upscale_bot/upscaler.py; whether super-image is a library outside
            # the project, rather than one of its packages, is the project's to say
            ("upscale_bot/bot.py", 13, 16, "GEM502"),
            ("upscale_bot/bot.py", 19, 13, "GEM502"),
            # what a class's __init__ loads is read from the project's summaries, which the plugin does not have
            ("main_block_cache.py", 27, 15, "GEM502"),
            ("matting/app.py", 12, 12, "GEM502"),  # the weights `Matting.__init__` puts in its network: matting/weights.py
            # the classes' __init__, in upscaler/restorer.py, read the weights
            ("cog_predict.py", 26, 30, "GEM502"),
            ("cog_predict.py", 28, 30, "GEM502"),
            ("cog_predict.py", 43, 17, "GEM502"),
            ("upscaler/choose.py", 10, 12, "GEM502"),  # called from a Cog runner in cog_runner.py
            ("cog_runner.py", 16, 17, "GEM502"),  # the helper, in upscaler/choose.py, builds a class that loads
            ("providers/routes.py", 43, 27, "GEM502"),  # the helper, in providers/models.py, builds a model that loads
            ("sound_page/app.py", 8, 9, "GEM502"),  # the helper, in sound_page/utils.py, reads the weights into a model
            ("sound_page/compare.py", 6, 8, "GEM502"),  # likewise, imported under another name
            # the Cog predictor that calls the sharpener's instance, which runs its `__call__`, is in cog_predict.py
            ("upscaler/restorer.py", 37, 16, "GEM101"),
            ("segmenting/routes.py", 11, 35, "GEM502"),  # the dependency, in segmenting/weights.py, builds a holder that loads
            ("injected_models.py", 52, 17, "GEM502"),  # what a class of the file loads as it is built is read from the index
            ("cog_helpers.py", 15, 20, "GEM502"),  # the helper, in upscaler/builders.py, loads the weights
            ("voice/ui.py", 10, 12, "GEM502"),  # the class's own from_pretrained, in voice/speech.py, loads the weights
            ("aging/predict.py", 14, 15, "GEM502"),  # the class's __init__, in aging/nets.py, reads the checkpoint
            ("reload_on_choice.py", 16, 9, "GEM502"),  # the method that loads is in interrogation/__init__.py
            ("model_admin/routes.py", 29, 13, "GEM502"),  # the method that loads is in model_admin/service.py
            # the helper, re-exported by enhance/__init__.py's star import, loads in enhance/pipeline.py; it also runs
            # at start-up, so each per-request call is the finding
            ("enhance_ui.py", 14, 16, "GEM502"),
            # helpers whose every caller is a Gradio callback of another module: their loads are the findings
            ("enhance/pipeline.py", 30, 27, "GEM502"),
            ("photo-editor/painting.py", 8, 12, "GEM502"),
            ("tagger/tags.py", 23, 15, "GEM502"),
            ("talking-head/engine.py", 17, 34, "GEM502"),
            # functions another module hands to Gradio
            ("talking-head/engine.py", 30, 12, "GEM101"),
            ("talking-head/engine.py", 36, 25, "GEM502"),
            ("drag-editor/handlers.py", 8, 12, "GEM502"),
            ("talking-head/engine.py", 26, 12, "GEM101"),  # called from a Gradio callback in talking-head/page.py
            ("model-picker/chat_ui.py", 16, 5, "GEM502"),  # the manager's method, in model-picker/registry.py, loads
            ("rate_switch.py", 26, 24, "GEM502"),  # the helper, in voice_builder.py, loads the voice
            # the service's constructor builds, in face_service/, objects whose constructors read weights
            ("face_routes.py", 14, 15, "GEM502"),
            ("face_routes.py", 25, 15, "GEM502"),
            ("mri_page.py", 12, 13, "GEM502"),  # the loader, in mri_loading.py, loads; its cached sibling does not
        },
        set(),
    ),
    "GEM104": (
        {
            # every caller of the loss helper, in trainer/loop.py (or the same file), only logs what it returns
            ("trainer/losses.py", 24, 13, "GEM104"),
            ("trainer/losses.py", 79, 13, "GEM104"),
            ("trainer/losses.py", 96, 9, "GEM104"),
            ("trainer/loop.py", 76, 5, "GEM104"),  # the helper in trainer/losses.py only reads the loss
            ("trainer/fitting.py", 9, 9, "GEM104"),  # every call, in trainer/fitting_loops.py, hands it a batch
        },
        set(),
    ),
    "GEM4xx": (
        set(),
        # the module's `__main__` block is its author's benchmark: kernels/layers.py uses the module, and the
        # package's __init__ imports the two GEMM kernels
        {("kernels/quantize.py", 21, 10, "GEM401"), ("kernels/gemm/grouped_tma.py", 17, 10, "GEM401"), ("kernels/gemm/grouped_legacy.py", 18, 14, "GEM401")},
    ),
}


def marked(root: Path) -> tuple[set[tuple[str, int, str]], dict[tuple[str, int, str], int]]:
    """What the fixture markers under ``root`` say a Python file must report, and the pinned columns."""
    lines, columns = set(), {}
    for path in fixture_files():
        relative = path.relative_to(root).as_posix() if path.is_relative_to(root) else None
        if relative is None or not relative.endswith((".py", ".pyi")):
            continue
        for expected in expectations(path):
            if expected.related:
                continue  # a place a finding lists beside its own, which flake8 cannot show
            lines.add((relative, expected.line, expected.code))
            if expected.column is not None:
                columns[relative, expected.line, expected.code] = expected.column
    return lines, columns


@pytest.mark.parametrize("name", FIXTURE_ROOTS)
def test_flake8_reports_what_the_fixture_markers_say_on_every_fixture_directory(name, flake8_on_fixtures):
    root = FIXTURES / name
    from_flake8 = flake8_on_fixtures[name]
    found = {(path, line, code) for path, line, _, code in from_flake8}
    assert len(found) == len(from_flake8), "two findings of one code on one line"
    # flake8 reads files itself: an undecodable file is its E902, and a syntax error its E999, so GEM000
    # for unreadable input is the CLI's alone. flake8 sees Python files only; C/C++/CUDA and deployment
    # files are the CLI's alone.
    expected, columns = marked(root)
    expected = {finding for finding in expected if finding[2] != "GEM000"}
    if name in NEEDS_THE_PROJECT:
        # flake8 shows one file at a time: what only other modules explain (a caller's context, a guard at
        # every caller) differs, and exactly that.
        cli_only, flake8_only = ({(path, line, code) for path, line, _, code in part} for part in NEEDS_THE_PROJECT[name])
        assert expected - found == cli_only
        assert found - expected == flake8_only
    else:
        assert found == expected
    # flake8 prints the plugin's 0-based column plus one: the 1-based column the markers pin.
    pinned = {(path, line, code): column for path, line, column, code in from_flake8 if (path, line, code) in columns}
    assert pinned == {key: column for key, column in columns.items() if key in found}
    # Deployment-only and Triton fixture folders have no Python findings for flake8 (a Triton model.py may be there).
    if name != "GEM000" and any("expect:" in p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*.py")):
        assert from_flake8, "the fixture directory should have findings"


def test_plugin_is_registered_with_its_option_and_version():
    help_text = subprocess.run([sys.executable, "-m", "flake8", "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "--gemlint-config" in help_text
    assert "gemlint: " in help_text.split("Installed plugins:")[1]


NOQA_CASES = f"""\
import os

{LINE}
{LINE}  # noqa
{LINE}  # noqa: GEM404
{LINE}  # noqa:GEM4
{LINE}  # noqa: E501
{LINE}  # NOQA : GEM404
x = (
    1,  # noqa: GEM404
); {LINE}
y = '''
# noqa
'''; {LINE}
"""


def test_noqa_semantics_are_identical(tmp_path, monkeypatch):
    (tmp_path / "cases.py").write_text(NOQA_CASES, encoding="utf-8")
    from_flake8, everything = flake8_side_by_side(tmp_path, ("cases.py",), ("--disable-noqa", "cases.py"))
    from_cli = cli(tmp_path, monkeypatch, "cases.py")
    assert from_flake8 == from_cli
    # Line 8: `# NOQA :` is a blanket noqa (the code list needs the colon right after NOQA). Line 11: a
    # comment inside brackets covers only its own physical line (tokenize ends the range at each NL).
    # Line 14: a multi-line string's lines share one range, so the "# noqa" inside it counts.
    assert {line for _, line, _, _ in from_cli} == {3, 7, 11}
    # The plugin leaves line noqa to flake8, so flake8's --disable-noqa shows every finding.
    assert {line for _, line, _, _ in everything} == {3, 4, 5, 6, 7, 8, 11, 14}


def test_file_level_gemlint_noqa_applies_in_flake8(tmp_path):
    (tmp_path / "all.py").write_text(f"# gemlint: noqa\nimport os\n{LINE}\n", encoding="utf-8")
    (tmp_path / "some.py").write_text(f"# gemlint: noqa: GEM4\nimport os\n{LINE}\n", encoding="utf-8")
    (tmp_path / "other.py").write_text(f"# gemlint: noqa: GEM2\nimport os\n{LINE}\n", encoding="utf-8")
    found = flake8(tmp_path, ".")
    assert found == {("other.py", 3, 1, "GEM404")}


def test_gemlint_config_is_honoured(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gemlint]\nextend-exclude = ["generated/"]\nper-file-ignores = { "scripts/*.py" = ["GEM404"] }\n', encoding="utf-8"
    )
    source = f"import os\nimport torch\n{LINE}\ntorch.autograd.set_detect_anomaly(True)\n"
    for folder in ("app", "scripts", "generated"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "mod.py").write_text(source, encoding="utf-8")
    # An explicit config file, from flake8's own option; with --jobs 2 it must reach the worker processes.
    (tmp_path / "strict.toml").write_text('select = ["GEM402"]\n', encoding="utf-8")
    found, explicit = flake8_side_by_side(tmp_path, (".",), ("--gemlint-config", "strict.toml", "--jobs", "2", "."))
    assert found == {("app/mod.py", 3, 1, "GEM404"), ("app/mod.py", 4, 1, "GEM402"), ("scripts/mod.py", 4, 1, "GEM402")}
    assert explicit == {(folder + "/mod.py", 4, 1, "GEM402") for folder in ("app", "scripts", "generated")}


def test_config_error_is_a_finding_not_a_crash(tmp_path):
    (tmp_path / "gemlint.toml").write_text("selct = ['GEM']\n", encoding="utf-8")
    (tmp_path / "mod.py").write_text(f"import os\n{LINE}\n", encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "GEM", "mod.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    assert "mod.py:1:1: GEM000 gemlint configuration error:" in completed.stdout and "unknown key 'selct'" in completed.stdout


def run_plugin(source: str, filename: str = "mod.py") -> list[tuple[int, int, str]]:
    lines = source.splitlines(keepends=True)
    return [(line, col, message) for line, col, message, _ in Flake8Plugin(None, lines, filename).run()]


def test_columns_are_zero_based(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ((line, col, message),) = run_plugin(f"import os\nif 1:\n    {LINE}\n")
    assert (line, col) == (3, 4) and message.startswith("GEM404 ")


def test_files_no_rule_can_match_are_never_parsed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def refuse(*args, **kwargs):
        raise AssertionError("parsed a file that no rule can match")

    monkeypatch.setattr(libcst, "parse_module", refuse)
    assert run_plugin("import os\n\nprint(os.getcwd())\n" * 200) == []


def test_libcst_failures_and_rule_crashes_never_escape(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # flake8 does not call tree plugins on files ast rejects; LibCST may still reject what ast accepts.
    ((_, _, message),) = run_plugin(f"import os\n{LINE}\ndef f(:\n")
    assert message.startswith("GEM000 ")

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("gemlint.engine.lint_text", explode)
    ((line, col, message),) = run_plugin(f"import os\n{LINE}\n")
    assert (line, col) == (1, 0) and message.startswith("GEM000 internal error in gemlint's flake8 plugin (RuntimeError: boom)")


def test_stdin_uses_the_working_directory_config(tmp_path):
    (tmp_path / "gemlint.toml").write_text('ignore = ["GEM404"]\n', encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "GEM", "-"],
        cwd=tmp_path,
        input=f"import os\nimport torch\n{LINE}\ntorch.autograd.set_detect_anomaly(True)\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.stdout.splitlines() == [
        "stdin:4:1: GEM402 `torch.autograd.set_detect_anomaly(True)` slows every autograd call; remove it or put it behind a flag"
    ]


def test_gemlint_config_option_from_a_flake8_config_file(tmp_path):
    (tmp_path / ".flake8").write_text("[flake8]\nselect = GEM\ngemlint-config = strict.toml\n", encoding="utf-8")
    (tmp_path / "strict.toml").write_text('ignore = ["GEM404"]\n', encoding="utf-8")
    (tmp_path / "mod.py").write_text(f"import os\nimport torch\n{LINE}\ntorch.autograd.set_detect_anomaly(True)\n", encoding="utf-8")
    completed = subprocess.run([sys.executable, "-m", "flake8", "mod.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert [line.split()[1] for line in completed.stdout.splitlines()] == ["GEM402"], completed.stdout + completed.stderr


def test_a_file_no_rule_admits_never_imports_libcst_or_a_rule(tmp_path: Path):
    """flake8 starts the plugin on every save: for a file whose text or syntax no rule admits, the plugin
    decides from the triage table alone."""
    (tmp_path / ".git").mkdir()
    source = tmp_path / "utils.py"
    # Mentions torch (GEM101's text marker) but nothing runs per request: the syntax gate rules it out.
    source.write_text("import torch\n\n\ndef scale(x):\n    return torch.ones(3) * x\n")
    probe = (
        "import sys\n"
        "from flake8.main.cli import main\n"
        "try:\n    main(['--select', 'GEM', sys.argv[1]])\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(name for name in sys.modules if name == 'libcst' or name.startswith(('gemlint.rules.gem', 'gemlint.engine')))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe, str(source)], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"
    # A file the triage admits still gets the whole engine.
    source.write_text("import torch\nfrom fastapi import FastAPI\n\napp = FastAPI()\nmodel = torch.jit.load('m.pt')\n\n\n@app.post('/p')\ndef predict(x: list[float]):\n    return model(torch.tensor([x])).tolist()\n")
    result = subprocess.run([sys.executable, "-m", "flake8", "--select", "GEM", str(source)], capture_output=True, text=True, cwd=tmp_path)
    assert "GEM101" in result.stdout
