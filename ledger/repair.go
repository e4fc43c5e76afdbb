package ledger

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// RepairResult says what Repair did.
type RepairResult struct {
	// Split is the number of merged items that were split back into separate entries.
	Split int
	// Quarantined lists the problems whose text was moved out of the ledger.
	Quarantined []Problem
	// Entries is the number of entries the repaired ledger holds.
	Entries int
	// Closed says the last entry lacked its final newline and got it.
	Closed bool
	// Backup is the copy of the ledger as it was; Quarantine the file holding removed text.
	Backup, Quarantine string
}

// Repair rewrites a damaged ledger: merged items (repeated keys) are split back into separate
// entries, and text that is not a valid entry (a torn last item, stray lines) is moved to
// <ledger>.quarantine-<now> with its line numbers, so nothing is lost. The old file is kept as a
// backup. The caller must hold the lock. A ledger with no problems is left untouched.
func (l *Ledger) Repair(now time.Time) (RepairResult, error) {
	var res RepairResult
	data, err := l.read()
	if os.IsNotExist(err) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("read ledger: %w", err)
	}
	if entries, problems := Parse(data, 1, l.Slow); len(problems) == 0 {
		res.Entries = len(entries)
		return res, nil
	}
	items, stray := splitItems(data, 1)
	var out, quarantine bytes.Buffer
	quarantineText := func(p Problem, text []byte) {
		res.Quarantined = append(res.Quarantined, p)
		fmt.Fprintf(&quarantine, "# line %d: %s\n", p.Line, p.Msg)
		quarantine.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			quarantine.WriteByte('\n')
		}
	}
	for _, p := range stray {
		quarantineText(p, lineAt(data, p.Line))
	}
	for i, it := range items {
		last := i == len(items)-1
		_, p := checkItem(it, last, l.Slow)
		if p == nil {
			out.Write(it.text)
			res.Entries++
			continue
		}
		if p.Kind == Unterminated {
			// A whole entry that only lacks the final newline: closed off, not quarantined.
			out.Write(it.text)
			out.WriteByte('\n')
			res.Entries++
			res.Closed = true
			continue
		}
		parts := [][]byte{it.text}
		if p != nil && p.Kind == Merged {
			parts = splitMerged(it.text)
			if len(parts) > 1 {
				res.Split++
			}
		}
		line := it.line
		for _, part := range parts {
			if _, p := checkItem(item{line: line, text: part}, last, l.Slow); p != nil && p.Kind != Unterminated {
				quarantineText(*p, part)
			} else {
				out.Write(part)
				res.Entries++
			}
			line += bytes.Count(part, []byte("\n"))
		}
	}
	if quarantine.Len() > 0 {
		res.Quarantine = l.Path() + ".quarantine-" + now.UTC().Format("20060102T150405.000Z")
		if err := safefile.WriteFileAtomic(res.Quarantine, quarantine.Bytes(), 0o600); err != nil {
			return res, fmt.Errorf("write quarantine: %w", err)
		}
	}
	res.Backup, err = l.Replace(out.Bytes(), now)
	return res, err
}

func lineAt(data []byte, n int) []byte {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		return data[:j+1]
	}
	return data
}

// splitMerged cuts an item whose keys repeat into one item per run of distinct keys. A run that
// does not start with tool gets the first run's "- tool:" line, and its key lines are re-indented
// to two spaces.
func splitMerged(text []byte) [][]byte {
	lines := bytes.SplitAfter(text, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	type keyLine struct {
		key    string
		indent int
	}
	parse := func(l []byte, first bool) (keyLine, bool) {
		s := l
		if first {
			s = bytes.TrimPrefix(s, []byte("- "))
		}
		indent := len(s) - len(bytes.TrimLeft(s, " "))
		s = s[indent:]
		i := bytes.IndexByte(s, ':')
		if i <= 0 || !plainKey(s[:i]) || (i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n' && s[i+1] != '\r') {
			return keyLine{}, false
		}
		return keyLine{key: string(s[:i]), indent: indent}, true
	}
	var toolLine []byte
	var parts [][]byte
	var cur bytes.Buffer
	seen := map[string]bool{}
	keyIndent := -1
	for i, l := range lines {
		kl, ok := parse(l, i == 0)
		if i == 0 {
			if ok && kl.key == "tool" {
				toolLine = bytes.TrimRight(l, "\n")
			}
			seen[kl.key] = true
			cur.Write(l)
			continue
		}
		if ok && keyIndent < 0 {
			keyIndent = kl.indent
		}
		if ok && kl.indent <= keyIndent && seen[kl.key] {
			parts = append(parts, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			seen = map[string]bool{}
			if kl.key != "tool" && toolLine != nil {
				cur.Write(toolLine)
				cur.WriteByte('\n')
				seen["tool"] = true
			}
		}
		if ok && kl.indent <= keyIndent {
			seen[kl.key] = true
			body := bytes.TrimLeft(l, " ")
			if kl.key == "tool" && cur.Len() == 0 {
				cur.WriteString("- ")
			} else {
				cur.WriteString("  ")
			}
			cur.Write(body)
			continue
		}
		cur.Write(l)
	}
	if cur.Len() > 0 {
		parts = append(parts, cur.Bytes())
	}
	return parts
}
