package agent

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
)

// maxEmptyResult bounds the result a codec looks at to tell whether it is empty: a result longer
// than this as JSON holds something, and is skipped unread as before.
const maxEmptyResult = 4 << 10

// maxEmptyText bounds a text that may say a result is empty ("No results"): a longer text is a
// result that happens to contain such words.
const maxEmptyText = 200

// emptyInto reads a call's result (Claude Code's tool_response) and sets *dst when it is empty
// (docs/circuits.md, "Empty results"): no content, [], {}, "", null, or only text blocks whose text
// is blank, [] or {}, or says nothing was found. The value is kept only up to maxEmptyResult bytes;
// a longer one is read to its end and is not empty.
func (d *decoder) emptyInto(dst *bool) error {
	d.capture, d.raw, d.keepMax, d.over = true, d.raw[:0], maxEmptyResult, false
	err := d.skip()
	raw, over := d.raw, d.over
	d.capture, d.raw, d.keepMax, d.over = false, raw[:0], 0, false
	*dst = false
	if err != nil || over {
		return err
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		*dst = emptyResult(v, 0)
	}
	return nil
}

// emptyResult reports whether v, a call's result as JSON, holds nothing: MCP's content blocks, a
// CallToolResult, or a bare value.
func emptyResult(v any, depth int) bool {
	if depth > 4 {
		return false
	}
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return emptyText(v)
	case []any:
		for _, e := range v {
			if !emptyResult(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		if len(v) == 0 {
			return true
		}
		if isErr, _ := v["isError"].(bool); isErr {
			return false // a failure, not an empty result
		}
		if t, ok := v["type"].(string); ok {
			text, _ := v["text"].(string)
			return t == "text" && emptyText(text)
		}
		if sc, ok := v["structuredContent"]; ok && !emptyResult(sc, depth+1) {
			return false
		}
		if c, ok := v["content"]; ok {
			return emptyResult(c, depth+1)
		}
		return false
	}
	return false // a number or a boolean is an answer
}

// emptyText reports whether a result's text says it holds nothing: blank, [], {}, null, or a short
// text the classifier reads as an empty result ("No results", "0 results", "Query returned no rows").
func emptyText(s string) bool {
	s = strings.TrimSpace(s)
	switch s {
	case "", "[]", "{}", "null", `""`:
		return true
	}
	if len(s) > maxEmptyText {
		return false
	}
	if s[0] == '[' || s[0] == '{' {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			switch v := v.(type) {
			case []any:
				return len(v) == 0
			case map[string]any:
				return len(v) == 0
			}
			return false
		}
	}
	return failure.Classify(failure.Evidence{Text: s}, time.Time{}).Cause == "empty_result"
}
