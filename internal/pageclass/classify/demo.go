package classify

// demoDigests are the digests (modelmeta.Digest) of the shipped demo
// models, weights/demo/model_v*. A model is demo by what it is, not by
// where it lies: the demo models copied into a folder of one's own and
// given with -m, or mounted as ./model, still label their results demo.
// TestDemoDigests keeps the list equal to the shipped folders.
var demoDigests = map[string]string{
	"sha256:f80ada124748255587faa7768b4050db0d6a41e542c5c4245514d4da42d837e5": "v1.4",
	"sha256:ba7b11dfc8d07e81b59197e453199db780935d63a0d25c4fb3b808af64808a17": "v2.4",
	"sha256:a71f7c4f653c75e8b750fc993d981a6125087986500f81e96c602d9f2cab9275": "v3.4",
	"sha256:b7d0dd540b6b49908f38bc730bb3658f865663e01beaaded7fbd6bc55858f80c": "v4.4",
	"sha256:335869f576d50a1a8c05e3c1145365b22247913d9f0c9fba8874ed045e67eeeb": "v5.4",
}

// IsDemoDigest reports whether digest is one of a shipped demo model.
func IsDemoDigest(digest string) bool {
	_, ok := demoDigests[digest]
	return ok
}
