// Command testprogress turns the `go test -json` stream on stdin into the progress a person can
// follow: one line per package as it finishes, a heartbeat naming the packages still running (the
// cmd package's scripts run for minutes), every skipped test with its reason, and the full output
// of every failing test. It exits 1 when a test, a package or a build failed.
//
//	go test -json ./... | go run ./scripts/testprogress
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one record of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail records
}

// pkgState is what is known of one package while it runs.
type pkgState struct {
	start   time.Time
	passed  int
	failed  int
	skipped int
	done    int                 // tests and subtests finished, for the heartbeat
	output  map[string][]string // by test ("" for the package itself)
}

type progress struct {
	mu      sync.Mutex
	out     io.Writer
	module  string
	start   time.Time
	running map[string]*pkgState
	builds  map[string][]string // build output by import path
	failed  bool
	pkgs    int
	// Top-level tests of every package, for the closing tally.
	passed, failedN, skipped int
}

func main() {
	p := &progress{out: os.Stdout, module: modulePath(), start: time.Now(), running: map[string]*pkgState{}, builds: map[string][]string{}}
	done := make(chan struct{})
	go p.heartbeat(done, 20*time.Second)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			// Not a test2json record (a build error printed by the go command itself).
			fmt.Fprintln(p.out, sc.Text())
			continue
		}
		p.handle(e)
	}
	close(done)
	p.mu.Lock()
	defer p.mu.Unlock()
	status := "all passed"
	if p.failed {
		status = "FAILED"
	}
	fmt.Fprintf(p.out, "go test: %d packages, %s in %s\n", p.pkgs, status, time.Since(p.start).Round(time.Second))
	// The plain tally alone on a line, the closing line CI reads whatever the runner.
	fmt.Fprintf(p.out, "%d passed, %d failed, %d skipped\n", p.passed, p.failedN, p.skipped)
	if p.failed {
		os.Exit(1)
	}
}

// modulePath reads the module path from go.mod, to print short package names.
func modulePath() string {
	data, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(rest) + "/"
		}
	}
	return ""
}

func (p *progress) short(pkg string) string {
	if s := strings.TrimPrefix(pkg, p.module); s != "" {
		return s
	}
	return pkg
}

func (p *progress) handle(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Action {
	case "build-output":
		p.builds[e.ImportPath] = append(p.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		p.failed = true
		fmt.Fprintf(p.out, "BUILD FAIL  %s\n%s", e.ImportPath, strings.Join(p.builds[e.ImportPath], ""))
		return
	}
	st := p.running[e.Package]
	if st == nil {
		st = &pkgState{start: time.Now(), output: map[string][]string{}}
		p.running[e.Package] = st
	}
	top := e.Test != "" && !strings.Contains(e.Test, "/")
	if e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
		st.done++
	}
	switch e.Action {
	case "output":
		st.output[e.Test] = append(st.output[e.Test], e.Output)
	case "pass":
		// A passed test's output, a passed subtest's included, is never shown.
		delete(st.output, e.Test)
		if top {
			st.passed++
		}
		if e.Test == "" {
			p.finish(e, st, "ok  ")
		}
	case "skip":
		if top {
			st.skipped++
			fmt.Fprintf(p.out, "  skip  %s %s: %s\n", p.short(e.Package), e.Test, skipReason(st.output[e.Test]))
		}
		delete(st.output, e.Test)
		if e.Test == "" {
			p.finish(e, st, "ok  ")
		}
	case "fail":
		p.failed = true
		if top {
			st.failed++
			fmt.Fprintf(p.out, "--- FAIL  %s %s (%.1fs)\n%s", p.short(e.Package), e.Test, e.Elapsed, st.failedOutput(e.Test))
		}
		if e.Test == "" {
			// What the package printed outside any test (a panic, a TestMain failure).
			if out := st.output[""]; len(out) > 0 {
				fmt.Fprint(p.out, strings.Join(out, ""))
			}
			p.finish(e, st, "FAIL")
		}
	}
}

// failedOutput is what a failed top-level test printed: its own lines, then those of each subtest
// that did not pass (the passed ones were dropped), in name order. A script suite with one broken
// script shows that script, not the hundred that passed.
func (st *pkgState) failedOutput(test string) string {
	names := []string{test}
	for name := range st.output {
		if strings.HasPrefix(name, test+"/") {
			names = append(names, name)
		}
	}
	slices.Sort(names[1:])
	var sb strings.Builder
	for _, name := range names {
		sb.WriteString(strings.Join(st.output[name], ""))
		delete(st.output, name)
	}
	return sb.String()
}

// finish prints the package line and forgets the package.
func (p *progress) finish(e event, st *pkgState, word string) {
	p.pkgs++
	p.passed += st.passed
	p.failedN += st.failed
	p.skipped += st.skipped
	detail := fmt.Sprintf("%d passed", st.passed)
	if st.failed > 0 {
		detail += fmt.Sprintf(", %d FAILED", st.failed)
	}
	if st.skipped > 0 {
		detail += fmt.Sprintf(", %d skipped", st.skipped)
	}
	if st.passed+st.failed+st.skipped == 0 {
		detail = "no tests"
	}
	fmt.Fprintf(p.out, "%s  %-40s %6.1fs  %s\n", word, p.short(e.Package), e.Elapsed, detail)
	delete(p.running, e.Package)
}

// skipReason is the last line a skipped test printed, which is its t.Skip message.
func skipReason(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "--- SKIP") || strings.HasPrefix(l, "=== ") {
			continue
		}
		return l
	}
	return "(no reason given)"
}

// heartbeat names the packages still running, with their tests done so far, every interval, or
// says that go test is still compiling.
func (p *progress) heartbeat(done <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		p.mu.Lock()
		var parts []string
		for pkg, st := range p.running {
			parts = append(parts, fmt.Sprintf("%s (%d tests and subtests done)", p.short(pkg), st.done))
		}
		slices.Sort(parts)
		elapsed := time.Since(p.start).Round(time.Second)
		if len(parts) > 0 {
			fmt.Fprintf(p.out, "  … %s: still running %s\n", elapsed, strings.Join(parts, ", "))
		} else {
			// Before a test binary starts, go test is compiling: with -race and a cold build
			// cache that alone takes minutes.
			fmt.Fprintf(p.out, "  … %s: compiling test binaries (%d packages done)\n", elapsed, p.pkgs)
		}
		p.mu.Unlock()
	}
}
