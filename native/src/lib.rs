//! ct2bridge: a C ABI over CTranslate2 through the `ct2rs` crate.
//!
//! The header is `include/ct2bridge.h`. Every exported function catches
//! panics and turns errors into a status plus a message; Go owns all policy.

use std::ffi::{c_char, c_float, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;

use anyhow::{anyhow, bail, Context, Result};
use ct2rs::sys::{GenerationOptions, Generator, TranslationOptions, Translator};
use ct2rs::tokenizers::auto::Tokenizer as AutoTokenizer;
use ct2rs::{ComputeType, Config, Device, Tokenizer};

const OK: c_int = 0;
const ERR_ARGUMENT: c_int = 1;
const ERR_MODEL: c_int = 2;
const ERR_RUNTIME: c_int = 3;
const ERR_PANIC: c_int = 4;

/// Opaque translator handle: the model and the tokenizer of its folder.
pub struct ct2b_translator(Translator, AutoTokenizer);
/// Opaque generator handle: the model and the tokenizer of its folder.
pub struct ct2b_generator(Generator, AutoTokenizer);

/// One decoded output: its text, its score, how many tokens were decoded
/// (a forced target prefix included, the end token not) and whether
/// decoding stopped at the maximum length instead of at an end token.
struct Output {
    text: String,
    score: Option<f32>,
    length: usize,
    truncated: bool,
}

fn encode_all(tok: &AutoTokenizer, texts: &[String]) -> anyhow::Result<Vec<Vec<String>>> {
    texts.iter().map(|t| tok.encode(t)).collect()
}

/// Whether tok has the shape of a FLORES-200 language code ("eng_Latn").
fn is_flores_code(tok: &str) -> bool {
    let b = tok.as_bytes();
    b.len() == 8
        && b[..3].iter().all(u8::is_ascii_lowercase)
        && b[3] == b'_'
        && b[4].is_ascii_uppercase()
        && b[5..].iter().all(u8::is_ascii_lowercase)
}

/// Puts prefix at the start of an encoded source. NLLB's tokenizer.json
/// already starts every source with the language it was saved with (its
/// default, eng_Latn): a first token of that shape is replaced, not kept.
fn prepend_source(tokens: &mut Vec<String>, prefix: Vec<String>) {
    if prefix.is_empty() {
        return;
    }
    if prefix.iter().any(|p| is_flores_code(p)) && tokens.first().is_some_and(|t| is_flores_code(t)) {
        tokens.remove(0);
    }
    tokens.splice(0..0, prefix);
}

unsafe fn token_lists(p: *const *const c_char, n: usize, what: &str) -> std::result::Result<Vec<Vec<String>>, Failure> {
    let mut v = Vec::with_capacity(n);
    if p.is_null() {
        return Ok(v);
    }
    for i in 0..n {
        let q = *p.add(i);
        v.push(if q.is_null() { Vec::new() } else { cstr(q, what)?.split_whitespace().map(str::to_owned).collect() });
    }
    Ok(v)
}

struct Failure(c_int, String);

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure(ERR_RUNTIME, format!("{e:#}"))
    }
}

fn arg_err(msg: impl Into<String>) -> Failure {
    Failure(ERR_ARGUMENT, msg.into())
}

/// Runs body, converting errors and panics into a status and a message.
fn guard<F: FnOnce() -> std::result::Result<(), Failure>>(err: *mut *mut c_char, body: F) -> c_int {
    let res = catch_unwind(AssertUnwindSafe(body));
    let (code, msg) = match res {
        Ok(Ok(())) => return OK,
        Ok(Err(Failure(c, m))) => (c, m),
        Err(p) => {
            let m = if let Some(s) = p.downcast_ref::<&str>() {
                s.to_string()
            } else if let Some(s) = p.downcast_ref::<String>() {
                s.clone()
            } else {
                "unknown panic".to_string()
            };
            (ERR_PANIC, format!("panic in ct2bridge: {m}"))
        }
    };
    if !err.is_null() {
        let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
        unsafe { *err = c.into_raw() };
    }
    code
}

unsafe fn cstr<'a>(p: *const c_char, what: &str) -> std::result::Result<&'a str, Failure> {
    if p.is_null() {
        return Err(arg_err(format!("{what} is NULL")));
    }
    CStr::from_ptr(p).to_str().map_err(|_| arg_err(format!("{what} is not valid UTF-8")))
}

