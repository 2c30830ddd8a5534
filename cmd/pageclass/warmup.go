package main

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// warmUp resolves --warm-up on the run's device: auto warms the models up
// on a CUDA GPU only.
func (r *runner) warmUp() bool {
	return onOffAuto(r.cli.WarmUp, strings.HasPrefix(r.device, "cuda"))
}

// startWarmUp starts the ensemble's warm-up (classify.Ensemble.WarmUp, one
// batch of the run's size) in the background when --warm-up asks for it, so
// it overlaps the rest of the run's start-up; waitWarmUp waits for it.
// --parallel loads its models group by group as it classifies: nothing to
// warm here.
func (r *classifier) startWarmUp(ctx context.Context) {
	if r.ens == nil || !r.warmUp() {
		return
	}
	r.warm = make(chan struct{})
	opt := r.predictOptions()
	go func() {
		defer close(r.warm)
		st, err := r.ens.WarmUp(ctx, opt)
		if err != nil {
			r.warmErr = fmt.Errorf("warming the models up on %s (--warm-up off skips it): %w", r.device, err)
			return
		}
		r.log.Info("models warmed up", "pages", st.Rows, "batches", st.Batches, "seconds", math.Round(st.Elapsed.Seconds()*1000)/1000)
	}()
}

// waitWarmUp waits for the warm-up startWarmUp started, if any, and
// returns its error.
func (r *classifier) waitWarmUp() error {
	if r.warm == nil {
		return nil
	}
	<-r.warm
	return r.warmErr
}
