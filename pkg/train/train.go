package train

import (
	"context"
	"errors"
)

var errPending = errors.New("train: implementation in progress")

// Train fine-tunes Options.Base on every requested fold and returns one
// result per fold.
func Train(ctx context.Context, o Options) ([]FoldResult, error) { return nil, errPending }

// Evaluate runs a model over labelled pages and writes the evaluation tables
// and the confusion matrix.
func Evaluate(ctx context.Context, o EvalOptions) (*EvalResult, error) { return nil, errPending }

// Average writes the element-wise mean of the models in dir whose folder
// names match pattern, and returns the new model folder and how many models
// were averaged.
func Average(dir, pattern string) (string, int, error) { return "", 0, errPending }
