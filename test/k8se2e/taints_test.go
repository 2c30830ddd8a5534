package main

import "testing"

// A rollout that times out names the taints that kept its pods Pending
// (a full disk taints the node with disk-pressure).
func TestTaints(t *testing.T) {
	for _, c := range []struct{ name, out, want string }{
		{"none", "node1\t\n", ""},
		{"empty output", "", ""},
		{"disk pressure", "node1\tnode.kubernetes.io/disk-pressure:NoSchedule \n",
			"node1: node.kubernetes.io/disk-pressure:NoSchedule"},
		{"two nodes, one tainted twice", "a\t\nb\tnode.kubernetes.io/disk-pressure:NoSchedule node.kubernetes.io/not-ready:NoExecute \n",
			"b: node.kubernetes.io/disk-pressure:NoSchedule, node.kubernetes.io/not-ready:NoExecute"},
	} {
		if got := taints(c.out); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
