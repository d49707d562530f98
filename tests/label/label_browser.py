#!/usr/bin/env python3
"""The cases of label_session.py that a person's session in headless Chromium runs: budget and
compare labeling by keyboard, the world drawn from a point-goal pool's geometry, and a page that
reconnects to a restarted server. label_session.py runs them (CASES below) with its Server and
checks; each exits 77 through browser() when Chromium or Selenium is missing.
"""
import csv
import filecmp
import json
import os
import shutil
import sys

import label_session as ls

sys.dont_write_bytecode = True


def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("python3-selenium is not installed")
        sys.exit(77)
    for tool in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.access(tool, os.X_OK):
            print(tool + " is not installed")
            sys.exit(77)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--user-data-dir=" + os.path.join(ls.WORK, "chromium")):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    return driver


def page_state(driver):
    """The body's data attributes the page sets after each render."""
    return driver.execute_script(
        "return [document.body.dataset.ready || '', document.body.dataset.item || '',"
        " (document.getElementById('n-labels') || document.getElementById('n-answered') || {}).textContent || '']")


def press(driver, key):
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).send_keys(key).perform()


def answered(driver):
    text = page_state(driver)[2]
    return int(text.split(" ")[0]) if text else -1


def case_budget_browser():
    """30+ answers by keyboard with one undo, then the certificate against certify's."""
    a, b = os.path.join(ls.WORK, "a"), os.path.join(ls.WORK, "b")
    server = ls.Server(ls.budget_args("..") + ["--plane", "0,1", "--show", "2,3"], a)
    known = ls.truth()
    driver = browser()
    try:
        driver.get(server.url)
        ls.wait_for("the page", lambda: page_state(driver)[0] == "yes", 30)
        undone = False
        while True:
            ready, item, _ = page_state(driver)
            if not item:
                break
            count = answered(driver)
            if count == 4 and not undone:  # a wrong answer, taken back
                press(driver, "w" if known[item] else "o")
                ls.wait_for("the wrong answer", lambda: answered(driver) == count + 1)
                press(driver, "u")
                ls.wait_for("the undo", lambda: answered(driver) == count and page_state(driver)[1] == item)
                undone = True
            press(driver, "o" if known[item] else "w")
            ls.wait_for("answer %d" % (count + 1), lambda: answered(driver) == count + 1)
            if count + 1 == 12 and ls.SHOTS:
                driver.save_screenshot(os.path.join(ls.SHOTS, "label_budget.png"))
        ls.check(undone, "the session ended before the undo")
        verdict = driver.find_element("id", "verdict").text
        ls.check("you can stop" in verdict or "nothing certified" in verdict or "refused" in verdict,
                 "verdict once stopped: %r" % verdict)
        shown = {key: driver.find_element("id", "n-" + key).text for key in ("depth", "selection", "labels")}
        driver.find_element("id", "finish").click()
        ls.wait_for("the certificate", lambda: driver.find_element("id", "written").text)
        if ls.SHOTS:
            driver.save_screenshot(os.path.join(ls.SHOTS, "label_budget_stopped.png"))
    finally:
        driver.quit()
    state = server.state()
    ls.check(state["labels_used"] == 36 and state["stopped"], "state at the end: %r" % state)
    ls.check(server.stop() == 0, "ltt label budget: nonzero exit after SIGTERM: " + server.stderr())

    out = os.path.join(a, "out")
    with open(os.path.join(out, "labels.csv")) as f:
        rows = list(csv.DictReader(f))
    ls.check(len(rows) == 36, "labels.csv holds %d labels, not 36" % len(rows))
    for row in rows:
        ls.check((row["unsafe"] == "1") == known[row["id"]],
                 "labels.csv: %s recorded as %s against the answer given" % (row["id"], row["unsafe"]))
    with open(os.path.join(out, "journal.jsonl")) as f:
        records = [json.loads(line) for line in f]
    ls.check(sum("undo" in r for r in records) == 1 and sum("answer" in r for r in records) == 37,
             "journal: %d answers, %d undos" % (sum("answer" in r for r in records),
                                            sum("undo" in r for r in records)))
    # ltt certify --sequential on the recorded labels, from a sibling directory so that every
    # path it writes into the certificate reads the same.
    os.makedirs(os.path.join(b, "out"))
    shutil.copyfile(os.path.join(out, "labels.csv"), os.path.join(b, "out", "labels.csv"))
    ls.run_ltt(["certify", "--sequential", "--dataset", "../data.hdf5", "--scores", "../scores.csv",
                "--labels", "out/labels.csv", "--certificate", "out/certificate.json",
                "--selection", "out/selection.hdf5", "--n", "36", "--stop", "cap", "--seed", "5"], b)
    for name in ("certificate.json", "selection.hdf5"):
        ls.check(filecmp.cmp(os.path.join(out, name), os.path.join(b, "out", name), shallow=False),
                 name + " differs from ltt certify --sequential's")
    certificate = json.load(open(os.path.join(out, "certificate.json")))
    ls.check(certificate["labels_used"] == 36, "certificate: labels_used %r" % certificate["labels_used"])
    # What the page showed once stopped is what the certificate says.
    depth = certificate["certified_step"] + 1 if certificate["certified"] else 0
    ls.check(shown["depth"].startswith("%d of " % depth) and shown["selection"] == str(certificate["selection_size"])
             and shown["labels"].startswith("36 of"), "the page showed %r; the certificate: depth %d, "
             "selection %d" % (shown, depth, certificate["selection_size"]))


