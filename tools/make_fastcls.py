#!/usr/bin/env python3
"""Make the base of pageclass's fast classifier: a small, fast, trainable
page classifier of this project's own design ("fastcls-small"), random-
initialised, scripted to TorchScript, in a model folder pageclass reads
(model.pt + model.json, internal/pageclass/modelmeta format).

  make_fastcls.py --out DIR [--dropout P] [--imgsz N] [--width W] [--seed S] [--task rotation]

With --task rotation the same network has four outputs, the labels
ROT_0, ROT_90, ROT_180, ROT_270 (the page as scanned is upright, or turned
clockwise by that much), and model.json says "task": "rotation": the
base of the page-orientation model, trained by pageclass --train --fastcls on
rotated copies of the pages it is given (README, "Page conditions").

Architecture (written here, no third-party model code): a 3x3 stride-2 stem,
four stages of depthwise-separable blocks (depthwise 3x3, batch norm, SiLU,
pointwise 1x1, batch norm, SiLU), each stage halving the resolution and
doubling the channels (W, 2W, 4W, 8W) with one residual block after its
stride-2 block, global average pooling, dropout P, and a linear layer to the
11 categories. Global pooling makes it independent of the input size, so
pageclass trains and runs it at [FASTCLS] fastcls_imgsz; the dropout rate is
built into model.pt and recorded in model.json ("dropout"), and pageclass
refuses to train it at another [FASTCLS] fastcls_dropout.

Then train it with pageclass --train --fastcls --fastcls_base DIR (see the
README, "Fast classifier").
"""
import argparse
import datetime
import json
import os
import shlex
import sys

import torch
from torch import nn

ROTATION_LABELS = ["ROT_0", "ROT_90", "ROT_180", "ROT_270"]
CATEGORIES = ["DRAW", "DRAW_L", "LINE_HW", "LINE_P", "LINE_T", "PHOTO", "PHOTO_L", "TEXT", "TEXT_HW", "TEXT_P", "TEXT_T"]
BASE = "fastcls-small"
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def conv_bn(cin: int, cout: int, k: int, stride: int, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.SiLU(inplace=True))


class Separable(nn.Module):
    """Depthwise 3x3 then pointwise 1x1; residual when shapes allow."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.dw = conv_bn(cin, cin, 3, stride, groups=cin)
        self.pw = conv_bn(cin, cout, 1, 1)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pw(self.dw(x))
        if self.residual:
            y = y + x
        return y


class FastCls(nn.Module):
    def __init__(self, width: int = 32, dropout: float = 0.1, classes: int = len(CATEGORIES)):
        super().__init__()
        chans = [width, 2 * width, 4 * width, 8 * width]
        layers = [conv_bn(3, width, 3, 2)]
        cin = width
        for c in chans:
            layers += [Separable(cin, c, 2), Separable(c, c, 1)]
            cin = c
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x)).flatten(1)
        return self.classifier(self.dropout(x))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--out", required=True, help="model folder to write")
    ap.add_argument("--dropout", type=float, default=0.1, help="dropout before the classifier (default 0.1)")
    ap.add_argument("--imgsz", type=int, default=224, help="input size recorded in model.json (default 224)")
    ap.add_argument("--width", type=int, default=32, help="channels of the first stage (default 32)")
    ap.add_argument("--seed", type=int, default=420, help="random-init seed (default 420)")
    ap.add_argument("--task", choices=["classify", "rotation"], default="classify",
                    help="classify: the 11 page categories (default); rotation: page orientation, 4 labels")
    argv = sys.argv[1:] if argv is None else list(argv)
    a = ap.parse_args(argv)
    if not 0 <= a.dropout < 1:
        ap.error(f"--dropout {a.dropout}: want 0 <= P < 1")
    torch.manual_seed(a.seed)
    labels = ROTATION_LABELS if a.task == "rotation" else CATEGORIES
    model = FastCls(a.width, a.dropout, len(labels)).eval()
    scripted = torch.jit.script(model)
    x = torch.rand(2, 3, a.imgsz, a.imgsz)
    with torch.no_grad():
        diff = (scripted(x) - model(x)).abs().max().item()
    if diff > 1e-5:
        print(f"scripted module differs from the eager one by {diff:.3g}; nothing written", file=sys.stderr)
        return 1
    # one training step: every parameter gets a gradient
    scripted.train()
    scripted(torch.rand(4, 3, 64, 64)).sum().backward()
    missing = [n for n, p in scripted.named_parameters() if p.grad is None]
    if missing:
        print(f"parameters without a gradient: {missing[:5]}", file=sys.stderr)
        return 1
    scripted.zero_grad()
    scripted.eval()
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, ".model.pt.tmp")
    scripted.save(tmp)
    os.replace(tmp, os.path.join(a.out, "model.pt"))
    params = sum(p.numel() for p in model.parameters())
    meta = {
        "format_version": 1,
        "labels": labels,
        "preprocess": {"size": a.imgsz, "resize": "bilinear", "mean": MEAN, "std": STD},
        "base_architecture": BASE,
        "license": "MIT",
        "trainable": True,
        "dropout": a.dropout,
        **({"task": "rotation"} if a.task == "rotation" else {}),
        "provenance": {
            "method": "random-init",
            "command": shlex.join(["tools/make_fastcls.py"] + argv),
            "source": f"{BASE} width {a.width}, seed {a.seed}",
            "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "notes": f"{params} parameters; scripted vs eager max |logit diff| {diff:.3g}",
        },
    }
    tmp = os.path.join(a.out, ".model.json.tmp")
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(a.out, "model.json"))
    print(f"{BASE}: {params} parameters, dropout {a.dropout}, input {a.imgsz} -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
