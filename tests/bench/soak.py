"""Soak of a running `dragoman-cli serve` (tests/bench/soak.sh starts it): CLIENTS threads for SECONDS, each
looping over a random mix of what real clients do: streamed and whole chat requests, LibreTranslate requests,
streams cancelled after the first token, connections dropped before the answer, and malformed requests (bad
JSON, wrong field types, unknown routes, garbage HTTP, a body shorter than its Content-Length). Every answer is
compared with the CLI's translation of the same sentence (REFERENCE: JSON {source: translation}): a different
or mixed-up answer is a failure, as is any 5xx, timeout, or a malformed request not answered with a 4xx.

python3 soak.py PORT MODEL REFERENCE SECONDS CLIENTS SERVER_PID   -> prints JSON, exits 1 on any failure."""
import collections, http.client, json, random, socket, sys, threading, time

port, model, reference_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
seconds, clients, server_pid = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
reference = json.load(open(reference_file, encoding="utf-8"))
sources = sorted(reference)
lock = threading.Lock()
counts = collections.Counter()
failures = []
ttft = []


def rss_bytes(field="RssAnon"):
    """Resident anonymous memory (the heap: what a leak grows). VmRSS also counts the mapped model and the
    libraries' code, which page in as new code paths run and are not leaks."""
    with open(f"/proc/{server_pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def count(kind):
    with lock:
        counts[kind] += 1


def fail(kind, detail):
    with lock:
        counts["failure:" + kind] += 1
        if len(failures) < 50:
            failures.append(f"{kind}: {detail}")


def chat_body(source, stream):
    return json.dumps({"model": model, "messages": [{"role": "user", "content": source}], "stream": stream,
                       "temperature": 0, "source_lang": "en", "target_lang": "de"})


def connection():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)


def streamed(cancel_after_first):
    source = random.choice(sources)
    c = connection()
    start = time.time()
    c.request("POST", "/v1/chat/completions", chat_body(source, True), {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        return fail("stream status", f"{r.status} {r.read()[:200]!r}")
    text, first, done = "", None, False
    for raw in r:
        line = raw.decode("utf-8").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            done = True
            break
        chunk = json.loads(data)
        for choice in chunk.get("choices", []):
            piece = choice.get("delta", {}).get("content")
            if piece:
                if first is None:
                    first = time.time() - start
                    if cancel_after_first:
                        c.close()  # the client goes away mid-stream
                        count("cancelled mid-stream")
                        return
                text += piece
    c.close()
    if not done:
        return fail("stream ended early", source)
    if text != reference[source]:
        return fail("different answer", f"{source!r}: {text!r} != {reference[source]!r}")
    with lock:
        ttft.append(first if first is not None else time.time() - start)
    count("streamed")


def whole():
    source = random.choice(sources)
    c = connection()
    c.request("POST", "/v1/chat/completions", chat_body(source, False), {"Content-Type": "application/json"})
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200:
        return fail("whole status", f"{r.status} {body[:200]!r}")
    text = json.loads(body)["choices"][0]["message"]["content"]
    if text != reference[source]:
        return fail("different answer", f"{source!r}: {text!r}")
    count("whole")


def libre():
    picked = random.sample(sources, 2)
    c = connection()
    c.request("POST", "/translate", json.dumps({"q": picked, "source": "en", "target": "de"}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200:
        return fail("libre status", f"{r.status} {body[:200]!r}")
    if json.loads(body)["translatedText"] != [reference[s] for s in picked]:
        return fail("different answer", f"libre {picked!r}: {body[:300]!r}")
    count("libretranslate")


def dropped():
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    body = chat_body(random.choice(sources), True).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    s.close()  # before any answer
    count("dropped before the answer")


MALFORMED_JSON = [
    ("/v1/chat/completions", b"{not json"),
    ("/v1/chat/completions", b'{"model": 3, "messages": "hello"}'),
    ("/v1/chat/completions", b'{"messages": [{"role": "user"}]}'),
    ("/v1/chat/completions", b'{"model": "x", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": -1}'),
    ("/v1/chat/completions", b"\xff\xfe\x00garbage"),
    ("/translate", b'{"q": 5, "target": "de"}'),
    ("/translate", b'{"q": "Hello"}'),
    ("/no/such/route", b"{}"),
]


def malformed():
    kind = random.randrange(3)
    if kind == 0:
        route, body = random.choice(MALFORMED_JSON)
        c = connection()
        c.request("POST", route, body, {"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        c.close()
        if not 400 <= r.status < 500:
            return fail("malformed not 4xx", f"{route} {body[:40]!r} -> {r.status}")
        count(f"malformed answered {r.status}")
        return
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    if kind == 1:
        s.sendall(b"\x16\x03\x01 not HTTP at all\r\n\r\n")
    else:  # says 1000 bytes, sends 10, goes away
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"model\":")
    try:
        s.settimeout(5)
        answer = s.recv(100)
    except OSError:
        answer = b""
    s.close()
    if answer and not (answer.startswith(b"HTTP/1.1 4") or answer.startswith(b"HTTP/1.0 4")):
        return fail("garbage not 4xx", repr(answer[:60]))
    count("garbage HTTP refused")


ACTIONS = [(streamed, 40, (False,)), (streamed, 10, (True,)), (whole, 15, ()), (libre, 10, ()), (dropped, 10, ()),
           (malformed, 15, ())]


def client(deadline, seed):
    rng_actions = [a for a in ACTIONS for _ in range(a[1])]
    random.seed(seed)
    while time.time() < deadline:
        action, _, args = random.choice(rng_actions)
        try:
            action(*args)
        except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
            fail("client exception", f"{action.__name__}: {type(e).__name__}: {e}")


warmup = min(60.0, seconds / 5)
start = time.time()
threads = [threading.Thread(target=client, args=(start + seconds, i)) for i in range(clients)]
for t in threads:
    t.start()
# RSS every tenth of the run, so a plateau (allocator caches filling) is told from a steady leak.
samples = []
while any(t.is_alive() for t in threads):
    samples.append((round(time.time() - start), rss_bytes(), rss_bytes("VmRSS")))
    time.sleep(min(seconds / 10, 60))
for t in threads:
    t.join()
rss_after_warmup = next((r for t, r, _ in samples if t >= warmup), samples[-1][1])
rss_end = rss_bytes()
served = sum(v for k, v in counts.items() if not k.startswith("failure:"))
ttft.sort()
report = {
    "seconds": round(time.time() - start, 1), "clients": clients, "requests": served + sum(
        v for k, v in counts.items() if k.startswith("failure:")),
    "by_kind": dict(sorted(counts.items())),
    "ttft_p50_s": round(ttft[len(ttft) // 2], 3) if ttft else None,
    "ttft_p99_s": round(ttft[min(len(ttft) - 1, int(len(ttft) * 0.99))], 3) if ttft else None,
    "rss_anon_after_warmup_bytes": rss_after_warmup, "rss_anon_end_bytes": rss_end,
    "rss_growth": round(rss_end / rss_after_warmup - 1, 4) if rss_after_warmup else None,
    "rss_anon_mb_by_second": {t: round(r / 2**20, 1) for t, r, _ in samples},
    "vm_rss_mb_by_second": {t: round(v / 2**20, 1) for t, _, v in samples},
    "failures": failures,
}
print(json.dumps(report, indent=1))
ok = not failures and report["rss_growth"] is not None and report["rss_growth"] <= 0.05 and ttft
sys.exit(0 if ok else 1)