unsafe fn cstrs(p: *const *const c_char, n: c_int, what: &str) -> std::result::Result<Vec<String>, Failure> {
    if n < 0 || (n > 0 && p.is_null()) {
        return Err(arg_err(format!("{what}: bad array")));
    }
    (0..n as usize).map(|i| cstr(*p.add(i), what).map(str::to_owned)).collect()
}

fn parse_device(s: &str) -> Result<Device> {
    match s {
        "cpu" => Ok(Device::CPU),
        "cuda" | "cuda:0" => Ok(Device::CUDA),
        _ => bail!("bad device {s:?}: want cpu or cuda"),
    }
}

fn parse_compute_type(s: &str) -> Result<ComputeType> {
    Ok(match s {
        "" | "default" => ComputeType::DEFAULT,
        "auto" => ComputeType::AUTO,
        "float32" => ComputeType::FLOAT32,
        "int8" => ComputeType::INT8,
        "int8_float32" => ComputeType::INT8_FLOAT32,
        "int8_float16" => ComputeType::INT8_FLOAT16,
        "int8_bfloat16" => ComputeType::INT8_BFLOAT16,
        "int16" => ComputeType::INT16,
        "float16" => ComputeType::FLOAT16,
        "bfloat16" => ComputeType::BFLOAT16,
        _ => bail!("unknown compute type {s:?}"),
    })
}

unsafe fn config(device: *const c_char, compute: *const c_char, threads: c_int) -> std::result::Result<Config, Failure> {
    let dev = parse_device(cstr(device, "device")?).map_err(|e| arg_err(e.to_string()))?;
    let ct = parse_compute_type(cstr(compute, "compute type")?).map_err(|e| arg_err(e.to_string()))?;
    if threads < 0 {
        return Err(arg_err("threads must not be negative"));
    }
    Ok(Config { device: dev, compute_type: ct, num_threads_per_replica: threads as usize, ..Default::default() })
}

/// Checks that dir looks like a CTranslate2 model before handing it over,
/// so the error names the problem rather than a C++ exception text.
fn check_model_dir(dir: &str) -> std::result::Result<(), Failure> {
    let p = Path::new(dir);
    if !p.is_dir() {
        return Err(Failure(ERR_MODEL, format!("{dir}: not a directory")));
    }
    if !p.join("model.bin").is_file() {
        return Err(Failure(ERR_MODEL, format!("{dir}: not a CTranslate2 model directory (no model.bin)")));
    }
    Ok(())
}

fn load_tokenizer(dir: &str) -> std::result::Result<AutoTokenizer, Failure> {
    AutoTokenizer::new(dir).map_err(|_| {
        Failure(
            ERR_MODEL,
            format!("{dir}: no usable tokenizer (want tokenizer.json, or source.spm and target.spm, or BPE vocab/merges)"),
        )
    })
}

/// Loads a model of either kind: checks the arguments and the directory,
/// finds the tokenizer, builds the model with `make` and stores the handle.
unsafe fn load<H>(
    model_dir: *const c_char,
    device: *const c_char,
    compute_type: *const c_char,
    threads: c_int,
    out: *mut *mut H,
    kind: &str,
    make: impl FnOnce(&str, AutoTokenizer, &Config) -> anyhow::Result<H>,
) -> std::result::Result<(), Failure> {
    if out.is_null() {
        return Err(arg_err("out is NULL"));
    }
    let dir = cstr(model_dir, "model directory")?;
    let cfg = config(device, compute_type, threads)?;
    check_model_dir(dir)?;
    let tok = load_tokenizer(dir)?;
    let h = make(dir, tok, &cfg).map_err(|e| Failure(ERR_MODEL, format!("{dir}: cannot load {kind}: {e:#}")))?;
    *out = Box::into_raw(Box::new(h));
    Ok(())
}

