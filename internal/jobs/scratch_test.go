package jobs_test

import (
	"bytes"
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
	"archivekit/internal/service"
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
	// The test service's tables are in its schema (echo-api's).
	if err := db.QueryRow(`SELECT count(*) FROM archivekit_echo_api.archivekit_scratch WHERE job_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestScratchLimit, on SQLite and PostgreSQL: a job's scratch holds at
// most Options.ScratchLimit bytes at once: a Keep past it fails with
// ErrScratchFull, one after a Take has room again, and the file that was
// not kept is fetched by its item; JOBS_SCRATCH_MB sets the limit, and a
// value that is not a number of MiB fails the set-up naming it.
func TestScratchLimit(t *testing.T) { stores(t, testScratchLimit) }

func testScratchLimit(t *testing.T, newStore store) {
	src := "https://books.example.org/"
	var mu sync.Mutex
	var keeps []string
	fetched := map[string]int{}
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			s := jobs.ScratchOf(ctx)
			keep := func(name string) {
				err := s.Keep(ctx, src+name, bytes.Repeat([]byte("x"), 20))
				mu.Lock()
				defer mu.Unlock()
				keeps = append(keeps, fmt.Sprintf("%s:%v", name, errors.Is(err, jobs.ErrScratchFull)))
			}
			keep("1.xml")
			keep("2.xml") // 40 bytes: past the limit
			if _, ok, err := s.Take(ctx, src+"1.xml"); !ok || err != nil {
				return nil, fmt.Errorf("1.xml not taken: %v", err)
			}
			keep("3.xml") // room again
			return []jobs.BookItem{{Name: "2.xml", Source: src + "2.xml"}, {Name: "3.xml", Source: src + "3.xml"}}, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			if data, ok, err := jobs.ScratchOf(ctx).Take(ctx, source); ok || err != nil {
				return data, "text/xml", err
			}
			mu.Lock()
			fetched[source]++
			mu.Unlock()
			return []byte("<fetched/>"), "text/xml", nil
		}}
	store := newStore(t)
	svc, q := newServiceWith(t, store, &echo{}, jobs.Options{Book: book, ScratchLimit: 30})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "mets.xml")})
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(keeps, " "); got != "1.xml:false 2.xml:true 3.xml:false" {
		t.Errorf("keeps (name:full) %s, want 2.xml alone refused", got)
	}
	if fetched[src+"2.xml"] != 1 || fetched[src+"3.xml"] != 0 {
		t.Errorf("fetched %v, want 2.xml alone, once", fetched)
	}

	env := storeEnv(store)
	env[jobs.EnvScratchMB] = "lots"
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc2, _ := service.New(service.Options{Name: "y", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if _, err := jobs.Setup(svc2, lookup, jobs.Options{Path: "/echo", Handler: &echo{}}); err == nil || !strings.Contains(err.Error(), "JOBS_SCRATCH_MB") {
		t.Fatalf("JOBS_SCRATCH_MB=lots: %v", err)
	}
}
