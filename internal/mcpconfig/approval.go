package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
)

// Approval says whether Claude Code would start or connect to a server, and so whether we may
// (docs/probes.md "Claude Code's approvals bind us").
type Approval string

// The approval states.
const (
	// ApprovalTrusted is a server the user defined (user or local scope, --mcp-config): it
	// needs no approval.
	ApprovalTrusted Approval = "trusted"
	// ApprovalApproved is a server from the repository (.mcp.json, .claude/settings*.json) that
	// the user approved for this project.
	ApprovalApproved Approval = "approved"
	// ApprovalPending is a server from the repository that the user has neither approved nor
	// disabled: Claude Code would ask first, so we never start it, connect to it or expand
	// variables into it.
	ApprovalPending Approval = "unapproved"
	// ApprovalDisabled is a server from the repository that the user disabled.
	ApprovalDisabled Approval = "disabled"
	// ApprovalDenied is a server that deniedMcpServers names or allowedMcpServers leaves out.
	ApprovalDenied Approval = "denied"
)

// Usable reports whether a server in this state may be started or connected to.
func (a Approval) Usable() bool { return a == ApprovalTrusted || a == ApprovalApproved }

// serverMatch is one entry of allowedMcpServers or deniedMcpServers: a server name, an exact
// command line, or a URL pattern where '*' matches anything.
type serverMatch struct {
	Name    string   `json:"serverName"`
	Command []string `json:"serverCommand"`
	URL     string   `json:"serverUrl"`
	where   string
}