unsafe fn write_out(
    results: Vec<Output>,
    out: *mut *mut *mut c_char,
    scores: *mut c_float,
    lengths: *mut c_int,
    truncated: *mut c_int,
) -> std::result::Result<(), Failure> {
    let strs: Vec<*mut c_char> = results
        .iter()
        .map(|o| CString::new(o.text.replace('\0', "")).unwrap_or_default().into_raw())
        .collect();
    for (i, o) in results.iter().enumerate() {
        if !scores.is_null() {
            *scores.add(i) = o.score.unwrap_or(f32::NAN);
        }
        if !lengths.is_null() {
            *lengths.add(i) = o.length.min(c_int::MAX as usize) as c_int;
        }
        if !truncated.is_null() {
            *truncated.add(i) = o.truncated as c_int;
        }
    }
    let mut boxed = strs.into_boxed_slice();
    *out = boxed.as_mut_ptr();
    std::mem::forget(boxed);
    Ok(())
}

#[no_mangle]
pub extern "C" fn ct2b_free(s: *mut c_char) {
    if !s.is_null() {
        unsafe { drop(CString::from_raw(s)) };
    }
}

#[no_mangle]
pub extern "C" fn ct2b_free_strings(s: *mut *mut c_char, n: c_int) {
    if s.is_null() || n < 0 {
        return;
    }
    unsafe {
        let v = Box::from_raw(ptr::slice_from_raw_parts_mut(s, n as usize));
        for p in v.iter() {
            ct2b_free(*p);
        }
    }
}

#[no_mangle]
pub extern "C" fn ct2b_ctranslate2_version() -> *const c_char {
    c"4.8.4".as_ptr()
}

#[no_mangle]
pub extern "C" fn ct2b_translator_new(
    model_dir: *const c_char,
    device: *const c_char,
    compute_type: *const c_char,
    threads: c_int,
    out: *mut *mut ct2b_translator,
    err: *mut *mut c_char,
) -> c_int {
    guard(err, || unsafe {
        load(model_dir, device, compute_type, threads, out, "translator", |dir, tok, cfg| {
            Ok(ct2b_translator(Translator::new(dir, cfg)?, tok))
        })
    })
}

#[no_mangle]
pub extern "C" fn ct2b_translator_free(t: *mut ct2b_translator) {
    if !t.is_null() {
        unsafe { drop(Box::from_raw(t)) };
    }
}

#[no_mangle]
pub extern "C" fn ct2b_translate(
    t: *mut ct2b_translator,
    sources: *const *const c_char,
    n: c_int,
    source_prefix: *const *const c_char,
    target_prefix: *const *const c_char,
    beam_size: c_int,
    max_decoding_length: c_int,
    out: *mut *mut *mut c_char,
    scores: *mut c_float,
    lengths: *mut c_int,
    truncated: *mut c_int,
    err: *mut *mut c_char,
) -> c_int {
    guard(err, || unsafe {
        let t = t.as_ref().ok_or_else(|| arg_err("translator is NULL"))?;
        if out.is_null() {
            return Err(arg_err("out is NULL"));
        }
        if beam_size < 1 || max_decoding_length < 1 {
            return Err(arg_err("beam size and max decoding length must be at least 1"));
        }
        let srcs = cstrs(sources, n, "sources")?;
        let opts = TranslationOptions::<String, String> {
            beam_size: beam_size as usize,
            max_decoding_length: max_decoding_length as usize,
            return_scores: true,
            ..Default::default()
        };
        let mut tokens = encode_all(&t.1, &srcs).context("cannot tokenise the sources")?;
        for (toks, p) in tokens.iter_mut().zip(token_lists(source_prefix, srcs.len(), "source prefix")?) {
            prepend_source(toks, p);
        }
        let prefixes = token_lists(target_prefix, srcs.len(), "target prefix")?;
        let res = if target_prefix.is_null() {
            t.0.translate_batch(&tokens, &opts, None)?
        } else {
            t.0.translate_batch_with_target_prefix(&tokens, &prefixes, &opts, None)?
        };
        if res.len() != srcs.len() {
            return Err(anyhow!("{} results for {} sources", res.len(), srcs.len()).into());
        }
        let mut outs = Vec::with_capacity(res.len());
        for (i, r) in res.into_iter().enumerate() {
            let score = r.score();
            let mut hyp = r.hypotheses.into_iter().next().ok_or_else(|| anyhow!("no hypothesis for source {i}"))?;
            // CTranslate2 counts the forced prefix in max_decoding_length and
            // leaves the end token out of the hypothesis: a hypothesis of the
            // full length was cut.
            let length = hyp.len();
            let truncated = length >= max_decoding_length as usize;
            if let Some(p) = prefixes.get(i) {
                hyp.drain(0..p.len().min(hyp.len()));
            }
            let text = t.1.decode(hyp).map_err(|e| anyhow!("cannot decode output {i}: {e}"))?;
            outs.push(Output { text, score, length, truncated });
        }
        write_out(outs, out, scores, lengths, truncated)
    })
}

