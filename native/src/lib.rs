//! ct2bridge: a C ABI over CTranslate2 through the `ct2rs` crate.
//!
//! The header is `include/ct2bridge.h`. Every exported function catches
//! panics and turns errors into a status plus a message; Go owns all policy.

use std::ffi::{c_char, c_float, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::ptr;

use anyhow::{anyhow, bail, Context, Result};
use ct2rs::tokenizers::auto::Tokenizer as AutoTokenizer;
use ct2rs::{ComputeType, Config, Device, GenerationOptions, Generator, TranslationOptions, Translator};

const OK: c_int = 0;
const ERR_ARGUMENT: c_int = 1;
const ERR_MODEL: c_int = 2;
const ERR_RUNTIME: c_int = 3;
const ERR_PANIC: c_int = 4;

/// Opaque translator handle.
pub struct ct2b_translator(Translator<AutoTokenizer>);
/// Opaque generator handle.
pub struct ct2b_generator(Generator<AutoTokenizer>);

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
    results: Vec<(String, Option<f32>)>,
    out: *mut *mut *mut c_char,
    scores: *mut c_float,
) -> std::result::Result<(), Failure> {
    let strs: Vec<*mut c_char> = results
        .iter()
        .map(|(s, _)| CString::new(s.replace('\0', "")).unwrap_or_default().into_raw())
        .collect();
    if !scores.is_null() {
        for (i, (_, sc)) in results.iter().enumerate() {
            *scores.add(i) = sc.unwrap_or(f32::NAN);
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
            Ok(ct2b_translator(Translator::with_tokenizer(dir, tok, cfg)?))
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
    target_prefix: *const *const c_char,
    beam_size: c_int,
    max_decoding_length: c_int,
    out: *mut *mut *mut c_char,
    scores: *mut c_float,
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
        let res = if target_prefix.is_null() {
            t.0.translate_batch(&srcs, &opts, None)?
        } else {
            let mut prefixes: Vec<Vec<String>> = Vec::with_capacity(srcs.len());
            for i in 0..srcs.len() {
                let p = *target_prefix.add(i);
                prefixes.push(if p.is_null() {
                    Vec::new()
                } else {
                    cstr(p, "target prefix")?.split_whitespace().map(str::to_owned).collect()
                });
            }
            t.0.translate_batch_with_target_prefix(&srcs, &prefixes, &opts, None)?
        };
        if res.len() != srcs.len() {
            return Err(anyhow!("{} results for {} sources", res.len(), srcs.len()).into());
        }
        write_out(res, out, scores)
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
            Ok(ct2b_generator(Generator::with_tokenizer(dir, tok, cfg)?))
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
    out: *mut *mut *mut c_char,
    scores: *mut c_float,
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
        let opts = GenerationOptions::<String, String, String> {
            beam_size: beam_size as usize,
            max_length: max_length as usize,
            sampling_topk: sampling_topk as usize,
            include_prompt_in_result: false,
            return_scores: true,
            ..Default::default()
        };
        let res = g.0.generate_batch(&ps, &opts, None).context("generation failed")?;
        if res.len() != ps.len() {
            return Err(anyhow!("{} results for {} prompts", res.len(), ps.len()).into());
        }
        let flat: Vec<(String, Option<f32>)> = res
            .into_iter()
            .map(|(seqs, sc)| (seqs.into_iter().next().unwrap_or_default(), sc.first().copied()))
            .collect();
        write_out(flat, out, scores)
    })
}
