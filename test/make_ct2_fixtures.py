#!/usr/bin/env python3
"""Makes tiny CTranslate2 models and reference outputs for bindings/ct2.

Usage: make_ct2_fixtures.py OUTDIR

Builds, offline and deterministically:
  translator/  a random-initialised Marian-architecture model (1+1 layers,
               d_model 32) with its own SentencePiece model, converted by the
               ctranslate2 converter (4.8.4, the version ct2rs 0.10.3 bundles);
               the end token's output bias is raised so that some inputs end
               before the length limit and others run into it
  generator/   a random-initialised GPT-2-architecture model with a byte-level
               BPE tokenizer.json and a ChatML chat template (special tokens
               <|im_start|> and <|im_end|>) in tokenizer_config.json,
               converted the same way
  nllb/        a random-initialised M2M100-architecture model coded as NLLB:
               a Unigram tokenizer.json with the FLORES-200 language codes
               as special tokens, saved by NllbTokenizerFast (its
               post-processor starts every source with eng_Latn)
  madlad/      a random-initialised T5 model with a Unigram tokenizer.json in
               which <2en>, <2cs> and <2de> are whole tokens (the MADLAD-400
               convention; <2fr> is deliberately not one)
  reference.json
               the Python `ctranslate2` package's greedy outputs (tokens,
               detokenised text and scores) on fixed inputs, tokenised the way
               the Rust bridge tokenises (SentencePiece pieces + "</s>";
               tokenizer.json with special tokens)
"""
import json
import os
import shutil
import sys
import tempfile

import ctranslate2
import sentencepiece as spm
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (GPT2Config, GPT2LMHeadModel, M2M100Config, M2M100ForConditionalGeneration,
                          MarianConfig, MarianMTModel, MarianTokenizer, NllbTokenizerFast,
                          PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration, T5TokenizerFast)

CORPUS = """Archeologický výzkum proběhl na jižním okraji obce v roce 1994.
Nálezy keramiky dokládají osídlení v mladší době bronzové.
Sonda odkryla zahloubený objekt s pozůstatky ohniště.
The excavation took place at the southern edge of the village in 1994.
Pottery finds document a settlement in the Late Bronze Age.
The trench uncovered a sunken feature with the remains of a hearth.
Die Ausgrabung fand am südlichen Rand des Dorfes statt.
Wykopaliska odbyły się na południowym skraju wsi.
""" * 20

INPUTS = [
    "Archeologický výzkum proběhl v roce 1994.",
    "Nálezy keramiky dokládají osídlení.",
    "The trench uncovered a hearth.",
]
PROMPTS = ["The excavation", "Pottery finds", "Nálezy"]
# Raised output bias of the Marian model's end token: with it the inputs
# above end after a few tokens or run into the length limit (both cases are
# tested); without it the random model never ends.
EOS_BIAS = 4.5
LONG_MAX_LENGTH = 400
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
          " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
CHAT = [[{"role": "system", "content": "You translate archival records."},
         {"role": "user", "content": "Nálezy keramiky"}],
        [{"role": "user", "content": "The trench"}]]


