# test/gpu/job.py BASE PAGES_DIR N: sends N page images of PAGES_DIR (in
# turn) to BASE/jobs as one job, waits for it to end and prints "N pages in
# one job, K items at once: X pages/s, failed F" (K from the service's
# log line items_at_once, given as ITEMS; X from submit to end).
import glob, json, os, sys, time, urllib.request, uuid

base, pages, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
items = os.environ.get("ITEMS", "?")
files = sorted(glob.glob(os.path.join(pages, "*.png")))[:40]
b = uuid.uuid4().hex
body = b""
for i in range(n):
    f = files[i % len(files)]
    body += (f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{i:04d}-{os.path.basename(f)}\"\r\n"
             f"Content-Type: image/png\r\n\r\n").encode() + open(f, "rb").read() + b"\r\n"
body += f"--{b}--\r\n".encode()
t0 = time.time()
req = urllib.request.Request(base + "/jobs", body, {"Content-Type": f"multipart/form-data; boundary={b}"})
st = json.load(urllib.request.urlopen(req, timeout=120))
while st["state"] not in ("succeeded", "failed", "canceled"):
    time.sleep(0.05)
    st = json.load(urllib.request.urlopen(base + "/jobs/" + st["id"], timeout=120))
dt = time.time() - t0
print(f"{n} pages in one job, {items} items at once: {n / dt:.1f} pages/s, failed {st['items']['failed']}")
