package cliflags

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Stopped is the cancellation cause of a run stopped by a signal
// (SignalContext): its message names the signal, and the run metadata
// records the run as interrupted (Interrupted).
type Stopped struct{ Signal os.Signal }

func (e Stopped) Error() string {
	switch e.Signal {
	case syscall.SIGTERM:
		return "stopped by SIGTERM"
	case syscall.SIGHUP:
		return "stopped by SIGHUP (its terminal closed: run it under nohup, screen or tmux to outlive a lost session)"
	}
	return "interrupted by Ctrl-C (SIGINT)"
}

// Interrupted says the run did not fail: it was stopped before the end.
func (e Stopped) Interrupted() bool { return true }

// Code is the exit code of a run stopped by the signal: 128 + its
// number (ExitInterrupted after SIGINT, 143 after SIGTERM, 129 after
// SIGHUP).
func (e Stopped) Code() int {
	if s, ok := e.Signal.(syscall.Signal); ok && s != syscall.SIGINT {
		return 128 + int(s)
	}
	return ExitInterrupted
}

// stopSignals are the signals SignalContext stops a run at: SIGINT,
// SIGTERM and SIGHUP (the terminal of a session closed, as when an SSH
// connection drops), each unless the program was started with it ignored
// (nohup ignores SIGHUP; a shell's background job SIGINT): asking for an
// ignored signal would undo that.
func stopSignals() []os.Signal {
	var sigs []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// sameStop is how long after a stop signal another one is taken for the
// same stop (SignalContext).
const sameStop = 300 * time.Millisecond

// SignalContext returns a context cancelled at the first SIGINT, SIGTERM
// or SIGHUP (stopSignals), its cause (context.Cause) a Stopped naming the
// signal; a second one, sameStop or more after it, ends the program at
// once (the default action). stop releases the signals.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	if watched := stopSignals(); len(watched) > 0 {
		signal.Notify(sigs, watched...)
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(Stopped{s})
		case <-done:
			return
		}
		// Copies of the signal that come at once are the same stop, not
		// a second Ctrl-C: timeout(1) signals the program and then its
		// process group, which ended a run before it wrote its run
		// metadata. After sameStop, a second signal ends the program.
		t := time.NewTimer(sameStop)
		defer t.Stop()
		for {
			select {
			case <-sigs:
			case <-t.C:
				signal.Stop(sigs)
				return
			case <-done:
				return
			}
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
