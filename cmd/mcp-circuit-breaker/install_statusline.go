package main

// install --statusline wires `statusline` as Claude Code's status-line command, and only where the
// user has none: Claude Code shows one status line, from the settings file of highest precedence
// that sets one, so a line of ours in any scope would hide theirs. When they have one, install
// keeps it and prints how to make it show ours too.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
)

// statusLineKey is the settings key of Claude Code's status line:
// {"type": "command", "command": "…"} (a shell command line; no exec form).
const statusLineKey = "statusLine"

// statusLineCommand is the status line's command for the gate binary bin.
func statusLineCommand(bin string) string { return shellQuote(bin) + " statusline" }

// ourStatusLine reports whether a statusLine value runs our statusline command, and returns its
// command.
func ourStatusLine(v *settings.Value) (command string, ours bool) {
	if v == nil {
		return "", false
	}
	c, _ := v.Get("command").Str()
	f := shellFields(c)
	return c, len(f) == 2 && isBinary(f[0]) && f[1] == "statusline"
}

// otherStatusLine is a status line in a settings file.
type otherStatusLine struct {
	display, command string
	ours             bool
}

// statusLines reads the status lines of the Claude Code settings files that share a status line
// with the scope of ap, but the one at skip: managed, the project's local and shared ones (for a
// project scope), the user's; highest precedence first.
func (e *Env) statusLines(ap scopePaths, skip string) []otherStatusLine {
	type file struct{ path, display string }
	files := []file{{managedSettings(), managedSettings()}}
	if ap.dir != "" {
		// A project's line is hidden by a local one, and hides the user's: either way one of
		// them is not shown.
		for _, name := range []string{"settings.local.json", "settings.json"} {
			p := filepath.Join(ap.dir, ".claude", name)
			files = append(files, file{p, showPath(ap.dir, "", p)})
		}
	}
	if cfg, err := e.userConfigDir(); err == nil {
		p := filepath.Join(cfg, "settings.json")
		files = append(files, file{p, showPath("", ap.home, p)})
	}
	var out []otherStatusLine
	for _, f := range files {
		p := f.path
		if p == skip {
			continue
		}
		data, err := safefile.ReadBounded(p, safefile.MaxConfigBytes)
		if errors.Is(err, fs.ErrNotExist) || err != nil {
			continue
		}
		doc, err := settings.Parse(p, data)
		if err != nil {
			continue
		}
		if v := doc.Root().Get(statusLineKey); v != nil {
			c, ours := ourStatusLine(v)
			out = append(out, otherStatusLine{display: f.display, command: c, ours: ours})
		}
	}
	return out
}

// planStatusLine adds our status line to Claude Code's settings file of the scope (sf, already
// planned with the hooks) when no settings file has a status line of the user's; bin is the gate
// binary. It returns what to print about it.
func (e *Env) planStatusLine(sf *plan, ap scopePaths, bin string) (string, error) {
	doc, err := settings.Parse(sf.display, sf.new)
	if err != nil {
		return "", err
	}
	want := statusLineCommand(bin)
	root := doc.Root()
	if v := root.Get(statusLineKey); v != nil {
		c, ours := ourStatusLine(v)
		if !ours {
			return combineAdvice(sf.display, c, want), nil
		}
		if c == want {
			return fmt.Sprintf("status line: %s (unchanged)", want), nil
		}
		v.Set("command", settings.String(want))
		sf.new = doc.Bytes()
		sf.done += "; status line updated"
		return fmt.Sprintf("status line: %s (was %s)", want, c), nil
	}
	// The first of the others is the one Claude Code would show instead of ours, or above it.
	if others := e.statusLines(ap, sf.path); len(others) > 0 {
		o := others[0]
		if o.ours {
			return fmt.Sprintf("status line: already wired in %s (%s)", o.display, o.command), nil
		}
		return combineAdvice(o.display, o.command, want), nil
	}
	line := settings.NewObject()
	line.Set("type", settings.String("command"))
	line.Set("command", settings.String(want))
	root.Set(statusLineKey, line)
	sf.new = doc.Bytes()
	if sf.done == "" || strings.HasPrefix(sf.done, "unchanged") {
		sf.done = "status line added"
	} else {
		sf.done += "; status line added"
	}
	return "status line: " + want, nil
}

// combineAdvice says that the user's status line in file is kept, and how to make it show ours
// too: one command that gives both the same JSON and prints both on one line.
func combineAdvice(file, theirs, ours string) string {
	both := `input=$(cat); printf '%s %s\n' "$(printf '%s' "$input" | { ` + theirs + ` ; })" "$(printf '%s' "$input" | ` + ours + `)"`
	b, _ := json.Marshal(both)
	return fmt.Sprintf("status line: not wired: %s has a status line of its own, which install keeps (Claude Code shows one). "+
		"To show the open MCP circuits in it too, set its command to run both:\n  \"command\": %s", file, b)
}

// removeStatusLine deletes our status line from doc; it reports whether there was one.
func removeStatusLine(doc *settings.Doc) bool {
	if _, ours := ourStatusLine(doc.Root().Get(statusLineKey)); ours {
		doc.Root().Delete(statusLineKey)
		return true
	}
	return false
}
