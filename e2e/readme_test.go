package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runMarker marks the README's shell blocks that TestREADME runs.
const runMarker = "<!-- readme-test: run -->"

// The two commands the README opens with.
var twoCommands = []string{"go run ./cmd/mcp-circuit-breaker demo", "scripts/test"}

// readmeBlock is one fenced shell block of the README.
type readmeBlock struct {
	line     int // of the opening fence
	runnable bool
	lines    []string
}

// readmeBlocks returns the fenced sh blocks of a Markdown text, marked runnable when the line
// before the fence is runMarker.
func readmeBlocks(text string) []readmeBlock {
	var out []readmeBlock
	var cur *readmeBlock
	prev := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && (l == "```sh" || l == "```bash"):
			cur = &readmeBlock{line: n, runnable: strings.TrimSpace(prev) == runMarker}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
		prev = l
	}
	return out
}

// exitComment finds a trailing "# exit N" comment: the exit status the line must end with.
var exitComment = regexp.MustCompile(`\s+# exit (\d+)\b.*$`)

// script turns a block into a bash script that fails on the first line that does not exit as
// the README says (0, or the N of a "# exit N" comment), naming that line.
func (b readmeBlock) script() string {
	var sb strings.Builder
	for i, l := range b.lines {
		cmd, want := l, 0
		if m := exitComment.FindStringSubmatch(l); m != nil {
			cmd = l[:len(l)-len(m[0])]
			want, _ = strconv.Atoi(m[1])
		}
		if strings.TrimSpace(cmd) == "" || strings.HasPrefix(strings.TrimSpace(cmd), "#") {
			continue
		}
		fmt.Fprintf(&sb, "echo '$ '%s\n", shellQuote(strings.TrimSpace(cmd)))
		fmt.Fprintf(&sb, "if %s\nthen rc=0; else rc=$?; fi\n", cmd)
		fmt.Fprintf(&sb, "if [ \"$rc\" -ne %d ]; then echo \"README.md:%d: exit status $rc, want %d\" >&2; exit 1; fi\n", want, b.line+1+i, want)
	}
	return sb.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestREADME runs the README's examples as a new user would type them: the first command of the
// two the README opens with (the demo; the second is this test suite), then every block marked
// runnable, in order, in a fresh HOME, with `go install` directed into the test's own directory.
func TestREADME(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	if runtime.GOOS == "windows" {
		t.Skip("skipped: the README's examples are POSIX shell")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipped: bash is not on PATH")
	}
	repo, data := readREADME(t)
	blocks := readmeBlocks(string(data))
	if len(blocks) == 0 {
		t.Fatal("README.md has no shell block")
	}
	// The README opens with exactly the two commands, and the second one exists.
	if first := blocks[0]; !equalLines(first.lines, twoCommands) || first.runnable {
		t.Errorf("README.md:%d: the first shell block is %q, want exactly %q", first.line, first.lines, twoCommands)
	}
	if fi, err := os.Stat(filepath.Join(repo, "scripts", "test")); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("scripts/test is not an executable file: %v", err)
	}

	root := t.TempDir()
	home := filepath.Join(root, "home")
	gobin := filepath.Join(root, "gobin")
	project := filepath.Join(home, "src", "your-project")
	for _, d := range []string{project, gobin, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The module and build caches stay the caller's (a fresh HOME would download and rebuild
	// everything); everything else comes from the fresh HOME. Our binaries are found only in
	// GOBIN: directories of the caller's PATH that hold them are left out.
	env := []string{
		"HOME=" + home, "TMPDIR=" + filepath.Join(root, "tmp"), "NO_COLOR=1",
		"GOBIN=" + gobin, "GOPATH=" + goEnv(t, "GOPATH"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"),
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOFLAGS=" + os.Getenv("GOFLAGS"), "GOPROXY=" + goEnv(t, "GOPROXY"),
		"GOTOOLCHAIN=local",
		"PATH=" + gobin + string(os.PathListSeparator) + withoutOurBinaries(os.Getenv("PATH")),
		"MCP_CIRCUIT_NOW=2026-11-29T12:00:00Z",
	}

	// The demo, as the README's first command.
	t.Run("demo", func(t *testing.T) {
		out := runBash(t, bash, env, repo, twoCommands[0]+"\n", 5*time.Minute)
		if !strings.Contains(out, "Calls blocked") && !strings.Contains(out, "calls blocked") {
			t.Errorf("the demo's output has no report (\"Calls blocked\"):\n%s", out)
		}
	})

	cwd := repo
	ran := 0
	for _, b := range blocks {
		if !b.runnable {
			continue
		}
		ran++
		name := fmt.Sprintf("block_at_line_%d", b.line)
		t.Run(name, func(t *testing.T) {
			cwdFile := filepath.Join(root, "cwd")
			script := "set -u\n" + b.script() + "pwd > " + shellQuote(cwdFile) + "\n"
			out := runBash(t, bash, env, cwd, script, 3*time.Minute)
			t.Logf("README.md:%d:\n%s", b.line, out)
			if next, err := os.ReadFile(cwdFile); err == nil {
				cwd = strings.TrimSpace(string(next))
			}
		})
	}
	if ran == 0 {
		t.Errorf("README.md has no block marked %q", runMarker)
	}
}

func equalLines(got, want []string) bool {
	var g []string
	for _, l := range got {
		if l = strings.TrimSpace(l); l != "" {
			g = append(g, l)
		}
	}
	if len(g) != len(want) {
		return false
	}
	for i := range g {
		if g[i] != want[i] {
			return false
		}
	}
	return true
}

// goEnv returns `go env NAME` as the caller's environment sets it.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// runBash runs script with bash in dir and returns its combined output; it fails the test on a
// non-zero exit.
func runBash(t *testing.T, bash string, env []string, dir, script string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", script)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash in %s: %v\n%s", dir, err, out.String())
	}
	return out.String()
}

