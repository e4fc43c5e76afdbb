package probe

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// startFailure classifies an error of starting a stdio server. A command that does not exist or
// cannot be executed is a configuration failure: no retry fixes it, so it is NOT_FOUND and trips
// at once (docs/probes.md). Anything else (too many processes, a pipe that could not be made) may pass.
func startFailure(err error) (ledger.FailureType, string) {
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, syscall.ENOENT):
		return ledger.NotFound, "command_not_found"
	case errors.Is(err, exec.ErrDot), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.EPERM):
		return ledger.NotFound, "command_not_executable"
	}
	return ledger.Timeout, "spawn_failed"
}

// startHint says what to fix after a configuration failure.
func startHint(cause string) string {
	switch cause {
	case "command_not_found":
		return " (the server's command does not exist: install it, or fix \"command\" in its MCP configuration)"
	case "command_not_executable":
		return " (the server's command is not executable: fix its permissions, or \"command\" in its MCP configuration)"
	}
	return ""
}

// CommandProblem says what is wrong with a stdio server's command before anything is run: it
// does not exist (on PATH, or at its path, relative paths taken from dir) or is not executable.
// It returns "" for a command that can be started, and for servers that are not stdio.
func CommandProblem(s mcpconfig.Server, dir string) string {
	if s.Transport != mcpconfig.TransportStdio {
		return ""
	}
	if s.Command == "" {
		return "no command configured"
	}
	if !strings.Contains(s.Command, "/") {
		if _, err := exec.LookPath(s.Command); err != nil {
			if errors.Is(err, exec.ErrNotFound) {
				return fmt.Sprintf("command %s not found on PATH", quoteArg(s.Command))
			}
			return fmt.Sprintf("command %s cannot be run: %v", quoteArg(s.Command), err)
		}
		return ""
	}
	path := s.Command
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	// Stat, never open: nothing of the command is read or run here.
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("command %s does not exist", quoteArg(s.Command))
	case err != nil:
		return fmt.Sprintf("command %s: %v", quoteArg(s.Command), err)
	case fi.IsDir():
		return fmt.Sprintf("command %s is a directory", quoteArg(s.Command))
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Sprintf("command %s is not executable (mode %s)", quoteArg(s.Command), fi.Mode().Perm())
	}
	return ""
}

// process is a stdio server started by the probe, in its own process group.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end: the server's stdin
	stdout *os.File // our end: the server's stdout
	stderr *tail
	exited chan struct{} // closed when Wait has returned
	state  *os.ProcessState
}

// startProcess starts s.Command with s.Args directly (never through a shell, docs/security.md), in a
// new process group, with pipes for stdin and stdout and a bounded tail of stderr.
func startProcess(s mcpconfig.Server, opts Options) (*process, error) {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = opts.Dir
	if len(s.Env) > 0 || opts.Environ != nil {
		base := opts.Environ
		if base == nil {
			base = os.Environ()
		}
		cmd.Env = mergeEnv(base, s.Env)
	}
	setProcessGroup(cmd)
	// A grandchild that inherited stderr could keep Wait blocked after the server exits; the
	// group kill normally ends it, WaitDelay bounds it in any case.
	cmd.WaitDelay = 500 * time.Millisecond
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("create stdout pipe: %w", err)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: newTail(opts.StderrLimit), exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	err = cmd.Start()
	// The child has its own copies now; ours must be closed so that EOF is seen when it exits.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

// exitedWithin reports whether the server has exited, waiting at most d for it.
func (p *process) exitedWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// stop ends the server and everything it started. A healthy server gets the MCP stdio shutdown
// (stdin closed, then SIGTERM, then SIGKILL, each after grace); a failed one is killed at once.
// In both cases the whole process group is SIGKILLed at the end, because a wrapper (`sh -c`,
// npx, uvx) may exit and leave the real server behind.
func (p *process) stop(graceful bool, grace time.Duration) {
	p.stdin.Close()
	if graceful && !p.exitedWithin(grace) {
		signalGroup(p.cmd, sigTerm)
		p.exitedWithin(grace)
	}
	signalGroup(p.cmd, sigKill)
	<-p.exited // bounded: the group is dead and WaitDelay caps the stderr copy
	p.stdout.Close()
}

// exitText describes how the server ended, in which phase, and what it said on stderr.
func (p *process) exitText(what string) string {
	msg := "process exited"
	if p.state != nil {
		msg = "process exited (" + p.state.String() + ")"
	}
	msg += " during " + what
	if t := strings.TrimSpace(p.stderr.String()); t != "" {
		msg += "; stderr: " + t
	}
	return msg
}

// mergeEnv returns base with the variables of add set, replacing earlier values.
func mergeEnv(base []string, add map[string]string) []string {
	out := make([]string, 0, len(base)+len(add))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, replaced := add[k]; !replaced {
			out = append(out, kv)
		}
	}
	for _, k := range sortedKeys(add) {
		out = append(out, k+"="+add[k])
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// quoteArg quotes a command-line word for display only; nothing is ever run through a shell.
func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`|&;<>()*?[]{}~#!") {
		return s
	}
	return strconv.Quote(s)
}

// tail is an io.Writer that keeps the last n bytes written to it.
type tail struct {
	mu      sync.Mutex
	n       int
	buf     []byte
	dropped bool
}

func newTail(n int) *tail { return &tail{n: n} }

// Write implements io.Writer; it never fails, so the child never blocks on stderr.
func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
		t.dropped = true
	}
	return len(b), nil
}

// String returns the kept bytes, starting at a line boundary when earlier output was dropped.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if t.dropped {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
		s = "…" + s
	}
	return s
}
