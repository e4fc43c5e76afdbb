package claude

import (
	"bytes"
	"fmt"
	"strings"
)

// NoFile is the name a unified diff gives the missing side of a created or deleted file.
const NoFile = "/dev/null"

// maxCells bounds the line-matching table; past it the changed middle is shown as replaced
// whole, which is still a correct diff.
const maxCells = 4 << 20

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// Unified returns the unified diff (as diff -u and git print it, three lines of diffContext) that
// turns a into b, with from and to as the file names of the --- and +++ lines. It is "" when a and
// b are equal.
func Unified(from, to string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	ops := diffLines(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	// Hunks: runs of changes closer than 2*diffContext lines are joined.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops, start, end)
		i = end
	}
	return out.String()
}

type op struct {
	kind   byte // ' ', '-' or '+'
	line   string
	ai, bi int // 0-based line numbers in a and b of the line (or of where it would go)
}

func writeHunk(out *strings.Builder, ops []op, start, end int) {
	var na, nb int
	for _, o := range ops[start:end] {
		if o.kind != '+' {
			na++
		}
		if o.kind != '-' {
			nb++
		}
	}
	as, bs := ops[start].ai+1, ops[start].bi+1
	if na == 0 {
		as--
	}
	if nb == 0 {
		bs--
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(as, na), hunkRange(bs, nb))
	for _, o := range ops[start:end] {
		out.WriteByte(o.kind)
		out.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// splitLines splits data after each newline; a last line without one is kept as it is.
func splitLines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

// diffLines returns the edit script from a to b: a longest common subsequence of the lines
// between the common prefix and suffix.
func diffLines(a, b []string) []op {
	var ops []op
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		ops = append(ops, op{' ', a[p], p, p})
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	n, m := len(ma), len(mb)
	if n*m > maxCells {
		for i, l := range ma {
			ops = append(ops, op{'-', l, p + i, p})
		}
		for j, l := range mb {
			ops = append(ops, op{'+', l, p + n, p + j})
		}
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i], p + i, p + j})
				i++
				j++
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', ma[i], p + i, p + j})
				i++
			default:
				ops = append(ops, op{'+', mb[j], p + i, p + j})
				j++
			}
		}
	}
	for k := 0; k < s; k++ {
		ops = append(ops, op{' ', a[len(a)-s+k], len(a) - s + k, len(b) - s + k})
	}
	return ops
}
