// Package testenv is what tests and benchmarks share about their
// environment: where the project's sample data and the fixtures of
// `make fixtures` are (Data, Path, Fixtures), facts about
// the running process from /proc (RSSKiB, PeakRSSKiB, ResetPeak, CPUTime,
// LoadAvg), how often files are opened while a function runs (Opens),
// polling until a condition holds (WaitFor) and timing work without and
// with a feature in alternating rounds (Speedup).
// Nothing outside tests imports it.
package testenv
