"""Which `__main__` bodies only print what they compute (an author's check) and which run something for its effect."""

import libcst as cst
import pytest

from gemlint.analysis.printing_blocks import only_prints


def _main_body(source: str) -> cst.BaseSuite:
    module = cst.parse_module(source)
    block = next(statement for statement in module.body if isinstance(statement, cst.If))
    return block.body


@pytest.mark.parametrize(
    "body",
    [
        "model = Net()\n    model.load_state_dict(torch.load('w.pt'))\n    model.eval()\n    out = model(x)\n    print(out.shape)\n",
        "torch.manual_seed(0)\n    a, b = encode(x)\n    logger.info('%s %s', a.dtype, b.dtype)\n",
        "'''A docstring.'''\n    import torch\n    for size in (1, 2):\n        print(run(size).shape)\n",
        "out, _ = model(x)\n    assert out.shape == (1, 3)\n    print('ok')\n",
    ],
)
def test_blocks_that_only_print_what_they_compute(body):
    assert only_prints(_main_body(f"if __name__ == '__main__':\n    {body}"))


@pytest.mark.parametrize(
    "body",
    [
        "main()\n",  # a call made for its effect
        "out = model(x)\n    torch.save(out, 'out.pt')\n    print(out.shape)\n",  # writes a file
        "out = run(x)\n    print('done')\n",  # a result bound and never read: the run is the point
        "model = Net()\n    model(x)\n",  # prints nothing
        "with open('o.txt', 'w') as f:\n        f.write(str(run(x)))\n        print('written')\n",
        "def helper():\n        pass\n    print(helper())\n",  # a definition
        "print(run(x))\n    raise SystemExit(0)\n",  # leaves the block
    ],
)
def test_blocks_that_run_something_for_its_effect(body):
    assert not only_prints(_main_body(f"if __name__ == '__main__':\n    {body}"))
