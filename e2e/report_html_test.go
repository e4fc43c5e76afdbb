package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// nightSteps builds a real ledger through the CLI and the hook, as a night's session would: a tool
// that trips, is blocked, fails its first trial and passes its second; a server-wide 401; calls in
// shadow mode; a hostile hand-named tool; a tool whose calls fail on their own terms (never counted).
var nightSteps = []struct {
	now   string
	stdin string
	env   []string
	args  []string
}{
	{now: "2026-11-29T22:00:00Z", args: []string{"record", "mcp__db__query", "--error", "MCP error -32001: Request timed out"}},
	{now: "2026-11-29T22:10:00Z", args: []string{"record", "mcp__db__query", "--error", "MCP error -32001: Request timed out"}},
	{now: "2026-11-29T22:20:00Z", args: []string{"record", "mcp__db__query", "--error", "MCP error -32001: Request timed out"}},
	{now: "2026-11-29T22:20:30Z", stdin: preToolUse("mcp__db__query"), args: []string{"hook"}},
	{now: "2026-11-29T22:30:00Z", args: []string{"check", "mcp__db__query"}},
	{now: "2026-11-29T22:30:05Z", args: []string{"record", "mcp__db__query", "--error", "MCP error -32001: Request timed out"}},
	{now: "2026-11-29T23:30:00Z", args: []string{"check", "mcp__db__query"}},
	{now: "2026-11-29T23:30:03Z", args: []string{"success", "mcp__db__query"}},
	{now: "2026-11-30T01:00:00Z", args: []string{"record", "mcp__github__search", "--error", "HTTP 401 Unauthorized: Bad credentials"}},
	{now: "2026-11-30T01:00:20Z", stdin: preToolUse("mcp__github__get_file"), env: []string{"MCP_CIRCUIT_FAIL_OPEN=1"}, args: []string{"hook"}},
	{now: "2026-11-30T01:00:40Z", stdin: preToolUse("mcp__github__get_file"), env: []string{"MCP_CIRCUIT_FAIL_OPEN=1"}, args: []string{"hook"}},
	{now: "2026-11-30T02:00:00Z", args: []string{"record", "mcp__evil__x", "--error", "HTTP 500 <script>alert(1)</script> \u202eevil"}},
	{now: "2026-11-30T03:00:00Z", args: []string{"record", "mcp__docs__get_file_contents", "--error", "failed to get file contents: GET https://api.github.com/repos/acme/web/contents/docs/INSTALL.md: 404 Not Found []"}},
	{now: "2026-11-30T03:30:00Z", args: []string{"record", "mcp__docs__get_file_contents", "--error", "failed to get file contents: GET https://api.github.com/repos/acme/web/contents/README.md: 404 Not Found []"}},
}

func preToolUse(tool string) string {
	return fmt.Sprintf(`{"session_id":"s-night","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":%q,"tool_input":{},"tool_use_id":"toolu_1"}`, tool)
}

