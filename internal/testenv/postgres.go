package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvPostgresBin names the folder of PostgreSQL's server programs (initdb,
// postgres); unset, the newest /usr/lib/postgresql/*/bin (Debian's
// postgresql package, which `make deps` installs) is used.
const EnvPostgresBin = "ARCHIVEKIT_PG_BIN"

// cluster is the test process's throwaway PostgreSQL cluster.
type cluster struct {
	dir  string
	port int
	cmd  *exec.Cmd
	mu   sync.Mutex
	dbs  int
}

var (
	pgOnce sync.Once
	pg     *cluster
	pgErr  error
	pgSkip string
)

// PostgresBin returns the folder of initdb and postgres, or "" when they
// are absent.
func PostgresBin() string {
	if d := os.Getenv(EnvPostgresBin); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d
		}
	}
	return ""
}

// Postgres returns the connection URL of a new, empty database on a
// throwaway PostgreSQL cluster that the test process starts at its first
// call (initdb and postgres in a temporary folder, listening on 127.0.0.1;
// as the user nobody when the process runs as root, since PostgreSQL
// refuses to run as root). The cluster is killed with the test process
// (or by StopPostgres). The test is skipped when PostgreSQL's programs are
// absent, and fails when they do not start.
func Postgres(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() { pg, pgErr = startCluster() })
	if pgSkip != "" {
		t.Skip(pgSkip)
	}
	if pgErr != nil {
		t.Fatalf("PostgreSQL: %v", pgErr)
	}
	pg.mu.Lock()
	pg.dbs++
	name := fmt.Sprintf("t%d", pg.dbs)
	pg.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.url("postgres"))
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	return pg.url(name)
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// StopPostgres stops the cluster of Postgres, if one was started, and
// removes its folder; a TestMain calls it after the tests.
func StopPostgres() {
	if pg == nil || pg.cmd == nil {
		return
	}
	_ = pg.cmd.Process.Signal(syscall.SIGQUIT) // immediate shutdown
	_ = pg.cmd.Wait()
	_ = os.RemoveAll(pg.dir)
}

func startCluster() (*cluster, error) {
	bin := PostgresBin()
	if bin == "" {
		pgSkip = "PostgreSQL's server programs are absent (no /usr/lib/postgresql/*/bin, " + EnvPostgresBin + " unset): install Debian's postgresql package (make deps does)"
		return nil, nil
	}
	// As root the cluster runs as nobody, who must reach its folder: in
	// /tmp (world-writable) rather than a $TMPDIR that may be private.
	base := ""
	if fi, err := os.Stat("/tmp"); os.Geteuid() == 0 && err == nil && fi.Mode().Perm()&0o003 == 0o003 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "archivekit-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			return nil, fmt.Errorf("running as root, and no user nobody to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = []string{"LC_ALL=C", "PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	c.cmd = run("postgres", "-D", data, "-p", strconv.Itoa(c.port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var log []string
		said := false
		for sc.Scan() {
			if !said {
				log = append(log, sc.Text())
				if strings.Contains(sc.Text(), "ready to accept connections") {
					said = true
					ready <- nil
				}
			}
		}
		if !said {
			ready <- errors.New("postgres stopped before it was ready:\n" + strings.Join(log, "\n"))
		}
	}()
	select {
	case err = <-ready:
	case <-time.After(2 * time.Minute):
		err = errors.New("postgres not ready after 2 minutes")
	}
	if err != nil {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}
