package agent

// Qwen Code's codec. Qwen Code is a Gemini CLI fork whose hooks follow Claude Code: the same event
// names (PostToolUseFailure with error and is_interrupt included), tool names mcp__<server>__<tool>
// and answers, so it shares Claude Code's decoder and answer shapes. What differs: its failure
// text for a result with isError wraps the server's text in a dump of the call, which is unwrapped
// so the ledger keeps what the server said.

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
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

func (qwen) Decode(r io.Reader, _ gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	_, out, err := decodeClaudeShaped(r, seen, qwenEvent)
	return out, err
}

func qwenEvent(ev claudeEvent) gate.Event {
	out := ev.event()
	out.Agent = "qwen"
	if out.Kind == gate.Failure {
		out.Error = qwenErrorText(out.Error)
	}
	return out
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
