package testservers

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Redis is a real redis-server that a test started on a free 127.0.0.1 port in a temporary
// directory, without persistence, for the fleet-shared board.
type Redis struct {
	// Port is the port it listens on; it keeps it across Restart.
	Port int
	// Password is required by the server when not empty.
	Password string
	bin, dir string
	cmd      *exec.Cmd
	// extra are more redis-server arguments (a cluster node's).
	extra []string
}

// RedisMissing is the reason a test that needs redis-server cannot run, "" when it can: it is
// looked up as $MCB_REDIS_SERVER, else on PATH.
func RedisMissing() string {
	if os.Getenv("MCB_REDIS_SERVER") != "" {
		return ""
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "redis-server is not installed, so the fleet-shared board's tests cannot run: install it with 'scripts/install-test-deps redis' (Debian package redis-server)"
	}
	return ""
}

// skipWithoutRedis skips the test with a loud reason when redis-server is missing; under CI=true
// it fails instead, since CI installs it.
func skipWithoutRedis(t testing.TB) {
	t.Helper()
	if msg := RedisMissing(); msg != "" {
		fmt.Fprintf(os.Stderr, "\n*** SKIP %s: %s ***\n\n", t.Name(), msg)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// StartRedis starts a redis-server for the test and stops it at the test's end. password, when
// not empty, is required from clients.
func StartRedis(t testing.TB, password string) *Redis {
	t.Helper()
	skipWithoutRedis(t)
	r, err := NewRedis(t.TempDir(), password)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// NewRedis starts a redis-server with its files in dir (see RedisMissing first); the caller stops it.
func NewRedis(dir, password string) (*Redis, error) {
	return newRedis(dir, password, nil)
}

func newRedis(dir, password string, extra []string) (*Redis, error) {
	bin := os.Getenv("MCB_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	r := &Redis{bin: bin, dir: dir, Password: password, extra: extra}
	for attempt := 0; ; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		r.Port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		if err := r.start(); err == nil {
			return r, nil
		} else if attempt == 4 {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
	}
}

// URL is the redis:// URL of the server, with its password.
func (r *Redis) URL() string {
	if r.Password != "" {
		return fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", r.Password, r.Port)
	}
	return fmt.Sprintf("redis://127.0.0.1:%d/0", r.Port)
}

func (r *Redis) start() error {
	args := []string{"--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
		"--logfile", filepath.Join(r.dir, "redis.log")}
	if r.Password != "" {
		args = append(args, "--requirepass", r.Password)
	}
	args = append(args, r.extra...)
	cmd := exec.Command(r.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			return fmt.Errorf("redis-server exited: %v: %s", err, lastLines(string(log), 5))
		default:
		}
		if r.ping() {
			r.cmd = cmd
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server on port %d did not answer within 10s", r.Port)
}

// ping reports whether the server answers PING (after AUTH when it has a password).
func (r *Redis) ping() bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.Port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	br := bufio.NewReader(c)
	if r.Password != "" {
		fmt.Fprintf(c, "AUTH %s\r\n", r.Password)
		if l, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(l, "+OK") {
			return false
		}
	}
	fmt.Fprintf(c, "PING\r\n")
	l, err := br.ReadString('\n')
	return err == nil && strings.HasPrefix(l, "+PONG")
}

// Stop kills the server (SIGKILL: as abrupt as a crash) and waits for it.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	for i := 0; i < 200 && r.ping(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	r.cmd = nil
}

// Restart starts the server again on the same port, empty (it keeps nothing on disk).
func (r *Redis) Restart() error {
	if err := r.start(); err != nil {
		return fmt.Errorf("restart redis-server: %w", err)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Signal sends sig to the server (SIGSTOP freezes it: connections are accepted by the kernel and
// never answered, the slow-board case).
func (r *Redis) Signal(sig os.Signal) {
	if r.cmd != nil {
		r.cmd.Process.Signal(sig)
	}
}
