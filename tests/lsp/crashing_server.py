"""``gemlint server`` with GEM101 broken on purpose (every check raises), for the test that a crashing
rule becomes a log message and the server keeps serving."""

from gemlint.rules.gem101_forward_without_no_grad import ForwardWithoutNoGrad


def visit_Call(self, node) -> None:  # LibCST finds visitors by their __name__
    raise RuntimeError("broken on purpose")


ForwardWithoutNoGrad.visit_Call = visit_Call

from gemlint.server import main  # noqa: E402

main()
