package main

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/paradata"
	"archivekit/internal/version"
)

// jobRunMeta starts a job's run metadata: the classifier's run-metadata
// document (internal/paradata, as pageclass writes it) with the service's
// version and image, the models of the job's version with their digests,
// the licence its answers carry (as the provenance of the service's
// document records), and the service's settings; the job queue adds the
// job's form, counts and outputs.
func (s *server) jobRunMeta(ctx context.Context, j jobs.RunJob) (jobs.RunRecord, error) {
	b := s.svc.Config.Build
	run := paradata.Record(j.Start, paradata.Info{ToolVersion: version.String(), ToolCommit: version.Commit(), Repository: paradata.Repository,
		RunnerRef: b.RunnerRef, DockerImage: b.ContainerImage, RunID: j.RunID})
	members, err := s.engine.members(ctx, cmp.Or(strings.TrimSpace(j.Fields["version"]), "all"))
	if err != nil {
		return nil, err
	}
	demo := false
	for _, m := range members {
		run.AddModel(paradata.Model{Revision: m.model.Name, Path: m.model.Dir, Base: m.model.Meta.Base, License: m.model.Meta.License, Digest: m.digest, Demo: m.demo})
		demo = demo || m.demo
	}
	run.SetLicence(s.answerLicence(demo)) // the licence its answers carry, resolved once for both
	o := s.engine.opt
	run.SetConfig("service", "pageclass-api")
	run.SetConfig("device", o.Device)
	run.SetConfig("precision", s.engine.precision.String()) // as resolved on the device (auto: tf32 on CUDA, fp32 on the CPU)
	run.SetConfig("rotation_model", o.Rotation)
	run.SetConfig("batching", o.Batching)
	run.SetConfig("max_pdf_pages", s.maxPDFPages)
	run.SetConfig("pdf_render_dpi", s.decode.DPI)
	run.SetConfig("pdf_renderer", s.decode.Renderer)
	run.SetConfig("pdf_second_look", imageio.SecondLook(s.decode.Renderer))
	run.SetConfig("decode_in_process", s.decode.Isolation == nil)
	run.SetConfig("decode_timeout_s", decodeTimeoutS(s.decode))
	run.SetConfig("decode_memory_mb", decodeMemoryMB(s.decode))
	// The orientation model as pageclass records it (its evidence is in
	// the answers' review).
	if or := s.engine.orient; or != nil {
		run.SetReview("rotation_model", map[string]any{"path": o.Rotation, "digest": or.Digest, "license": or.Meta.License,
			"rotated_confidence": review.RotatedConfidence})
	} else {
		run.SetReview("rotation_model", nil)
	}
	// A book job's book: its problems as warnings and its image group, as
	// pageclass records them.
	if j.BookNote != nil {
		var n bookNote
		if json.Unmarshal(j.BookNote, &n) == nil {
			for _, p := range n.Problems {
				run.Warn("book: " + p)
			}
			if n.ImageGroup != "" {
				run.SetConfig("book_image_group", n.ImageGroup)
			}
		}
	}
	return run, nil
}
