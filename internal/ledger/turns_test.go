package ledger

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A run that finds the output taken says whose run holds it: the tool, its
// process, the user and the machine (a team's shared folder, a network
// disk), and waits until it is released.
func TestTakeTurnNamesHolder(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, Folder), 0o777)
	turn := Turn{Lock: TurnLock(dir, "run"), Tool: "pageclass", Output: dir, Waiting: "waiting for the other run"}
	ctx := context.Background()
	unlock, err := TakeTurn(ctx, turn, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	waited := make(chan struct{})
	second := turn
	second.OnWait = func(string) { close(waited) }
	done := make(chan error, 1)
	go func() {
		u, err := TakeTurn(ctx, second, slog.New(slog.NewTextHandler(&logged, nil)))
		if err == nil {
			u()
		}
		done <- err
	}()
	<-waited
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Skip("no user name here:", err)
	}
	host, _ := os.Hostname()
	want := "pageclass process " + strconv.Itoa(os.Getpid()) + " of " + me.Username + " on " + host + ", started "
	if !strings.Contains(logged.String(), want) {
		t.Errorf("waiting line %q does not name %q", logged.String(), want)
	}
}
