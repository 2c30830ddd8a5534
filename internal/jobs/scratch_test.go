package jobs_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"archivekit/internal/jobs"
	"archivekit/internal/service/servicetest"
)

// TestBookScratch, on SQLite and PostgreSQL: what a book job keeps in its
// scratch while its book is read (translate-api's text files read for the
// book's language) is taken by the item that needs it, in place of a
// second fetch, once; what no item takes is gone when the job ends.
// Outside a job there is no scratch, and it keeps nothing.
func TestBookScratch(t *testing.T) { stores(t, testBookScratch) }

func testBookScratch(t *testing.T, newStore store) {
	src := "https://books.example.org/"
	var mu sync.Mutex
	var problems []string
	fetched := map[string]int{}
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			s := jobs.ScratchOf(ctx)
			for _, name := range []string{"1.xml", "unlisted.xml"} {
				if err := s.Keep(ctx, src+name, []byte("<kept "+name+"/>")); err != nil {
					return nil, err
				}
			}
			return []jobs.BookItem{{Name: "1.xml", Source: src + "1.xml"}, {Name: "2.xml", Source: src + "2.xml"}}, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			s := jobs.ScratchOf(ctx)
			data, ok, err := s.Take(ctx, source)
			if err != nil {
				return nil, "", err
			}
			if ok {
				if _, again, _ := s.Take(ctx, source); again {
					mu.Lock()
					problems = append(problems, source+" taken twice")
					mu.Unlock()
				}
				return data, "text/xml", nil
			}
			mu.Lock()
			fetched[source]++
			mu.Unlock()
			return []byte("<fetched/>"), "text/xml", nil
		}}
	var got []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b, _ := io.ReadAll(f)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, "{}")
	})
	store := newStore(t)
	svc, q := newServiceWith(t, store, h, jobs.Options{Book: book})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "mets.xml")})
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " ") != "<kept 1.xml/> <fetched/>" || fetched[src+"1.xml"] != 0 || fetched[src+"2.xml"] != 1 || len(problems) > 0 {
		t.Errorf("items ran on %q; fetched %v; %v; want the kept 1.xml, 2.xml fetched once", got, fetched, problems)
	}
	if left := scratchLeft(t, store, st.ID); left != 0 {
		t.Errorf("%d files left in the ended job's scratch, want 0", left)
	}
	var none *jobs.Scratch = jobs.ScratchOf(context.Background())
	if err := none.Keep(context.Background(), "x", []byte("x")); err != nil || none != nil {
		t.Errorf("outside a job: scratch %v, Keep %v", none, err)
	}
	if _, ok, err := none.Take(context.Background(), "x"); ok || err != nil {
		t.Errorf("outside a job Take gave %v, %v", ok, err)
	}
}

// scratchLeft counts the files job id's scratch holds in store.
func scratchLeft(t *testing.T, store, id string) int {
	t.Helper()
	if !strings.HasPrefix(store, "postgres://") {
		entries, err := os.ReadDir(filepath.Join(store, "jobs", id, "scratch"))
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	db, err := sql.Open("pgx", store)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM archivekit_scratch WHERE job_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