def case_compare_browser():
    """Pairs judged by keyboard (one undo), then pairs.csv trains `ltt score`."""
    import h5py
    import numpy as np
    a = os.path.join(ls.WORK, "a")
    H = 10
    server = ls.Server(["compare", "--dataset", "../data.hdf5", "--out", "out", "--pairs", "8",
                        "--segment", str(H), "--seed", "3", "--plane", "0,1", "--show", "2"], a)
    with h5py.File(os.path.join(ls.WORK, "data.hdf5"), "r") as f:
        costs = np.asarray(f["costs"], dtype=np.float64)
        ends = np.asarray(f["terminals"]) | np.asarray(f["timeouts"])
    starts = np.concatenate([[0], np.flatnonzero(ends)[:-1] + 1])
    seg_cost = lambda s: costs[starts[s["episode"]] + s["start"]:][:H].sum()
    driver = browser()
    expected = []
    try:
        driver.get(server.url)
        ls.wait_for("the page", lambda: page_state(driver)[0] == "yes", 30)
        undone = False
        while True:
            state = server.state()
            if not state["item"]:
                break
            item, count = state["item"], state["answered"]
            ca, cb = seg_cost(item["a"]), seg_cost(item["b"])
            key = "a" if ca < cb else "b" if cb < ca else "t"
            if count == 2 and not undone:
                press(driver, "t")
                ls.wait_for("the wrong answer", lambda: answered(driver) == count + 1)
                press(driver, "u")
                ls.wait_for("the undo", lambda: answered(driver) == count)
                undone = True
            press(driver, key)
            ls.wait_for("answer %d" % (count + 1), lambda: answered(driver) == count + 1)
            if key != "t":
                expected.append([str(item["a"]["episode"]), str(item["a"]["start"]),
                                 str(item["b"]["episode"]), str(item["b"]["start"]), key])
            if count + 1 == 3 and ls.SHOTS:
                driver.save_screenshot(os.path.join(ls.SHOTS, "label_compare.png"))
        driver.find_element("id", "finish").click()
        ls.wait_for("pairs.csv", lambda: driver.find_element("id", "written").text)
    finally:
        driver.quit()
    ls.check(server.stop() == 0, "ltt label compare: nonzero exit after SIGTERM: " + server.stderr())
    with open(os.path.join(a, "out", "pairs.csv")) as f:
        rows = list(csv.reader(f))
    ls.check(rows[0] == ["episode_a", "start_a", "episode_b", "start_b", "preferred"],
             "pairs.csv header: %r" % rows[0])
    ls.check(rows[1:] == expected, "pairs.csv %r, answered %r" % (rows[1:], expected))
    ls.run_ltt(["score", "--dataset", "../data.hdf5", "--pairs-file", "out/pairs.csv", "--segment",
                str(H), "--out", "scored", "--members", "2", "--epochs", "5", "--threads", "1"], a)
    score = json.load(open(os.path.join(a, "scored", "score.json")))
    ls.check(score["pairs"]["source"] == "file" and score["pairs"]["count"] == len(expected),
             "score.json pairs: %r" % score["pairs"])


def world_plots(driver):
    """What each top-down world drawing shows, read from the page's SVG."""
    return driver.execute_script("""
        return [...document.querySelectorAll('svg.world')].map((p) => ({
          arena: p.querySelectorAll('rect.arena').length,
          hazards: p.querySelectorAll('circle.hazard').length,
          goals: p.querySelectorAll('circle.goal').length,
          start: p.querySelectorAll('circle.start').length,
          segments: p.querySelectorAll('g.path line').length,
          path: JSON.parse(p.dataset.path),
          xs: JSON.parse(p.dataset.xs), ys: JSON.parse(p.dataset.ys),
          dot: [Number(p.querySelector('.dot').getAttribute('cx')),
                Number(p.querySelector('.dot').getAttribute('cy'))]}));""")


def check_world_plot(plot, geometry, first, count, what):
    """One drawing against the file's own geometry, rows [first, first + count), read by h5py."""
    import numpy as np
    position, goal, hazards = (geometry[k][first:first + count] for k in ("position", "goal", "hazards"))
    ls.check(plot["arena"] == 1 and plot["start"] == 1, what + ": no arena or no start drawn")
    ls.check(plot["hazards"] == hazards.shape[1],
             "%s: %d hazard circles, the file has %d" % (what, plot["hazards"], hazards.shape[1]))
    ls.check(len(plot["path"]) == count and plot["segments"] == count - 1,
             "%s: a path of %d points (%d segments) for %d steps" % (what, len(plot["path"]), plot["segments"], count))
    ls.check(np.allclose(np.array(plot["path"]), position, atol=1e-6), what + ": the path is not infos/position")
    moves = 1 + int(np.any(goal[1:] != goal[:-1], axis=1).sum())
    ls.check(plot["goals"] == moves, "%s: %d goals drawn, the rows have %d" % (what, plot["goals"], moves))