def make_translator(work, out):
    corpus = os.path.join(work, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write(CORPUS)
    prefix = os.path.join(work, "sp")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, vocab_size=120, model_type="unigram",
        character_coverage=1.0, pad_id=-1, unk_id=0, bos_id=-1, eos_id=1,
        num_threads=1, minloglevel=2, seed_sentencepiece_size=10000)
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    hf = os.path.join(work, "marian")
    os.makedirs(hf)
    shutil.copy(prefix + ".model", os.path.join(hf, "source.spm"))
    shutil.copy(prefix + ".model", os.path.join(hf, "target.spm"))
    # Marian vocabularies end with <pad>, which the converter drops again.
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    vocab["<pad>"] = len(vocab)
    with open(os.path.join(hf, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    tok = MarianTokenizer(os.path.join(hf, "source.spm"), os.path.join(hf, "target.spm"),
                          os.path.join(hf, "vocab.json"), source_lang="cs", target_lang="en")
    tok.save_pretrained(hf)
    cfg = MarianConfig(
        vocab_size=len(vocab), d_model=32, encoder_layers=1, decoder_layers=1,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, max_position_embeddings=512, pad_token_id=vocab["<pad>"], eos_token_id=1,
        decoder_start_token_id=vocab["<pad>"], forced_eos_token_id=1, init_std=0.5,
        share_encoder_decoder_embeddings=True, scale_embedding=True)
    torch.manual_seed(11)
    model = MarianMTModel(cfg).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 1] = EOS_BIAS
    model.save_pretrained(hf)
    ctranslate2.converters.TransformersConverter(hf).convert(out, force=True)
    for name in ("source.spm", "target.spm"):
        shutil.copy(os.path.join(hf, name), os.path.join(out, name))

    tr = ctranslate2.Translator(out, device="cpu", compute_type="float32", intra_threads=1)
    batch = [sp.encode(s, out_type=str) + ["</s>"] for s in INPUTS]
    res = tr.translate_batch(batch, beam_size=1, max_decoding_length=16, return_scores=True)
    refs = []
    for src, r in zip(INPUTS, res):
        toks = r.hypotheses[0]
        refs.append({"source": src, "tokens": toks, "text": sp.decode_pieces(toks), "score": r.scores[0]})
    # a forced target prefix, as NLLB-style models use for the language token
    pre = [[sp.encode("The", out_type=str)[0]]] * len(batch)
    res = tr.translate_batch(batch, target_prefix=pre, beam_size=1, max_decoding_length=16, return_scores=True)
    prefixed = []
    for src, p, r in zip(INPUTS, pre, res):
        toks = r.hypotheses[0]
        prefixed.append({"source": src, "prefix": " ".join(p), "tokens": toks,
                         "text": sp.decode_pieces(toks), "score": r.scores[0]})
    return refs, prefixed


def make_generator(work, out):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS.splitlines(), trainer)
    hf = os.path.join(work, "gpt2")
    os.makedirs(hf)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", unk_token="<|endoftext|>",
                                   additional_special_tokens=["<|im_start|>", "<|im_end|>"])
    fast.chat_template = CHATML
    fast.save_pretrained(hf)
    eos = tok.token_to_id("<|endoftext|>")
    cfg = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=512, n_embd=32, n_layer=1, n_head=2,
                     bos_token_id=eos, eos_token_id=eos, initializer_range=0.5)
    torch.manual_seed(12)
    GPT2LMHeadModel(cfg).eval().save_pretrained(hf)
    ctranslate2.converters.TransformersConverter(hf).convert(out, force=True)
    # transformers 4.57 writes the template to chat_template.jinja
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(os.path.join(hf, name), os.path.join(out, name))

    gen = ctranslate2.Generator(out, device="cpu", compute_type="float32", intra_threads=1)
    batch = [tok.encode(p).tokens for p in PROMPTS]
    res = gen.generate_batch(batch, beam_size=1, sampling_topk=1, max_length=12,
                             include_prompt_in_result=False, return_scores=True)
    refs = []
    for p, r in zip(PROMPTS, res):
        toks = r.sequences[0]
        refs.append({"prompt": p, "tokens": toks, "text": tok.decoder.decode(toks), "score": r.scores[0]})
    # long enough for the model's end token to come before the limit
    res = gen.generate_batch(batch, beam_size=1, sampling_topk=1, max_length=LONG_MAX_LENGTH,
                             include_prompt_in_result=False, return_scores=True)
    long = [{"prompt": p, "tokens": r.sequences[0], "text": tok.decoder.decode(r.sequences[0]), "score": r.scores[0]}
            for p, r in zip(PROMPTS, res)]
    # the chat template rendered by transformers, decoding ended by the
    # template's end token or the model's
    chat = []
    for msgs in CHAT:
        text = fast.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        toks = tok.encode(text).tokens
        for ends in (["<|im_end|>", "<|endoftext|>"], ["<|im_end|>"]):
            r = gen.generate_batch([toks], beam_size=1, sampling_topk=1, max_length=LONG_MAX_LENGTH, end_token=ends,
                                   include_prompt_in_result=False, return_scores=True)[0]
            chat.append({"messages": msgs, "rendered": text, "end_tokens": ends, "tokens": r.sequences[0],
                         "text": tok.decoder.decode(r.sequences[0]), "score": r.scores[0]})
    return refs, long, chat


def unigram(special):
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=150, special_tokens=special, unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(CORPUS.splitlines(), trainer)
    return tok


