package bookout

import (
	"encoding/json"
	"errors"
	"fmt"
)

// IIIF Presentation 2.1 and Open Annotation (2013) terms used here.
const (
	presentation2Context = "http://iiif.io/api/presentation/2/context.json"
	// provSoftwareAgent is the type of the Open Annotation
	// serializedBy agent (the PROV-O class; the Presentation 2 context
	// has no prefix for it).
	provSoftwareAgent = "http://www.w3.org/ns/prov#SoftwareAgent"
)

// Presentation is a IIIF Presentation API major version: the format of a
// manifest and of the annotations written for it.
type Presentation int

// The Presentation versions written.
const (
	// Presentation2 manifests (sc:Manifest, sequences of canvases) get
	// Open Annotation lists (sc:AnnotationList) in their canvases'
	// otherContent.
	Presentation2 Presentation = 2
	// Presentation3 manifests (Manifest, items) get W3C annotation pages
	// in their canvases' annotations.
	Presentation3 Presentation = 3
)

// ManifestVersion returns the Presentation version of the manifest src:
// 3 for type Manifest, 2 for @type sc:Manifest; other JSON (a
// collection, another document) is refused.
func ManifestVersion(src []byte) (Presentation, error) {
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		return 0, fmt.Errorf("bookout: manifest: %w", err)
	}
	return manifestVersion(m)
}

func manifestVersion(m map[string]any) (Presentation, error) {
	switch {
	case m["type"] == "Manifest":
		return Presentation3, nil
	case m["@type"] == "sc:Manifest":
		return Presentation2, nil
	case m["type"] != nil:
		return 0, fmt.Errorf("bookout: not a IIIF manifest (type %v)", m["type"])
	}
	return 0, fmt.Errorf("bookout: not a IIIF manifest (@type %v)", m["@type"])
}

// TranslationPage returns, for a manifest of version p, the annotations of
// a canvas's translated lines: TranslationPage's annotation page for
// Presentation 3, TranslationList's annotation list for 2.
func (p Presentation) TranslationPage(id, canvas, language string, lines []TextLine, gen Agent) ([]byte, error) {
	if p == Presentation2 {
		return TranslationList(id, canvas, language, lines, gen)
	}
	return TranslationPage(id, canvas, language, lines, gen)
}

// ClassPage returns, for a manifest of version p, the annotations of a
// canvas's classes and review flag: ClassPage's annotation page for
// Presentation 3, ClassList's annotation list for 2.
func (p Presentation) ClassPage(id, canvas string, classes []PageClass, flag *ReviewFlag, gen Agent) ([]byte, error) {
	if p == Presentation2 {
		return ClassList(id, canvas, classes, flag, gen)
	}
	return ClassPage(id, canvas, classes, flag, gen)
}

type annotationList struct {
	Context   string        `json:"@context"`
	ID        string        `json:"@id"`
	Type      string        `json:"@type"`
	Resources []annotation2 `json:"resources"`
}

// annotation2 is an Open Annotation as Presentation 2 writes it.
type annotation2 struct {
	ID           string     `json:"@id"`
	Type         string     `json:"@type"`
	Label        string     `json:"label,omitempty"`
	Motivation   string     `json:"motivation"`
	Resource     resource2  `json:"resource"`
	On           any        `json:"on"` // a URL or a specificResource2
	SerializedBy serializer `json:"oa:serializedBy"`
}

