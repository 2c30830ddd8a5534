#!/usr/bin/env python3
"""The training recipe of internal/pageclass/train, in Python torch, as a reference.

Usage: train_reference.py --model DIR --pages PAGES --datasets FILE
                          [--epochs N] [--batch N] [--lr X] [--seed N]

Reads the split a Go run used ({stamp}_{rev}_FOLD_{n}_DATASETS.txt), then
fine-tunes DIR/model.pt with the same recipe as internal/pageclass/train without
augmentation: PIL decode to RGB, torchvision Resize((S,S), antialias=True) on
the uint8 tensor, /255, Normalize(mean, std) from DIR/model.json; AdamW
(weight decay 0.01) at the peak rate with 10% linear warm-up then linear
decay to zero; softmax cross-entropy; batches in a seeded random order;
after each epoch the dev accuracy, keeping the best state; finally Top-1 and
Top-3 accuracy of the best state on the test split. Prints one JSON line.
"""
import argparse
import copy
import json
import math
import os

import numpy as np
import torch
from PIL import Image
from torchvision import transforms

CATEGORIES = ["DRAW", "DRAW_L", "LINE_HW", "LINE_P", "LINE_T", "PHOTO", "PHOTO_L", "TEXT", "TEXT_HW",
              "TEXT_P", "TEXT_T"]


def read_split(path):
    parts, cur = {"train": [], "dev": [], "test": []}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                name = line[1:line.index("]")]
                cur = name if name in parts else None
                continue
            if cur:
                parts[cur].append(line)
    return parts


def lr_at(peak, s, total):
    warm = max(1, int(round(0.1 * total)))
    if s < warm:
        return peak * (s + 1) / warm
    if total <= warm:
        return peak
    return peak * (total - s) / (total - warm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--pages", required=True)
    ap.add_argument("--datasets", required=True)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--seed", type=int, default=420)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    meta = json.load(open(os.path.join(a.model, "model.json")))
    pp = meta["preprocess"]
    tf = transforms.Compose([
        transforms.Resize((pp["size"], pp["size"]), antialias=True),
        transforms.ConvertImageDtype(torch.float32),
        transforms.Normalize(pp["mean"], pp["std"]),
    ])

    def load(paths):
        xs, ys = [], []
        for p in paths:
            img = np.asarray(Image.open(os.path.join(a.pages, p)).convert("RGB"))
            xs.append(tf(torch.from_numpy(img.copy()).permute(2, 0, 1)))
            ys.append(CATEGORIES.index(p.split("/")[0]))
        return torch.stack(xs), torch.tensor(ys)

    split = read_split(a.datasets)
    xtr, ytr = load(split["train"])
    xdev, ydev = load(split["dev"])
    xte, yte = load(split["test"])
    torch.manual_seed(a.seed)
    m = torch.jit.load(os.path.join(a.model, "model.pt"))
    opt = torch.optim.AdamW(m.parameters(), lr=a.lr, weight_decay=0.01)
    per_epoch = math.ceil(len(ytr) / a.batch)
    total = per_epoch * a.epochs
    gen = torch.Generator().manual_seed(a.seed)

    def evaluate(x, y, k=3):
        m.eval()
        with torch.no_grad():
            p = torch.cat([torch.softmax(m(x[i:i + a.batch]), 1) for i in range(0, len(y), a.batch)])
        top = p.topk(k, 1).indices
        return (top[:, 0] == y).float().mean().item(), (top == y[:, None]).any(1).float().mean().item()

    step, best, best_state = 0, -1.0, None
    for _ in range(a.epochs):
        m.train()
        order = torch.randperm(len(ytr), generator=gen)
        for b0 in range(0, len(order), a.batch):
            idx = order[b0:b0 + a.batch]
            for g in opt.param_groups:
                g["lr"] = lr_at(a.lr, step, total)
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(m(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            step += 1
        acc, _ = evaluate(xdev, ydev) if len(ydev) else (0.0, 0.0)
        if acc > best:
            best, best_state = acc, copy.deepcopy(m.state_dict())
    m.load_state_dict(best_state)
    top1, top3 = evaluate(xte, yte)
    print(json.dumps({"dev": best, "test_top1": top1, "test_top3": top3, "test_pages": len(yte)}))


if __name__ == "__main__":
    main()
