package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
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
	bin  string
	cred *syscall.Credential // the user nobody when the process runs as root
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
	pg.stop()
}

func startCluster() (*cluster, error) {
	c, err := initCluster("")
	if err != nil || c == nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	return c, nil
}

// initCluster makes a cluster in a new temporary folder and chooses its
// port, without starting it: the user postgres has password, or trusts
// every connection when password is empty. It is nil, with pgSkip set,
// when PostgreSQL's programs are absent.
func initCluster(password string) (*cluster, error) {
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
	c := &cluster{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, and no user nobody to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	args := []string{"-D", filepath.Join(dir, "data"), "-U", "postgres", "-E", "UTF8", "--no-sync"}
	if password == "" {
		args = append(args, "-A", "trust")
	} else {
		pwfile := filepath.Join(dir, "pw")
		err := os.WriteFile(pwfile, []byte(password+"\n"), 0o600)
		if err == nil && c.cred != nil {
			err = os.Chown(pwfile, int(c.cred.Uid), int(c.cred.Gid))
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		args = append(args, "-A", "scram-sha-256", "--pwfile", pwfile)
	}
	if out, err := c.command("initdb", args...).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	return c, nil
}

// command is one of the cluster's programs, run in its folder (as nobody
// when the process runs as root), killed with the test process.
func (c *cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"LC_ALL=C", "PATH=" + c.bin + ":/usr/bin:/bin", "HOME=" + c.dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// start starts the cluster's server and waits until it accepts
// connections (at most 2 minutes); on failure the server is killed.
func (c *cluster) start() error {
	c.cmd = c.command("postgres", "-D", filepath.Join(c.dir, "data"), "-p", strconv.Itoa(c.port), "-k", c.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300")
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := c.cmd.Start(); err != nil {
		return err
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
		return err
	}
	return nil
}

// stop stops the cluster's server, if started, and removes its folder.
func (c *cluster) stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGQUIT) // immediate shutdown
		_ = c.cmd.Wait()
	}
	_ = os.RemoveAll(c.dir)
}

// PostgresServer is a test's own PostgreSQL cluster, whose user postgres
// has a password, started when the test says (to test a client that
// waits for its server).
type PostgresServer struct {
	c *cluster
}

// NewPostgresServer makes a cluster whose user postgres has password (on
// 127.0.0.1, at a port chosen now) and does not start it: Start does. It
// is stopped and removed when the test ends. The test is skipped when
// PostgreSQL's programs are absent.
func NewPostgresServer(t testing.TB, password string) *PostgresServer {
	t.Helper()
	c, err := initCluster(password)
	if c == nil && err == nil {
		t.Skip(pgSkip)
	}
	if err != nil {
		t.Fatalf("PostgreSQL: %v", err)
	}
	t.Cleanup(c.stop)
	return &PostgresServer{c: c}
}

// URL is the connection URL of the server's database postgres as user
// postgres with password.
func (s *PostgresServer) URL(password string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", password), Host: s.Address(), Path: "/postgres", RawQuery: "sslmode=disable"}
	return u.String()
}

// Address is the server's host:port.
func (s *PostgresServer) Address() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.c.port))
}

// Start starts the server and returns when it accepts connections. It may
// be called from any goroutine, once.
func (s *PostgresServer) Start() error {
	return s.c.start()
}