def translate_refs(out, fast, sources, prefixes, max_len):
    """Python ctranslate2 fed the Hugging Face tokenizer's tokens."""
    dec = Tokenizer.from_file(os.path.join(out, "tokenizer.json")).decoder
    tr = ctranslate2.Translator(out, device="cpu", compute_type="float32", intra_threads=1)
    batch = [fast.convert_ids_to_tokens(fast(s)["input_ids"]) for s in sources]
    res = tr.translate_batch(batch, target_prefix=prefixes, beam_size=1, max_decoding_length=max_len,
                             return_scores=True)
    refs = []
    for src, toks, p, r in zip(sources, batch, prefixes or [[]] * len(batch), res):
        hyp = r.hypotheses[0]
        refs.append({"source": src, "source_tokens": toks, "prefix": p, "tokens": hyp,
                     "text": dec.decode(hyp[len(p):]), "score": r.scores[0]})
    return refs


NLLB_PAIRS = [("ces_Latn", "eng_Latn", "Nálezy keramiky dokládají osídlení."),
              ("deu_Latn", "eng_Latn", "Die Ausgrabung fand am südlichen Rand des Dorfes statt."),
              ("eng_Latn", "ces_Latn", "The trench uncovered a hearth.")]


def make_nllb(work, out):
    hf = os.path.join(work, "nllb")
    fast = NllbTokenizerFast(tokenizer_object=unigram(["<s>", "<pad>", "</s>", "<unk>"]), src_lang="eng_Latn",
                             bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
                             unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    fast.save_pretrained(hf)
    cfg = M2M100Config(vocab_size=len(fast), d_model=32, encoder_layers=1, decoder_layers=1,
                       encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                       decoder_ffn_dim=64, max_position_embeddings=512, pad_token_id=1, bos_token_id=0,
                       eos_token_id=2, decoder_start_token_id=2, init_std=0.5, scale_embedding=True)
    torch.manual_seed(13)
    M2M100ForConditionalGeneration(cfg).eval().save_pretrained(hf)
    ctranslate2.converters.TransformersConverter(hf).convert(out, force=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(hf, name), os.path.join(out, name))
    refs = []
    for src_lang, tgt_lang, text in NLLB_PAIRS:
        fast.src_lang = src_lang  # what NLLB's tokenizer does per request
        refs += translate_refs(out, fast, [text], [[tgt_lang]], 16)
        refs[-1].update(src_lang=src_lang, tgt_lang=tgt_lang)
    return refs


MADLAD_SOURCES = ["<2en> Nálezy keramiky dokládají osídlení.", "<2cs> The trench uncovered a hearth.",
                  "<2de> Pottery finds document a settlement."]


def make_madlad(work, out):
    hf = os.path.join(work, "madlad")
    tok = unigram(["<pad>", "</s>", "<unk>"])
    tok.add_tokens(["<2en>", "<2cs>", "<2de>"])
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))])
    fast = T5TokenizerFast(tokenizer_object=tok, extra_ids=0, eos_token="</s>", unk_token="<unk>", pad_token="<pad>")
    fast.save_pretrained(hf)
    cfg = T5Config(vocab_size=len(fast), d_model=32, d_kv=16, d_ff=64, num_layers=1, num_decoder_layers=1,
                   num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, initializer_factor=0.5)
    torch.manual_seed(14)
    T5ForConditionalGeneration(cfg).eval().save_pretrained(hf)
    ctranslate2.converters.TransformersConverter(hf).convert(out, force=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(hf, name), os.path.join(out, name))
    return translate_refs(out, fast, MADLAD_SOURCES, None, 16)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        tr, tr_prefixed = make_translator(work, os.path.join(out, "translator"))
        gen, gen_long, chat = make_generator(work, os.path.join(out, "generator"))
        nllb = make_nllb(work, os.path.join(out, "nllb"))
        madlad = make_madlad(work, os.path.join(out, "madlad"))
    ref = {"ctranslate2": ctranslate2.__version__, "max_decoding_length": 16, "generator_max_length": 12,
           "long_max_length": LONG_MAX_LENGTH, "translations": tr, "prefixed": tr_prefixed, "generations": gen,
           "long_generations": gen_long, "chat": chat, "nllb": nllb, "madlad": madlad}
    with open(os.path.join(out, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=False, indent=1)
    print(f"CTranslate2 fixtures written to {out}")


if __name__ == "__main__":
    main()
