package agent

// Qwen Code's codec. Qwen Code is a Gemini CLI fork whose hooks follow Claude Code: the same event
// names (PostToolUseFailure with error and is_interrupt included), tool names mcp__<server>__<tool>
// and answers, so it shares Claude Code's decoder and answer shapes. What differs: its failure
// text for a result with isError wraps the server's text in a dump of the call, which is unwrapped
// so the ledger keeps what the server said.

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Qwen is Qwen Code's codec.
var Qwen Codec = qwen{}

type qwen struct{}

func (qwen) Name() string { return "qwen" }

func (qwen) Title() string { return "Qwen Code" }

// FormatQwenSettings is Qwen Code's settings.json: Claude Code's "hooks" layout, with command a
// shell command line.
const FormatQwenSettings = "qwen-settings"

func (qwen) Setup() Setup {
	return Setup{
		Format:      FormatQwenSettings,
		Hooks:       claudeHooks(),
		Scopes:      []Scope{projectScope(".qwen/settings.json"), userScope("settings.json")},
		HomeDir:     ".qwen",
		Binaries:    []string{"qwen"},
		Timeout:     hookTimeoutS,
		TimeoutUnit: "s",
	}
}

func (qwen) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	_, out, err := decodeClaudeShaped(r, seen, func(ev claudeEvent) gate.Event { return qwenEvent(ev, servers) })
	return out, err
}

// ServerFiles are Qwen Code's settings files, which hold its mcpServers: the project's
// .qwen/settings.json, then ~/.qwen/settings.json.
func (qwen) ServerFiles(dir, home string) []gate.ServerFile {
	// Qwen Code strips comments from its settings before it parses them.
	files := []gate.ServerFile{{Path: filepath.Join(dir, ".qwen", "settings.json"), Project: true, Comments: true}}
	if home != "" {
		files = append(files, gate.ServerFile{Path: filepath.Join(home, ".qwen", "settings.json"), Comments: true})
	}
	return files
}

// qwenHashed is how Qwen Code 0.24.4 names an MCP tool whose name mcp__<server>__<tool> is not
// [A-Za-z][A-Za-z0-9_-]* or is over 63 characters (normalizeToolNameForProvider in its bundle):
// every other character made "_", cut, then "_" and the name's 32-bit FNV-1a hash (over UTF-16
// code units) in base 36, 7 digits: server "fix.v2" has mcp__fix_v2__echo_<hash>.
var qwenHashed = hashedNaming{
	join: func(server, tool string) string { return "mcp__" + server + "__" + tool },
	sanitize: func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
				return r
			}
			return '_'
		}, s)
	},
	sum: func(s string) string {
		h := uint32(2166136261)
		for _, u := range utf16.Encode([]rune(s)) {
			h = (h ^ uint32(u)) * 16777619
		}
		d := strconv.FormatUint(uint64(h), 36)
		return strings.Repeat("0", max(0, 7-len(d))) + d
	},
	sumLen: 7,
	digits: "0123456789abcdefghijklmnopqrstuvwxyz",
}

func qwenEvent(ev claudeEvent, servers gate.Servers) gate.Event {
	out := ev.event()
	out.Agent = "qwen"
	if rs := qwenReadings(ev.ToolName, servers); len(rs) > 0 {
		applyReadings(&out, rs, "")
	}
	if out.Kind == gate.Failure {
		out.Error = qwenErrorText(out.Error)
	}
	return out
}

// qwenReadings are the configured servers Qwen Code's name of a tool can stand for, best first
// (Reading.better), when more than the name itself says: a hashed name (qwenHashed), or a name
// whose tool part holds "__" (mcp__github__create__issue is tool create__issue of server github,
// or tool issue of a server github__create: Qwen Code sends no server name, and keeps a server's
// "__"). None for a plain name, whose servers are not read.
func qwenReadings(name string, servers gate.Servers) []Reading {
	if servers == nil {
		return nil
	}
	if hashed := qwenHashed.resolveAll(name, servers); len(hashed) > 0 {
		return sortReadings(hashed)
	}
	_, tool, ok := ledger.Key(name).Split()
	if !ok || !strings.Contains(tool, "__") && !strings.HasPrefix(tool, "_") {
		return nil
	}
	var rs []Reading
	for _, s := range servers() {
		san := ledger.Sanitize(s.Name)
		if prefix := "mcp__" + san + "__"; len(name) > len(prefix) && strings.HasPrefix(name, prefix) {
			rs = append(rs, Reading{Key: ledger.ClaudeKey(name, s.Name), Server: s.Name, User: userOwned(s),
				Exact: san == s.Name, n: len(san)})
		}
	}
	return sortReadings(rs)
}

// qwenToolError starts Qwen Code's text for an MCP result with isError:
// "MCP tool 'T' reported tool error for function call: {…} with response: [{"functionResponse":
// {…,"response":{"error":{…},"content":[{"type":"text","text":…}]}}}]".
const (
	qwenToolError    = "MCP tool '"
	qwenWithResponse = " with response: "
)

// qwenErrorText is the server's own text inside Qwen Code's wrapped isError text, or text as it is
// when it is not that wrapper or its parts cannot be read.
func qwenErrorText(text string) string {
	if !strings.HasPrefix(text, qwenToolError) || !strings.Contains(text, "reported tool error") {
		return text
	}
	i := strings.LastIndex(text, qwenWithResponse)
	if i < 0 {
		return text
	}
	var parts []struct {
		FunctionResponse struct {
			Response struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"response"`
		} `json:"functionResponse"`
	}
	if json.Unmarshal([]byte(text[i+len(qwenWithResponse):]), &parts) != nil {
		return text
	}
	var texts []string
	for _, p := range parts {
		for _, c := range p.FunctionResponse.Response.Content {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
		}
	}
	if len(texts) == 0 {
		return text
	}
	return strings.Join(texts, "\n")
}

func (qwen) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	return Claude.Encode(ev, a)
}
