# docs/python.md's complete example runs as written and prints what the page says it prints.
import contextlib
import io
import pathlib
import re


DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def example_blocks(heading="## A complete example"):
    text = DOC.read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    output = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S)
    assert code and output, "docs/python.md lost its example or its output block"
    return code.group(1), output.group(1)


def test_complete_example_runs_and_prints_the_documented_output():
    code, expected = example_blocks()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
    assert printed.getvalue() == expected


def test_value_and_dsrl_example_runs_and_prints_the_documented_output(tmp_path, monkeypatch):
    """The example writes ltt-example/ into the current directory: here, a fresh one."""
    code, expected = example_blocks("## Learn a value and curate a DSRL file from Python")
    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {"__name__": "__docs__"})
    assert printed.getvalue() == expected
    assert (tmp_path / "ltt-example" / "curated" / "observations.npy").is_file()


def test_documented_pythonpath_line():
    assert 'PYTHONPATH=build/python /usr/bin/python3 -c "import ltt' in DOC.read_text()
