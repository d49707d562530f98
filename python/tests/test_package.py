# The package around the compiled module (python/ltt/): the stubs it ships declare every public
# name with the parameters its binding takes, and the CPU check refuses an old CPU with one
# line where the bare module died of SIGILL. Both run against whichever ltt is imported: the
# build tree's (ctest -L python) or an installed wheel's (scripts/test-python-install).
import ast
import os
import pathlib
import platform
import shutil
import subprocess
import sys

import pytest

import ltt
from ltt import _cpu, _ltt

PACKAGE = pathlib.Path(ltt.__file__).parent
STUB = ast.parse((PACKAGE / "__init__.pyi").read_text())
PUBLIC = sorted(name for name in dir(_ltt) if not name.startswith("_"))


def declarations(body):
    """Name -> the stub's definitions of it (several for an @overload)."""
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(node)
    return out


STUBBED = {n: nodes for n, nodes in declarations(STUB.body).items() if not n.startswith("_")}


def parameters(function):
    """(name, keyword-only, default) of each parameter; default is REQUIRED when there is none
    and Ellipsis when the stub leaves it unsaid."""
    a = function.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + a.defaults

    def value(node):
        if node is None:
            return "REQUIRED"
        v = ast.literal_eval(node)
        return tuple(v) if isinstance(v, list) else v

    return ([(p.arg, False, value(d)) for p, d in zip(positional, defaults)] +
            [(p.arg, True, value(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)])


def binding(obj):
    """The binding's signature, from the first line of its pybind11 docstring."""
    return ast.parse(f"def {obj.__doc__.splitlines()[0]}: ...").body[0]


def assert_same_parameters(stubbed, obj, where):
    bound = parameters(binding(obj))
    for node in stubbed:
        declared = parameters(node)
        assert len(declared) == len(bound), f"{where}: stub {declared}, binding {bound}"
        for d, b in zip(declared, bound):
            assert d[:2] == b[:2] and d[2] in (Ellipsis, b[2]), f"{where}: stub {d}, binding {b}"


def test_stubs_and_marker_are_shipped():
    assert (PACKAGE / "py.typed").is_file()
    assert PUBLIC and "certify" in PUBLIC


def test_every_public_name_has_a_stub_and_every_stub_a_name():
    assert [n for n in PUBLIC if n not in STUBBED] == [], "missing from ltt/__init__.pyi"
    assert [n for n in STUBBED if n not in PUBLIC and n != "__version__"] == [], \
        "in ltt/__init__.pyi but not in the module"
    assert all(getattr(ltt, n) is getattr(_ltt, n) for n in PUBLIC)


@pytest.mark.parametrize("name", [n for n in PUBLIC if callable(getattr(_ltt, n))
                                  and not isinstance(getattr(_ltt, n), type)])
def test_function_stub_takes_the_bindings_parameters(name):
    assert name in STUBBED, "missing from ltt/__init__.pyi"
    assert_same_parameters([n for n in STUBBED[name] if isinstance(n, ast.FunctionDef)],
                           getattr(_ltt, name), name)


@pytest.mark.parametrize("name", ["CertificationRateModel", "SafetyValue"])
def test_class_stub_declares_the_bindings_methods_and_properties(name):
    cls = getattr(_ltt, name)
    members = declarations(STUBBED[name][0].body)
    bound = {n for n in vars(cls) if not n.startswith("_")}
    if (cls.__init__.__doc__ or "").startswith("__init__("):  # a constructor is bound
        bound.add("__init__")
    assert set(members) == bound
    for member, nodes in members.items():
        if isinstance(vars(cls)[member], property):
            assert all(d.id == "property" for n in nodes for d in n.decorator_list), member
        else:
            assert_same_parameters(nodes, getattr(cls, member), f"{name}.{member}")


def test_cpu_check_passes_here():
    assert _cpu.build_target in ("x86-64-v3", "x86-64-v4", "native", "default")
    assert _cpu.missing_features() == ""  # or this import would have failed


QEMU = shutil.which("qemu-x86_64")


@pytest.mark.skipif(not QEMU or platform.machine() != "x86_64" or
                    _cpu.build_target not in ("x86-64-v3", "x86-64-v4"),
                    reason="needs qemu-x86_64 (qemu-user) and an x86-64-v3 or -v4 build")
@pytest.mark.parametrize("cpu", ["Nehalem", "Haswell"])
def test_import_on_an_emulated_cpu(cpu):
    """Nehalem (no AVX2, FMA, BMI2) gets the one line; Haswell, the first Intel CPU
    with all three, imports and computes in an x86-64-v3 build, and gets the one line
    (no AVX-512) in an x86-64-v4 build."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(PACKAGE.parent)
    run = subprocess.run(
        [QEMU, "-cpu", cpu, sys.executable, "-c",
         "import ltt; print(ltt.__file__, ltt.composition_pvalue(3, 60, 500, 0.25))"],
        env=env, capture_output=True, text=True, timeout=300)
    v4 = _cpu.build_target == "x86-64-v4"
    avx512 = "avx512f, avx512bw, avx512cd, avx512dq, avx512vl"
    if cpu == "Nehalem" or v4:
        missing = {"Nehalem": "avx2, fma, bmi2", "Haswell": ""}[cpu]
        if v4:
            missing = f"{missing}, {avx512}" if missing else avx512
        features = "AVX2, FMA, BMI2, AVX-512 F/BW/CD/DQ/VL" if v4 else "AVX2, FMA, BMI2"
        assert run.returncode == 1, run.stderr
        assert run.stderr.splitlines()[-1] == (
            f"ImportError: ltt: this module targets {_cpu.build_target} ({features}) and this "
            f"CPU lacks {missing}; rebuild it on this machine: CMAKE_ARGS=-DLTT_NATIVE=ON pip "
            "install --no-build-isolation .")
    else:
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == [ltt.__file__, repr(ltt.composition_pvalue(3, 60, 500, 0.25))]
