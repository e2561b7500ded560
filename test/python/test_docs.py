"""The tutorial runs as it is written: its examples are doctests."""

from __future__ import annotations

import doctest
import pathlib

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"


def test_tutorial_examples_run_and_print_what_the_page_says():
    page = DOCS / "tutorial.md"
    # A code fence ends an example's expected output, as a blank line does.
    text = "\n".join("" if line.startswith("```") else line for line in page.read_text().splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) > 30
    assert runner.failures == 0, f"{runner.failures} of the tutorial's {len(test.examples)} examples failed (see above)"