def case_world_browser():
    """A built-in task's pool: the top-down world drawn from its geometry, the cost nowhere."""
    import h5py
    import numpy as np
    a = os.path.join(ls.WORK, "a")
    ls.run_ltt(["pipeline", "--task", "point-goal", "--preset", "tiny", "--keep-pool", "--out", "pipe",
                "--seeds", "1", "--threads", "1"], ls.WORK)
    pool = os.path.join(ls.WORK, "pipe", "point-goal-pool-1.hdf5")
    with h5py.File(pool, "r") as f:
        ends = np.flatnonzero(np.asarray(f["terminals"]) | np.asarray(f["timeouts"]))
        geometry = {k: np.asarray(f["infos/" + k]) for k in ("position", "goal", "hazards")}
    starts = np.concatenate([[0], ends[:-1] + 1])
    with open(os.path.join(ls.WORK, "world-scores.csv"), "w") as f:
        f.write("id,score\n" + "".join("%d,%d\n" % (i, -i) for i in range(len(starts))))
    server = ls.Server(["budget", "--dataset", pool, "--scores", "../world-scores.csv", "--out", "out",
                        "--n", "20", "--stop", "cap", "--seed", "4"], a)
    driver = browser()
    try:
        driver.get(server.url)
        ls.wait_for("the page", lambda: page_state(driver)[0] == "yes", 30)
        episode = int(page_state(driver)[1])
        first, count = int(starts[episode]), int(ends[episode] - starts[episode] + 1)
        plots = world_plots(driver)
        ls.check(len(plots) == 1, "budget: %d world drawings, not 1" % len(plots))
        check_world_plot(plots[0], geometry, first, count, "budget, episode %d" % episode)
        text = driver.find_element("tag name", "body").text.lower()
        ls.check("cost" not in text, "the page shows a cost: %r" % text)
        driver.execute_script("const s = document.getElementById('slider'); s.value = 120;"
                              " s.dispatchEvent(new Event('input'));")
        plot = world_plots(driver)[0]
        ls.check(abs(plot["dot"][0] - plot["xs"][120]) < 1e-6 and abs(plot["dot"][1] - plot["ys"][120]) < 1e-6,
                 "the slider at step 120 left the marker at %r" % plot["dot"])
        if ls.SHOTS:
            driver.save_screenshot(os.path.join(ls.SHOTS, "label_world.png"))
    finally:
        driver.quit()  # first: the server's stop would wait for the page's open connection
    ls.check(server.stop() == 0, "ltt label budget: nonzero exit after SIGTERM: " + server.stderr())
    # compare: both segments drawn the same way.
    H = 30
    server = ls.Server(["compare", "--dataset", pool, "--out", "out", "--pairs", "2", "--segment", str(H),
                        "--seed", "3"], os.path.join(ls.WORK, "c"))
    driver = browser()
    try:
        driver.get(server.url)
        ls.wait_for("the compare page", lambda: page_state(driver)[0] == "yes", 30)
        item = server.state()["item"]
        plots = world_plots(driver)
    finally:
        driver.quit()
    ls.check(server.stop() == 0, "ltt label compare: nonzero exit after SIGTERM: " + server.stderr())
    ls.check(len(plots) == 2, "compare: %d world drawings, not 2" % len(plots))
    for plot, side in zip(plots, ("a", "b")):
        segment = item[side]
        check_world_plot(plot, geometry, int(starts[segment["episode"]]) + segment["start"], H,
                         "compare, segment " + side)


def case_reconnect_browser():
    """The server dies with an answer in flight; the page says it was not recorded."""
    a = os.path.join(ls.WORK, "a")
    server = ls.Server(ls.pool_args(), a)
    port = server.port
    driver = browser()
    try:
        driver.get(server.url)
        ls.wait_for("the page", lambda: page_state(driver)[0] == "yes", 30)
        press(driver, "w")
        ls.wait_for("answer 1", lambda: answered(driver) == 1)
        server.proc.kill()
        server.proc.wait(10)
        server.stop(0)
        item = page_state(driver)[1]
        press(driver, "o")
        ls.wait_for("the lost-answer notice",
                    lambda: "may not be recorded" in driver.find_element("id", "notice").text)
        server = ls.Server(ls.pool_args(port), a)
        ls.wait_for("the reconnect", lambda: driver.execute_script("return document.body.dataset.lost"), 20)
        notice = driver.find_element("id", "notice").text
        ls.check("was not recorded" in notice and item in notice, "notice after reconnect: %r" % notice)
        ls.check(answered(driver) == 1 and page_state(driver)[1] == item,
                 "the page after reconnect: %r" % page_state(driver))
    finally:
        driver.quit()
    ls.check(server.state()["labels_used"] == 1, "labels after reconnect")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")


CASES = {"budget-browser": case_budget_browser, "compare-browser": case_compare_browser,
         "reconnect-browser": case_reconnect_browser, "world-browser": case_world_browser}
