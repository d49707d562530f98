#!/usr/bin/env python3
"""Drives `ltt label` for label.test.cpp: a person's session in headless Chromium, a crash and
a resume, and the server's refusals, each checked against an independent account (the data's
own costs, `ltt certify --sequential` on the recorded labels, raw HTTP). Exits 0 when every
check holds, 1 with the failed check on stderr otherwise; 77 when the browser is missing.

    label_session.py CASE LTT DATA_DIR WORK_DIR [SCREENSHOT_DIR]

CASE: kill-resume, security; label_browser.py's budget-browser, compare-browser,
reconnect-browser, world-browser; and label_robustness.py's journal-edits, replaced-inputs,
journal-faults, token-file, undo-after-write, stall, fuzz; label_bands.py's bands-session and
bands-browser (`ltt label budget --budgets`).
Every wait is bounded (15 s, the first page 30 s, the whole case 120 s); the servers started
are stopped (SIGTERM, then SIGKILL) on the way out.
"""
import csv
import http.client
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True

LTT = DATA = WORK = SHOTS = None
SERVERS = []


def fail(message):
    sys.stderr.write("FAILED: " + message + "\n")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class Server:
    """`ltt label ...` started in cwd; url, port and token from the one line it prints."""

    def __init__(self, args, cwd, env=None):
        os.makedirs(cwd, exist_ok=True)
        self.err_path = os.path.join(cwd, "server-%d.err" % len(SERVERS))
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen([LTT, "label"] + args, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=self.err, stdin=subprocess.DEVNULL,
                                     env=dict(os.environ, **(env or {})))
        SERVERS.append(self)
        ready, _, _ = select.select([self.proc.stdout], [], [], 20)
        line = self.proc.stdout.readline().decode() if ready else ""
        if not line.startswith("http://"):
            self.proc.kill()
            fail("ltt label printed no URL within 20 s: %r; stderr: %s" % (line, self.stderr()))
        self.url = line.strip()
        hostport = self.url.split("/")[2]
        self.host, self.port = hostport.rsplit(":", 1)[0], int(hostport.rsplit(":", 1)[1])
        self.token = self.url.split("token=")[1]

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def request(self, method, path, body=None, headers=None, token=True, host=None, timeout=10):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = {"Host": host or "127.0.0.1:%d" % self.port}
        if token:
            h["X-LTT-Token"] = self.token
        if body is not None:
            h["Content-Type"] = "application/json"
            if not isinstance(body, (bytes, str)):
                body = json.dumps(body)
        h.update(headers or {})
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None
        return r.status, parsed, data

    def state(self):
        status, data, _ = self.request("GET", "/api/state")
        check(status == 200, "GET /api/state: %d" % status)
        return data

    def answer(self, item, answer):
        return self.request("POST", "/api/answer", {"item": item, "answer": answer})

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail("ltt label did not stop within 10 s of signal %d" % sig)
        self.proc.stdout.close()
        self.err.close()
        SERVERS.remove(self)
        return code


