#!/usr/bin/env python3
"""The cases of label_session.py that hold `ltt label`'s promises under damage and abuse
(docs/label.md, "Nothing lost" and "Nobody else in"): a journal edited by hand, inputs replaced,
writes that fail, the token file, undo after writing, stalled connections, random requests.
label_session.py runs them (CASES below) with its Server and checks.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import label_session as ls

sys.dont_write_bytecode = True


def answer_some(server, count, known):
    """`count` answers as truth.csv has them; the items answered, in order."""
    given = []
    for _ in range(count):
        item = server.state()["item"]["id"]
        ls.check(server.answer(item, "over" if known[item] else "within")[0] == 200, "answer " + item)
        given.append(item)
    return given


COMPARE_ARGS = ["compare", "--dataset", "../data.hdf5", "--out", "out", "--pairs", "4",
                "--seed", "3"]


def compare_one_answer():
    """A compare session in WORK/c with one answer ("a" to pair 1), stopped; its directory."""
    c = os.path.join(ls.WORK, "c")
    server = ls.Server(COMPARE_ARGS, c)
    ls.check(server.answer("1", "a")[0] == 200, "compare: the first answer")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    return c


def case_journal_edits():
    """A journal edited by hand is refused naming the line and the field, never read leniently."""
    a = os.path.join(ls.WORK, "a")
    server = ls.Server(ls.pool_args(), a)
    given = answer_some(server, 3, ls.pool_truth())
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    journal = os.path.join(a, "out", "journal.jsonl")
    with open(journal) as f:
        original = f.read()
    lines = original.splitlines()
    word = json.loads(lines[1])["answer"]
    other = "within" if word == "over" else "over"
    edits = [
        ("a capitalized answer", {1: lines[1].replace('"%s"' % word, '"%s"' % word.capitalize())},
         None, ["line 2", "'answer'"]),
        ("an answer word of another vocabulary", {1: lines[1].replace('"%s"' % word, '"unsafe"')},
         None, ["line 2", "'answer'"]),
        ("a number for the answer", {1: lines[1].replace('"%s"' % word, "1")}, None,
         ["line 2", "'answer'"]),
        ("an answer without its item", {2: json.dumps({"answer": other})}, None,
         ["line 3", "'item'"]),
        ("an item that is not a string", {2: json.dumps({"answer": other, "item": 7})}, None,
         ["line 3", "'item'"]),
        ("an item out of the walk's order", {2: json.dumps({"answer": other, "item": given[0]})},
         None, ["line 3", "'item'"]),
        ("a field of no kind", {1: json.dumps({"answer": word, "item": given[0], "note": 1})},
         None, ["line 2"]),
        ("a record of unknown kind", {}, json.dumps({"skip": given[2]}), ["line 5"]),
        ("an undo of an answer that is not the last", {}, json.dumps({"undo": given[0]}),
         ["line 5", "'undo'"]),
        ("a line that is not JSON", {}, "{not json", ["line 5"]),
    ]
    for what, replace, extra, parts in edits:
        edited = [replace.get(i, l) for i, l in enumerate(lines)] + ([extra] if extra else [])
        with open(journal, "w") as f:
            f.write("\n".join(edited) + "\n")
        ls.refused(ls.pool_args(), a, parts, what)
        with open(journal) as f:
            ls.check(f.read() == "\n".join(edited) + "\n", what + ": the journal was changed")
    with open(journal, "w") as f:
        f.write(original)
    server = ls.Server(ls.pool_args(), a)  # the journal as written resumes
    ls.check(server.state()["labels_used"] == 3, "the unedited journal did not resume at 3 labels")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    # compare: its words are a, b and tie.
    c = compare_one_answer()
    args = COMPARE_ARGS
    journal = os.path.join(c, "out", "journal.jsonl")
    with open(journal) as f:
        text = f.read()
    with open(journal, "w") as f:
        f.write(text.replace('"answer":"a"', '"answer":"A"'))
    ls.refused(args, c, ["line 2", "'answer'"], "compare: a capitalized answer")


def case_replaced_inputs():
    """An input replaced at the same path (or a setting changed) is refused naming it."""
    import h5py
    import numpy as np
    a = os.path.join(ls.WORK, "a")
    data = os.path.join(ls.WORK, "data.hdf5")
    args = ls.budget_args("..")
    server = ls.Server(args, a)
    answer_some(server, 3, ls.truth())
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    original = data + ".original"
    shutil.copyfile(data, original)
    with h5py.File(data, "r+") as f:  # the same episodes, another observation: a swapped file
        f["observations"][5, 0] += 1.0
    ls.refused(args, a, ["--dataset", "'../data.hdf5' changed"], "budget: a replaced --dataset")
    shutil.copyfile(original, data)
    ls.refused(args[:-1] + ["6"], a, ["'seed' = 6"], "budget: another --seed")
    server = ls.Server(args, a)  # the inputs as they were resume
    ls.check(server.state()["labels_used"] == 3, "the restored inputs did not resume at 3 labels")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    # compare: a dataset replaced at the same path, its costs reversed, draws other pairs.
    c = compare_one_answer()
    args = COMPARE_ARGS
    with h5py.File(data, "r+") as f:
        f["costs"][:] = np.asarray(f["costs"])[::-1]
    ls.refused(args, c, ["--dataset", "'../data.hdf5' changed"], "compare: a replaced --dataset")
    # A dataset stored as a directory of .npy files: one file changed in place is seen.
    npy = os.path.join(ls.WORK, "npy")
    os.makedirs(npy)
    with h5py.File(original, "r") as f:
        for key in ("observations", "next_observations", "actions", "rewards", "costs",
                    "terminals", "timeouts"):
            np.save(os.path.join(npy, key + ".npy"), f[key][()])
    d = os.path.join(ls.WORK, "d")
    args = ["compare", "--dataset", "../npy", "--out", "out", "--pairs", "4", "--seed", "3"]
    server = ls.Server(args, d)
    ls.check(server.answer("1", "b")[0] == 200, "compare on .npy files: the first answer")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    rewards = np.load(os.path.join(npy, "rewards.npy"))
    rewards[3] += 1
    np.save(os.path.join(npy, "rewards.npy"), rewards)
    ls.refused(args, d, ["--dataset", "'../npy' changed"], "compare: a .npy file of --dataset changed")


def fault_env(control):
    """ltt label with journal_fault_shim.cpp preloaded, its faults asked for in `control`."""
    shim = os.environ.get("LTT_FAULT_SHIM", "")
    ls.check(os.path.exists(shim), "no fault shim: LTT_FAULT_SHIM=%r" % shim)
    asan = os.environ.get("ASAN_OPTIONS", "")
    return {"LD_PRELOAD": shim, "LTT_FAULT_FILE": control,
            "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}


def case_journal_faults():
    """Failed writes and fsyncs are cut back and said not recorded; cut or edited files refused."""
    a = os.path.join(ls.WORK, "a")
    control = os.path.join(ls.WORK, "fault")
    known = ls.pool_truth()
    server = ls.Server(ls.pool_args(), a, fault_env(control))
    journal = os.path.join(a, "out", "journal.jsonl")
    answer_some(server, 2, known)
    for mode in ("write", "short", "fsync"):
        before = server.state()
        with open(journal, "rb") as f:
            kept = f.read()
        with open(control, "w") as f:
            f.write(mode)
        item = before["item"]["id"]
        status, reply, _ = server.answer(item, "over" if known[item] else "within")
        ls.check(status == 503 and "not recorded" in reply["error"],
              "%s fault: HTTP %d %r" % (mode, status, reply))
        with open(journal, "rb") as f:
            ls.check(f.read() == kept, "%s fault: the journal was not cut back to its last record" % mode)
        after = server.state()
        ls.check(after["labels_used"] == before["labels_used"] and after["item"]["id"] == item,
              "%s fault: the state moved: %r" % (mode, after))
        os.remove(control)
        answer_some(server, 1, known)  # the next answer, appended cleanly
    last = server.state()["last"]["item"]
    with open(control, "w") as f:
        f.write("write")
    status, reply, _ = server.request("POST", "/api/undo", {"item": last})
    ls.check(status == 503 and server.state()["last"]["item"] == last, "undo under a fault: %d" % status)
    os.remove(control)
    reported = server.state()
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    server = ls.Server(ls.pool_args(), a)  # the journal replays to the state the server reported
    resumed = server.state()
    ls.check(resumed["labels_used"] == reported["labels_used"] == 5 and
          resumed["item"]["id"] == reported["item"]["id"] and resumed["last"] == reported["last"],
          "resumed %r, reported %r" % (resumed, reported))
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    # Files cut or edited: each refused with its own message, the file left as it was.
    with open(journal, "rb") as f:
        original = f.read()
    header_end = original.index(b"\n")
    damaged = [
        ("CR LF line ends", original.replace(b"\n", b"\r\n"), ["line 1", "CR LF"]),
        ("a missing final newline", original[:-1], ["line 6", "final newline"]),
        ("a header cut short", original[:header_end // 2], ["line 1", "cut short"]),
        ("an empty journal", b"", ["line 1", "empty"]),
    ]
    for what, data, parts in damaged:
        with open(journal, "wb") as f:
            f.write(data)
        ls.refused(ls.pool_args(), a, parts, what)
        with open(journal, "rb") as f:
            ls.check(f.read() == data, what + ": the journal was changed")


def case_token_file():
    """DIR/token is made 0600; one others can read, or of another user, is refused; --new-token."""
    import stat
    a = os.path.join(ls.WORK, "a")
    token = os.path.join(a, "out", "token")
    old_mask = os.umask(0)  # the mode must not depend on the caller's umask
    try:
        server = ls.Server(ls.pool_args(), a)
    finally:
        os.umask(old_mask)
    ls.check(stat.S_IMODE(os.stat(token).st_mode) == 0o600,
          "token made %o, not 600" % stat.S_IMODE(os.stat(token).st_mode))
    first = server.token
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    for mode in (0o644, 0o640, 0o602):
        os.chmod(token, mode)
        ls.refused(ls.pool_args(), a, ["token", "%04o" % mode, "--new-token"], "a token file of mode %o" % mode)
    if os.geteuid() == 0:  # only root can give the file to another user
        os.chmod(token, 0o600)
        os.chown(token, 65534, -1)
        ls.refused(ls.pool_args(), a, ["token", "owned by user 65534", "--new-token"],
                "a token file of another user")
        os.chown(token, 0, -1)
    os.chmod(token, 0o644)
    server = ls.Server(ls.pool_args() + ["--new-token"], a)
    ls.check(server.token != first, "--new-token kept the old token")
    ls.check(stat.S_IMODE(os.stat(token).st_mode) == 0o600, "--new-token: the file is not 600")
    with open(token) as f:
        ls.check(f.read().strip() == server.token, "--new-token: the file does not hold the new token")
    status = server.request("GET", "/api/state", headers={"X-LTT-Token": first})[0]
    ls.check(status == 403, "the old token after --new-token: HTTP %d" % status)
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    server = ls.Server(ls.pool_args(), a)  # kept across restarts
    ls.check(server.token != first and os.path.exists(token), "the new token was not kept")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")


def case_undo_after_write():
    """Once the files are written, an undo of an answer they hold is refused; the files stay."""
    a = os.path.join(ls.WORK, "a")
    args = ["budget", "--pool", "../pool.csv", "--out", "out", "--n", "12", "--stop", "cap",
            "--seed", "2"]
    server = ls.Server(args, a)
    known = ls.pool_truth()
    while server.state()["item"]:
        answer_some(server, 1, known)
    status, _, _ = server.request("POST", "/api/finish", {})
    ls.check(status == 200, "finish: HTTP %d" % status)
    out = os.path.join(a, "out")
    files = {name: open(os.path.join(out, name), "rb").read()
             for name in ("labels.csv", "certificate.json", "selection.txt")}
    last = server.state()["last"]
    status, reply, _ = server.request("POST", "/api/undo", {"item": last["item"]})
    ls.check(status == 409 and "written" in reply["error"], "undo after writing: HTTP %d %r" % (status, reply))
    ls.check(not server.state()["can_undo"], "state: can_undo after writing")
    ls.check(server.state()["last"] == last and server.state()["labels_used"] == 12,
          "the refused undo changed the state")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    for name, data in files.items():
        ls.check(open(os.path.join(out, name), "rb").read() == data, name + " changed")
    server = ls.Server(args, a)
    state = server.state()
    ls.check(state["written"] and not state["can_undo"] and state["labels_used"] == 12,
          "resumed after writing: %r" % state)
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    journal = os.path.join(out, "journal.jsonl")
    with open(journal, "a") as f:
        f.write(json.dumps({"undo": last["item"]}) + "\n")
    ls.refused(args, a, ["line 15", "written"], "an undo after writing, added by hand")
    # compare: answers given after pairs.csv was written can be undone, the ones it holds not.
    c = os.path.join(ls.WORK, "c")
    args = COMPARE_ARGS
    server = ls.Server(args, c)
    for item, word in (("1", "a"), ("2", "b")):
        ls.check(server.answer(item, word)[0] == 200, "compare: answer " + item)
    ls.check(server.request("POST", "/api/finish", {})[0] == 200, "compare: finish")
    ls.check(server.request("POST", "/api/undo", {"item": "2"})[0] == 409, "compare: undo of a written pair")
    ls.check(server.answer("3", "tie")[0] == 200, "compare: answer 3")
    ls.check(server.request("POST", "/api/undo", {"item": "3"})[0] == 200, "compare: undo of answer 3")
    ls.check(server.request("POST", "/api/undo", {"item": "2"})[0] == 409, "compare: undo of pair 2 again")
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")


def case_stall():
    """40 connections that send part of a request's head and wait neither delay an answer nor
    SIGTERM by 2 s; overlapping Range requests on /media are answered."""
    import socket
    a = os.path.join(ls.WORK, "a")
    media = os.path.join(ls.WORK, "media")
    os.makedirs(media)
    server = ls.Server(ls.pool_args() + ["--media", "../media"], a)
    with open(os.path.join(media, server.state()["item"]["id"] + ".mp4"), "wb") as f:
        f.write(os.urandom(1 << 20))
    # One connection trickles its head a byte at a time: closed at the request's deadline (2 s).
    import threading
    trickle = {"closed": None}
    def trickler():
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        begun = time.time()
        try:
            for byte in b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port + b"X" * 100:
                s.sendall(bytes([byte]))
                time.sleep(0.25)
        except OSError:
            trickle["closed"] = time.time() - begun
        s.close()
    thread = threading.Thread(target=trickler, daemon=True)
    thread.start()
    held = []
    for _ in range(40):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        s.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-LTT" % server.port)
        held.append(s)
    time.sleep(0.2)
    start = time.time()
    try:
        status = server.request("GET", "/api/state", timeout=2)[0]
    except OSError as e:
        status = repr(e)
    waited = time.time() - start
    sys.stderr.write("stall: /api/state under 40 stalled connections: %r after %.3f s\n" % (status, waited))
    ls.check(status == 200 and waited < 2, "/api/state under 40 stalled connections: %r after %.2f s" % (status, waited))
    # Many overlapping ranges in one request: one range, or a refusal, never a multiplied body.
    ranges = ",".join("%d-%d" % (i, (1 << 20) - 1) for i in range(0, 1 << 20, 1 << 14))
    status, _, data = server.request("GET", "/media/0?token=" + server.token, token=False,
                                     headers={"Range": "bytes=" + ranges})
    sys.stderr.write("stall: /media with %d overlapping ranges: HTTP %d, %d bytes\n"
                     % (ranges.count(",") + 1, status, len(data)))
    ls.check(len(data) <= (1 << 20) + 4096, "/media with 64 overlapping ranges: %d bytes" % len(data))
    thread.join(8)
    # By now (2.5 s) the half-sent heads are past their deadline: answered and closed, not kept
    # waiting for a next request.
    held[0].settimeout(1.5)
    closed = False
    try:
        while held[0].recv(4096):
            pass
        closed = True
    except OSError:
        pass
    ls.check(closed, "a connection whose head ran past its deadline was kept open")
    sys.stderr.write("stall: a head sent a byte every 0.25 s: closed after %r s\n" % trickle["closed"])
    ls.check(trickle["closed"] is not None and trickle["closed"] < 4,
          "a head trickled a byte at a time was not cut off: %r" % trickle["closed"])
    start = time.time()
    server.proc.send_signal(signal.SIGTERM)
    try:
        code = server.proc.wait(2)
    except subprocess.TimeoutExpired:
        code = None
    waited = time.time() - start
    sys.stderr.write("stall: SIGTERM under 40 stalled connections: exit %r after %.3f s\n" % (code, waited))
    for s in held:
        s.close()
    ls.check(code == 0, "SIGTERM under 40 stalled connections: not stopped within 2 s")


def raw_request(port, data, timeout=5):
    """Sends bytes as they are; the status of the reply (None if the server closed without
    one) and its body."""
    import socket
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    reply = b""
    try:
        try:  # the server may answer and close before it has read everything
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
    except ConnectionResetError:
        pass
    finally:
        s.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None), body


def case_fuzz():
    """Seeded random requests (methods, paths, headers, bodies, some of them well-formed answers
    and undos) against a live session: never a 5xx, the server alive, and the journal replays
    to the state the server reports. LTT_LABEL_FUZZ_REQUESTS (default 3000) and
    LTT_LABEL_FUZZ_SEED (default 1) size and seed it."""
    import random
    count = int(os.environ.get("LTT_LABEL_FUZZ_REQUESTS", "3000"))
    seed = int(os.environ.get("LTT_LABEL_FUZZ_SEED", "1"))
    rng = random.Random(seed)
    a = os.path.join(ls.WORK, "a")
    media = os.path.join(ls.WORK, "media")
    os.makedirs(media)
    server = ls.Server(ls.pool_args() + ["--media", "../media"], a)
    port, token = server.port, server.token
    for i in range(150):  # a rendering for every other episode
        if i % 2 == 0:
            with open(os.path.join(media, "ep-%03d.png" % i), "wb") as f:
                f.write(b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(3000)))
    words = ["over", "within", "Over", "tie", "a", "", "unsafe", 1, None, [], {}]
    paths = ["/", "/api/state", "/api/answer", "/api/undo", "/api/finish", "/media/0", "/media/1",
             "/media/9", "/page.js", "/page.css", "/index.html", "/api/", "/api/state/x",
             "/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/media/../token", "/" + "a" * 3000,
             "/api/answer?x=%00", "/?token=" + token, "/page.js?token=" + token,
             "/media/0?token=" + token, "*", "http://evil.example/"]
    item = server.state()["item"]
    served = {}
    for n in range(count):
        method = rng.choice(["GET", "POST", "POST", "POST", "PUT", "DELETE", "HEAD", "OPTIONS",
                             "PATCH", "BREW", "get", ""])
        path = rng.choice(paths)
        headers = []
        if rng.random() < 0.75:
            headers.append(("Host", "127.0.0.1:%d" % port))
        elif rng.random() < 0.8:
            headers.append(("Host", rng.choice(["localhost:%d" % port, "evil.example", "",
                                                "127.0.0.1:%d" % (port + 1)])))
        if rng.random() < 0.9:
            headers.append(("X-LTT-Token", token if rng.random() < 0.9 else token[:-1] + "0"))
        if rng.random() < 0.1:
            headers.append(("Range", rng.choice(["bytes=0-10", "bytes=5-", "bytes=-3",
                                                 "bytes=0-1,1-2,2-3", "bytes=x", "bytes=99999999-"])))
        if rng.random() < 0.05:
            headers.append(("X-" + "h" * rng.randrange(1, 50), "v" * rng.randrange(0, 9000)))
        kind = rng.random()
        if kind < 0.35 and item:  # an answer, mostly for the item asked for
            body = json.dumps({"item": item["id"] if rng.random() < 0.8 else "ep-%03d" % rng.randrange(160),
                               "answer": rng.choice(words)}).encode()
            method, path = "POST", "/api/answer"
        elif kind < 0.45:
            body = json.dumps({"item": rng.choice([item["id"] if item else "x", "ep-000", 3, None])}).encode()
            method, path = "POST", "/api/undo"
        elif kind < 0.7:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
        elif kind < 0.75:
            body = b"{" + b" " * rng.randrange(4000, 9000) + b"}"
        else:
            body = json.dumps(rng.choice([{}, [], 1, "x", {"item": []}, {"answer": "over"},
                                          {"item": {"a": 1}, "answer": "within"}])).encode()
        data = b"%s %s HTTP/1.1\r\n" % (method.encode(), path.encode())
        if rng.random() < 0.03:
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        for k, v in headers:
            data += b"%s: %s\r\n" % (k.encode(), v.encode())
        if rng.random() < 0.95:
            data += b"Content-Length: %d\r\n" % len(body)
        data += b"Connection: close\r\n\r\n" + body
        status, reply = raw_request(port, data)
        served[status] = served.get(status, 0) + 1
        ls.check(status is None or status < 500,
              "request %d (seed %d): HTTP %r for %r: %r" % (n, seed, status, data[:200], reply[:200]))
        ls.check(server.proc.poll() is None, "request %d (seed %d): the server died" % (n, seed))
        if status == 200 and path in ("/api/answer", "/api/undo"):
            try:
                item = json.loads(reply)["state"]["item"]
            except ValueError:
                ls.fail("request %d: %r\nreply %r" % (n, data[:300], reply[:300]))
    sys.stderr.write("fuzz: %d requests, seed %d, replies %r\n" % (count, seed, served))
    reported = server.state()
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")
    server = ls.Server(ls.pool_args() + ["--media", "../media"], a)
    resumed = server.state()
    for key in ("labels_used", "item", "last", "written", "can_undo", "stopped"):
        ls.check(resumed[key] == reported[key], "resumed %s %r, reported %r" % (key, resumed[key], reported[key]))
    ls.check(server.stop() == 0, "nonzero exit after SIGTERM")


CASES = {"journal-edits": case_journal_edits, "replaced-inputs": case_replaced_inputs,
         "journal-faults": case_journal_faults, "token-file": case_token_file,
         "undo-after-write": case_undo_after_write, "stall": case_stall, "fuzz": case_fuzz}
