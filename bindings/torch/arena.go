package torch

/*
#define _GNU_SOURCE
#include <malloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int archivekit_arena_max;

// Runs when the program is loaded, before any thread allocates: glibc
// fixes its arena limit the first time a thread needs an arena of its own.
__attribute__((constructor)) static void archivekit_limit_arenas(void) {
	const char *t = getenv("GLIBC_TUNABLES");
	if (getenv("MALLOC_ARENA_MAX") != NULL || (t != NULL && strstr(t, "arena_max") != NULL)) {
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

// mallocArenas is the number of malloc arenas the process has (-1 when
// glibc cannot say).
func mallocArenas() int { return int(C.archivekit_arenas()) }

// mallocOnThisThread allocates and frees a small buffer with malloc from
// the calling OS thread, which gives the thread an arena.
func mallocOnThisThread() { C.archivekit_malloc_touch() }
