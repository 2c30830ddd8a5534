// Package handles counts the native handles of a binding (libtorch modules,
// CTranslate2 translators), so that tests can check that a command closed
// everything it opened, and so that a handle released by the garbage
// collector instead of Close is counted as a leak rather than hidden.
package handles

import (
	"runtime"
	"sync/atomic"
)

// Counter counts the live and leaked handles of one binding.
type Counter struct {
	live, leaked atomic.Int64
}

// Live is the number of handles opened and not yet closed.
func (c *Counter) Live() int64 { return c.live.Load() }

// Leaked is the number of handles freed by the garbage collector because
// nobody called Close.
func (c *Counter) Leaked() int64 { return c.leaked.Load() }

// Closed records that a handle was released; call it once per handle, where
// the native free function runs.
func (c *Counter) Closed() { c.live.Add(-1) }

// Track counts obj as a new live handle and arms a finalizer that counts a
// leak and calls close. close must call Closed (once) and clear the
// finalizer (runtime.SetFinalizer(obj, nil)) when called by the owner.
func Track[T any](c *Counter, obj *T, close func(*T) error) {
	c.live.Add(1)
	runtime.SetFinalizer(obj, func(o *T) {
		c.leaked.Add(1)
		_ = close(o)
	})
}
