#!/usr/bin/env python3
"""The README's code blocks run as written (ctest -R readme; scripts/test runs it).

    check_readme.py --source REPO --build BUILD --program BUILD/bin/ltt

Every fenced block of README.md is one of these, named by its info string, and checked so:

    sh two-commands   the scripts it names exist and are executable (scripts/test is this suite)
    sh install        every package it installs, and every one the Install table names, is one
                      scripts/setup installs
    sh build          every -D option is a cache entry of BUILD (an option the project defines);
                      its install line installs BUILD into a scratch prefix
    cpp, cmake        main.cpp and CMakeLists.txt of a project built against that prefix; its
                      program prints the text block after them, byte for byte
    sh quickstart     run with bash -e in a scratch directory holding build/bin/ltt and
                      docs/make_curate_example.py; before the second, labels.csv is written from
                      the generated file's costs for the ids of to_label.csv (over 40: unsafe),
                      and the csv block must be its first rows; `ls DIR   # names` must list DIR
    sh label          the server starts, prints its URL, serves the page there, and stops on
                      SIGINT with exit 0
    sh venv, python   the Python quickstart: scripts/test-python-install runs the venv line and
                      python/tests/test_docs.py the block, against its text block
    bibtex            the paper's title and authors as CITATION.cff has them

A block of another kind, a README over 200 lines, a link to a file the repository lacks, or a
failed step fails the test.
"""
import argparse
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import urllib.request

import h5py
import numpy as np

MAX_LINES = 200
BUDGET = 40.0  # the quickstart's labeler: an episode over this cost is unsafe


def blocks(text):
    """(kind, role, body, line) for every fenced block, in order."""
    found = []
    for m in re.finditer(r"^```(\S*)[ \t]*(\S*)\n(.*?)^```[ \t]*$", text, re.M | re.S):
        found.append((m.group(1), m.group(2), m.group(3), text.count("\n", 0, m.start()) + 1))
    return found


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {cmd}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def setup_packages(source):
    text = (source / "scripts" / "setup").read_text()
    listing = text.split("packages=(", 1)[1].split("\n)", 1)[0]
    return {word for line in listing.splitlines() for word in line.split("#", 1)[0].split()}


def check_packages(readme, body, source):
    known = setup_packages(source)
    named = set(body.split("apt-get install", 1)[1].split())
    table = readme.split("## Install", 1)[1].split("```", 1)[0]
    for row in table.splitlines():
        if row.startswith("| the "):
            for cell in re.findall(r"`([^`]+)`", row.split("|")[2]):
                named.update(cell.split())
    unknown = sorted(named - known)
    if unknown:
        raise SystemExit(f"README installs packages scripts/setup does not: {unknown}")


def check_build_block(body, build, prefix):
    cache = (build / "CMakeCache.txt").read_text()
    for name in re.findall(r"-D(\w+)=", body):
        if not re.search(rf"^{name}:", cache, re.M):
            raise SystemExit(f"README's build line sets -D{name}, which the project does not define")
    install = [line for line in body.splitlines() if line.startswith("cmake --install")]
    if len(install) != 1:
        raise SystemExit("README's build block lost its install line")
    run(["cmake", "--install", str(build), "--prefix", str(prefix)])


