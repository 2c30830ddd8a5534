#!/usr/bin/env python3
"""Generate parity vectors for internal/translate/difflib and internal/translate/alto from Python's stdlib.

Writes:
  internal/translate/difflib/testdata/ratio_vectors.json  SequenceMatcher(None, a, b).ratio()
      over strings (code points) and over token lists, including sequences of
      200+ elements where the autojunk heuristic changes the result.
  internal/translate/alto/testdata/python_split.json  str.split() / str.isspace() behaviour
      and round() (half to even) of proportional shares, for the ALTO aligner.

Usage: python3 test/gen_difflib_vectors.py   (from the repository root)
Standard library only; the output is deterministic (fixed random seed).
"""
import difflib
import json
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ratio(a, b):
    return difflib.SequenceMatcher(None, a, b).ratio()


def string_cases(rng):
    fixed = [
        ("", ""), ("a", ""), ("", "a"), ("abc", "abc"), ("abcd", "bcde"),
        ("private Thread currentThread;", "private volatile Thread currentThread;"),
        ("rescue archaeological research", "rescue archaeological survey"),
        ("Municipality of Crow", "Municipality of"),
        ("Záchranný archeologický výzkum", "Zachranny archeologicky vyzkum"),
        ("žluťoučký kůň 𝄞 úpěl", "zlutoucky kun 𝄞 upel"),
        ("The submitted work was created by the creative", "The submitted work was created"),
        ("a" * 250, "a" * 250),
        ("ab" * 150, "ba" * 150),
        ("x" * 10 + "a" * 300, "a" * 300 + "x" * 10),
    ]
    alphabet = "aábcčdeéěfghiíjklmnňoópqrřsštťuúůvwxyýzž ,.-"
    for n in (5, 20, 60, 150, 199, 200, 201, 260, 420):
        for _ in range(4):
            k = rng.choice((2, 4, len(alphabet)))
            al = alphabet[:k] + " "
            a = "".join(rng.choice(al) for _ in range(n))
            b = list(a)
            for _ in range(rng.randint(0, n // 3 + 1)):
                op = rng.random()
                pos = rng.randrange(len(b) + 1)
                if op < 0.4 and b:
                    del b[min(pos, len(b) - 1)]
                elif op < 0.8:
                    b.insert(pos, rng.choice(al))
                elif b:
                    b[min(pos, len(b) - 1)] = rng.choice(al)
            fixed.append((a, "".join(b)))
    return fixed


def token_cases(rng):
    words = ["the", "of", "a", "site", "pit", "finds", "layer", "wall", "pottery", "Crow", "37", ","]
    out = [([], []), (["a"], []), (["the", "pit"], ["the", "pit"]),
           (["the", "the", "the"], ["the"])]
    for n in (3, 10, 50, 199, 200, 230, 400):
        for _ in range(3):
            a = [rng.choice(words) for _ in range(n)]
            b = [w for w in a if rng.random() > 0.2]
            b += [rng.choice(words) for _ in range(rng.randint(0, 5))]
            rng.shuffle(b) if rng.random() < 0.3 else None
            out.append((a, b))
    return out


def split_cases():
    spaces = [c for c in range(0x110000) if chr(c).isspace()]
    samples = [
        "a b", "  lead and trail  ", "a\tb\nc\rd\x0be\x0cf",
        "a\x1cb\x1dc\x1ed\x1ff", "a\x85b", "a\xa0b", "a\u2003b\u3000c", "a\u200bb",
        "a\u2028b\u2029c", "a\u202fb\u205fc", "a\u180eb", "", "   ",
        "Pueblo - archeologická společnost, o. p. s.",
    ]
    return spaces, [{"text": s, "fields": s.split()} for s in samples]


def round_cases(rng):
    """round(n * w / total) with n tokens and a line's w of total source words."""
    out = []
    triples = [(5, 1, 2), (3, 1, 2), (7, 1, 2), (1, 1, 2), (9, 3, 6), (10, 1, 4), (6, 1, 4), (2, 3, 4)]
    for _ in range(60):
        total = rng.randint(1, 40)
        triples.append((rng.randint(0, 60), rng.randint(0, total), total))
    for n, w, total in triples:
        out.append({"n": n, "w": w, "total": total, "round": round(n * w / total)})
    return out


def main():
    rng = random.Random(20240611)
    strings = [{"a": a, "b": b, "ratio": ratio(a, b), "ratio_rev": ratio(b, a)} for a, b in string_cases(rng)]
    tokens = [{"a": a, "b": b, "ratio": ratio(a, b), "ratio_rev": ratio(b, a)} for a, b in token_cases(rng)]
    dl = os.path.join(ROOT, "pkg", "difflib", "testdata")
    os.makedirs(dl, exist_ok=True)
    with open(os.path.join(dl, "ratio_vectors.json"), "w", encoding="utf-8") as f:
        json.dump({"python": sys.version.split()[0], "strings": strings, "tokens": tokens},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    spaces, splits = split_cases()
    al = os.path.join(ROOT, "pkg", "alto", "testdata")
    os.makedirs(al, exist_ok=True)
    with open(os.path.join(al, "python_split.json"), "w", encoding="utf-8") as f:
        json.dump({"python": sys.version.split()[0], "isspace": spaces, "split": splits,
                   "round": round_cases(rng)}, f, ensure_ascii=False, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
