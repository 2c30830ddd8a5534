// Command demoreport scores an ensemble AVG_TOP-N table (pageclass --best)
// against the categories in its FILE paths (category folders), prints Top-1
// and Top-N accuracy and draws the confusion matrix.
//
//	demoreport -table RESULT/..._AVG_TOP-3.csv [-label ensemble] -png OUT.png -title "..."
//
// The label names what made the table in the printed line (an ensemble, one
// model); the title heads the image and should say which pages these are.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/pageclass/confmat"
	"archivekit/internal/pageclass/modelmeta"
)

func main() {
	table := flag.String("table", "", "AVG_TOP-N table")
	png := flag.String("png", "", "confusion matrix image to write")
	title := flag.String("title", "ensemble", "title prefix of the image: what was scored on which pages")
	label := flag.String("label", "ensemble", "what made the table, first word of the printed line")
	flag.Parse()
	if err := run(*table, *png, *title, *label); err != nil {
		fmt.Fprintln(os.Stderr, "demoreport:", err)
		os.Exit(1)
	}
}

func run(table, png, title, label string) error {
	f, err := os.Open(table)
	if err != nil {
		return err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	n := 0
	for ; ; n++ {
		if _, ok := col[fmt.Sprintf("CLASS-%d", n+1)]; !ok {
			break
		}
	}
	conf := make([][]int, len(modelmeta.Categories))
	for i := range conf {
		conf[i] = make([]int, len(modelmeta.Categories))
	}
	var top1, topn int
	for _, r := range recs[1:] {
		truth := strings.SplitN(r[col["FILE"]], "/", 2)[0]
		ti, pi := modelmeta.CategoryIndex(truth), modelmeta.CategoryIndex(r[col["CLASS-1"]])
		if ti < 0 || pi < 0 {
			return fmt.Errorf("%s: row %v: FILE must start with a category folder", table, r[:2])
		}
		conf[ti][pi]++
		if ti == pi {
			top1++
		}
		for k := 1; k <= n; k++ {
			if r[col[fmt.Sprintf("CLASS-%d", k)]] == truth {
				topn++
				break
			}
		}
	}
	pages := len(recs) - 1
	fmt.Printf("%s %.4f %.4f (%d pages, Top-1 and Top-%d)\n", label, float64(top1)/float64(pages), float64(topn)/float64(pages), pages, n)
	if png == "" {
		return nil
	}
	t := fmt.Sprintf("%s: %d pages, accuracy %.1f%% (Top-%d %.1f%%)", title, pages, 100*float64(top1)/float64(pages), n, 100*float64(topn)/float64(pages))
	return atomicfile.Write(png, 0o644, func(w io.Writer) error { return confmat.PNG(w, t, modelmeta.Categories, conf) })
}