// resource2 is an embedded text body (cnt:ContentAsText); Score and
// Reasons are extension properties, as in body.
type resource2 struct {
	Type     string   `json:"@type"`
	Chars    string   `json:"chars"`
	Format   string   `json:"format"`
	Language string   `json:"language,omitempty"`
	Score    *float64 `json:"score,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
}

// specificResource2 is an Open Annotation Specific Resource: a part of
// the canvas full given by a selector, here an oa:Choice of the box
// (default) and the polygon (item), as Mirador writes and reads them.
type specificResource2 struct {
	Type     string  `json:"@type"`
	Full     string  `json:"full"`
	Selector choice2 `json:"selector"`
}

type choice2 struct {
	Type    string    `json:"@type"`
	Default selector2 `json:"default"`
	Item    selector2 `json:"item"`
}

type selector2 struct {
	Type  string `json:"@type"`
	Value string `json:"value"`
}

// serializer is the Open Annotation serializedBy agent: the software
// that wrote the annotation.
type serializer struct {
	ID   string `json:"@id,omitempty"`
	Type string `json:"@type"`
	Name string `json:"foaf:name"`
}

// motivations of the notes' Presentation 2 annotations: a translated
// line is painted on the canvas as the 2.1 specification's transcription
// text is (cnt:ContentAsText, sc:painting); classes classify and a review
// flag comments (the Open Annotation motivations).
var motivations2 = map[noteKind]string{translated: "sc:painting", classified: "oa:classifying", reviewed: "oa:commenting"}

// on2 is an annotation's target on canvas for a line in Presentation 2:
// the canvas at the line's box (an xywh fragment), or, when the line has
// a polygon, an oa:SpecificResource of the canvas whose selector is an
// oa:Choice of the box's oa:FragmentSelector and the polygon's
// oa:SvgSelector.
func on2(canvas string, l TextLine) any {
	if l.Box == nil {
		return canvas
	}
	if len(l.Polygon) < 3 {
		return canvas + "#" + l.Box.fragment()
	}
	return specificResource2{Type: "oa:SpecificResource", Full: canvas, Selector: choice2{Type: "oa:Choice",
		Default: selector2{Type: "oa:FragmentSelector", Value: l.Box.fragment()},
		Item:    selector2{Type: "oa:SvgSelector", Value: svg(l.Polygon)}}}
}

// annotationList2 is the Presentation 2 annotation list id of notes on
// canvas.
func annotationList2(id, canvas string, notes []note, gen Agent) ([]byte, error) {
	l := annotationList{Context: presentation2Context, ID: id, Type: "sc:AnnotationList", Resources: []annotation2{}}
	by := serializer{ID: gen.Homepage, Type: provSoftwareAgent, Name: gen.String()}
	for _, n := range notes {
		l.Resources = append(l.Resources, annotation2{ID: id + "#" + n.frag, Type: "oa:Annotation", Label: n.label,
			Motivation: motivations2[n.kind],
			Resource: resource2{Type: "cnt:ContentAsText", Chars: n.text, Format: "text/plain", Language: n.language,
				Score: n.score, Reasons: n.reasons},
			On: on2(canvas, n.line), SerializedBy: by})
	}
	return json.MarshalIndent(l, "", "  ")
}

// TranslationList returns the IIIF Presentation 2 annotation list id
// (sc:AnnotationList) of a canvas's translated lines, the lines of
// TranslationPage: one sc:painting oa:Annotation a line whose resource is
// the text (cnt:ContentAsText chars, format text/plain, language the
// machine-translation tag), on the canvas at the line's box (a polygon
// line: an oa:SpecificResource whose selector is an oa:Choice of the
// box's oa:FragmentSelector and the polygon's oa:SvgSelector), serialized
// by gen (oa:serializedBy). Empty lines are left out.
func TranslationList(id, canvas, language string, lines []TextLine, gen Agent) ([]byte, error) {
	if id == "" || canvas == "" || language == "" {
		return nil, errors.New("bookout: annotation list needs an id, a canvas and a language")
	}
	return annotationList2(id, canvas, translationNotes(language, lines), gen)
}

// ClassList returns the IIIF Presentation 2 annotation list id of a
// canvas's classes, those of ClassPage: one oa:classifying annotation a
// class (best first, labelled with its rank), its resource the category
// with the score as the extension property "score", and for a flagged
// page an oa:commenting one labelled "needs review" saying so with the
// reasons (also the extension property "reasons"), all on the canvas.
func ClassList(id, canvas string, classes []PageClass, flag *ReviewFlag, gen Agent) ([]byte, error) {
	if id == "" || canvas == "" {
		return nil, errors.New("bookout: annotation list needs an id and a canvas")
	}
	return annotationList2(id, canvas, classNotes(classes, flag), gen)
}
