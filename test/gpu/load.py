# test/gpu/load.py URL PAGES_DIR CONCURRENCY N: posts N page images of
# PAGES_DIR (in turn) to URL (/predict_image, multipart field "file") from
# CONCURRENCY threads at once and prints "N requests, C at once: X pages/s,
# p50 Y ms, failed F".
import glob, http.client, os, sys, threading, time, urllib.parse, uuid

url, pages, conc, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
u = urllib.parse.urlsplit(url)
files = sorted(glob.glob(os.path.join(pages, "*.png")))
bodies = []
for f in files[:40]:
    b = uuid.uuid4().hex
    data = open(f, "rb").read()
    body = (f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{os.path.basename(f)}\"\r\n"
            f"Content-Type: image/png\r\n\r\n").encode() + data + f"\r\n--{b}--\r\n".encode()
    bodies.append((b, body))
lock = threading.Lock()
state = {"next": 0, "failed": 0, "lat": []}


def worker():
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
    while True:
        with lock:
            i = state["next"]
            if i >= n:
                return
            state["next"] += 1
        b, body = bodies[i % len(bodies)]
        t = time.time()
        try:
            c.request("POST", u.path, body, {"Content-Type": f"multipart/form-data; boundary={b}"})
            r = c.getresponse()
            r.read()
            ok = r.status == 200
        except Exception:
            ok = False
            c = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        with lock:
            state["lat"].append(time.time() - t)
            state["failed"] += not ok


t0 = time.time()
ts = [threading.Thread(target=worker) for _ in range(conc)]
for t in ts:
    t.start()
for t in ts:
    t.join()
dt = time.time() - t0
lat = sorted(state["lat"])
print(f"{n} requests, {conc} at once: {n / dt:.1f} pages/s, p50 {1000 * lat[len(lat) // 2]:.0f} ms, failed {state['failed']}")