func (m serverMatch) matches(s Server) bool {
	switch {
	case m.Name != "":
		return m.Name == s.Name
	case m.Command != nil:
		return s.Transport == TransportStdio && slices.Equal(m.Command, append([]string{s.Command}, s.Args...))
	case m.URL != "":
		parts := strings.Split(m.URL, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		ok, _ := regexp.MatchString("^"+strings.Join(parts, ".*")+"$", s.URL)
		return ok
	}
	return false
}

// approvals is what Claude Code's files say about this project's servers.
type approvals struct {
	// enabled and disabled map a server's exact configured name to where it is said: Claude Code
	// compares the names as written, so approving good_srv must not approve good.srv, whose
	// tools share the sanitized name.
	enabled, disabled map[string]string
	enableAll         string // where enableAllProjectMcpServers is true; "" when nowhere
	allowed           []serverMatch
	allowWhere        string // the first file that sets allowedMcpServers; "" when none does
	denied            []serverMatch
}

// approvalKeys is the part of a settings file or of ~/.claude.json projects[DIR] that gates servers.
type approvalKeys struct {
	Enabled     []string       `json:"enabledMcpjsonServers"`
	Disabled    []string       `json:"disabledMcpjsonServers"`
	EnableAll   bool           `json:"enableAllProjectMcpServers"`
	TrustDialog bool           `json:"hasTrustDialogAccepted"`
	Allowed     *[]serverMatch `json:"allowedMcpServers"`
	Denied      []serverMatch  `json:"deniedMcpServers"`
	mayApprove  bool
	where       string
}

// ManagedSettingsPath is where Claude Code reads managed (enterprise) settings on this system.
func ManagedSettingsPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// readApprovals gathers the approval keys of ~/.claude.json projects[DIR], the managed and user
// settings and the project's settings files. Files inside the repository (.claude/settings.json,
// .claude/settings.local.json) come with the code: what they disable or deny is honoured (it
// only takes away), but what they enable is honoured only once the user accepted Claude Code's
// workspace trust dialog for the project (projects[DIR].hasTrustDialogAccepted), as Claude Code
// itself reads project settings only after it. Unreadable files approve nothing.
func readApprovals(opts Options, read func(string, int64) ([]byte, error), claudeJSON, userSettings string) approvals {
	var files []approvalKeys
	trusted := false
	if claudeJSON != "" && opts.Dir != "" {
		if data, err := read(claudeJSON, maxClaudeJSON); err == nil {
			for _, key := range projectKeys(opts.Dir) {
				if off, ok := seek(data, "projects", key); ok {
					var k approvalKeys
					if json.NewDecoder(bytes.NewReader(data[off:])).Decode(&k) == nil {
						k.mayApprove, k.where = true, fmt.Sprintf("%s projects[%q]", claudeJSON, key)
						trusted = k.TrustDialog
						files = append(files, k)
					}
					break
				}
			}
		}
	}
	settings := []struct {
		path string
		repo bool
	}{{opts.ManagedSettings, false}, {userSettings, false}}
	if opts.Dir != "" {
		settings = append(settings,
			struct {
				path string
				repo bool
			}{filepath.Join(opts.Dir, ".claude", "settings.local.json"), true},
			struct {
				path string
				repo bool
			}{filepath.Join(opts.Dir, ".claude", "settings.json"), true})
	}
	for _, f := range settings {
		if f.path == "" {
			continue
		}
		data, err := read(f.path, maxConfig)
		if err != nil {
			continue
		}
		var k approvalKeys
		if json.Unmarshal(data, &k) != nil {
			continue
		}
		k.where = f.path
		k.mayApprove = !f.repo || trusted
		files = append(files, k)
	}
	a := approvals{enabled: map[string]string{}, disabled: map[string]string{}}
	for _, k := range files {
		for _, n := range k.Disabled {
			if _, ok := a.disabled[n]; !ok {
				a.disabled[n] = k.where + " disabledMcpjsonServers"
			}
		}
		for _, m := range k.Denied {
			m.where = k.where + " deniedMcpServers"
			a.denied = append(a.denied, m)
		}
		if k.Allowed != nil {
			if a.allowWhere == "" {
				a.allowWhere = k.where + " allowedMcpServers"
			}
			a.allowed = append(a.allowed, *k.Allowed...)
		}
		if !k.mayApprove {
			continue
		}
		for _, n := range k.Enabled {
			if _, ok := a.enabled[n]; !ok {
				a.enabled[n] = k.where + " enabledMcpjsonServers"
			}
		}
		if k.EnableAll && a.enableAll == "" {
			a.enableAll = k.where + " enableAllProjectMcpServers"
		}
	}
	return a
}

// repoApproval is the approval of a server defined by a file of the repository, before
// allowedMcpServers and deniedMcpServers are applied. A disabled server stays disabled even when
// an approval names it too, as in Claude Code.
func (a approvals) repoApproval(name string) (Approval, string) {
	n := name
	if w, ok := a.disabled[n]; ok {
		return ApprovalDisabled, "disabled in " + w
	}
	if w, ok := a.enabled[n]; ok {
		return ApprovalApproved, "approved in " + w
	}
	if a.enableAll != "" {
		return ApprovalApproved, "approved by " + a.enableAll
	}
	return ApprovalPending, "defined by the repository and not approved for this project in Claude Code (no enabledMcpjsonServers entry or enableAllProjectMcpServers in ~/.claude.json or your settings)"
}

// policy applies deniedMcpServers and allowedMcpServers to a server that is otherwise usable.
func (a approvals) policy(s Server) (Approval, string, bool) {
	for _, m := range a.denied {
		if m.matches(s) {
			return ApprovalDenied, "denied by " + m.where, true
		}
	}
	if a.allowWhere != "" && !slices.ContainsFunc(a.allowed, func(m serverMatch) bool { return m.matches(s) }) {
		return ApprovalDenied, "not listed in " + a.allowWhere, true
	}
	return "", "", false
}

// deniedName reports whether the lists deny name by its name alone (known before the entry is
// parsed, so that its variables are not expanded).
func (a approvals) deniedName(name string) bool {
	if slices.ContainsFunc(a.denied, func(m serverMatch) bool { return m.Name != "" && m.Name == name }) {
		return true
	}
	if a.allowWhere == "" {
		return false
	}
	// Only an allowlist made of names alone decides by name.
	for _, m := range a.allowed {
		if m.Name == "" || m.Name == name {
			return false
		}
	}
	return true
}