// mdLink is a Markdown inline link; the target is group 1.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks that every relative link of README.md, CONTRIBUTING.md, e2e/ and bench/README.md and docs/*.md names
// a file of the repository and, when it has one, a heading of that file; and that no file
// points outside the repository (a clone has nothing beside it).
func TestDocsLinks(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files = append(files, filepath.Join(repo, "README.md"), filepath.Join(repo, "CONTRIBUTING.md"), filepath.Join(repo, "e2e", "README.md"), filepath.Join(repo, "bench", "README.md"))
	if len(files) < 5 {
		t.Fatalf("docs/ has %d Markdown files", len(files)-2)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repo, f)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
			}
			if r, err := filepath.Rel(repo, dest); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s: link %q points outside the repository", rel, target)
				continue
			}
			fi, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, target, err)
				continue
			}
			if anchor == "" || fi.IsDir() {
				continue
			}
			text, _ := os.ReadFile(dest)
			if !hasAnchor(string(text), anchor) {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", rel, target, anchor, filepath.Base(dest))
			}
		}
	}
}

// hasAnchor reports whether a Markdown text has a heading whose GitHub anchor is anchor:
// lowercased, punctuation other than '-' and '_' dropped, spaces turned into '-'.
func hasAnchor(text, anchor string) bool {
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("—–…→", r):
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}

// readREADME returns the repository's root and its README.md.
func readREADME(t *testing.T) (repo string, data []byte) {
	t.Helper()
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return repo, data
}

// readmeMaxLines keeps the README on one screen: what it is, the two commands, install, one denied
// call and links; everything else belongs in docs/ or CONTRIBUTING.md.
const readmeMaxLines = 200

// TestREADMEFitsOneScreen checks the README's length and that the files it promises exist.
func TestREADMEFitsOneScreen(t *testing.T) {
	repo, data := readREADME(t)
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move detail to docs/ or CONTRIBUTING.md", n, readmeMaxLines)
	}
	for _, f := range []string{"LICENSE", "CONTRIBUTING.md"} {
		if _, err := os.Stat(filepath.Join(repo, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestDocsIndex checks that docs/README.md, the index of the reference, links every page of docs/.
func TestDocsIndex(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(repo, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range mdLink.FindAllStringSubmatch(string(index), -1) {
		path, _, _ := strings.Cut(m[1], "#")
		linked[path] = true
	}
	pages, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if len(pages) < 5 {
		t.Fatalf("docs/ has %d pages", len(pages))
	}
	for _, p := range pages {
		if name := filepath.Base(p); name != "README.md" && !linked[name] {
			t.Errorf("docs/README.md does not list %s", name)
		}
	}
}
