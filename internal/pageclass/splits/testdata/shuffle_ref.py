"""Independent reference of the documented split PRNG (splitmix64 +
rejection-sampled Fisher-Yates). Prints the permutation of range(n) for a
seed; the Go test compares against its output."""
import sys

M = (1 << 64) - 1


def splitmix64(seed):
    s = seed & M
    while True:
        s = (s + 0x9E3779B97F4A7C15) & M
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        yield z ^ (z >> 31)


def below(gen, n):
    limit = M - (M % n)
    while True:
        v = next(gen)
        if v < limit:
            return v % n


def shuffle(n, seed):
    items = list(range(n))
    gen = splitmix64(seed)
    for i in range(n - 1, 0, -1):
        j = below(gen, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


if __name__ == "__main__":
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    print(" ".join(map(str, shuffle(n, seed))))
