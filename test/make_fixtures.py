#!/usr/bin/env python3
"""Makes the native-core test fixtures with the project virtualenv's torch 2.7.1.

Usage: make_fixtures.py OUTDIR [--pages ../shared/data/pages]

Writes into OUTDIR (never into the repository):
  tiny_cnn.pt, tiny_vit.pt          scripted (trainable) TorchScript models, 11 classes
  forward_input.bin                 float32 NCHW batch [4,3,32,32]
  tiny_cnn.logits.bin, tiny_cnn.probs.bin, tiny_vit.logits.bin, tiny_vit.probs.bin
                                    Python forward results, float32 [4,11]
  avg_{a,b,c}.pt                    three tiny CNNs from different seeds
  avg2.logits.bin, avg3.logits.bin  forward of the Python average of the first 2 / 3
  mismatch.pt                       a tiny CNN of another width (averaging must refuse it)
  traced_cnn.pt                     a traced (not scripted) copy, for error paths
  bench_vit224.pt                   a ViT-Tiny-sized scripted model at 224 px (benchmarks)
  tiny_frozen.pt, tiny_headed.pt    a tiny CNN with features(x) and head(f) methods (as
                                    export_models.py --freeze-backbone exports): backbone
                                    frozen (frozen batch norms, requires_grad off) in the first,
                                    trainable in the second
  pre_{i}.u8 / pre_{i}.json / pre_{i}.expected.bin
                                    decoded pixels (PIL, RGB or L), and torchvision
                                    Resize((S,S), antialias=True) + Normalize of them
  manifest.json                     shapes and file names
Everything is deterministic (fixed seeds).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision
from PIL import Image
from torchvision import transforms

NUM_CLASSES = 11


class TinyCNN(nn.Module):
    """A small scripted CNN with batch norm and dropout (train/eval differ)."""

    def __init__(self, width: int = 8):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1),
            nn.BatchNorm2d(2 * width),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(2 * width, NUM_CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.drop(torch.flatten(self.features(x), 1)))


class TinyFeaturesHead(nn.Module):
    """A small CNN shaped like an export_models.py --freeze-backbone base:
    features(x) is the pooled backbone (frozen batch norms: no batch
    statistics, no randomness), head(f) dropout and a linear classifier,
    forward(x) = head(features(x))."""

    def __init__(self, width: int = 8):
        super().__init__()
        from torchvision.ops import FrozenBatchNorm2d
        self.backbone = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1),
            FrozenBatchNorm2d(width),
            nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, stride=2, padding=1),
            FrozenBatchNorm2d(2 * width),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.drop = nn.Dropout(0.2)
        self.classifier = nn.Linear(2 * width, NUM_CLASSES)

    @torch.jit.export
    def features(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.backbone(x), 1)

    @torch.jit.export
    def head(self, f: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.drop(f))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def features_head(frozen: bool, seed: int) -> torch.jit.ScriptModule:
    """TinyFeaturesHead with lively frozen statistics; frozen: only the
    classifier requires gradients."""
    m = TinyFeaturesHead()
    g = torch.Generator().manual_seed(seed)
    for name, b in m.named_buffers():
        if name.endswith("running_var") or name.endswith("weight"):
            b.copy_(torch.rand(b.shape, generator=g) + 0.5)
        else:
            b.copy_(torch.randn(b.shape, generator=g) * 0.1)
    s = scripted(m, seed)
    for name, p in s.named_parameters():
        p.requires_grad_(not frozen or name.startswith("classifier."))
    return s


def tiny_vit() -> nn.Module:
    return torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
        num_classes=NUM_CLASSES)


def save_bin(path, arr, dtype):
    np.ascontiguousarray(arr, dtype=dtype).tofile(path)


def scripted(model: nn.Module, seed: int) -> torch.jit.ScriptModule:
    torch.manual_seed(seed)
    for p in model.parameters():  # keep magnitudes lively so outputs are not near-uniform
        if p.dim() > 1:
            nn.init.normal_(p, std=0.2)
    model.eval()
    return torch.jit.script(model)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pages", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "pages"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    out = lambda name: os.path.join(args.out, name)
    manifest = {"torch": torch.__version__, "num_classes": NUM_CLASSES}

    g = torch.Generator().manual_seed(1234)
    x = torch.randn(4, 3, 32, 32, generator=g)
    save_bin(out("forward_input.bin"), x.numpy(), np.float32)
    manifest["forward_input"] = list(x.shape)

    torch.manual_seed(7)
    cnn = scripted(TinyCNN(), 7)
    cnn.save(out("tiny_cnn.pt"))
    vit = scripted(tiny_vit(), 8)
    vit.save(out("tiny_vit.pt"))
    with torch.inference_mode():
        for name, m in (("tiny_cnn", cnn), ("tiny_vit", vit)):
            m2 = torch.jit.load(out(name + ".pt"))
            m2.eval()
            logits = m2(x)
            save_bin(out(name + ".logits.bin"), logits.numpy(), np.float32)
            save_bin(out(name + ".probs.bin"), torch.softmax(logits, 1).numpy(), np.float32)

    # averaging fixtures
    mods = []
    for i, tag in enumerate("abc"):
        m = scripted(TinyCNN(), 100 + i)
        # distinct running stats so buffers are averaged too
        with torch.no_grad():
            for b_name, b in m.named_buffers():
                if b.is_floating_point():
                    b.add_(0.1 * (i + 1))
        m.save(out(f"avg_{tag}.pt"))
        mods.append(torch.jit.load(out(f"avg_{tag}.pt")))
    for k in (2, 3):
        avg = torch.jit.load(out("avg_a.pt"))
        sds = [dict(m.state_dict()) for m in mods[:k]]
        with torch.no_grad():
            for name, t in avg.state_dict().items():
                if t.is_floating_point():
                    t.copy_(sum(sd[name].double() for sd in sds).div(k).to(t.dtype))
        avg.eval()
        with torch.inference_mode():
            save_bin(out(f"avg{k}.logits.bin"), avg(x).numpy(), np.float32)
    scripted(TinyCNN(width=4), 5).save(out("mismatch.pt"))
    # a ViT-Tiny-sized model at 224 px for `make bench`
    bench = torchvision.models.VisionTransformer(
        image_size=224, patch_size=16, num_layers=6, num_heads=3, hidden_dim=192, mlp_dim=768,
        num_classes=NUM_CLASSES)
    scripted(bench, 9).save(out("bench_vit224.pt"))
    features_head(True, 11).save(out("tiny_frozen.pt"))
    features_head(False, 11).save(out("tiny_headed.pt"))
    torch.jit.trace(TinyCNN().eval(), x).save(out("traced_cnn.pt"))

    # preprocessing fixtures: PIL-decoded pixels of real pages plus synthetic
    # edge cases, and torchvision's tensor pipeline on exactly those pixels.
    pages = []
    for cat in ("TEXT", "PHOTO", "DRAW"):
        d = os.path.join(args.pages, cat)
        if os.path.isdir(d):
            files = sorted(f for f in os.listdir(d) if f.lower().endswith(".png"))
            if files:
                pages.append(os.path.join(d, files[0]))
    if not pages:
        sys.exit(f"no sample pages under {args.pages}")
    samples = []
    for p in pages:
        samples.append(("page:" + os.path.relpath(p, args.pages), np.asarray(Image.open(p).convert("RGB"))))
    rng = np.random.default_rng(3)
    samples.append(("grey-odd", rng.integers(0, 256, size=(97, 61), dtype=np.uint8)))
    samples.append(("upscale", rng.integers(0, 256, size=(20, 30, 3), dtype=np.uint8)))
    pre = []
    for i, (name, pix) in enumerate(samples):
        size, mean, std = (224, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]) if i % 2 == 0 else \
            (384, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
        chw = torch.from_numpy(pix.copy())
        chw = chw.unsqueeze(0) if chw.dim() == 2 else chw.permute(2, 0, 1)
        if chw.shape[0] == 1:
            chw = chw.expand(3, -1, -1)
        tf = transforms.Compose([
            transforms.Resize((size, size), antialias=True),
            transforms.ConvertImageDtype(torch.float32),
            transforms.Normalize(mean, std),
        ])
        y = tf(chw)
        save_bin(out(f"pre_{i}.u8"), pix, np.uint8)
        save_bin(out(f"pre_{i}.expected.bin"), y.numpy(), np.float32)
        c = 1 if pix.ndim == 2 else 3
        pre.append({"name": name, "h": int(pix.shape[0]), "w": int(pix.shape[1]), "c": c,
                    "size": size, "mean": mean, "std": std})
    manifest["preprocess"] = pre
    with open(out("manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"fixtures written to {args.out}")


if __name__ == "__main__":
    main()
