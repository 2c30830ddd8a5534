"""Computes the expected renders in expected.json with transformers.

Run: python render.py [DIR_OF_LOCAL_TEMPLATES]. It needs transformers and
jinja2 (no model weights). The project's own templates are read from this
folder, those of published models ("local" in models.json) from the folder
given; a model whose template is not there keeps the renders expected.json
already holds (a note says which). Each template is rendered as
apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
renders it: transformers' own Jinja environment, with tools and documents
None, and bos_token and eos_token from the model's tokenizer_config.json.
strftime_now is given the fixed clock the Go test uses (2025-03-07).

The messages follow the backend's rule: a system message (the instruction)
and a user message (the text); where the template refuses that pair (it
raises), one user message holding the instruction, a blank line and the text.
"""

import datetime
import json
import os
import sys

from transformers.utils import chat_template_utils as ctu

here = os.path.dirname(os.path.abspath(__file__))


class FixedClock(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return cls(2025, 3, 7, 12, 0, 0)


ctu.datetime = FixedClock
ctu._compile_jinja_template.cache_clear()


def render(template, messages, tokens):
    out, _ = ctu.render_jinja_template(
        conversations=[messages], chat_template=template, add_generation_prompt=True, **tokens
    )
    return out[0]


def main():
    local = sys.argv[1] if len(sys.argv) > 1 else None
    with open(os.path.join(here, "models.json")) as f:
        spec = json.load(f)
    with open(os.path.join(here, "expected.json")) as f:
        before = {m["name"]: m for m in json.load(f)["models"]}
    result = {"cases": spec["cases"], "models": []}
    for m in spec["models"]:
        path = os.path.join(local if m.get("local") else here, m["file"])
        if m.get("local") and (local is None or not os.path.exists(path)):
            print("kept the renders of", m["name"], "(no", path + ")", file=sys.stderr)
            result["models"].append(dict(m, renders=before[m["name"]]["renders"]))
            continue
        with open(path) as f:
            template = f.read()
        tokens = {k: v for k, v in (("bos_token", m.get("bos")), ("eos_token", m.get("eos"))) if v is not None}
        renders = []
        for c in spec["cases"]:
            try:
                msgs = [{"role": "system", "content": c["system"]}, {"role": "user", "content": c["user"]}]
                text = render(template, msgs, tokens)
            except Exception:
                msgs = [{"role": "user", "content": c["system"] + "\n\n" + c["user"]}]
                text = render(template, msgs, tokens)
            renders.append({"merged": len(msgs) == 1, "rendered": text})
        result["models"].append(dict(m, renders=renders))
    with open(os.path.join(here, "expected.json"), "w") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
        f.write("\n")


main()
