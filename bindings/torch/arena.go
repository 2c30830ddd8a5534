package torch

/*
#define _GNU_SOURCE
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int archivekit_arena_max;
static int archivekit_keep_set;

// The environment's own setting of name (MALLOC_<NAME>_ or
// glibc.malloc.<name> in GLIBC_TUNABLES) wins over the program's.
static int archivekit_env_sets(const char *var, const char *tunable) {
	const char *t = getenv("GLIBC_TUNABLES");
	return getenv(var) != NULL || (t != NULL && strstr(t, tunable) != NULL);
}

// Keep freed blocks of up to 32 MiB in the malloc heaps, and up to 64 MiB
// free at the top of each heap, instead of giving them back to the system
// after each forward pass. libtorch allocates a forward pass's activations
// from the calling thread's arena; calls come from threads other than the
// main one, whose arenas are 64 MiB heaps that glibc deletes as soon as
// their memory is free at the top, so every pass mapped its activations
// anew and the kernel zeroed each page again: thousands of page faults per
// image, a quarter of a small CNN's CPU time (issue 15, README
// "Benchmarks"). The three values are glibc's own dynamic limits for
// 64-bit, fixed (setting one fixes the others' dynamic adjustment).
static void archivekit_keep_freed(void) {
	if (getenv("ARCHIVEKIT_MALLOC_DEFAULTS") != NULL ||
	    archivekit_env_sets("MALLOC_MMAP_THRESHOLD_", "mmap_threshold") ||
	    archivekit_env_sets("MALLOC_TRIM_THRESHOLD_", "trim_threshold") ||
	    archivekit_env_sets("MALLOC_TOP_PAD_", "top_pad")) {
		return;
	}
	if (mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 64 << 20) == 1 &&
	    mallopt(M_TOP_PAD, 32 << 20) == 1) {
		archivekit_keep_set = 1;
	}
}

// Runs when the program is loaded, before any thread allocates: glibc
// fixes its arena limit the first time a thread needs an arena of its own.
__attribute__((constructor)) static void archivekit_limit_arenas(void) {
	archivekit_keep_freed();
	if (archivekit_env_sets("MALLOC_ARENA_MAX", "arena_max")) {
		return;
	}
	cpu_set_t set;
	int n = 0;
	if (sched_getaffinity(0, sizeof set, &set) == 0) {
		n = CPU_COUNT(&set);
	}
	if (n < 2) {
		n = 2;
	}
	if (mallopt(M_ARENA_MAX, n) == 1) {
		archivekit_arena_max = n;
	}
}

static int archivekit_arena_limit(void) { return archivekit_arena_max; }
static int archivekit_keeps_freed(void) { return archivekit_keep_set; }

// The number of malloc arenas in use: the <heap nr=...> elements of
// malloc_info's report.
static int archivekit_arenas(void) {
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL) {
		return -1;
	}
	int ok = malloc_info(0, f) == 0;
	fclose(f);
	int n = 0;
	for (char *p = buf; ok && (p = strstr(p, "<heap nr=")) != NULL; p++) {
		n++;
	}
	free(buf);
	return ok ? n : -1;
}

static void archivekit_malloc_touch(void) { free(malloc(4096)); }

// Whether malloc serves n bytes with a mapping of their own (glibc marks
// such a chunk in the size word before it: bit 1, IS_MMAPPED).
static int archivekit_malloc_maps(size_t n) {
	void *p = malloc(n);
	if (p == NULL) {
		return -1;
	}
	int mapped = (((size_t *)p)[-1] & 2) != 0;
	free(p);
	return mapped;
}
*/
import "C"

// ArenaMax is the limit on glibc malloc arenas this process set when it was
// loaded: the number of CPUs it may run on, at least 2. libtorch allocates
// from every thread that runs a forward pass or a preprocessing step, and
// glibc's default (8 arenas per core) let each of those threads keep its
// own arena of freed buffers: a folder of four 169-megapixel pages peaked
// at 621 MiB with the shipped ensemble, 505 MiB with the limit (issue 15,
// README "Benchmarks"). 0 means the environment set the limit
// (MALLOC_ARENA_MAX, or arena_max in GLIBC_TUNABLES) and it was left alone.
func ArenaMax() int { return int(C.archivekit_arena_limit()) }

// KeepsFreedMemory reports whether this process set glibc malloc, when it
// was loaded, to keep freed blocks for reuse rather than return them to the
// system after each forward pass: mmap threshold 32 MiB and trim threshold
// 64 MiB (the limits glibc's own adjustment reaches on 64-bit), top pad
// 32 MiB.
// Without them every forward pass on a thread other than the main one
// mapped and zeroed its activations again (thousands of page faults per
// image; EfficientNet-Lite1 at 240 px, 4 pages a pass: 77 ms of CPU an
// image, 24 of them in the kernel, against 44 and 2 with them). False means
// the environment set one of them (MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_, or the same in GLIBC_TUNABLES)
// and all three were left to it, or ARCHIVEKIT_MALLOC_DEFAULTS was set
// (any value), which leaves glibc's defaults in place, for comparison.
func KeepsFreedMemory() bool { return C.archivekit_keeps_freed() != 0 }

// mallocArenas is the number of malloc arenas the process has (-1 when
// glibc cannot say).
func mallocArenas() int { return int(C.archivekit_arenas()) }

// mallocMaps reports whether glibc malloc gives n bytes a mapping of their
// own (unmapped again when freed) rather than memory from its heaps.
func mallocMaps(n int) bool { return C.archivekit_malloc_maps(C.size_t(n)) == 1 }

// mallocOnThisThread allocates and frees a small buffer with malloc from
// the calling OS thread, which gives the thread an arena.
func mallocOnThisThread() { C.archivekit_malloc_touch() }