def check_cpp(cpp, cmake, expected, prefix, scratch):
    project = scratch / "cpp"
    project.mkdir()
    (project / "main.cpp").write_text(cpp)
    (project / "CMakeLists.txt").write_text(cmake)
    target = re.search(r"add_executable\((\w+)", cmake).group(1)
    run(["cmake", "-S", str(project), "-B", str(project / "build"),
         f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", str(project / "build")])
    printed = run([str(project / "build" / target)])
    if printed != expected:
        raise SystemExit(f"the C++ quickstart printed\n{printed}\ninstead of\n{expected}")


def episode_costs(path):
    with h5py.File(path, "r") as f:
        costs = np.asarray(f["costs"], dtype=np.float64).reshape(-1)
        ends = np.flatnonzero((np.asarray(f["terminals"]) != 0) | (np.asarray(f["timeouts"]) != 0))
    starts = np.concatenate(([0], ends[:-1] + 1))
    return np.array([costs[a:b + 1].sum() for a, b in zip(starts, ends)])


def write_labels(work, csv_block):
    ids = [int(line) for line in (work / "to_label.csv").read_text().split()[1:]]
    unsafe = episode_costs(work / "data.hdf5")[ids] > BUDGET
    rows = [f"{i},{int(u)}" for i, u in zip(ids, unsafe)]
    (work / "labels.csv").write_text("id,unsafe\n" + "\n".join(rows) + "\n")
    shown = csv_block.splitlines()
    if shown[0] != "id,unsafe" or shown[1:] != rows[:len(shown) - 1]:
        raise SystemExit(f"README's labels.csv rows {shown} are not the first labels {rows[:3]}")


def check_listing(body, work):
    for line in body.splitlines():
        m = re.match(r"ls (\S+)\s+#\s*(.*)$", line)
        if m:
            listed = sorted(os.listdir(work / m.group(1)))
            if listed != sorted(m.group(2).split()):
                raise SystemExit(f"README says `ls {m.group(1)}` lists {m.group(2)}, not {listed}")


def check_label(body, work):
    command = shlex.split(body.split("#", 1)[0].strip())
    server = subprocess.Popen(command, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        url = server.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"ltt label printed {url!r}, not its URL\n{server.stderr.read()}")
        with urllib.request.urlopen(url, timeout=30) as page:
            if page.status != 200 or b"<html" not in page.read().lower():
                raise SystemExit(f"ltt label served no page at {url}")
        server.send_signal(signal.SIGINT)
        if server.wait(timeout=30) != 0:
            raise SystemExit(f"ltt label exited {server.returncode} on SIGINT")
    finally:
        if server.poll() is None:
            server.kill()


def check_citation(body, source):
    cff = (source / "CITATION.cff").read_text().split("preferred-citation:", 1)[1]
    title = re.search(r'title: "([^"]+)"', cff).group(1)
    names = re.findall(r"family-names: (\S+)\n\s+given-names: (\S+)", cff)
    authors = " and ".join(f"{family}, {given}" for family, given in names)
    if f"title  = {{{title}}}" not in body or f"author = {{{authors}}}" not in body:
        raise SystemExit(f"the BibTeX entry does not cite {title!r} by {authors!r}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", type=pathlib.Path, required=True)
    p.add_argument("--build", type=pathlib.Path, required=True)
    p.add_argument("--program", type=pathlib.Path, required=True)
    a = p.parse_args()
    readme = (a.source / "README.md").read_text()
    lines = readme.count("\n")
    if lines > MAX_LINES:
        raise SystemExit(f"README.md has {lines} lines; the front door keeps to {MAX_LINES}")
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme):
        if not target.startswith(("http://", "https://")) and not (a.source / target).exists():
            raise SystemExit(f"README links {target}, which is not in the repository")
    found = blocks(readme)
    with tempfile.TemporaryDirectory(prefix="ltt-readme-") as tmp:
        scratch = pathlib.Path(tmp)
        prefix = scratch / "prefix"
        work = scratch / "work"
        (work / "build" / "bin").mkdir(parents=True)
        (work / "build" / "bin" / "ltt").symlink_to(a.program.resolve())
        (work / "docs").mkdir()
        (work / "docs" / "make_curate_example.py").symlink_to(
            (a.source / "docs" / "make_curate_example.py").resolve())
        csv_block = next((body for kind, _, body, _ in found if kind == "csv"), None)
        quickstarts = 0
        for k, (kind, role, body, line) in enumerate(found):
            following = found[k + 1] if k + 1 < len(found) else None
            print(f"README.md:{line}: {kind} {role}".rstrip(), flush=True)
            if (kind, role) == ("sh", "two-commands"):
                for script in re.findall(r"^(scripts/\S+)", body, re.M):
                    if not os.access(a.source / script, os.X_OK):
                        raise SystemExit(f"README names {script}, which is not an executable")
            elif (kind, role) == ("sh", "install"):
                check_packages(readme, body, a.source)
            elif (kind, role) == ("sh", "build"):
                check_build_block(body, a.build, prefix)
            elif kind == "cpp":
                cmake = following[2] if following and following[0] == "cmake" else None
                output = found[k + 2] if k + 2 < len(found) else None
                if not cmake or not output or output[0] != "text":
                    raise SystemExit("the cpp block must be followed by its cmake and text blocks")
                check_cpp(body, cmake, output[2], prefix, scratch)
            elif kind in ("cmake", "csv") or (kind, role) in (("sh", "venv"), ("python", "")):
                pass  # checked with the block it belongs to, or by the Python tests
            elif kind == "text":
                previous = found[k - 1][0] if k > 0 else ""
                if previous not in ("cmake", "python"):
                    raise SystemExit(f"README.md:{line}: a text block that no check compares")
            elif (kind, role) == ("sh", "quickstart"):
                if quickstarts == 1:
                    if csv_block is None:
                        raise SystemExit("README lost the labels.csv block")
                    write_labels(work, csv_block)
                run(["bash", "-euo", "pipefail", "-c", body], cwd=work)
                check_listing(body, work)
                quickstarts += 1
            elif (kind, role) == ("sh", "label"):
                check_label(body, work)
            elif kind == "bibtex":
                check_citation(body, a.source)
            else:
                raise SystemExit(f"README.md:{line}: a block ({kind} {role}) this test does not run")
        if quickstarts != 2:
            raise SystemExit(f"README has {quickstarts} quickstart shell blocks, not 2")
    print(f"README.md: {lines} lines, {len(found)} blocks checked")


if __name__ == "__main__":
    sys.exit(main())
