"""docs/conformance.md "Kernel comparison harness" is in sync with the scenario marks
(regenerate with `.venv/bin/python tests/kernel/gen_docs.py --write`). Needs neither root nor sr6."""
import gen_docs


def test_docs_in_sync():
    text = gen_docs.DOC.read_text()
    for block, body in gen_docs.generated().items():
        cur = gen_docs.current(text, block)
        assert cur is not None, f"docs/conformance.md lacks the {block} markers {gen_docs.markers(block)}"
        assert cur == body, (f"docs/conformance.md block `{block}` is out of date: "
                             "run .venv/bin/python tests/kernel/gen_docs.py --write")


def test_every_scenario_in_docs():
    text = gen_docs.DOC.read_text()
    for name in gen_docs._load_all():
        assert f"::{name}`" in text, f"scenario {name} missing from docs/conformance.md"
