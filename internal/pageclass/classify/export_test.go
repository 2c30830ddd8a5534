package classify

// SetCPUCallInput sets the input bound of one forward pass on the CPU
// (cpuCallInput; 1<<62: the whole batch in one call) and returns a function
// that restores it. For benchmarks that compare both in one run.
func SetCPUCallInput(bytes int) (restore func()) {
	old := cpuCallInput
	cpuCallInput = bytes
	return func() { cpuCallInput = old }
}
