# N concurrent streaming clients against a running `dragoman-cli serve` (tests/bench/serve.sh starts it): each
# sends six source sentences of CORPUS (TSV, source first) as one chat request; prints the aggregate tokens/s and
# the clients' time to first token.  python3 serve_load.py PORT CLIENTS MODEL CORPUS
import json, sys, threading, time, http.client
port = int(sys.argv[1]); clients = int(sys.argv[2]); model = sys.argv[3]; corpus = sys.argv[4]
lines = [l.split('\t')[0] for l in open(corpus, encoding='utf-8')][:8*6]
results = []
def run(i):
    text = ' '.join(lines[i*6:(i+1)*6])
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": text}], "stream": True,
                       "stream_options": {"include_usage": True}, "source_lang": "en", "target_lang": "de"})
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=300)
    t0 = time.time(); c.request('POST', '/v1/chat/completions', body, {'Content-Type': 'application/json'})
    r = c.getresponse(); first = None; tokens = 0
    for raw in r:
        line = raw.decode().strip()
        if not line.startswith('data: ') or line == 'data: [DONE]': continue
        chunk = json.loads(line[6:])
        if chunk.get('usage'): tokens = chunk['usage']['completion_tokens']
        for ch in chunk['choices']:
            if ch['delta'].get('content') and first is None: first = time.time() - t0
    results.append((first, time.time() - t0, tokens))
threads = [threading.Thread(target=run, args=(i % 8,)) for i in range(clients)]
t0 = time.time(); [t.start() for t in threads]; [t.join() for t in threads]; wall = time.time() - t0
tok = sum(r[2] for r in results)
print(f"{clients} clients: {tok} tokens in {wall:.2f} s = {tok/wall:.1f} tokens/s aggregate; first token median {sorted(r[0] for r in results)[len(results)//2]:.3f} s, worst {max(r[0] for r in results):.3f} s")
