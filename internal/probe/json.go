package probe

import "encoding/json"

// MarshalJSON encodes the outcome in the `probe --json` result shape of docs/cli.md:
// {"server", "healthy", "type", "cause", "duration_ms", "tools", "retry_after"}, where type,
// cause and retry_after are null when absent and tools lists names, plus the extra keys
// "error", "phase", "status", "www_authenticate", "transport", "protocol_version", "server_info"
// and "warnings" when they have a value.
func (o Outcome) MarshalJSON() ([]byte, error) {
	nullable := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	names := make([]string, 0, len(o.Tools))
	for _, t := range o.Tools {
		names = append(names, t.Name)
	}
	var retry *string
	if o.RetryAfter > 0 {
		s := o.RetryAfter.String()
		retry = &s
	}
	return json.Marshal(struct {
		Server          string   `json:"server"`
		Healthy         bool     `json:"healthy"`
		Type            *string  `json:"type"`
		Cause           *string  `json:"cause"`
		DurationMS      int64    `json:"duration_ms"`
		Tools           []string `json:"tools"`
		RetryAfter      *string  `json:"retry_after"`
		Error           string   `json:"error,omitempty"`
		Phase           string   `json:"phase,omitempty"`
		Status          int      `json:"status,omitempty"`
		WWWAuthenticate string   `json:"www_authenticate,omitempty"`
		Transport       string   `json:"transport,omitempty"`
		ProtocolVersion string   `json:"protocol_version,omitempty"`
		ServerInfo      string   `json:"server_info,omitempty"`
		Warnings        []string `json:"warnings,omitempty"`
	}{
		Server: o.Server, Healthy: o.Healthy, Type: nullable(string(o.Type)), Cause: nullable(o.Cause),
		DurationMS: o.Duration.Milliseconds(), Tools: names, RetryAfter: retry,
		Error: o.Error, Phase: string(o.Phase), Status: o.Status, WWWAuthenticate: o.WWWAuthenticate,
		Transport: string(o.Transport), ProtocolVersion: o.ProtocolVersion, ServerInfo: o.ServerInfo,
		Warnings: o.Warnings,
	})
}
