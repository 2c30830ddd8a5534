/*
 * ct2bridge.h: C ABI over CTranslate2 (via the ct2rs crate) for archivekit.
 *
 * Conventions (same as csrc/include/tshim.h):
 *  - Functions return 0 on success and a non-zero status on failure; on
 *    failure *err (if not NULL) receives a message to release with ct2b_free().
 *  - One opaque handle per object with its own free function (NULL is fine).
 *  - Strings passed in are UTF-8 and only read during the call. Arrays of
 *    strings returned are released with ct2b_free_strings().
 *  - No Rust panic crosses the boundary: it becomes status CT2B_ERR_PANIC.
 *  - Tokenisation happens inside: the model directory provides
 *    tokenizer.json (Hugging Face tokenizers), or source.spm/target.spm
 *    (SentencePiece), or vocab/merges files (BPE).
 */
#ifndef CT2BRIDGE_H
#define CT2BRIDGE_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CT2B_OK = 0,
  CT2B_ERR_ARGUMENT = 1,
  CT2B_ERR_MODEL = 2,
  CT2B_ERR_RUNTIME = 3,
  CT2B_ERR_PANIC = 4
};

typedef struct ct2b_translator ct2b_translator;
typedef struct ct2b_generator ct2b_generator;

void ct2b_free(char *s);
void ct2b_free_strings(char **s, int n);
/* Version of the bundled CTranslate2, e.g. "4.8.4". Static string. */
const char *ct2b_ctranslate2_version(void);

/* device: "cpu" or "cuda"; compute_type: "default", "auto", "float32",
 * "int8", "int8_float32", "int8_float16", "int8_bfloat16", "int16",
 * "float16", "bfloat16"; threads: intra-op threads (0 = CTranslate2's default). */
int ct2b_translator_new(const char *model_dir, const char *device, const char *compute_type, int threads,
                        ct2b_translator **out, char **err);
void ct2b_translator_free(ct2b_translator *t);
/* Translates n sources. source_prefix may be NULL, or hold n entries, each
 * NULL or a space-separated list of tokens put at the start of the encoded
 * source (NLLB's source-language token); when the prefix holds a FLORES-200
 * code ("ces_Latn") and the tokenizer already started the source with one
 * (NLLB's tokenizer.json adds the language it was saved with), that token is
 * replaced. target_prefix likewise: target tokens forced at the start (e.g. a
 * language token; removed from the output). On success *out holds n strings.
 * Each of the optional arrays of n entries (NULL to skip) receives, per
 * source: scores, the cumulative log-probability of the hypothesis; lengths,
 * the tokens decoded (the forced prefix included, the end token not);
 * truncated, 1 when decoding stopped at max_decoding_length rather than at an
 * end token (the output is then cut), else 0. */
int ct2b_translate(ct2b_translator *t, const char *const *sources, int n, const char *const *source_prefix,
                   const char *const *target_prefix,
                   int beam_size, int max_decoding_length, char ***out, float *scores, int *lengths,
                   int *truncated, char **err);

/* The tokens the translator's source tokenizer makes of text (special tokens
 * included), in *out (n strings, released with ct2b_free_strings). */
int ct2b_translator_tokenize(ct2b_translator *t, const char *text, char ***out, int *n, char **err);

int ct2b_generator_new(const char *model_dir, const char *device, const char *compute_type, int threads,
                       ct2b_generator **out, char **err);
void ct2b_generator_free(ct2b_generator *g);
/* Generates a continuation of each of n prompts (greedy when beam_size is 1
 * and sampling_topk is 1). The prompt is not included in the result.
 * end_tokens: NULL (the model's own end token) or a space-separated list of
 * tokens that end decoding instead (e.g. a chat template's "<|im_end|>").
 * scores, lengths (generated tokens, the end token not counted) and
 * truncated (1 when decoding stopped at max_length) as for ct2b_translate. */
int ct2b_generate(ct2b_generator *g, const char *const *prompts, int n, int beam_size, int max_length,
                  int sampling_topk, const char *end_tokens, char ***out, float *scores, int *lengths,
                  int *truncated, char **err);

#ifdef __cplusplus
}
#endif
#endif /* CT2BRIDGE_H */
