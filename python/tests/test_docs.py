# docs/python.md's complete example runs as written and prints what the page says it prints;
# so does README.md's Python quickstart.
import contextlib
import importlib.util
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


README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_quickstart_runs_and_prints_its_output(tmp_path, monkeypatch):
    """README.md's Python block, on the file its program quickstart generates (the same
    make_curate_example.py line, read from the README), prints the README's text block."""
    text = README.read_text()
    section = text.split("## Quickstart: Python", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    expected = re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S).group(1)
    make = re.search(r"^/usr/bin/python3 (docs/make_curate_example\.py .*)$", text, re.M).group(1)
    script, *args = make.split()
    spec = importlib.util.spec_from_file_location("make_curate_example", README.parent / script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [script, *args])
    module.main()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), {"__name__": "__docs__"})
    assert printed.getvalue() == expected
