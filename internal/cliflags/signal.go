package cliflags

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Stopped is the cancellation cause of a run stopped by a signal
// (SignalContext): its message names the signal, and the run metadata
// records the run as interrupted (Interrupted).
type Stopped struct{ Signal os.Signal }

func (e Stopped) Error() string {
	if e.Signal == syscall.SIGTERM {
		return "stopped by SIGTERM"
	}
	return "interrupted by Ctrl-C (SIGINT)"
}

// Interrupted says the run did not fail: it was stopped before the end.
func (e Stopped) Interrupted() bool { return true }

// Code is the exit code of a run stopped by the signal: 128 + its
// number (ExitInterrupted after SIGINT, 143 after SIGTERM).
func (e Stopped) Code() int {
	if s, ok := e.Signal.(syscall.Signal); ok && s != syscall.SIGINT {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// SignalContext returns a context cancelled at the first SIGINT or SIGTERM,
// its cause (context.Cause) a Stopped naming the signal; a second one ends
// the program at once (the default action). stop releases the signals.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			cancel(Stopped{s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// StoppedBy returns the Stopped cause of ctx's cancellation; false when
// ctx was not cancelled by a signal.
func StoppedBy(ctx context.Context) (Stopped, bool) {
	var s Stopped
	ok := ctx.Err() != nil && errors.As(context.Cause(ctx), &s)
	return s, ok
}