#[no_mangle]
pub extern "C" fn ct2b_translator_tokenize(
    t: *mut ct2b_translator,
    text: *const c_char,
    out: *mut *mut *mut c_char,
    n: *mut c_int,
    err: *mut *mut c_char,
) -> c_int {
    guard(err, || unsafe {
        let t = t.as_ref().ok_or_else(|| arg_err("translator is NULL"))?;
        if out.is_null() || n.is_null() {
            return Err(arg_err("out is NULL"));
        }
        let toks = t.1.encode(cstr(text, "text")?).context("cannot tokenise")?;
        let strs: Vec<*mut c_char> =
            toks.iter().map(|s| CString::new(s.replace('\0', "")).unwrap_or_default().into_raw()).collect();
        *n = strs.len() as c_int;
        let mut boxed = strs.into_boxed_slice();
        *out = boxed.as_mut_ptr();
        std::mem::forget(boxed);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn ct2b_generator_new(
    model_dir: *const c_char,
    device: *const c_char,
    compute_type: *const c_char,
    threads: c_int,
    out: *mut *mut ct2b_generator,
    err: *mut *mut c_char,
) -> c_int {
    guard(err, || unsafe {
        load(model_dir, device, compute_type, threads, out, "generator", |dir, tok, cfg| {
            Ok(ct2b_generator(Generator::new(dir, cfg)?, tok))
        })
    })
}

#[no_mangle]
pub extern "C" fn ct2b_generator_free(g: *mut ct2b_generator) {
    if !g.is_null() {
        unsafe { drop(Box::from_raw(g)) };
    }
}

#[no_mangle]
pub extern "C" fn ct2b_generate(
    g: *mut ct2b_generator,
    prompts: *const *const c_char,
    n: c_int,
    beam_size: c_int,
    max_length: c_int,
    sampling_topk: c_int,
    end_tokens: *const c_char,
    out: *mut *mut *mut c_char,
    scores: *mut c_float,
    lengths: *mut c_int,
    truncated: *mut c_int,
    err: *mut *mut c_char,
) -> c_int {
    guard(err, || unsafe {
        let g = g.as_ref().ok_or_else(|| arg_err("generator is NULL"))?;
        if out.is_null() {
            return Err(arg_err("out is NULL"));
        }
        if beam_size < 1 || max_length < 1 || sampling_topk < 1 {
            return Err(arg_err("beam size, max length and sampling top-k must be at least 1"));
        }
        let ps = cstrs(prompts, n, "prompts")?;
        let ends: Vec<String> = if end_tokens.is_null() {
            Vec::new()
        } else {
            cstr(end_tokens, "end tokens")?.split_whitespace().map(str::to_owned).collect()
        };
        let opts = GenerationOptions::<String, String, String> {
            beam_size: beam_size as usize,
            max_length: max_length as usize,
            sampling_topk: sampling_topk as usize,
            include_prompt_in_result: false,
            return_scores: true,
            end_token: ends,
            ..Default::default()
        };
        let tokens = encode_all(&g.1, &ps).context("cannot tokenise the prompts")?;
        let res = g.0.generate_batch(&tokens, &opts, None).context("generation failed")?;
        if res.len() != ps.len() {
            return Err(anyhow!("{} results for {} prompts", res.len(), ps.len()).into());
        }
        let mut outs = Vec::with_capacity(res.len());
        for (i, r) in res.into_iter().enumerate() {
            let score = r.scores.first().copied();
            let seq = r.sequences.into_iter().next().unwrap_or_default();
            // Without the prompt, max_length counts generated tokens only;
            // the end token is not part of the sequence.
            let length = seq.len();
            let truncated = length >= max_length as usize;
            let text = g.1.decode(seq).map_err(|e| anyhow!("cannot decode output {i}: {e}"))?;
            outs.push(Output { text, score, length, truncated });
        }
        write_out(outs, out, scores, lengths, truncated)
    })
}
