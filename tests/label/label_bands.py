#!/usr/bin/env python3
"""The cases of label_session.py for `ltt label budget --budgets` (cost bands for the walk at
several budgets): over plain HTTP, and in headless Chromium by keyboard. Each labeler answers
the episode's true band from costs.csv (costs 0, 4, 8, 14, 20 against the budgets 5, 10, 15:
bands 0, 0, 1, 2, 3), and the files written are checked against `ltt certify --sequential
--budgets` on the recorded labels. label_session.py runs them (CASES below) with its Server
and checks; the browser case exits 77 through label_browser.browser() when Chromium or
Selenium is missing.
"""
import csv
import filecmp
import json
import os
import shutil
import sys

import label_session as ls

sys.dont_write_bytecode = True

BUDGETS = [5.0, 10.0, 15.0]
FLAGS = ["--budgets", "5,10,15", "--alphas", "0.3,0.25,0.2"]
TEXTS = ["cost <= 5", "5 < cost <= 10", "10 < cost <= 15", "cost > 15"]


def bands(prefix=""):
    """id -> band from costs.csv, ids as the pool names them (prefix "ep-" for pool.csv)."""
    with open(os.path.join(ls.WORK, "costs.csv")) as f:
        rows = list(csv.DictReader(f))
    out = {}
    for row in rows:
        cost = float(row["cost"])
        key = "%s%03d" % (prefix, int(row["id"])) if prefix else row["id"]
        out[key] = sum(cost > b for b in BUDGETS)
    return out


def check_no_cost(state):
    """The page is never told the cost: no field named so, no series of it, no cost value."""
    item = state["item"]
    ls.check(item is not None, "no item to check")
    text = json.dumps(item)
    ls.check("cost" not in text, "the item shown mentions the cost: %s" % text[:200])
    if "fields" in item:
        ls.check(set(item["fields"]) <= {"return", "length"}, "fields shown: %r" % item["fields"])


def certify_again(sibling, out, dataset):
    """`ltt certify --sequential --budgets` on DIR/labels.csv from a sibling directory, so that
    every path written into the certificate reads the same; its certificate compared."""
    os.makedirs(os.path.join(sibling, "out"))
    shutil.copyfile(os.path.join(out, "labels.csv"), os.path.join(sibling, "out", "labels.csv"))
    source = (["--dataset", "../data.hdf5", "--scores", "../scores.csv"] if dataset
              else ["--pool", "../pool.csv"])
    selection = "out/selection.hdf5" if dataset else "out/selection.txt"
    args = (["certify", "--sequential"] + source + FLAGS +
            ["--labels", "out/labels.csv", "--certificate", "out/certificate.json", "--selection",
             selection, "--n", "30" if dataset else "40", "--seed", "5" if dataset else "2"])
    ls.run_ltt(args, sibling)
    for name in ("certificate.json", os.path.basename(selection)):
        ls.check(filecmp.cmp(os.path.join(out, name), os.path.join(sibling, "out", name),
                             shallow=False), name + " differs from ltt certify --sequential --budgets'")


