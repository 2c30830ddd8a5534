// Package deploy holds the Kubernetes manifests (a Kustomize base, its
// overlays and the batch Job) and the compose files of the two services.
// It has no Go code of its own: manifests_test.go renders every overlay
// with Kustomize and decodes each object strictly with the Kubernetes API
// types, then checks the rules of the specifications.
//
// It is a module of its own so that the Kubernetes and Kustomize
// dependencies stay out of the tools' module.
package deploy