def run_ltt(args, cwd):
    r = subprocess.run([LTT] + args, cwd=cwd, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "ltt %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def refused(args, cwd, parts, what):
    """`ltt label ARGS` exits 2 within 10 s with one line of stderr holding every part."""
    proc = subprocess.Popen([LTT, "label"] + args, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        fail("%s: ltt label served instead of exiting 2: %s" % (what, out.strip()))
    check(proc.returncode == 2, "%s: exit %d, not 2: %s" % (what, proc.returncode, err))
    check(err.count("\n") == 1 and err.endswith("\n"), "%s: not one line: %r" % (what, err))
    for part in parts:
        check(part in err, "%s: %r is not in the message %r" % (what, part, err))
    return err


def truth():
    with open(os.path.join(WORK, "truth.csv")) as f:
        return {row["id"]: row["unsafe"] == "1" for row in csv.DictReader(f)}


def wait_for(what, condition, seconds=15):
    end = time.time() + seconds
    while time.time() < end:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    fail("timed out after %g s waiting for %s" % (seconds, what))


def budget_args(data_dir):
    return ["budget", "--dataset", data_dir + "/data.hdf5", "--scores", data_dir + "/scores.csv",
            "--out", "out", "--n", "36", "--stop", "cap", "--seed", "5"]


def pool_args(port=None):
    args = ["budget", "--pool", "../pool.csv", "--out", "out", "--n", "60", "--stop", "cap",
            "--seed", "2"]
    return args + (["--port", str(port)] if port else [])


def pool_truth():
    return {"ep-%03d" % int(k): v for k, v in truth().items()}


def case_kill_resume():
    """SIGKILL after 10 answers and a write cut short; the restart resumes at answer 11."""
    a = os.path.join(WORK, "a")
    known = pool_truth()
    server = Server(pool_args(), a)
    given = []
    for _ in range(10):
        item = server.state()["item"]["id"]
        status, _, _ = server.answer(item, "over" if known[item] else "within")
        check(status == 200, "answer %s: HTTP %d" % (item, status))
        given.append(item)
    server.proc.kill()
    server.proc.wait(10)
    server.stop(0)
    journal = os.path.join(a, "out", "journal.jsonl")
    with open(journal, "a") as f:
        f.write('{"answer":"ov')  # a write cut short by the crash: never acknowledged
    with open(os.path.join(WORK, "first10.csv"), "w") as f:
        f.write("id,unsafe\n" + "".join("%s,%d\n" % (i, known[i]) for i in given))
    reference = json.loads(run_ltt(["certify", "--sequential", "--pool", "pool.csv", "--labels",
                                    "first10.csv", "--n", "60", "--stop", "cap", "--seed", "2",
                                    "--json"], WORK))
    server = Server(pool_args(), a)
    state = server.state()
    check(state["labels_used"] == 10, "resumed with %d labels, not 10" % state["labels_used"])
    check(state["item"]["id"] == reference["next_id"],
          "resumed at %s; certify --sequential asks for %s" % (state["item"]["id"], reference["next_id"]))
    check(state["last"]["item"] == given[-1], "the last answer after the resume: %r" % state["last"])
    check("resumed" in server.stderr(), "no resume message: " + server.stderr())
    item = state["item"]["id"]
    check(server.answer(item, "over" if known[item] else "within")[0] == 200, "answer after resume")
    check(server.stop() == 0, "nonzero exit after SIGTERM")
    with open(journal) as f:
        lines = f.read().split("\n")
    check(lines[-1] == "" and all(json.loads(l) for l in lines[:-1]),
          "the journal is not whole lines of JSON after the resume")


def case_security():
    a = os.path.join(WORK, "a")
    media = os.path.join(WORK, "media")
    os.makedirs(media)
    with open(os.path.join(WORK, "secret.png"), "wb") as f:
        f.write(b"secret outside --media")
    server = Server(pool_args() + ["--media", "../media"], a)
    port = server.port
    # Loopback only: the listening socket is 127.0.0.1:port in /proc/net/tcp.
    with open("/proc/net/tcp") as f:
        listening = [l.split()[1] for l in f.readlines()[1:] if l.split()[3] == "0A"]
    check("0100007F:%04X" % port in listening and "00000000:%04X" % port not in listening,
          "the server does not listen on 127.0.0.1 alone")
    state = server.state()
    item = state["item"]["id"]
    page = "/?token=" + server.token
    check(server.request("GET", page, token=False)[0] == 200, "the page with its token")
    checks = [
        ("no token", "GET", "/", None, {}, False, None, 403),
        ("wrong token", "GET", "/?token=" + "0" * 48, None, {}, False, None, 403),
        ("token only in the query for the API", "GET", "/api/state?token=" + server.token, None,
         {}, False, None, 403),
        ("wrong header token", "POST", "/api/answer", {"item": item, "answer": "over"},
         {"X-LTT-Token": "x" * 48}, False, None, 403),
        ("wrong Host", "GET", page, None, {}, False, "evil.example:%d" % port, 403),
        ("Host of another port", "GET", page, None, {}, False, "127.0.0.1:%d" % (port + 1), 403),
        ("traversal", "GET", "/../../etc/passwd?token=" + server.token, None, {}, False, None, 404),
        ("encoded traversal", "GET", "/%2e%2e/%2e%2e/etc/passwd?token=" + server.token, None, {},
         False, None, 404),
        ("media traversal", "GET", "/media/../secret.png?token=" + server.token, None, {}, False,
         None, 404),
        ("oversized body", "POST", "/api/answer", "{" + " " * 10000 + "}", {}, True, None, 413),
        ("malformed JSON", "POST", "/api/answer", "{not json", {}, True, None, 400),
        ("wrong answer word", "POST", "/api/answer", {"item": item, "answer": "maybe"}, {}, True,
         None, 400),
        ("an episode not asked for", "POST", "/api/answer",
         {"item": "ep-999" if item != "ep-999" else "ep-000", "answer": "over"}, {}, True, None, 409),
        ("undo of nothing", "POST", "/api/undo", {"item": item}, {}, True, None, 409),
        ("finish before the stop", "POST", "/api/finish", {}, {}, True, None, 409),
    ]
    for name, method, path, body, headers, token, host, expected in checks:
        status, _, data = server.request(method, path, body, headers, token, host)
        check(status == expected, "%s: HTTP %d, expected %d" % (name, status, expected))
        check(b"root:" not in data and b"secret outside" not in data, name + ": leaked a file")
    check(server.state()["labels_used"] == 0, "a refused request changed the state")
    # One answer per episode: the second for the same episode (another tab) gets 409.
    check(server.answer(item, "over")[0] == 200, "the first answer")
    check(server.answer(item, "within")[0] == 409, "a second answer for the same episode")
    check(server.state()["labels_used"] == 1, "two answers recorded for one episode")
    # --media: a link out of the directory is not followed; a file inside it is served.
    current = server.state()["item"]["id"]
    os.symlink(os.path.join(WORK, "secret.png"), os.path.join(media, current + ".png"))
    status, _, data = server.request("GET", "/media/0?token=" + server.token, token=False)
    check(status == 404 and b"secret" not in data, "a symlink out of --media was served")
    os.remove(os.path.join(media, current + ".png"))
    with open(os.path.join(media, current + ".png"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n rendering")
    status, _, data = server.request("GET", "/media/0?token=" + server.token, token=False)
    check(status == 200 and data.startswith(b"\x89PNG"), "the --media file: HTTP %d" % status)
    check(server.state()["media"] == ["image/png"], "state's media: %r" % server.state()["media"])
    check(server.stop() == 0, "nonzero exit after SIGTERM")
    # Another address needs --host and --allow-host, the names the remote browsers use, and is
    # warned about; without --allow-host it is refused (it would bind every interface and
    # answer 403 to every remote browser).
    wide_dir = os.path.join(WORK, "wide")
    os.makedirs(wide_dir)
    refused(pool_args() + ["--host", "0.0.0.0"], wide_dir, ["--host", "--allow-host"],
            "--host 0.0.0.0 without --allow-host")
    refused(pool_args() + ["--host", "0.0.0.0", "--allow-host", "a/b"], wide_dir,
            ["--allow-host", "'a/b'"], "--allow-host a/b")
    wide = Server(pool_args() + ["--host", "0.0.0.0", "--allow-host", "labbox.example",
                                 "10.1.2.3"], wide_dir)
    check("warning" in wide.stderr() and "plain HTTP" in wide.stderr(),
          "no warning for --host 0.0.0.0: " + wide.stderr())
    check(wide.url.startswith("http://labbox.example:%d/?token=" % wide.port), "URL " + wide.url)
    for host, expected in (("labbox.example", 200), ("10.1.2.3", 200), ("evil.example", 403)):
        status = wide.request("GET", "/api/state", host="%s:%d" % (host, wide.port))[0]
        check(status == expected, "Host %s: HTTP %d, expected %d" % (host, status, expected))
    check(wide.stop() == 0, "nonzero exit after SIGTERM")


def main():
    global LTT, DATA, WORK, SHOTS
    case, LTT, DATA, WORK = sys.argv[1:5]
    SHOTS = sys.argv[5] if len(sys.argv) > 5 else None
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
    for name in os.listdir(DATA):
        shutil.copy(os.path.join(DATA, name), WORK)
    try:
        sys.modules.setdefault("label_session", sys.modules[__name__])  # one module, one state
        import label_bands
        import label_browser
        import label_robustness
        cases = {"kill-resume": case_kill_resume, "security": case_security}
        cases.update(label_browser.CASES)
        cases.update(label_robustness.CASES)
        cases.update(label_bands.CASES)
        cases[case]()
    finally:
        for server in list(SERVERS):
            server.proc.kill()
            server.proc.wait()
    print("ok")


if __name__ == "__main__":
    main()