def case_bands_session():
    """40 band answers over HTTP with one undo and refused words; the files equal certify's;
    the journal records the bands and resumes."""
    a, b = os.path.join(ls.WORK, "a"), os.path.join(ls.WORK, "b")
    args = ["budget", "--pool", "../pool.csv", "--out", "out", "--n", "40", "--seed", "2"] + FLAGS
    server = ls.Server(args, a)
    known = bands("ep-")
    state = server.state()
    ls.check(state["bands"] == TEXTS, "bands offered: %r" % state["bands"])
    ls.check(state["words"] == ["band0", "band1", "band2", "band3"], "words: %r" % state["words"])
    item = state["item"]["id"]
    for word in ("over", "within", "band4", "2"):
        status = server.answer(item, word)[0]
        ls.check(status == 400, "answer %r: HTTP %d, not 400" % (word, status))
    undone = False
    while True:
        state = server.state()
        if state["item"] is None:
            break
        check_no_cost(state)
        item = state["item"]["id"]
        if state["labels_used"] == 7 and not undone:  # a wrong band, taken back
            status, _, _ = server.answer(item, "band%d" % ((known[item] + 1) % 4))
            ls.check(status == 200, "the wrong answer: HTTP %d" % status)
            status, _, _ = server.request("POST", "/api/undo", {"item": item})
            ls.check(status == 200, "the undo: HTTP %d" % status)
            undone = True
            continue
        status, _, _ = server.answer(item, "band%d" % known[item])
        ls.check(status == 200, "answer %s: HTTP %d" % (item, status))
    ls.check(undone and state["labels_used"] == 40 and state["stopped"],
             "state at the end: %r" % {k: state[k] for k in ("labels_used", "stopped", "reason")})
    counts = [0, 0, 0, 0]
    status, body, _ = server.request("POST", "/api/finish", {})
    ls.check(status == 200, "finish: HTTP %d %r" % (status, body))
    out = os.path.join(a, "out")
    with open(os.path.join(out, "labels.csv")) as f:
        rows = list(csv.DictReader(f))
    ls.check(len(rows) == 40 and all(int(r["band"]) == known[r["id"]] for r in rows),
             "labels.csv does not hold the bands answered")
    for r in rows:
        counts[int(r["band"])] += 1
    ls.check(state["band_labels"] == counts, "band_labels %r, labels.csv %r" % (state["band_labels"], counts))
    with open(os.path.join(out, "journal.jsonl")) as f:
        records = [json.loads(line) for line in f][1:]
    words = [r["answer"] for r in records if "answer" in r]
    ls.check(len(words) == 41 and all(w.startswith("band") for w in words),
             "journal answers: %r" % words[:5])
    certify_again(b, out, dataset=False)
    certificate = json.load(open(os.path.join(out, "certificate.json")))
    ls.check(len(certificate["budgets"]) == 3 and certificate["labels_used"] == 40,
             "certificate: %r" % {k: certificate[k] for k in ("labels_used", "certified")})
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    # Resumed from the journal: the same state; other budgets are another session.
    again = ls.Server(args, a)
    resumed = again.state()
    ls.check(resumed["labels_used"] == 40 and resumed["written"] and resumed["stopped"],
             "resumed state: %r" % resumed)
    ls.check(again.stop() == 0, "nonzero exit after SIGTERM")
    ls.refused(["budget", "--pool", "../pool.csv", "--out", "out", "--n", "40", "--seed", "2",
                "--budgets", "5,10,16", "--alphas", "0.3,0.25,0.2"], a, ["setting 'budgets'"],
               "other budgets on the same journal")
    ls.refused(args + ["--order", "stratified"], b, ["--order"], "--order stratified")
    ls.refused(args + ["--stop", "auto"], b, ["--stop"], "--stop auto")
    ls.refused(args + ["--refusal-rate", "0.1"], b, ["--refusal-rate"], "--refusal-rate")
    ls.refused(["budget", "--pool", "../pool.csv", "--out", "out2", "--alphas", "0.2"], b,
               ["--alphas"], "--alphas without --budgets")


def case_bands_browser():
    """A dataset's episodes answered by band keys (0 to 3) in Chromium; the buttons say the
    bands, no cost is shown, and the certificate equals certify's."""
    import label_browser as lb
    a, b = os.path.join(ls.WORK, "a"), os.path.join(ls.WORK, "b")
    server = ls.Server(["budget", "--dataset", "../data.hdf5", "--scores", "../scores.csv",
                        "--out", "out", "--n", "30", "--seed", "5"] + FLAGS, a)
    known = bands()
    driver = lb.browser()
    try:
        driver.get(server.url)
        ls.wait_for("the page", lambda: lb.page_state(driver)[0] == "yes", 30)
        texts = [e.text for e in driver.find_elements("css selector", "#answers button.band")]
        ls.check(texts == ["%s %d" % (t, i) for i, t in enumerate(TEXTS)],
                 "band buttons: %r" % texts)
        series = [e.text for e in driver.find_elements("css selector", "#panels svg text")]
        ls.check(not any("cost" in s for s in series), "a plot of the cost is shown: %r" % series)
        while True:
            _, item, _ = lb.page_state(driver)
            if not item:
                break
            count = lb.answered(driver)
            lb.press(driver, str(known[item]))
            ls.wait_for("answer %d" % (count + 1), lambda: lb.answered(driver) == count + 1)
            if count + 1 == 8 and ls.SHOTS:
                driver.save_screenshot(os.path.join(ls.SHOTS, "label_budget_bands.png"))
        driver.find_element("id", "finish").click()
        ls.wait_for("the certificate", lambda: driver.find_element("id", "written").text)
    finally:
        driver.quit()
    state = server.state()
    ls.check(state["labels_used"] == 30 and state["stopped"], "state at the end: %r" % state)
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM: " + server.stderr())
    out = os.path.join(a, "out")
    with open(os.path.join(out, "labels.csv")) as f:
        rows = list(csv.DictReader(f))
    ls.check(len(rows) == 30 and all(int(r["band"]) == known[r["id"]] for r in rows),
             "labels.csv does not hold the bands pressed")
    certify_again(b, out, dataset=True)


CASES = {"bands-session": case_bands_session, "bands-browser": case_bands_browser}