// TestReportHTMLInChromium renders a real ledger's HTML report in headless Chromium: the page is not
// blank at 1280 px (light and dark) and at a phone's width, and the DOM Chromium built holds one
// lane per circuit whose OPEN spans start at the ledger's trips. MCB_UPDATE_SCREENSHOT=1 writes the
// 1280 px screenshot to docs/report.png.
func TestReportHTMLInChromium(t *testing.T) {
	skipShort(t, "drives headless Chromium")
	chromium := findChromium(t)
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker")
	cli := filepath.Join(bin, "mcp-circuit-breaker")
	proj := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, ".gitignore"), []byte(".claude/mcp_circuit/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TZ=UTC", "CLAUDE_PROJECT_DIR=" + proj}
	for _, s := range nightSteps {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, cli, s.args...)
		cmd.Dir = proj
		cmd.Env = append(append(append([]string{}, base...), "MCP_CIRCUIT_NOW="+s.now), s.env...)
		cmd.Stdin = strings.NewReader(s.stdin)
		out, err := cmd.CombinedOutput()
		cancel()
		// check exits 3 on an open circuit: that is an answer, not a failure.
		if err != nil && !(s.args[0] == "check" && cmd.ProcessState.ExitCode() == 3) {
			t.Fatalf("%s at %s: %v\n%s", strings.Join(s.args, " "), s.now, err, out)
		}
	}
	page := filepath.Join(root, "report.html")
	run(t, append(base, "MCP_CIRCUIT_NOW=2026-11-30T07:00:00Z"), proj, 30*time.Second, cli, "report", "--format", "html", "--output", page)

	// The DOM as Chromium parsed it.
	dom, _ := run(t, base, root, time.Minute, chromium, append(chromiumFlags(root), "--dump-dom", "file://"+page)...)
	wantLanes, wantTrips := ledgerLanes(t, filepath.Join(proj, ".claude", "mcp_circuit", "circuit_log.yaml"))
	lanes := map[string]bool{}
	for _, m := range regexp.MustCompile(`data-lane="([^"]*)"`).FindAllStringSubmatch(dom, -1) {
		lanes[m[1]] = true
	}
	for k := range wantLanes {
		if !lanes[k] {
			t.Errorf("no lane for circuit %s in the DOM (lanes: %v)", k, lanes)
		}
	}
	if len(lanes) != len(wantLanes) {
		t.Errorf("%d lanes in the DOM, want one per circuit: %d", len(lanes), len(wantLanes))
	}
	spans := regexp.MustCompile(`<div class="lane[^"]*" data-lane="([^"]*)"[\s\S]*?</svg>`).FindAllStringSubmatch(dom, -1)
	for _, lane := range spans {
		for _, m := range regexp.MustCompile(`class="open" data-state="OPEN" data-from="([^"]+)"`).FindAllStringSubmatch(lane[0], -1) {
			if !wantTrips[lane[1]+" "+m[1]] {
				t.Errorf("lane %s has an OPEN span from %s, where the ledger has no trip (trips: %v)", lane[1], m[1], wantTrips)
			}
		}
	}
	for trip := range wantTrips {
		key, at, _ := strings.Cut(trip, " ")
		if !strings.Contains(dom, `data-lane="`+key+`"`) || !regexp.MustCompile(`data-lane="`+regexp.QuoteMeta(key)+`"[\s\S]*?class="open" data-state="OPEN" data-from="`+regexp.QuoteMeta(at)+`"`).MatchString(dom) {
			t.Errorf("the trip of %s at %s has no OPEN span in its lane", key, at)
		}
	}
	if strings.Contains(dom, "<script>") || strings.Contains(dom, "\u202e") {
		t.Errorf("a hostile name rendered as markup or a raw bidi override")
	}

	// At a phone's width the table wraps a tool's name only after its "__" parts: a copy of the
	// page with a script that finds, in each name, where Chromium broke the line.
	measure := filepath.Join(root, "measure.html")
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>
var out = [];
document.querySelectorAll("td code").forEach(function (code) {
  var text = code.textContent, r = document.createRange(), top = null, line = "";
  var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), n, lines = [];
  while ((n = walker.nextNode())) {
    for (var i = 0; i < n.length; i++) {
      r.setStart(n, i); r.setEnd(n, i + 1);
      var y = r.getBoundingClientRect().top;
      if (top !== null && y > top + 1) { lines.push(line); line = ""; }
      top = y; line += n.data[i];
    }
  }
  lines.push(line);
  out.push(lines);
});
document.body.setAttribute("data-lines", JSON.stringify(out));
</script></body>`
	if err := os.WriteFile(measure, bytes.Replace(html, []byte("</body>"), []byte(probe), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	phone, _ := run(t, base, root, time.Minute, chromium, append(chromiumFlags(root), "--window-size=390,844", "--dump-dom", "file://"+measure)...)
	m := regexp.MustCompile(`data-lines="([^"]*)"`).FindStringSubmatch(phone)
	if m == nil {
		t.Fatal("at 390 px: the measuring script left no data-lines on the body")
	}
	var names [][]string
	if err := json.Unmarshal([]byte(stdhtml.UnescapeString(m[1])), &names); err != nil {
		t.Fatalf("at 390 px: data-lines %q: %v", m[1], err)
	}
	wrapped := 0
	for _, lines := range names {
		if len(lines) > 1 {
			wrapped++
		}
		for _, l := range lines[:len(lines)-1] {
			if !strings.HasSuffix(l, "__") {
				t.Errorf("at 390 px a tool's name breaks inside a part: lines %q", lines)
			}
		}
	}
	if len(names) == 0 || wrapped == 0 {
		t.Errorf("at 390 px: %d names in the table, %d of them wrapped; want names that wrap at their parts", len(names), wrapped)
	}

	for _, shot := range []struct {
		name  string
		size  string
		flags []string
		dark  bool
	}{
		{name: "desktop-light", size: "1280,900"},
		{name: "desktop-dark", size: "1280,900", flags: []string{"--blink-settings=preferredColorScheme=0"}, dark: true},
		{name: "phone", size: "390,844"},
	} {
		png := filepath.Join(root, shot.name+".png")
		args := append(append(chromiumFlags(root), shot.flags...), "--window-size="+shot.size, "--screenshot="+png, "file://"+page)
		run(t, base, root, time.Minute, chromium, args...)
		if os.Getenv("MCB_KEEP_SCREENSHOTS") != "" {
			data, _ := os.ReadFile(png)
			_ = os.WriteFile(filepath.Join(os.TempDir(), "mcb-"+shot.name+".png"), data, 0o644)
		}
		img := decodePNG(t, png)
		colors, bg := paletteOf(img)
		if colors < 8 {
			t.Errorf("%s: the screenshot has %d colours: blank", shot.name, colors)
		}
		if dark := bg[0]+bg[1]+bg[2] < 3*80; dark != shot.dark {
			t.Errorf("%s: background %v, want dark=%v", shot.name, bg, shot.dark)
		}
		if shot.name == "desktop-light" && os.Getenv("MCB_UPDATE_SCREENSHOT") != "" {
			data, _ := os.ReadFile(png)
			if err := os.WriteFile(filepath.Join("..", "docs", "report.png"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ledgerLanes reads the ledger the test wrote and returns its circuits and, per circuit, the
// instants it tripped ("key at").
func ledgerLanes(t *testing.T, file string) (map[string]bool, map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Fatalf("ledger: %v", problems)
	}
	var b states.Board
	lanes, trips := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		prev := ledger.Closed
		if c := b.Get(e.Tool); c != nil {
			prev = c.State
		}
		b.Apply(e)
		lanes[e.Tool] = true
		if states.Opens(prev, e) {
			trips[e.Tool+" "+e.At.UTC().Format(time.RFC3339)] = true
		}
	}
	return lanes, trips
}

func decodePNG(t *testing.T, file string) image.Image {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return img
}

// paletteOf counts the distinct colours of img (sampled every 2 px) and returns the top-left
// pixel's colour as the background.
func paletteOf(img image.Image) (int, [3]uint32) {
	seen := map[[3]uint32]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	r, g, b, _ := img.At(bounds.Min.X+2, bounds.Min.Y+2).RGBA()
	return len(seen), [3]uint32{r >> 8, g >> 8, b >> 8}
}

// chromiumFlags runs Chromium headless and offline, with a profile of its own under dir.
func chromiumFlags(dir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--disable-extensions", "--user-data-dir=" + filepath.Join(dir, "chromium-profile")}
}

// findChromium returns Debian's chromium, installing it with scripts/install-test-deps chromium when
// it is missing; without it the test skips and says why (under CI=true it fails instead).
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	script, _ := filepath.Abs(filepath.Join("..", "scripts", "install-test-deps"))
	out, err := exec.Command("bash", script, "chromium").Output()
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		return p
	}
	msg := fmt.Sprintf("chromium is not installed and scripts/install-test-deps chromium could not install it (%v)", err)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("skipped: " + msg)
	return ""
}
