// Command pause is the sandbox ("pause") container of the one-node cluster of
// make k8s-e2e (tools/k8s/cluster.sh): it holds a pod's namespaces, reaps
// orphaned children and exits 0 on SIGTERM or SIGINT. It is built static
// and packed into the image localhost/archivekit/pause, so the node never
// pulls one from a registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
